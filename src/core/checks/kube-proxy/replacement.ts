// Services programmed without kube-proxy: Cilium's agent in its place, or another proxy, told
// from its Pods, its ConfigMap, or node rules without kube-proxy's chains.
import { read, seen, unseen } from '../../findings/evidence.js';
import type { Evidence } from '../../model.js';
import { kubectl, valid, type NextCommand } from '../../findings/next-command.js';
import {
  CILIUM_STEMS,
  ciliumConfig,
  isCiliumAgentPod,
  knows,
} from '../../dataplane/cilium/agent/agent.js';
import type { Finding } from '../../model.js';
import { namedFew } from '../../nodes/access.js';
import { ofEach, ownWords } from '../../nodes/errors.js';
import { modeTraits } from '../../dataplane/mode-traits.js';
import { count, findingOf, list } from '../check.js';
import type { CheckContext } from '../context.js';
import { kubeProxyPods } from './pods.js';

/** The nodes where Cilium's agent replaces kube-proxy (their node state's mode says so). */
export const ciliumNodes = (ctx: CheckContext): string[] =>
  ctx
    .nodeNames()
    .filter((n) => modeTraits(ctx.analysis.state(n).mode.value)?.programmedBy === 'cilium-agent');

/** The reads of the Cilium agents' status and tables that failed, one a group of nodes that
 * failed alike (so thousands of nodes give a few lines): "node-a, node-b: cilium-status: why". */
export function agentReadsFailed(ctx: CheckContext): Evidence[] {
  const stems: string[] = Object.values(CILIUM_STEMS);
  return ctx.analysis.nodeErrors.groups.flatMap((g) =>
    g.errors
      .filter((f) => stems.includes(f.command))
      .map((f) =>
        g.nodes.length === 1
          ? unseen(`${g.nodes[0]}: ${f.command}: ${ownWords(f.error, g.nodes[0]!)}`, g.nodes[0])
          : unseen(`${namedFew(g.nodes)}: ${f.command}: ${ofEach(f.error)}`),
      ),
  );
}

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

/** One node's agent Pod and container, named (`exec ds/cilium` lands on any node's agent): the
 * first node's that has one; ds/cilium only where no node has. */
function agentTarget(ctx: CheckContext): (string | undefined)[] {
  const agent = ctx
    .nodeNames()
    .map((n) => ctx.analysis.state(n).cilium)
    .find((a) => a !== undefined);
  return agent ? [valid.name(agent.pod.name), '-c', valid.name(agent.container)] : ['ds/cilium'];
}

/** A kube-proxy replacement, with the command that shows its Service table; `unobserved` says
 * why no node was seen to run it (read from the API only, or refused), when none was. */
