// Does each node run kube-proxy: its Pods (which they are, the selector that lists them, the
// nodes whose Pods were not read), each ready or why not, or kube-proxy inside k3s.
import { kubeProxyPodsReadOn, rolloutOf, settled, type Rollout } from '../../kube/daemon-set.js';
import { read, seen, unseen } from '../../findings/evidence.js';
import { kubeProxyPodOn } from '../../dataplane/iptables/drift/context.js';
import { isKubeProxyPod, isWindows, type Pod } from '../../kube/objects.js';
import type { Evidence, Finding } from '../../model.js';
import { namedFew } from '../../nodes/access.js';
import { kubectl, valid } from '../../findings/next-command.js';
import { count, findingOf, list } from '../check.js';
import type { CheckContext } from '../context.js';
import { describeNode, nodeDown, type NodeDown } from '../node-health.js';
import { podReady, whyNotReady, type NotReady } from '../pod-health.js';

const finding = findingOf('kube-proxy');

export function kubeProxyPods(ctx: CheckContext): Pod[] {
  return ctx.view.pods.filter(isKubeProxyPod);
}

/** Labels a DaemonSet stamps per revision: they differ from Pod to Pod of one kube-proxy. */
const REVISION = new Set([
  'controller-revision-hash',
  'pod-template-generation',
  'pod-template-hash',
]);

/** The label selector of this cluster's kube-proxy Pods, from the Pods seen: kubeadm's
 * k8s-app=kube-proxy where they carry it, else the labels they all share (a DaemonSet
 * labelled otherwise), with a label no kube-proxy Pod has left out where another kube-system
 * Pod shares them too ("tier=node,!app" beside flannel's). */
export function kubeProxySelector(ctx: CheckContext): string {
  const pods = kubeProxyPods(ctx);
  const usual = 'k8s-app=kube-proxy';
  if (pods.length === 0 || pods.every((p) => p.labels['k8s-app'] === 'kube-proxy')) return usual;
  const shared = Object.fromEntries(
    Object.entries(pods[0]!.labels).filter(
      ([k, v]) => !REVISION.has(k) && pods.every((p) => p.labels[k] === v),
    ),
  );
  const selector = valid.selector(shared);
  if (!selector) return usual;
  const alike = ctx.view.pods.filter(
    (p) =>
      p.namespace === 'kube-system' &&
      !isKubeProxyPod(p) &&
      Object.entries(shared).every(([k, v]) => p.labels[k] === v),
  );
  // each of those left out by a label key of its own: where one has none, it is listed too
  const absent = [
    ...new Set(
      alike.flatMap((p) => {
        const own = Object.keys(p.labels).find(
          (k) => valid.labelKey(k) !== undefined && pods.every((x) => !(k in x.labels)),
        );
        return own ? [own] : [];
      }),
    ),
  ];
  return [selector, ...absent.map((k) => `!${k}`)].join(',');
}

/** `kubectl get pods` of every kube-proxy Pod, wide (their nodes). */
export const kubeProxyPodsWide = (ctx: CheckContext) =>
  kubectl('kube-system', 'get', 'pods', '-l', kubeProxySelector(ctx), '-o', 'wide');

/** The Linux nodes whose kube-proxy Pods a capture did not read one by one, and the settled
 * kube-proxy DaemonSet whose status speaks for them (none where it is not settled). */
export function notListed(
  ctx: CheckContext,
): { nodes: string[]; rollout: Rollout | undefined } | undefined {
  const on = kubeProxyPodsReadOn(ctx.facts.meta);
  if (!on) return undefined;
  const nodes = ctx.view.nodes.filter((n) => !isWindows(n) && !on.has(n.name)).map((n) => n.name);
  if (nodes.length === 0) return undefined;
  const ds = ctx.view.daemonSets.find(
    (d) => d.metadata?.name === 'kube-proxy' && d.metadata.namespace === 'kube-system',
  );
  const rollout = ds && rolloutOf(ds);
  // a DaemonSet speaks for every Linux node only where it schedules one Pod on each
  const linux = ctx.view.nodes.filter((n) => !isWindows(n)).length;
  return {
    nodes,
    rollout: rollout && settled(rollout) && rollout.desired === linux ? rollout : undefined,
  };
}

/** kube-proxy's log on a node: its Pod's, or the command that finds that Pod. */
export function kubeProxyLogs(ctx: CheckContext, node: string) {
  const pod = kubeProxyPods(ctx).find((p) => p.nodeName === node);
  return pod ? kubectl('kube-system', 'logs', valid.name(pod.name)) : kubeProxyPodOn(node);
}

