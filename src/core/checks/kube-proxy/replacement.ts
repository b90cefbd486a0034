// Services programmed without kube-proxy: Cilium's agent in its place, or another proxy, told
// from its Pods, its ConfigMap, or node rules without kube-proxy's chains.
import { read, seen, unseen } from '../../findings/evidence.js';
import type { Evidence } from '../../model.js';
import { kubectl, type NextCommand } from '../../findings/next-command.js';
import { knows } from '../../dataplane/cilium/agent/agent.js';
import { count, list } from '../check.js';
import type { CheckContext } from '../context.js';
import { kubeProxyPods } from './pods.js';

/** The nodes where Cilium's agent replaces kube-proxy (their node state says so). */
export const ciliumNodes = (ctx: CheckContext): string[] =>
  ctx.nodeNames().filter((n) => ctx.analysis.state(n).mode.value === 'cilium');

/** Where agents refuse cilium-config as read (agent.ts notKnown): its value is in no configuration
 * they are seen to run on. */
function refusedBy(ctx: CheckContext): string {
  const agents = ctx
    .nodeNames()
    .map((n) => ctx.analysis.state(n).cilium)
    .filter((a) => a !== undefined && !knows(a.settings, 'kubeProxyReplacement'));
  if (agents.length === 0) return '';
  const pods = agents.map((a) => `${a!.pod.namespace}/${a!.pod.name}`);
  return `, from a cilium-config ${count(pods.length, 'agent')} refuse${pods.length === 1 ? 's' : ''} (${list(pods)}): not observed in force`;
}

/** A kube-proxy replacement, with the command that shows its Service table; `unobserved` says
 * why no node was seen to run it (read from the API only, or refused), when none was. */
export function replacement(
  ctx: CheckContext,
): { name: string; evidence: Evidence[]; next?: NextCommand; unobserved?: string } | undefined {
  if (kubeProxyPods(ctx).length > 0) return undefined;
  const cilium = ctx.view.pods.filter((p) => p.labels['k8s-app'] === 'cilium');
  const cfg = ctx.view.configMaps.find((c) => c.name === 'cilium-config')?.data[
    'kube-proxy-replacement'
  ];
  if (cilium.length > 0 || (cfg && cfg !== 'false' && cfg !== 'disabled')) {
    // only an agent's own status, read on its node, shows the replacement in force
    const observed = ciliumNodes(ctx)
      .map((n) => ctx.analysis.state(n).mode.evidence)
      .filter((e) => e.kind === 'observed');
    const refused = refusedBy(ctx);
    const unseenWhy =
      observed.length > 0
        ? undefined
        : refused
          ? 'the agents refuse the cilium-config read, so the kube-proxy replacement it sets is not known to be in force'
          : 'no agent status was read on a node, only the API objects';
    return {
      name: 'Cilium',
      evidence: [
        ...(cfg ? [read(`ConfigMap cilium-config: kube-proxy-replacement: ${cfg}${refused}`)] : []),
        read(`${count(cilium.length, 'cilium Pod')} in kube-system, no kube-proxy Pods`),
        ...observed,
        ...(unseenWhy ? [unseen('no Cilium agent seen replacing kube-proxy on a node')] : []),
      ],
      next: unseenWhy
        ? kubectl('kube-system', 'exec', 'ds/cilium', '--', 'cilium-dbg', 'status', '--verbose')
        : kubectl('kube-system', 'exec', 'ds/cilium', '--', 'cilium-dbg', 'service', 'list'),
      ...(unseenWhy ? { unobserved: unseenWhy } : {}),
    };
  }
  const dumps = ctx
    .nodesWithRules()
    .map((n) => ctx.rules(n))
    .filter((r) => r?.ruleset);
  const kubeChains = dumps.some((r) => r!.ruleset!.table('nat')?.chain('KUBE-SERVICES'));
  const hasDaemonSet = ctx.view.daemonSets.some((d) => d.metadata?.name === 'kube-proxy');
  if (dumps.length > 0 && !kubeChains && !hasDaemonSet)
    return {
      name: 'another Service proxy',
      evidence: [
        seen(
          `no kube-proxy Pods, and no KUBE-SERVICES chain in the rules of ${list(ctx.nodesWithRules())}`,
        ),
      ],
      next: kubectl('kube-system', 'get', 'pods', '-o', 'wide'),
    };
  return undefined;
}