export function replacement(
  ctx: CheckContext,
): { name: string; evidence: Evidence[]; next?: NextCommand; unobserved?: string } | undefined {
  if (kubeProxyPods(ctx).length > 0) return undefined;
  const cilium = ctx.view.pods.filter(isCiliumAgentPod);
  const cfg = ciliumConfig(ctx.view)?.data['kube-proxy-replacement'];
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
        ? kubectl(
            'kube-system',
            'exec',
            ...agentTarget(ctx),
            '--',
            'cilium-dbg',
            'status',
            '--verbose',
          )
        : kubectl(
            'kube-system',
            'exec',
            ...agentTarget(ctx),
            '--',
            'cilium-dbg',
            'service',
            'list',
          ),
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

const finding = findingOf('kube-proxy');

/** The nodes of a Cilium cluster with neither a Cilium agent Pod nor a kube-proxy Pod in the API
 * (nodes/state.ts agentMissing): `ran` where the node's recorded agent status shows Cilium ran. */
export const agentMissingOn = (ctx: CheckContext, ran: boolean): string[] =>
  ctx.nodeNames().filter((n) => ctx.analysis.state(n).agentMissing?.ran === ran);

/** A node with no Service proxy Pod at all is a finding on that node: nothing programs Services
 * for its Pods, as far as the API shows; where its recorded Cilium status shows the agent ran,
 * that is what was observed, and the Pod absent from the API is said beside it. */
export function agentsMissing(ctx: CheckContext): Finding[] {
  const out: Finding[] = [];
  const none = agentMissingOn(ctx, false);
  const ran = agentMissingOn(ctx, true);
  const on = (nodes: string[]) => (nodes.length === 1 ? { node: nodes[0]! } : { nodes });
  const agents = ctx.view.pods.filter(isCiliumAgentPod);
  const listed = read(
    `Cilium agent Pods: ${agents.length} (${namedFew(agents.map((p) => `${p.name} ${p.nodeName ? `on ${p.nodeName}` : '(not scheduled yet)'}`))})`,
  );
  if (none.length > 0)
    out.push(
      finding(
        'cilium-agent-missing',
        'fail',
        `no Cilium agent Pod on ${none.length === 1 ? `node ${none[0]}` : `${none.length} nodes`}: nothing programs Services for its Pods`,
        {
          explanation: `Cilium programs this cluster's Services, and no kube-proxy runs in its place, but ${none.length === 1 ? `${none[0]} has` : 'these nodes have'} no Cilium agent Pod: nothing writes the Service table there, so Pods on ${none.length === 1 ? 'it' : 'them'} reach no Service (or keep what an earlier agent left in the BPF maps). No agent status was recorded there to say otherwise.`,
          evidence: [
            ...none.map((n) => ctx.analysis.state(n).mode.evidence),
            ...none.map((n) => read(`${n}: no Cilium agent Pod, no kube-proxy Pod`)),
            listed,
          ],
          next: kubectl('kube-system', 'describe', 'daemonset', 'cilium'),
          ...on(none),
        },
      ),
    );
  if (ran.length > 0)
    out.push(
      finding(
        'cilium-agent-missing',
        'warn',
        `no Cilium agent Pod on ${namedFew(ran)} in the API, though its recorded agent status shows Cilium replacing kube-proxy there`,
        {
          explanation: `The agent status recorded on ${ran.length === 1 ? 'that node' : 'those nodes'} shows Cilium ran there, replacing kube-proxy, yet the API holds no Cilium agent Pod for ${ran.length === 1 ? 'it' : 'them'}: the Pod was deleted or evicted after the status was recorded, or the agent runs outside the DaemonSet. Whether an agent still runs there now, and keeps the Service table current, is not known from the API; its recorded listings show what it held then.`,
          evidence: [...ran.map((n) => ctx.analysis.state(n).mode.evidence), listed],
          next: kubectl('kube-system', 'get', 'pods', '-l', 'k8s-app=cilium', '-o', 'wide'),
          ...on(ran),
        },
      ),
    );
  return out;
}

/** An agent whose own status says it is failing, or not following the Kubernetes API: its
 * Service table is what it last wrote, not kept current. */
export function agentsFailing(ctx: CheckContext): Finding[] {
  return ctx.nodeNames().flatMap((node) => {
    const agent = ctx.analysis.state(node).cilium;
    if (!agent?.unhealthy) return [];
    const source = `nodes/${node}/${CILIUM_STEMS.status}.txt`;
    const away = agent.unhealthy.some((l) => l.startsWith('Kubernetes:'));
    const failing = agent.unhealthy.some((l) => l.startsWith('Cilium:'));
    const says = [
      ...(failing ? ['failing'] : []),
      ...(away ? ['not following the Kubernetes API'] : []),
    ].join(' and ');
    return [
      finding(
        'cilium-agent-failing',
        'warn',
        `${node}: Cilium agent ${agent.pod.name} reports ${agent.unhealthy.map((l) => l.split(' ').slice(0, 2).join(' ')).join(', ')}`,
        {
          explanation: `The Cilium agent on ${node} says in its own status that it is ${says}: it does not program Services or endpoints that changed since, so the Service table it holds there is what it last wrote. Its log says why.`,
          evidence: agent.unhealthy.map((l) => seen(`${node}: ${l}`, { node, source })),
          next: kubectl(
            'kube-system',
            'logs',
            valid.name(agent.pod.name),
            '-c',
            valid.name(agent.container),
          ),
          node,
        },
      ),
    ];
  });
}
