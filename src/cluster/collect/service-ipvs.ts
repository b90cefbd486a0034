// One Service's IPVS state read on a node by address (kdebug svc): its virtual servers with
// `ipvsadm -Ln -t|-u|--sctp-service IP:PORT`, its ipset entries with `ipset test SET ENTRY`, as
// core/dataplane/ipvs/service-reads.ts plans them from what kube-proxy programs there for it; the
// whole listing (ipvsadm-save -n, ipset list -o save) where a read by address fails or cannot
// stand for its own, with why.
import { Analysis } from '../../core/nodes/analysis.js';
import type { DataplaneCode } from '../../core/dataplane/modes.js';
import type { ExpectedIpvs } from '../../core/dataplane/ipvs/expected/expected.js';
import {
  ipsetAnswer,
  NO_SUCH_SERVICE,
  virtualServerAt,
} from '../../core/dataplane/ipvs/read/by-address.js';
import { serviceIpvsReads } from '../../core/dataplane/ipvs/read/service-reads.js';
import { findService, type ClusterView } from '../../core/kube/objects.js';
import type { NodeOutputs } from '../../core/model.js';
import type { NodeFailure } from '../../core/nodes/errors.js';
import { commandStem, type NodeCommand, type NodeResult } from '../cluster.js';
import { typedCommand } from '../nodes/commands.js';
import { fallbackOf, readDecision } from './node-plan.js';

/**
 * A read by address as kdebug records it: ipvsadm's "No such service" (exit 1) is an empty
 * listing, no virtual server there (observed, not a failure); ipset test's answer, on stderr with
 * exit 0 or 1, is its record. Anything else stays what it was.
 */
export function recordedAnswer(c: NodeCommand, r: NodeResult): NodeResult {
  if (c.kind === 'ipvs-service' && r.exitCode === 1 && NO_SUCH_SERVICE.test(r.stderr))
    return { ...r, stdout: '', exitCode: 0 };
  if (
    c.kind === 'ipset-test' &&
    (r.exitCode === 0 || r.exitCode === 1) &&
    ipsetAnswer(r.stderr, c.set)
  )
    return { ...r, stdout: r.stderr, exitCode: 0 };
  return r;
}

/** What the reads of one node need from the run: its outputs so far, a read run (guarded), reads
 * run a few at once, a read's failure there, and forgetting reads (their outputs and failures)
 * read again whole. */
export interface NodeReadsIo {
  outputs(): NodeOutputs | undefined;
  run(c: NodeCommand): Promise<void>;
  inLanes(reads: NodeCommand[]): Promise<void>;
  failure(stem: string): NodeFailure | undefined;
  forget(stems: ReadonlySet<string>): void;
}

/** The one Service, and the analysis that says what kube-proxy programs for it on each node: its
 * facts hold each node's outputs from when that node's IPVS reads are planned. */
export interface IpvsPlanner {
  view: ClusterView;
  target: { namespace: string; name: string };
  analysis: Analysis;
}

export const ipvsPlanner = (
  view: ClusterView,
  target: IpvsPlanner['target'],
  code: DataplaneCode,
): IpvsPlanner => ({
  view,
  target,
  analysis: new Analysis({ objects: [], nodes: {}, meta: {} }, { view, code }),
});

/** What kube-proxy programs on `node` for the Service, in each family it has, from what the node
 * gave so far (its addresses, kube-proxy's configuration). */
function expectedOn(p: IpvsPlanner, node: string, outputs: NodeOutputs): ExpectedIpvs[] {
  const svc = findService(p.view, p.target.namespace, p.target.name);
  if (!svc) return [];
  // the node's analysis is made once, now that its basics are read
  p.analysis.facts.nodes[node] = outputs;
  const v6 = svc.clusterIPs.some((ip) => ip.includes(':'));
  return (v6 ? (['IPv4', 'IPv6'] as const) : (['IPv4'] as const)).map((family) =>
    p.analysis.node(node, undefined, family).ipvsExpected([svc]),
  );
}

/**
 * One Service's IPVS state on a node: read by address, else (IPVS not loaded there, too many
 * reads, a read that fails or cannot stand for its own) whole as before. Returns why the whole
 * state (or the ipsets alone) was read, where a read by address gave way.
 */
export async function readServiceIpvs(
  io: NodeReadsIo,
  node: string,
  planner: IpvsPlanner,
): Promise<string | undefined> {
  const save: NodeCommand = { kind: 'ipvs-save' };
  const sets: NodeCommand = { kind: 'ipset-save' };
  // IPVS not loaded, or not known to be: the whole reads say so as they always did
  if (readDecision(save, io.outputs()) !== 'run') {
    for (const c of [save, sets]) await io.run(c);
    return undefined;
  }
  const plan = serviceIpvsReads(expectedOn(planner, node, io.outputs() ?? {}));
  if ('whole' in plan) {
    await readListing(io, save);
    await io.run(sets);
    return `IPVS: ${plan.whole}`;
  }
  await io.inLanes(plan.virtualServers);
  const unclear = plan.virtualServers
    .map((c) =>
      whyNot(io, c, (text) => {
        const at = virtualServerAt(text, c, `nodes/${node}/${commandStem(c)}.txt`);
        return 'unclear' in at ? at.unclear : undefined;
      }),
    )
    .find((w) => w !== undefined);
  if (unclear) {
    // the whole state then, the ipsets too: a whole listing is compared with whole sets
    io.forget(new Set(plan.virtualServers.map(commandStem)));
    await readListing(io, save);
    await io.run(sets);
    return unclear;
  }
  await io.inLanes(plan.tests);
  const untested = plan.tests
    .map((c) =>
      whyNot(io, c, (text) =>
        ipsetAnswer(text, c.set) ? undefined : `"${text.trim()}" is not its answer to ipset test`,
      ),
    )
    .find((w) => w !== undefined);
  if (!untested) return undefined;
  io.forget(new Set(plan.tests.map(commandStem)));
  await io.run(sets);
  return untested;
}

/** Why a read by address cannot stand for its own: it failed, or what it printed does not read. */
function whyNot(
  io: NodeReadsIo,
  c: NodeCommand,
  unclear: (text: string) => string | undefined,
): string | undefined {
  const stem = commandStem(c);
  const typed = typedCommand(c).join(' ');
  const failed = io.failure(stem);
  if (failed) return `${typed}: ${failed.error}`;
  const text = io.outputs()?.[stem];
  if (text === undefined) return `${typed} was not run`;
  const why = unclear(text);
  return why === undefined ? undefined : `${typed}: ${why}`;
}

/** ipvsadm-save -n, or ipvsadm -Ln where the node has no ipvsadm-save (as the whole reads do). */
async function readListing(io: NodeReadsIo, save: NodeCommand): Promise<void> {
  await io.run(save);
  const failed = io.failure(commandStem(save));
  const other = fallbackOf(save);
  if (!failed || !other || (failed.exitCode === null && !failed.missingBinary)) return;
  await io.run(other);
  if (io.outputs()?.[commandStem(other)] !== undefined) io.forget(new Set([commandStem(save)]));
}
