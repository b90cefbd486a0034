// Where a command's Facts come from: a snapshot directory, the live cluster read now, or one
// node's rules read over SSH into a snapshot's objects; and the one node picker. The adapters
// (client-node, ssh2) load only when a source needs them. svc's live read: live-diagnosis.ts.
import { Analysis, loadDataplanes } from '../core/nodes/analysis.js';
import { EVERY_MODE, loadModes, type DataplaneCode } from '../core/dataplane/modes.js';
import { DUMP_STEMS, recordedFamily, recordedNodes } from '../core/facts/facts.js';
import { clusterView, type ClusterView } from '../core/kube/objects.js';
import type { Facts } from '../core/model.js';
import { byReason, namedFew, nodeAccessLines, type NodeAccess } from '../core/nodes/access.js';
import { nodeErrorsOf, rulesReadError } from '../core/nodes/errors.js';
import type { KubeCluster } from './kube-cluster.js';
import type { NodeAccessFlags } from './nodes/flags.js';
import type { DebugPodConsent, PodHolder } from './nodes/debug-pod.js';
import { readSnapshot } from './snapshot/read.js';

/** A source that cannot give what was asked (no such node, several and none picked): exit 2. */
export class FactsSourceError extends Error {}

/** Where to read from: --snapshot, else the live cluster; --node / --all-nodes; --ssh. */
export interface SourceFlags extends NodeAccessFlags {
  snapshot?: string;
  node?: string;
  allNodes?: boolean;
  ssh?: string;
}

/** What reading needs from the process: the kubeconfig flags, the environment, a voice. */
export interface SourceContext {
  kubeconfig?: string;
  context?: string;
  env: Record<string, string | undefined>;
  kdebugVersion: string;
  /** A line for stderr ("kdebug: ..."). */
  tell(line: string): void;
  /** Cleanups a signal runs (a live cluster's debug Pods). */
  release: Set<() => Promise<void>>;
  /** Where debug Pod channels list themselves until closed: a signal asks them for Pods. */
  podHolders: Set<PodHolder>;
}

export interface SourcedFacts {
  facts: Facts;
  /** The objects typed, once: the Analysis built next takes them rather than typing them again. */
  view: ClusterView;
  /** The code of the modes the facts hold: the Analysis built next reads their nodes with it. */
  code: DataplaneCode;
  /** The source in messages: the snapshot directory, or "context NAME". */
  label: string;
  /** The snapshot directory: its dumps' file names in parse errors. */
  dir?: string;
}

/**
 * The facts of a snapshot, or of the live cluster read now: every Service, EndpointSlice and Node,
 * kube-proxy's configuration, and with `rules` the rules of the nodes asked for (--node, or
 * --all-nodes, or the only node).
 */
export async function readFacts(
  o: SourceFlags,
  c: SourceContext,
  want: { rules: boolean },
): Promise<SourcedFacts> {
  if (o.snapshot !== undefined) {
    const facts = await readSnapshot(o.snapshot);
    const view = clusterView(facts.objects);
    const code = await loadDataplanes(facts, view);
    return { facts, view, code, label: o.snapshot, dir: o.snapshot };
  }
  const cluster = await connectLive(o, c);
  try {
    const { collectAll, nodeBasics } = await import('./collect.js');
    const facts = await collectAll(
      cluster,
      {},
      {
        meta: { kdebugVersion: c.kdebugVersion },
        // a node that does not exist, or several nodes and none picked: nothing to run
        nodeCommands: (f, { view }) => {
          const nodes = view.nodes.map((n) => n.name);
          const picked =
            o.node !== undefined ? nodes.includes(o.node) : o.allNodes || nodes.length === 1;
          return want.rules && picked ? nodeBasics(f, { view }) : [];
        },
        nodes: o.node !== undefined ? [o.node] : undefined,
      },
    );
    const label = `context ${cluster.meta.context ?? ''}`.trim();
    // no node read: the error says why for each, in place of the lines that would say it again
    const view = clusterView(facts.objects);
    // every mode, as collectAll loaded them: a live node's mode is known only as it is read
    const code = await loadModes(EVERY_MODE);
    if (want.rules) checkLiveNodes(facts, view, code, label, o);
    tellNodeAccess(cluster.nodeAccess(), c);
    return { facts, view, code, label };
  } finally {
    await closeLive(cluster, c);
  }
}