/** Every kube-proxy's recent log, each line named by its Pod: for a condition of many nodes. */
export const kubeProxyLogsAll = (ctx: CheckContext) =>
  kubectl('kube-system', 'logs', '-l', kubeProxySelector(ctx), '--prefix', '--tail=20');

/** The nodes whose kubelet stopped posting status (Ready=Unknown) with a kube-proxy Pod the API
 * still calls Running and Ready: that is the last status the kubelet posted, not known now. */
export function staleOn(ctx: CheckContext): Map<string, { pod: Pod; down: NodeDown }> {
  const out = new Map<string, { pod: Pod; down: NodeDown }>();
  for (const pod of kubeProxyPods(ctx)) {
    const down = nodeDown(ctx, pod.nodeName);
    if (down?.status === 'Unknown' && podReady(pod) && pod.phase === 'Running')
      out.set(down.node, { pod, down });
  }
  return out;
}

/** kube-proxy on the nodes of staleOn(): not observed, the node's status said as why. */
export function stale(ctx: CheckContext): Finding[] {
  const on = [...staleOn(ctx).values()];
  if (on.length === 0) return [];
  const nodes = on.map((s) => s.down.node);
  const one = nodes.length === 1;
  return [
    finding(
      'kube-proxy-node-not-ready',
      'skip',
      `kube-proxy on ${namedFew(nodes)}: not known to be running now (node status Unknown)`,
      {
        explanation: `The kubelet of ${one ? 'that node' : 'those nodes'} stopped posting status (Ready=Unknown): the Running, Ready the API holds for ${one ? 'its kube-proxy Pod' : 'their kube-proxy Pods'} is the last it posted, not what runs now. Whether kube-proxy runs there, and keeps its rules current, is not observed; the node itself may be down or cut off from the API server.`,
        evidence: on.flatMap(({ pod, down }) => [
          ...down.evidence,
          read(
            `Pod ${pod.name} on ${down.node}: ${pod.phase}, Ready (last posted)`,
            `Pod kube-system/${pod.name}`,
          ),
          unseen(`kube-proxy on ${down.node} now: not observed`, down.node),
        ]),
        next: describeNode(nodes[0]!),
        ...(one ? { node: nodes[0]! } : { nodes }),
      },
    ),
  ];
}

