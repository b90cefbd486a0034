// Step 6: who programs the Service on each node. kube-proxy's mode per node (its /proxyMode,
// else the ConfigMap), a kube-proxy Pod running on every node, how fresh its last sync is (its
// /metrics), or a replacement such as Cilium, said plainly.
// Each part is in kube-proxy/; here the check runs them in order.
import { rolloutText } from '../../kube/daemon-set.js';
import { read, unseen } from '../../findings/evidence.js';
import { namedFew } from '../../nodes/access.js';
import { kubectl } from '../../findings/next-command.js';
import { type Check, count, findingOf, noRulesFor, pending } from '../check.js';
import { backends } from './backends.js';
import { modes } from './modes.js';
import {
  embedded,
  kubeProxyPods,
  kubeProxyPodsWide,
  notListed,
  running,
  stale,
  staleOn,
} from './pods.js';
import { agentMissingOn, agentsFailing, agentsMissing, replacement } from './replacement.js';
import { freshness } from './sync.js';
import { versions } from './versions.js';

// rules/ takes these from this path
export { kubeProxyLogs } from './pods.js';
export { proxyModes } from './modes.js';
export { agentReadsFailed, ciliumNodes, replacement } from './replacement.js';
export { withSyncShown } from './sync.js';

const finding = findingOf('kube-proxy');

export const kubeProxyCheck: Check<'kube-proxy'> = {
  id: 'kube-proxy',
  title: 'kube-proxy',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName', 'headless'],
    id: 'kube-proxy-not-involved',
    title: noRulesFor,
    explanation:
      'There is no virtual IP to translate: clients reach the Pods (or the external name) directly.',
  },
  run(ctx) {
    if (ctx.waiting('objects')) return pending('reading kube-proxy');
    const other = replacement(ctx);
    const missing = other ? [...agentsMissing(ctx), ...agentsFailing(ctx)] : [];
    if (other?.unobserved)
      return [
        ...missing,
        finding(
          'kube-proxy-replaced',
          'skip',
          `no kube-proxy: whether ${other.name} handles Services is not observed`,
          {
            explanation: `No kube-proxy Pod runs, and the API objects name ${other.name} in its place, but ${other.unobserved}. Its agent's status on a node shows whether it replaces kube-proxy (KubeProxyReplacement).`,
            evidence: other.evidence,
            next: other.next,
          },
        ),
      ];
    // the nodes without an agent are not said handled
    const without = [...agentMissingOn(ctx, false), ...agentMissingOn(ctx, true)];
    if (other)
      return [
        ...missing,
        finding(
          'kube-proxy-replaced',
          'pass',
          `no kube-proxy: Services are handled by ${other.name}${without.length > 0 ? ` (no agent Pod on ${namedFew(without)})` : ''}`,
          {
            explanation: `This cluster runs without kube-proxy; ${other.name} programs Services (with eBPF, not iptables). The Rules step reads its agent's own Service table on each node where it was recorded, and compares it with what the agent should hold for the current objects.`,
            evidence: other.evidence,
            next: other.next,
            info: true,
          },
        ),
      ];
    const inside = embedded(ctx);
    if (kubeProxyPods(ctx).length === 0 && inside)
      return [inside, ...modes(ctx), ...versions(ctx), ...backends(ctx), ...freshness(ctx)];
    if (kubeProxyPods(ctx).length === 0 && ctx.view.daemonSets.length === 0)
      return [
        finding('kube-proxy-not-recorded', 'skip', 'no kube-proxy Pods in the facts', {
          explanation:
            'kdebug read no kube-proxy DaemonSet or Pods (some distributions, like k3s, run it inside another process). The node rules below show whether it did its work.',
          evidence: [unseen('no kube-proxy DaemonSet or Pods in the facts')],
          next: kubectl('kube-system', 'get', 'pods', '-o', 'wide'),
        }),
        ...modes(ctx),
        ...versions(ctx),
        ...backends(ctx),
      ];
    const out = [
      ...running(ctx),
      ...stale(ctx),
      ...modes(ctx),
      ...versions(ctx),
      ...backends(ctx),
      ...freshness(ctx),
    ];
    // a Pod whose node stopped posting status speaks for nothing now: stale() says so
    const unknown = staleOn(ctx);
    const pods = kubeProxyPods(ctx).filter((p) => !p.nodeName || !unknown.has(p.nodeName));
    const nodesUnseen = ctx.notCaptured('Node');
    const unread = notListed(ctx);
    if (unread && !unread.rollout)
      out.unshift(
        finding(
          'kube-proxy-not-observed',
          'skip',
          `kube-proxy Pods not read on ${count(unread.nodes.length, 'node')}`,
          {
            explanation: `kdebug read the kube-proxy Pods of the nodes it chose only, and the kube-proxy DaemonSet's status, which would speak for the others, is not settled (or was not read): whether kube-proxy runs on ${unread.nodes.length === 1 ? 'that node' : 'those nodes'} is not known.`,
            evidence: [unseen(`kube-proxy Pods on ${namedFew(unread.nodes)}: not read`)],
            next: kubeProxyPodsWide(ctx),
          },
        ),
      );
    // the nodes the settled DaemonSet speaks for, with those whose Pods were read, each once
    const up = unread?.rollout
      ? new Set([...pods.flatMap((p) => (p.nodeName ? [p.nodeName] : [])), ...unread.nodes]).size
      : pods.length;
    if (!out.some((f) => f.id === 'kube-proxy-not-running') && (up > 0 || unknown.size === 0))
      out.unshift(
        finding('kube-proxy-running', 'pass', `kube-proxy running on ${count(up, 'node')}`, {
          explanation:
            nodesUnseen ||
            (unread && !unread.rollout) ||
            unknown.size > 0 ||
            out.some((f) => f.id === 'kube-proxy-outside-pod')
              ? `Each kube-proxy Pod kdebug read${unknown.size > 0 ? ' on a node that posts its status' : ''} is ready.`
              : unread?.rollout
                ? `Every node has a ready kube-proxy Pod: those kdebug read, and on the other ${unread.nodes.length} the DaemonSet's status, which counts every Pod it schedules ready and of the current template.`
                : 'Every node has a ready kube-proxy Pod.',
          evidence: [
            ...pods.map((p) =>
              read(
                `Pod ${p.name} ${p.nodeName ? `on ${p.nodeName}` : '(not scheduled yet)'}: ${p.phase}, Ready`,
                `Pod kube-system/${p.name}`,
              ),
            ),
            ...(unread?.rollout
              ? [
                  read(
                    `${rolloutText(unread.rollout)}; its Pods on ${namedFew(unread.nodes)} not listed one by one`,
                    `DaemonSet kube-system/${unread.rollout.name}`,
                  ),
                ]
              : []),
          ],
        }),
      );
    // without the Nodes, a node that has no kube-proxy Pod at all cannot show
    if (nodesUnseen)
      out.splice(
        1,
        0,
        finding('nodes-not-observed', 'skip', 'Nodes not captured', {
          explanation: `kdebug did not see the Nodes (${nodesUnseen}), so it cannot tell whether every node runs kube-proxy, nor compare node addresses with the rules.`,
          evidence: [unseen(`Nodes: ${nodesUnseen}`)],
          next: kubectl(undefined, 'get', 'nodes', '-o', 'wide'),
        }),
      );
    return out;
  },
};
