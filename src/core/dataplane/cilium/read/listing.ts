// Cilium's Service tables as its agent lists them: one model for every listing (its own table of
// Services, the load-balancer tables of 1.17+, the BPF maps), so that trees, drift and the walk
// never care which listing a node or a paste gave.
import { ListingParseError } from '../../listing-error.js';
import type { Quote } from '../../iptables/read/paste/mangled/quoted.js';
import type { RunChange } from './runs.js';
import type { KubectlKind } from '../../iptables/read/paste/other-lines/foreign-kinds.js';

/** An L4 protocol as Cilium names it; `any` is a frontend for every protocol (wildcard). */
export type CiliumProtocol = 'tcp' | 'udp' | 'sctp' | 'any';

/** Cilium's frontend types (loadbalancer.SVCType). */
export const FRONTEND_TYPES = [
  'ClusterIP',
  'NodePort',
  'ExternalIPs',
  'HostPort',
  'LoadBalancer',
  'LocalRedirect',
] as const;
export type FrontendType = (typeof FRONTEND_TYPES)[number];

/** A backend's state (loadbalancer.BackendState): only active ones take new connections, and
 * terminating (serving) ones only when no active one is left. */
export const BACKEND_STATES = [
  'active',
  'terminating',
  'terminating-not-serving',
  'quarantined',
  'maintenance',
] as const;
export type BackendState = (typeof BACKEND_STATES)[number];

export interface CiliumBackend {
  ip: string;
  port: number;
  protocol?: CiliumProtocol;
  /** Undefined where the listing does not show it (the BPF map listing, old releases). */
  state?: BackendState;
  /** Where its state was read, where another listing gave it (the backends table read with a
   * frontends table). */
  stateAt?: { source: string; line: number };
  weight?: number;
  nodeName?: string;
  /** "(preferred)" (service list --clustermesh-affinity): the Service's cluster-mesh affinity
   * prefers it; where any active backend is preferred, only those take new connections. */
  preferred?: boolean;
  /** In the BPF map, whether new connections can choose it (slots up to the count); undefined
   * where the listing does not show it. */
  inRotation?: boolean;
  /** In the BPF affinity map: session affinity may keep a client on it (the maps dump). */
  affinity?: boolean;
  /** Its entries in the frontend's Maglev lookup table (the maps dump). */
  maglev?: number;
  line: number;
}

export interface CiliumFrontend {
  ip: string;
  port: number;
  /** The agent's service ID, where its listing prints one (service list's first column): what
   * `cilium service delete ID` names. */
  id?: number;
  /** Undefined where the listing does not print it (releases before protocols were shown). */
  protocol?: CiliumProtocol;
  type?: FrontendType;
  /** "ns/name", where the listing names the Service. */
  service?: string;
  portName?: string;
  /** The local redirect policy its traffic goes to instead (db/show frontends' RedirectTo, 1.18
   * on: "ns/name:local-redirect"): its backends are the policy's, not its Service's. */
  redirectTo?: string;
  /** The load-balancer table's reconcile status: "Done", "Pending", "Error: ...". */
  status?: string;
  /** The BPF map's flags on the Service entry ("non-routable", "check source-range" ...). */
  flags: string[];
  /** Flagged l7-load-balancer (its reader takes the flag out of `flags`): the datapath sends its
   * new connections to Cilium's L7 proxy (Envoy) on the node, at `port` where the listing prints
   * it ("(L7LB Proxy Port: N)" in bpf lb list from 1.16, "L7Proxy=N" in the maps dump). */
  l7Proxy?: { port?: number };
  /** The line its flags are listed on, where a second listing of the paste gave them. */
  flagsLine?: number;
  /** The internal scope of a Service with one Local traffic policy ("/i" in Cilium's text). */
  internal?: boolean;
  backends: CiliumBackend[];
  /** The BPF map's session affinity timeout (AFFTimeout), where the listing shows it. */
  affinitySeconds?: number;
  /** The backend selection its Service's annotation picks (LBALG), where the listing shows it. */
  algorithm?: 'random' | 'maglev';
  /** The BPF source-range map's CIDRs for it, where the listing shows that map (the maps dump). */
  sourceRanges?: string[];
  /** The address replies get back (its reverse-NAT entry, "" where it has none), where the
   * listing shows that map (the maps dump). */
  reverseNat?: string;
  /** The lines of its entries in the other maps (a maps dump): evidence of what they hold. */
  mapLines?: { reverseNat?: number; sourceRanges?: number[]; maglev?: number };
  /** Backends the listing leaves out ("+ 4 more ..."): the list above is not all of them. */
  backendsNotShown?: number;
  /** The listing has no backends column (a db/show table with some columns selected): which
   * backends the frontend has is not known, not none. */
  backendsUnread?: true;
  /** `bpf lb list` without the Service's own row (slot 0): a grep's rows, which need not be all
   * of its backends. */
  serviceRowUnseen?: true;
  /** The line of an elision right after its rows, or of a line the rows after which are not read:
   * more of its backends may be on the lines left out. */
  backendsElided?: number;
  /** The line of the grep its listing was piped through, where grep's window may end inside its
   * rows: its further backends, on rows of their own, are printed only where they match. */
  grepped?: number;
  line: number;
}