export function running(ctx: CheckContext): Finding[] {
  const pods = kubeProxyPods(ctx);
  const out: Finding[] = [];
  const notCaptured = pods.length === 0 ? ctx.notCaptured('Pod') : undefined;
  if (notCaptured)
    return [
      finding('kube-proxy-not-observed', 'skip', 'kube-proxy Pods not captured', {
        explanation: `kdebug did not see the Pods (${notCaptured}), so it cannot tell whether kube-proxy runs on each node; the node rules (step 7) show whether it did its work.`,
        next: kubeProxyPodsWide(ctx),
      }),
    ];
  const byNode = new Map<string, Pod>();
  for (const p of pods) if (p.nodeName && !byNode.has(p.nodeName)) byNode.set(p.nodeName, p);
  // nodes in the same condition are one finding: the cluster may have thousands
  const missing: string[] = [];
  const down = new Map<string, { pod: Pod; node: string; why: NotReady }[]>();
  const readOn = kubeProxyPodsReadOn(ctx.facts.meta);
  for (const n of [...ctx.view.nodes].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const node = n.name;
    if (readOn && !readOn.has(node)) continue; // the DaemonSet's status speaks for it: notListed()
    const pod = byNode.get(node);
    if (pod && podReady(pod) && pod.phase === 'Running') continue;
    if (!pod && isWindows(n)) continue; // Windows runs its own kube-proxy (a service or kube-proxy-windows)
    if (!pod && ctx.analysis.state(node).embeddedIn) continue; // k3s: embedded()
    if (!pod) missing.push(node);
    else {
      const why = whyNotReady(pod);
      down.set(why.short, [...(down.get(why.short) ?? []), { pod, node, why }]);
    }
  }
  // kube-proxy may run outside a Pod (systemd, a static binary): where it answered on the node,
  // the Pod missing from the API is no cause, said beside what answered
  const answered = missing.flatMap((node) => {
    const said = liveAnswer(ctx, node);
    return said ? [{ node, said }] : [];
  });
  if (answered.length > 0) {
    const nodes = answered.map((a) => a.node);
    missing.splice(0, missing.length, ...missing.filter((n) => !nodes.includes(n)));
    out.push(
      finding(
        'kube-proxy-outside-pod',
        'warn',
        `no kube-proxy Pod on ${namedFew(nodes)}, yet kube-proxy answered there (runs outside a Pod?)`,
        {
          explanation: `The API holds no kube-proxy Pod for ${nodes.length === 1 ? 'that node' : 'those nodes'}, but kube-proxy answered on ${nodes.length === 1 ? 'it' : 'them'}: it runs outside a Pod there (a systemd unit, a static binary), or its Pod was deleted after the answer was recorded. Its answer and rules, not the missing Pod, say whether it does its work (the Rules step compares them).`,
          evidence: answered.flatMap(({ node, said }) => [
            read(`${node}: no kube-proxy Pod`),
            said,
          ]),
          next: kubectl('kube-system', 'describe', 'daemonset', 'kube-proxy'),
          ...(nodes.length === 1 ? { node: nodes[0]! } : { nodes }),
        },
      ),
    );
  }
  const of = ctx.view.nodes.length;
  const scope = (nodes: string[]) =>
    nodes.length === 1
      ? {
          explanation: `Nothing updates the Service rules on ${nodes[0]}: new Services and endpoint changes never reach it, and Pods there keep using whatever rules were left, or none.`,
          node: nodes[0]!,
        }
      : {
          explanation: `Nothing updates the Service rules on these ${nodes.length} nodes: new Services and endpoint changes never reach them, and Pods there keep using whatever rules were left, or none. Clients on the other ${of - nodes.length} nodes do not meet this.`,
          nodes,
        };
  if (missing.length > 0)
    out.push(
      finding(
        'kube-proxy-not-running',
        'fail',
        missing.length === 1
          ? `no kube-proxy Pod on node ${missing[0]}`
          : `no kube-proxy Pod on ${missing.length} of ${of} nodes`,
        {
          ...scope(missing),
          evidence: [
            ...missing.map((node) => read(`${node}: no kube-proxy Pod`)),
            read(
              `kube-proxy Pods: ${pods.length} (${namedFew(
                pods.map(
                  (p) => `${p.name} ${p.nodeName ? `on ${p.nodeName}` : '(not scheduled yet)'}`,
                ),
              )})`,
            ),
          ],
          next: kubectl('kube-system', 'describe', 'daemonset', 'kube-proxy'),
        },
      ),
    );
  for (const [short, group] of down) {
    const first = group[0]!;
    out.push(
      finding(
        'kube-proxy-not-running',
        'fail',
        group.length === 1
          ? `kube-proxy on ${first.node} is not running: ${short}`
          : `kube-proxy is not running on ${group.length} of ${of} nodes: ${short}`,
        {
          ...scope(group.map((g) => g.node)),
          evidence:
            group.length === 1
              ? first.why.evidence
              : [
                  ...first.why.evidence,
                  ...group.slice(1).map((g) => read(`${g.pod.name} on ${g.node}: ${short}`)),
                ],
          next: kubectl('kube-system', 'logs', valid.name(first.pod.name), '--previous'),
        },
      ),
    );
  }
  return out;
}

/** What kube-proxy itself answered on the node, observed: its /proxyMode, its /configz, its
 * /metrics; undefined where none was recorded. */
function liveAnswer(ctx: CheckContext, node: string): Evidence | undefined {
  const { mode, config } = ctx.analysis.state(node);
  if (mode.from === 'proxyMode' && !mode.stale && mode.evidence.kind === 'observed')
    return mode.evidence;
  if (config.from === 'configz') return config.evidence;
  const metrics = ctx.facts.nodes[node]?.['proxy-metrics'];
  if (metrics && /^kubeproxy_/m.test(metrics))
    return seen(`${node}: kube-proxy's /metrics answered`, {
      node,
      source: `nodes/${node}/proxy-metrics.txt`,
    });
  return undefined;
}

/** k3s runs kube-proxy inside its own process, not as a Pod: said as what it is, from
 * the Nodes' kubelet version, never as a kube-proxy that is missing. */
export function embedded(ctx: CheckContext): Finding | undefined {
  const states = ctx
    .nodeNames()
    .map((n) => ctx.analysis.state(n))
    .filter((s) => s.embeddedIn);
  if (states.length === 0) return undefined;
  const distributions = [...new Set(states.map((s) => s.embeddedIn!))];
  return finding(
    'kube-proxy-embedded',
    'pass',
    `kube-proxy runs inside ${list(distributions)} on ${count(states.length, 'node')}, not as a Pod`,
    {
      explanation: `${list(distributions)} starts kube-proxy in its own process on each node: there is no kube-proxy Pod or DaemonSet to look at, its configuration is in the ${list(distributions)} configuration (kube-proxy-arg), and its /metrics answers on the node's port 10249. Whether it runs shows in its rules (step 7) and, where read, its /metrics.`,
      evidence: states.flatMap((s) => (s.version ? [s.version.evidence] : [])),
      info: true,
    },
  );
}
