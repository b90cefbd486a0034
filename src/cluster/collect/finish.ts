// The node half of a capture: the nodes read whatever the cluster-wide lists say, begun early; the
// others chosen once every Node is listed (their kube-proxy Pods read by node where its DaemonSet
// is settled), all read; and the Facts made of the objects and what the nodes gave.
import { Analysis } from '../../core/nodes/analysis.js';
import type { DataplaneCode } from '../../core/dataplane/modes.js';
import { isWindows } from '../../core/kube/objects.js';
import type { Facts, NodeOutputs, SnapshotMeta } from '../../core/model.js';
import { NodeErrorFold } from '../../core/nodes/errors.js';
import { nodeErrorsMeta } from '../../core/facts/not-read.js';
import { commandStem, type Cluster, type NodeCommand } from '../cluster.js';
import { SYSTEM } from '../permissions.js';
import { isNodeName } from '../snapshot/files.js';
import {
  CILIUM_AGENTS,
  listKubeProxyPods,
  PODS_BY_NODE,
  readProxyPodsOn,
  type ProxyPodsByNode,
} from './addons.js';
import type { Reader } from './api-reader.js';
import type { CollectOptions, CollectProgress, NodeTally } from './options.js';
import { readNodesWhole } from './node-rows.js';
import { runNodeCommands, type NodeReads } from './run-on-nodes.js';

/** The rules not kept of several reads, node by node and chain by chain. */
function mergeNotKept(reads: NodeReads['notKept'][]): NodeReads['notKept'] {
  const out: NodeReads['notKept'] = {};
  for (const read of reads)
    for (const [node, chains] of Object.entries(read))
      for (const [chain, n] of Object.entries(chains))
        out[node] = { ...out[node], [chain]: (out[node]?.[chain] ?? 0) + n };
  return out;
}

/** The chosen nodes read: those begun early given what the full commands add (rarely anything),
 * the others all of it; one tally for both, and one fold of what failed. */
async function readNodes(
  cluster: Cluster,
  nodes: string[],
  commands: NodeCommand[],
  o: CollectOptions,
  progress: (p: CollectProgress) => void,
  byService: Parameters<typeof runNodeCommands>[5],
  fold: NodeErrorFold,
  early?: Early,
): Promise<NodeReads> {
  const none: NodeReads = { outputs: {}, notKept: {}, wholeWhy: {} };
  if (!early)
    return commands.length > 0
      ? runNodeCommands(cluster, nodes, commands, o, progress, byService, undefined, fold)
      : none;
  const begun = new Set(early.nodes);
  const ran = new Set(early.commands.map(commandStem));
  const more = commands.filter((c) => !ran.has(commandStem(c)));
  const rest = nodes.filter((n) => !begun.has(n));
  // the early nodes are counted once, by their first run: the top-up tells no tally
  const quiet = { ...o, onNodes: undefined, onNodeFacts: undefined };
  const [first, others, topUp] = await Promise.all([
    early.run,
    rest.length > 0 && commands.length > 0
      ? runNodeCommands(cluster, rest, commands, o, progress, byService, early.tally, fold)
      : none,
    more.length > 0
      ? runNodeCommands(cluster, early.nodes, more, quiet, progress, byService, undefined, fold)
      : none,
  ]);
  const outputs: Record<string, NodeOutputs> = { ...first.outputs, ...others.outputs };
  for (const [node, out] of Object.entries(topUp.outputs))
    outputs[node] = { ...outputs[node], ...out };
  return {
    outputs,
    notKept: mergeNotKept([first.notKept, others.notKept, topUp.notKept]),
    wholeWhy: { ...first.wholeWhy, ...others.wholeWhy, ...topUp.wholeWhy },
  };
}

/** The early nodes' reads under way: which nodes, with which commands. */
export interface Early {
  nodes: string[];
  commands: NodeCommand[];
  tally: NodeTally;
  /** What failed there; the other nodes' failures join it. */
  fold: NodeErrorFold;
  run: Promise<NodeReads>;
}

/** Starts the early nodes (see CollectOptions.early) on the objects read so far, with their own
 * Node objects and agent Pods, asked for by name: the lists of every one are still on their way. */
export async function startEarly(
  cluster: Cluster,
  r: Reader,
  meta: SnapshotMeta,
  o: CollectOptions,
  progress: (p: CollectProgress) => void,
  kubeProxyPods: Promise<string>,
  code: DataplaneCode,
  proxy?: ProxyPodsByNode,
): Promise<Early | undefined> {
  const early = o.early;
  if (!early) return undefined;
  const facts = () => ({
    objects: r.sorted(),
    nodes: {},
    meta: { ...cluster.meta, ...meta, ...r.meta() },
  });
  const sofar = facts();
  // three reads by name a node, which the lists bring too: past PODS_BY_NODE the rest wait for them
  const wanted = early
    .nodes(sofar, new Analysis(sofar, { code }))
    .filter(isNodeName)
    .slice(0, PODS_BY_NODE);
  if (wanted.length === 0) return undefined;
  const selector = await kubeProxyPods;
  await Promise.all(
    wanted.flatMap((node) => [
      r.extra(`Node ${node}`, { resource: 'nodes', name: node }),
      ...[selector, CILIUM_AGENTS].map((labelSelector) =>
        r
          .extra(`agent Pods on ${node}`, {
            resource: 'pods',
            namespace: SYSTEM,
            labelSelector,
            fieldSelector: `spec.nodeName=${node}`,
          })
          .then((answered) => {
            if (answered && proxy && labelSelector === selector) proxy.on.add(node);
          }),
      ),
    ]),
  );
  const base = facts();
  const analysis = new Analysis(base, { code });
  // a node that does not exist (or runs Windows) is not chosen later: not read now either
  const linux = new Set(analysis.view.nodes.filter((n) => !isWindows(n)).map((n) => n.name));
  const nodes = wanted.filter((n) => linux.has(n));
  const commands = early.commands(base, analysis);
  if (nodes.length === 0 || commands.length === 0) return undefined;
  cluster.podsRead?.(analysis.view.pods);
  cluster.nodesRead?.(analysis.view.nodes);
  const byService = o.rulesOf ? { view: analysis.view, target: o.rulesOf, code } : undefined;
  const tally: NodeTally = { read: 0, failed: 0, left: 0 };
  const fold = new NodeErrorFold();
  const run = runNodeCommands(cluster, nodes, commands, o, progress, byService, tally, fold);
  // its failure is the run's: told when finish waits for it
  run.catch(() => undefined);
  return { nodes, commands, tally, fold, run };
}