/** The maps of Cilium's maps dump, by the word each of their lines starts with. */
export type CiliumMapKind = 'SVC' | 'BE' | 'REV' | 'AFF' | 'SRCRANGE' | 'MAGLEV';

/** Which of the agent's listings a table was read from. */
export type CiliumForm =
  | 'service-list'
  | 'service-list-json'
  | 'bpf-lb-list'
  | 'db-frontends'
  | 'db-backends'
  | 'maps-dump';

/** A listing command piped through a filter: the filter as typed, its line, what it keeps (as
 * the object of "only"), and the first and last row read of its output. */
export interface CiliumFiltered {
  command: string;
  line: number;
  keeps: string;
  from: number;
  to: number;
}

/** Where and why a listing is not whole. */
export interface CiliumCut {
  line: number;
  reason: string;
}

export interface CiliumTable {
  form: CiliumForm;
  /** "nodes/NODE/cilium-service-list.txt", or the file a person gave. */
  source: string;
  frontends: CiliumFrontend[];
  /** Why the listing is not whole (rows left out, entries the CLI could not print), one reason
   * each at the line it shows: what it lacks is no claim. */
  cut?: CiliumCut[];
  /** What the paste holds that is not read (a column no release prints, another tool's output),
   * each with what it is, at its line: said, never dropped. */
  notRead?: CiliumCut[];
  /** The line where a new command's output starts after the listing: not read with it. */
  unreadFrom?: number;
  /** A maps dump's maps that its entries refer to but it holds no line of (a grep, a paste in
   * part): not read, so nothing is said to be missing from them. */
  unreadMaps?: CiliumMapKind[];
  /** Lines the reader read that hold no frontend nor backend row (a maps dump's BE, REV, AFF,
   * SRCRANGE and MAGLEV entries, the backends table's rows): read, never said skipped. */
  rowsRead?: number[];
  /** Lines before the listing that are none of its own nor said otherwise (a prompt, a command,
   * another tool's output, prose): skipped, and named so. */
  skipped?: number[];
  /** Lines of kubectl's output pasted with the listing (`kubectl get svc`, `get ep` ...): the API
   * server's objects, not the agent's; named, not read. */
  kubectlLines?: number[];
  /** What kubectl printed on those lines, by resource (`kubectl get nodes` ...). */
  kubectlKinds?: KubectlKind[];
  /** The other listings of the paste read with this one (a second command's), by their form. */
  alsoForms?: CiliumForm[];
  /** Lines where the same listing is printed again (a command run again): the later is read. */
  rerun?: number[];
  /** What changed between each run and the one before it (read/runs.ts), in the order of `rerun`. */
  runChanges?: RunChange[];
  /** The line of the first entry of another listing read with this one that prints no protocol
   * (bpf lb list before 1.17), read as the entry of each protocol's frontend on its address and
   * port: which protocol's it is, the listing does not show. */
  protocolNotShown?: number;
  /** The lines a markdown reply quotes ("> " before each), read without the marks. */
  quote?: Quote;
  /** The listing commands piped through a filter (`| grep X`), each with what its stages keep
   * and the rows read of its output (read/filtered.ts). */
  filtered?: CiliumFiltered[];
  /** Frontend ports a release printed in network byte order (bpf-lb-list.ts), each as printed and
   * as read, at its line. */
  portsSwapped?: { line: number; printed: number; port: number }[];
  /** `db/show backends`: each backend's state by its address ("10.244.1.1:80/TCP") and by its
   * Service and address (db-tables.ts serviceBackendKey: a backend of two Services has a state in
   * each), on its own table and on the frontends table read with it; undefined where not read. */
  backendStates?: Map<string, BackendState>;
  /** The line of the backends table each of those states was read at, by the same keys. */
  backendStateLines?: Map<string, number>;
}