/** A live run's node choice, said in cluster words: which nodes exist, why one was not read. */
function checkLiveNodes(
  facts: Facts,
  view: ClusterView,
  code: DataplaneCode,
  label: string,
  o: SourceFlags,
): void {
  const nodes = view.nodes.map((n) => n.name);
  const list = `(nodes: ${nodes.join(', ') || 'none'})`;
  if (o.node !== undefined && !nodes.includes(o.node))
    throw new FactsSourceError(`${label}: no node "${o.node}" ${list}`);
  if (o.node === undefined && !o.allNodes && nodes.length !== 1)
    throw new FactsSourceError(`${label}: pick a node with --node ${list}`);
  const unread = (o.node !== undefined ? [o.node] : nodes).filter((n) => !recordedFamily(facts, n));
  const errors = nodeErrorsOf(facts);
  if (unread.length > 0 && unread.length === (o.node !== undefined ? 1 : nodes.length)) {
    // a Cilium agent that does not start with its configuration is why its node lists nothing
    const analysis = new Analysis(facts, { view, code });
    const why = (n: string) =>
      analysis.node(n).agentNotStarted() ?? rulesReadError(errors, n) ?? 'not reached';
    throw new FactsSourceError(
      // the same failure on many nodes said once: thousands of nodes, one short line
      `${label}: could not read the rules of ${byReason(
        unread.map((n) => ({ node: n, reason: why(n) })),
      )
        .map((g) => `${namedFew(g.nodes)} (${g.reason})`)
        .join('; ')}`,
    );
  }
}

/**
 * The nodes a command works on: --node, or every one with --all-nodes, or the only one. `among`
 * says which count: nodes with recorded rules (rules, drift, trace) or every known node, from
 * the Node objects too (expect computes rules for a node whose rules were not read).
 */
export function pickNodes(
  facts: Facts,
  label: string,
  o: { node?: string; allNodes?: boolean },
  among: 'recorded rules' | 'known',
  offerAllNodes = false,
): string[] {
  const recorded = recordedNodes(facts).filter((n) => recordedFamily(facts, n));
  const names =
    among === 'known'
      ? [...new Set([...clusterView(facts.objects).nodes.map((n) => n.name), ...recorded])].sort()
      : recorded;
  const what = among === 'known' ? 'nodes' : 'recorded';
  const list = names.length ? ` (${what}: ${names.join(', ')})` : '';
  if (o.node !== undefined) {
    if (names.includes(o.node)) return [o.node];
    // a dump recorded but not read (over its size cap, a failed read) says why, not "none"
    const why = among === 'known' ? undefined : rulesReadError(nodeErrorsOf(facts), o.node);
    throw new FactsSourceError(
      among === 'known'
        ? `${label}: no node "${o.node}"${list}`
        : why
          ? `${label}: could not read the rules of node "${o.node}" (${why})`
          : `${label}: no rules recorded for node "${o.node}"${list}`,
    );
  }
  if (names.length === 0)
    throw new FactsSourceError(
      among === 'known'
        ? `${label}: pick a node with --node`
        : `${label}: no node rules recorded (nodes/<node>/iptables-save.txt)`,
    );
  if (o.allNodes || names.length === 1) return o.allNodes ? names : [names[0]!];
  throw new FactsSourceError(
    `${label}: pick a node with --node${offerAllNodes ? ', or --all-nodes' : ''}${list}`,
  );
}

