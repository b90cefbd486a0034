// Which nodes one Service's diagnosis reads. On a small cluster, every node. On a large one, the
// nodes whose rules matter for this Service: the client's node (the connection that fails starts
// there), the nodes of its endpoints (hairpin, traffic policy, the endpoints' own view), nodes
// whose kube-proxy or Cilium agent looks unhealthy from the API alone, and a few others at random
// to catch a node that disagrees; capped. The choice is recorded, so the report says which nodes
// were read, why, and how many were not.
import { isCiliumAgentPod } from '../dataplane/cilium/agent/agent.js';
import { podReady } from '../checks/pod-health.js';
import {
  isKubeProxyPod,
  isWindows,
  slicesOf,
  type ClusterView,
  type Pod,
} from '../kube/objects.js';

/** Why a node was read. */
export type NodeReason = 'asked' | 'client' | 'endpoints' | 'unhealthy' | 'sample' | 'every';

export interface ChosenNode {
  node: string;
  why: NodeReason[];
  /** unhealthy: what the API shows ("kube-proxy Pod not Ready", "Node not Ready"). */
  detail?: string;
}

/** The choice, recorded in facts.meta.nodeChoice. */
export interface NodeChoice {
  /** every: the cluster is small (or --all-nodes); chosen: by the rules above; asked: --nodes. */
  policy: 'every' | 'chosen' | 'asked';
  /** Linux nodes the cluster has (Windows nodes are never read). */
  total: number;
  max: number;
  chosen: ChosenNode[];
  /** --from named a client kdebug did not find ("pod/web-0"): its node was not chosen for it. */
  clientNotFound?: string;
}

export interface NodeChoiceOptions {
  /** --nodes a,b,c */
  nodes?: string[];
  /** --all-nodes */
  all?: boolean;
  /** --max-nodes; default MAX_NODES. */
  max?: number;
  /** The client's node (--from node/NAME, or the node of --from pod/NAME). */
  client?: string;
  /** --from as given ("pod/web-0"), to say so when its node is not found. */
  clientAsked?: string;
  /** Nodes drawn at random from the rest; default SAMPLE. */
  sample?: number;
  /** [0, 1), for the sample; Math.random by default. */
  random?: () => number;
  /** The nodes whose kube-proxy Pods were read (facts.meta.kubeProxyPodsReadOn): the settled
   * DaemonSet speaks for the others. Undefined: every Pod was read. */
  kubeProxyPodsOn?: ReadonlySet<string>;
}

export const MAX_NODES = 20;
export const SAMPLE = 3;

export function chooseNodes(
  view: ClusterView,
  target: { namespace: string; service: string },
  o: NodeChoiceOptions = {},
): NodeChoice {
  const linux = view.nodes.filter((n) => !isWindows(n)).map((n) => n.name);
  const max = o.max ?? MAX_NODES;
  const total = linux.length;
  const missing =
    o.clientAsked !== undefined && (o.client === undefined || !linux.includes(o.client))
      ? { clientNotFound: o.clientAsked }
      : {};
  if (o.nodes)
    return {
      policy: 'asked',
      total,
      max,
      chosen: o.nodes.map((node) => ({ node, why: ['asked'] })),
      ...missing,
    };
  if (o.all || total <= max)
    return {
      policy: 'every',
      total,
      max,
      chosen: linux.map((node) => ({ node, why: ['every'] })),
      ...missing,
    };

  const known = new Set(linux);
  const chosen = new Map<string, ChosenNode>();
  const add = (node: string | undefined, why: NodeReason, detail?: string) => {
    if (!node || !known.has(node)) return;
    const c = chosen.get(node);
    if (c) {
      if (!c.why.includes(why)) c.why.push(why);
      if (detail && !c.detail) c.detail = detail;
    } else chosen.set(node, { node, why: [why], ...(detail ? { detail } : {}) });
  };
  add(o.client, 'client');
  for (const node of endpointNodes(view, target)) add(node, 'endpoints');
  for (const [node, detail] of unhealthy(view, linux, o.kubeProxyPodsOn))
    add(node, 'unhealthy', detail);
  // the priorities above fill the cap first; the sample only what is left of it
  const kept = [...chosen.values()].slice(0, max);
  const rest = linux.filter((n) => !chosen.has(n));
  const room = Math.max(0, Math.min(o.sample ?? SAMPLE, max - kept.length));
  const random = o.random ?? Math.random;
  for (let i = 0; i < room && rest.length > 0; i++) {
    const [node] = rest.splice(Math.floor(random() * rest.length), 1);
    kept.push({ node: node!, why: ['sample'] });
  }
  return { policy: 'chosen', total, max, chosen: kept, ...missing };
}

/** The nodes chooseNodes takes whatever the rest of the cluster holds, in its order: --nodes as
 * given, else the client's and the endpoints' within the cap. They can be read before every
 * Node and agent Pod is listed. */