/** Where a listing stops being whole, and why ("rows left out ("...")"). */
export interface CiliumCut {
  line: number;
  reason: string;
}

export class CiliumParseError extends ListingParseError {
  override name = 'CiliumParseError';
  static override readonly kind = 'a Cilium agent listing';
  static override readonly namesKind = /\bcilium\b/i;
}

/** "10.96.0.10:53/UDP", "[fd00::1]:80/TCP/i", "10.0.0.2:80:TCP", "10.96.0.1:443", and 1.10-1.16's
 * "10.0.2.15:30693/i" (the internal scope, no protocol). */
export function parseAddress(
  text: string,
): { ip: string; port: number; protocol?: CiliumProtocol; internal?: boolean } | undefined {
  const simple = ipv4Address(text);
  const m = simple ? undefined : ADDRESS.exec(text);
  if (!simple && !m) return undefined;
  const port = simple ? simple.port : Number(m![2]);
  if (port > 65535) return undefined;
  const ip = simple ? simple.ip : m![1]!.startsWith('[') ? m![1]!.slice(1, -1) : m![1]!;
  const name = simple ? simple.protocol : m![3];
  const protocol = name === undefined ? 'none' : PROTOCOLS.get(name);
  if (protocol === undefined) return undefined;
  // no spreads, and the protocol in the literal (a field added after it is a second allocation):
  // a big BPF listing parses one of these per row
  const out: { ip: string; port: number; protocol?: CiliumProtocol; internal?: boolean } =
    protocol === 'none' ? { ip, port } : { ip, port, protocol };
  if (m?.[4]) out.internal = true;
  return out;
}