export async function finish(
  cluster: Cluster,
  r: Reader,
  meta: SnapshotMeta,
  o: CollectOptions,
  progress: (p: CollectProgress) => void,
  code: DataplaneCode,
  early?: Early,
  proxy?: ProxyPodsByNode,
): Promise<Facts> {
  let byNode = proxy;
  const readOn = () =>
    byNode ? { kubeProxyPodsReadOn: [...byNode.on].sort((a, b) => (a < b ? -1 : 1)) } : {};
  const facts = () => ({
    objects: r.sorted(),
    nodes: {},
    meta: { ...cluster.meta, ...meta, ...readOn(), ...r.meta() },
  });
  let base = facts();
  // one analysis of the objects for every question asked of them before the nodes are read
  let analysis = new Analysis(base, { code });
  /** Every kube-proxy Pod after all: the DaemonSet's status does not speak for these nodes. */
  const listEvery = async () => {
    const failed = r.errors.length;
    await listKubeProxyPods(r, byNode!.selector);
    // a list that failed leaves the Pods read by node as they were, and says which
    if (r.errors.length === failed) byNode = undefined;
  };
  // a DaemonSet that schedules another number of Pods than there are Linux nodes speaks for none
  const linux = analysis.view.nodes.filter((n) => !isWindows(n)).length;
  if (byNode && byNode.rollout.desired !== linux) {
    await listEvery();
    analysis = new Analysis((base = facts()), { code });
  }
  // Windows nodes have no iptables and no Linux debug Pod: nothing is run there
  const windows = new Set(analysis.view.nodes.filter(isWindows).map((n) => n.name));
  const nodes = (
    (typeof o.nodes === 'function' ? o.nodes(base, analysis) : o.nodes) ??
    base.objects.filter((x) => x.kind === 'Node').map((x) => x.metadata?.name ?? '')
  ).filter((n) => !windows.has(n));
  // the Nodes listed as rows: those chosen, those the steps read, and those not Ready (a row's
  // NotReady is Ready False or Unknown, without reason or taints: stale() tells them apart), whole
  const notReady = analysis.view.nodes.filter((n) => n.ready === false).map((n) => n.name);
  const whole = o.nodeRows
    ? readNodesWhole(r, [...nodes, ...(o.wholeNodes?.(base, analysis) ?? []), ...notReady])
    : false;
  // the chosen nodes' kube-proxy Pods, where not read yet: the node states read them
  const pods =
    byNode &&
    nodes.some((n) => !byNode!.on.has(n)) &&
    (async () => {
      if (!(await readProxyPodsOn(r, byNode!, nodes))) await listEvery();
      return true;
    })();
  if ((await Promise.all([pods, whole])).some(Boolean)) {
    // what the choice wrote into the facts' meta stays; the nodes read by node are updated
    const { kubeProxyPodsReadOn: _, ...chosen } = base.meta;
    base = { ...facts(), meta: { ...chosen, ...readOn(), ...r.meta() } };
    analysis = new Analysis(base, { code });
  }
  const objects = base.objects;
  const commands =
    typeof o.nodeCommands === 'function' ? o.nodeCommands(base, analysis) : (o.nodeCommands ?? []);
  const view = o.rulesOf ? analysis.view : undefined;
  // the agents' Pods are in hand: the node channels need not list them again
  if (commands.length > 0) {
    cluster.podsRead?.(analysis.view.pods);
    cluster.nodesRead?.(analysis.view.nodes);
  }
  const byService = view && o.rulesOf ? { view, target: o.rulesOf, code } : undefined;
  const fold = early?.fold ?? new NodeErrorFold();
  const { outputs, notKept, wholeWhy } = await readNodes(
    cluster,
    nodes,
    commands,
    o,
    progress,
    byService,
    fold,
    early,
  );
  const read = r.meta();
  return {
    objects,
    nodes: outputs,
    meta: {
      ...cluster.meta,
      ...meta,
      ...readOn(),
      capturedAt: (o.now?.() ?? new Date()).toISOString(),
      ...o.meta,
      ...read,
      // up to FLAT failed nodes each in its own words (meta.nodeErrors), as older kdebug reads
      ...nodeErrorsMeta(fold, read.readErrors),
      ...(Object.keys(notKept).length > 0 ? { entryRulesNotKept: notKept } : {}),
      ...(Object.keys(wholeWhy).length > 0 ? { rulesReadWhole: wholeWhy } : {}),
    },
  };
}