export function firstChosen(
  view: ClusterView,
  target: { namespace: string; service: string },
  o: Pick<NodeChoiceOptions, 'nodes' | 'max' | 'client'> = {},
): string[] {
  if (o.nodes) return o.nodes;
  const first = [...(o.client ? [o.client] : []), ...endpointNodes(view, target)];
  return [...new Set(first)].slice(0, o.max ?? MAX_NODES);
}

/** The nodes the Service's endpoints run on: the EndpointSlices' nodeName, else their Pods'. */
function endpointNodes(
  view: ClusterView,
  target: { namespace: string; service: string },
): string[] {
  const out = new Set<string>();
  const pods = new Map(view.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  for (const s of slicesOf(view, { namespace: target.namespace, name: target.service }))
    for (const e of s.endpoints) {
      const ref =
        e.targetRef?.kind === 'Pod'
          ? `${e.targetRef.namespace ?? s.namespace}/${e.targetRef.name}`
          : '';
      const node = e.nodeName ?? pods.get(ref)?.nodeName;
      if (node) out.add(node);
    }
  return [...out].sort();
}

/**
 * Nodes whose dataplane looks unhealthy from the API alone: the Node not Ready, its kube-proxy
 * (or Cilium agent) Pod missing where the others have one, not Running and Ready, restarted, or
 * on another image than most (of the Pods read: a settled DaemonSet's others are ready).
 */
function unhealthy(
  view: ClusterView,
  linux: string[],
  kubeProxyPodsOn?: ReadonlySet<string>,
): Map<string, string> {
  const out = new Map<string, string>();
  const isLinux = new Set(linux);
  for (const n of view.nodes)
    if (n.ready === false && isLinux.has(n.name)) out.set(n.name, 'Node not Ready');
  for (const [what, is] of [
    ['kube-proxy', isKubeProxyPod],
    ['Cilium agent', isCiliumAgentPod],
  ] as const) {
    const pods = view.pods.filter(is);
    if (pods.length === 0) continue; // this dataplane does not run here
    const byNode = new Map<string, Pod>();
    for (const p of pods) if (p.nodeName) byNode.set(p.nodeName, p);
    const images = new Map<string, number>();
    for (const p of pods) {
      const image = p.containers[0]?.image;
      if (image) images.set(image, (images.get(image) ?? 0) + 1);
    }
    const usual = [...images].sort((a, b) => b[1] - a[1])[0]?.[0];
    // where only some nodes' kube-proxy Pods were read, the others' are ready as their DaemonSet says
    const read = what === 'kube-proxy' && kubeProxyPodsOn ? kubeProxyPodsOn : undefined;
    for (const node of linux) {
      if (out.has(node) || (read && !read.has(node))) continue;
      const p = byNode.get(node);
      const why = !p
        ? `no ${what} Pod`
        : p.phase !== 'Running' || !podReady(p)
          ? `${what} Pod ${p.name} not Running and Ready`
          : p.containerStatuses.some((c) => c.restartCount > 0)
            ? `${what} Pod ${p.name} restarted`
            : usual && p.containers[0]?.image && p.containers[0].image !== usual
              ? `${what} Pod ${p.name} runs ${p.containers[0].image}, most run ${usual}`
              : undefined;
      if (why) out.set(node, why);
    }
  }
  return out;
}

/** "endpoints", "client and endpoints": why, in a person's words. */
export function reasonText(c: ChosenNode): string {
  const words: Record<NodeReason, string> = {
    asked: 'asked for',
    client: 'the client',
    endpoints: 'holds endpoints',
    unhealthy: c.detail ?? 'looks unhealthy',
    sample: 'sampled',
    every: 'every node',
  };
  return c.why.map((w) => words[w]).join(', ');
}

const REASONS = new Set<NodeReason>([
  'asked',
  'client',
  'endpoints',
  'unhealthy',
  'sample',
  'every',
]);

/** The choice a capture recorded (facts.meta.nodeChoice), if it is one: a snapshot may hold anything. */
export function recordedChoice(meta: Record<string, unknown>): NodeChoice | undefined {
  const v = meta['nodeChoice'] as Partial<NodeChoice> | undefined;
  if (typeof v !== 'object' || v === null || !Array.isArray(v.chosen)) return undefined;
  if (v.policy !== 'every' && v.policy !== 'chosen' && v.policy !== 'asked') return undefined;
  if (!Number.isSafeInteger(v.total) || !Number.isSafeInteger(v.max)) return undefined;
  const chosen = v.chosen.filter(
    (c): c is ChosenNode =>
      typeof c === 'object' &&
      c !== null &&
      typeof c.node === 'string' &&
      Array.isArray(c.why) &&
      c.why.every((w) => REASONS.has(w)) &&
      (c.detail === undefined || typeof c.detail === 'string'),
  );
  if (chosen.length !== v.chosen.length) return undefined;
  const missing = typeof v.clientNotFound === 'string' ? { clientNotFound: v.clientNotFound } : {};
  return { policy: v.policy, total: v.total!, max: v.max!, chosen, ...missing };
}