/** `rules --ssh`: a host's rules read straight over SSH, no cluster; ssh2 loads only here. */
export async function sshRulesText(
  destination: string,
  o: NodeAccessFlags,
  c: SourceContext,
): Promise<{ text: string; label: string; file: string; stem: string }> {
  const { readRulesOverSsh, sshOptionsFromFlags, SshError } = await import('./ssh/rules.js');
  try {
    const r = await readRulesOverSsh(destination, sshOptionsFromFlags(o, c.env));
    for (const note of r.notes) c.tell(note);
    return { text: r.text, label: r.via, file: `${r.via}: ${r.stem}`, stem: r.stem };
  } catch (e) {
    if (e instanceof SshError) throw new FactsSourceError(e.message);
    throw e;
  }
}

/**
 * Replaces the rules of the node behind `o.ssh` in `facts` by what its host holds now (a kubeadm
 * node whose API server is down); returns that node: --node, or the Node whose name or address
 * is the SSH host.
 */
export async function readNodeOverSsh(
  facts: Facts,
  label: string,
  o: SourceFlags & { ssh: string },
  c: SourceContext,
): Promise<{ node: string; via: string }> {
  const { parseSshDestination } = await import('./ssh/config.js');
  let host: string;
  try {
    host = parseSshDestination(o.ssh).host;
  } catch (e) {
    throw new FactsSourceError((e as Error).message);
  }
  const nodes = clusterView(facts.objects).nodes;
  const node =
    o.node ??
    nodes.find((n) => n.name === host || n.addresses.some((a) => a.address === host))?.name;
  if (node === undefined)
    throw new FactsSourceError(
      `${label}: which node is ${host}? give --node (nodes: ${nodes.map((n) => n.name).join(', ') || 'none'})`,
    );
  const r = await sshRulesText(o.ssh, o, c);
  const outputs = { ...facts.nodes[node] };
  for (const stem of DUMP_STEMS) delete outputs[stem];
  facts.nodes[node] = { ...outputs, [r.stem]: r.text };
  return { node, via: r.label };
}

/**
 * The live cluster of --context / --kubeconfig, with the node transport of --via; client-node
 * loads only here. `confirm` asks the person before a debug Pod is created (the TUI's hook);
 * without it, and without --yes, no debug Pod is created.
 */
export async function connectLive(
  o: NodeAccessFlags,
  c: SourceContext,
  confirm?: (q: DebugPodConsent) => Promise<boolean>,
): Promise<KubeCluster> {
  const { KubeCluster } = await import('./kube-cluster.js');
  const transport = await nodeTransport(o, c, () => undefined, confirm);
  const cluster = await KubeCluster.connect({
    kubeconfig: c.kubeconfig,
    context: c.context,
    transport,
  });
  c.release.add(() => cluster.close());
  return cluster;
}

/** Closes the cluster (its debug Pods deleted); a signal meanwhile still finds the close in
 * `release` and waits for it before kdebug exits. */
export async function closeLive(cluster: KubeCluster, c: SourceContext): Promise<void> {
  try {
    await cluster.close();
  } finally {
    c.release.clear();
  }
}

/** The node transport of --via and its flags; `created` hands it back so a signal can close it. */
export async function nodeTransport(
  o: NodeAccessFlags,
  c: SourceContext,
  created: (t: { close(): Promise<void> }) => void,
  confirm?: (q: DebugPodConsent) => Promise<boolean>,
) {
  const { nodeAccess } = await import('./nodes/transport.js');
  const { nodeAccessOptions, NodeFlagsError } = await import('./nodes/flags.js');
  try {
    const options = nodeAccessOptions(o, c.env, confirm);
    return nodeAccess({ ...options, pod: { ...options.pod, holders: c.podHolders } }, created);
  } catch (e) {
    if (e instanceof NodeFlagsError) throw new FactsSourceError(e.message);
    throw e;
  }
}

/** How each node was reached, one line each. */
export function tellNodeAccess(access: NodeAccess[], c: Pick<SourceContext, 'tell'>): void {
  for (const line of nodeAccessLines(access)) c.tell(line);
}