// a protocol name has three letters or more: a lone "/i" is the scope
const ADDRESS =
  /^(\[[0-9A-Fa-f:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})(?:[/:]([A-Za-z]{3,}))?(\/i)?$/;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isLetter = (c: number) => (c | 32) >= 97 && (c | 32) <= 122;

/** ADDRESS's groups of the form most rows print, "10.96.0.10:53" and "/UDP" after it, read by
 * its characters (a regular expression's match cost a big listing's parse a fifth); undefined
 * for any other form, which ADDRESS reads. */
function ipv4Address(text: string): { ip: string; port: number; protocol?: string } | undefined {
  const n = text.length;
  let i = 0;
  for (let group = 0; group < 4; group++) {
    const start = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    if (i === start || i - start > 3) return undefined;
    if (group < 3 && text.charCodeAt(i++) !== 46) return undefined; // "."
  }
  if (text.charCodeAt(i) !== 58) return undefined; // ":"
  const ip = text.slice(0, i++);
  const portFrom = i;
  let port = 0;
  for (; i < n && isDigit(text.charCodeAt(i)); i++) port = port * 10 + text.charCodeAt(i) - 48;
  if (i === portFrom || i - portFrom > 5) return undefined;
  if (i === n) return { ip, port };
  if (text.charCodeAt(i) !== 47) return undefined; // "/"
  const from = i + 1;
  for (i = from; i < n && isLetter(text.charCodeAt(i)); i++);
  return i === n && i - from >= 3 ? { ip, port, protocol: text.slice(from) } : undefined;
}

/** The protocol names Cilium prints (a map: a word such as "constructor" names no protocol). */
const PROTOCOLS = new Map<string, CiliumProtocol | 'none'>([
  ['TCP', 'tcp'],
  ['UDP', 'udp'],
  ['SCTP', 'sctp'],
  ['ANY', 'any'],
  ['NONE', 'none'],
  ['tcp', 'tcp'],
  ['udp', 'udp'],
  ['sctp', 'sctp'],
  ['any', 'any'],
  ['none', 'none'],
]);

/** How Cilium prints an address: "10.96.0.10:53/UDP", "[fd00::1]:80/TCP". */
export function formatAddress(a: { ip: string; port: number; protocol?: CiliumProtocol }): string {
  const host = a.ip.includes(':') ? `[${a.ip}]` : a.ip;
  return `${host}:${a.port}${a.protocol ? `/${a.protocol.toUpperCase()}` : ''}`;
}

/** A frontend's identity: its address, protocol and scope. */
export const frontendKey = (f: Pick<CiliumFrontend, 'ip' | 'port' | 'protocol' | 'internal'>) =>
  `${formatAddress(f)}${f.internal ? '/i' : ''}`;

/** Whether `m`, a BPF map entry as listed, is frontend `f`'s: the same address, port and scope,
 * and `f`'s protocol, or none where the listing prints none (bpf lb list before 1.17: the entry
 * of every protocol's frontend on that address and port). */
export const entryOf = (
  f: Pick<CiliumFrontend, 'ip' | 'port' | 'protocol' | 'internal'>,
  m: Pick<CiliumFrontend, 'ip' | 'port' | 'protocol' | 'internal'>,
) =>
  m.ip === f.ip &&
  m.port === f.port &&
  (m.internal ?? false) === (f.internal ?? false) &&
  (m.protocol === undefined || m.protocol === f.protocol);

/** Cilium 1.19's wildcard entry of a VIP (port 0, protocol ANY, no backends): the datapath drops
 * traffic to the address's ports no Service uses; it is no Service port of its own. */
export const isDropEntry = (f: Pick<CiliumFrontend, 'port' | 'protocol'>) =>
  f.port === 0 && f.protocol === 'any';

/** The flag Cilium sets on a Service entry with an L7 proxy port (an Ingress's or a Gateway's
 * Service, one a CiliumEnvoyConfig redirects): the datapath sends its new connections to Envoy on
 * the node at that port and picks no backend from the map (bpf/lib/lb.h, lbX_svc_is_l7_loadbalancer). */
const L7_FLAG = 'l7-load-balancer';

/** A Service entry's flags as a listing prints them, the l7-load-balancer flag taken out: where
 * it is there, the frontend is marked sent to the L7 proxy (at `port`, where the listing prints
 * it). The readers' one place for the flag. */
export function withoutL7Flag(
  fe: CiliumFrontend,
  flags: string[],
  port: number | undefined,
): string[] {
  if (!flags.includes(L7_FLAG)) return flags;
  fe.l7Proxy = port === undefined ? {} : { port };
  return flags.filter((f) => f !== L7_FLAG);
}

/** The wildcard address of NodePort and HostPort frontends (one per node address in the maps). */
export const isWildcard = (ip: string) => ip === '0.0.0.0' || ip === '::';

/** Each type by its name in lower case: a big listing names one on each of its Services' rows. */
const TYPE_BY_NAME = new Map(FRONTEND_TYPES.map((t) => [t.toLowerCase(), t]));

export function frontendType(word: string | undefined): FrontendType | undefined {
  return word === undefined ? undefined : TYPE_BY_NAME.get(word.toLowerCase());
}

export function backendState(word: string | undefined): BackendState | undefined {
  if (word === undefined) return undefined;
  const w = word?.toLowerCase().replace(/_/g, '-');
  if (w === 'unhealthy') return 'quarantined';
  return BACKEND_STATES.find((s) => s === w);
}
