// Which listing a packet walked on a Cilium node follows: the datapath looks a packet up in the BPF
// maps (bpf/lib/lb.h: the service map, then the backend map), not in the agent's table, so where
// `bpf lb list` was read besides the table its entry is walked, and where the two disagree (a
// backend, a state, a frontend one holds and the other not, a reconcile error) the walk says so.
import { hostPort } from '../../ipv6.js';
import { inRotation } from './expected/backends.js';
import { notWhole } from './drift/cut.js';
import { frontendKey, type CiliumFrontend, type CiliumTable } from './read/listing.js';

/** What the walk follows for one packet, and what it says of the table against the maps. */
export interface Followed {
  /** The entry walked: the BPF map's where the maps were read, else the table's. */
  f?: CiliumFrontend;
  /** The listing `f` is from. */
  source: string;
  /** The table's own frontend where the map's is walked (its backends' states, its status). */
  table?: CiliumFrontend;
  /** Where table and map disagree, each with both lines: observed on the node. */
  said: string[];
  /** What the walk takes without having read it (the maps not read behind a failed reconcile). */
  assumed: string[];
  /** Why nothing is translated where the table holds a frontend the map lacks. */
  unwritten?: string;
}

const BPF_FORMS: readonly CiliumTable['form'][] = ['bpf-lb-list', 'maps-dump'];

/** The backends that take new connections at `f`: the map's slots up to its count where the
 * listing shows them, else by the states listed. */
export const usedOf = (f: CiliumFrontend) =>
  f.backends.some((b) => b.inRotation !== undefined)
    ? f.backends.filter((b) => b.inRotation)
    : inRotation(f.backends);

const names = (f: CiliumFrontend) =>
  usedOf(f)
    .map((b) => hostPort(b.ip, b.port))
    .sort();

/** A reconcile status that is not Done: the agent has not written the frontend's last state. */
const unreconciled = (f: CiliumFrontend | undefined) =>
  f?.status !== undefined && f.status !== 'Done' ? f.status : undefined;

/** The entry the walk follows for the frontend `find` picks in a listing. */
export function followed(
  table: CiliumTable,
  maps: CiliumTable | undefined,
  find: (t: CiliumTable) => CiliumFrontend | undefined,
): Followed {
  const tf = find(table);
  const at = (t: CiliumTable, f: CiliumFrontend) => `${t.source}:${f.line}`;
  const status = unreconciled(tf);
  const bpf = maps && !BPF_FORMS.includes(table.form) ? maps : undefined;
  if (!bpf) {
    const assumed =
      tf && status
        ? [
            `the agent's table marks frontend ${frontendKey(tf)} "${status}" (${at(table, tf)}): it has not written that state to its BPF maps, which the datapath looks up and which were not read; walked as the table holds it, which the datapath may not follow`,
          ]
        : [];
    return { ...(tf ? { f: tf } : {}), source: table.source, said: [], assumed };
  }
  const mf = find(bpf);
  const said: string[] = [];
  if (tf && status)
    said.push(
      `the agent's table marks frontend ${frontendKey(tf)} "${status}" (${at(table, tf)}): it has not written that state to its BPF maps; the walk follows the map, which the datapath looks up`,
    );
  if (mf && !tf)
    said.push(
      `the agent's table (${table.source}) holds no frontend ${frontendKey(mf)}, but its BPF map still does (${at(bpf, mf)}): the datapath translates by the map until the agent removes the entry`,
    );
  if (mf && tf && !tf.backendsUnread && !mf.backendsNotShown && !mf.serviceRowUnseen) {
    const [t, m] = [names(tf), names(mf)];
    if (t.join() !== m.join())
      said.push(
        `the agent's table (${at(table, tf)}) gives new connections to ${t.join(', ') || 'no backend'}; its BPF map (${at(bpf, mf)}), which the datapath looks up, to ${m.join(', ') || 'no backend'}: walked as the map`,
      );
  }
  if (mf) return { f: mf, source: bpf.source, ...(tf ? { table: tf } : {}), said, assumed: [] };
  if (!tf) return { source: bpf.source, said, assumed: [] };
  // a map listing read in part need not show the entry: the table's is walked, said so
  if (notWhole(bpf))
    return {
      f: tf,
      source: table.source,
      said,
      assumed: [
        `the BPF map listing ${bpf.source} is read in part and shows no entry for ${frontendKey(tf)}: walked as the agent's table holds it`,
      ],
    };
  return {
    source: bpf.source,
    table: tf,
    said,
    assumed: [],
    unwritten: `the agent's table holds frontend ${frontendKey(tf)} (${at(table, tf)}${status ? `, "${status}"` : ''}), but its BPF map ${bpf.source} has no entry for it: the datapath, which looks up the map, does not translate it`,
  };
}
