// kube-proxy's mode on each node, as the node state decided it: one mode everywhere, nodes that
// differ from each other or from the configuration, and the nodes where nobody said it.
import { unseen } from '../../findings/evidence.js';
import { configTells } from '../../kube/objects.js';
import { configInObjects } from '../../nodes/state.js';
import { MIXED_PROXY_MODES, type Evidence, type Finding } from '../../model.js';
import { namedFew } from '../../nodes/access.js';
import { kubectl } from '../../findings/next-command.js';
import { count, findingOf, list } from '../check.js';
import type { CheckContext } from '../context.js';
import { replacement } from './replacement.js';
import { kubeProxyPodsWide } from './pods.js';

const finding = findingOf('kube-proxy');

export interface NodeMode {
  node: string;
  mode: string;
  source: string;
  /** Where the mode was seen: kube-proxy's answer or the node's rules, the configuration, or
   * nowhere (kube-proxy's default assumed). */
  evidence: Evidence;
  /** kube-proxy's own answer, recorded while its Pod is not running or not ready: stale. */
  stale?: boolean;
}

/** kube-proxy's mode on each Linux node, as the node state decided it (nodes/state.ts). */
export function proxyModes(ctx: CheckContext): NodeMode[] {
  return ctx
    .nodeNames()
    .map((node) => ctx.analysis.state(node))
    .filter((s) => !s.windows)
    .map(({ node, mode }) => ({
      node,
      mode: mode.value,
      source: mode.source,
      evidence: mode.evidence,
      ...(mode.stale ? { stale: true } : {}),
    }));
}

/** The mode the nodes run (the header shows it): MIXED where the modes seen on them differ. */
export function clusterMode(ctx: CheckContext): string | undefined {
  if (replacement(ctx)) return undefined;
  const all = proxyModes(ctx);
  // only modes seen on the nodes tell them apart: a configured one is what a restart would run
  const seen = new Set(
    all.filter((m) => !m.stale && m.evidence.kind === 'observed').map((m) => m.mode),
  );
  if (seen.size > 1) return MIXED_PROXY_MODES;
  if (seen.size === 1) return [...seen][0];
  const modes = all.map((m) => m.mode);
  if (modes.length === 0) return ctx.kubeProxyConfig().config.mode;
  // counted once: a sort that counted in each comparison took seconds on thousands of nodes
  const count = new Map<string, number>();
  for (const m of modes) count.set(m, (count.get(m) ?? 0) + 1);
  return [...count].sort((a, b) => b[1] - a[1])[0]![0];
}

export function modes(ctx: CheckContext): Finding[] {
  const { error } = ctx.kubeProxyConfig();
  const all = proxyModes(ctx);
  // only a mode seen on the node counts: a stale answer or a configured one is shown, never counted
  const per = all.filter((m) => !m.stale && m.evidence.kind === 'observed');
  const distinct = [...new Set(per.map((m) => m.mode))];
  const out: Finding[] = [];
  const unobserved = all.filter((m) => !per.includes(m));
  if (unobserved.length > 0) out.push(notObserved(ctx, unobserved));
  if (error) out.push(unreadable(error));
  const evidence = per.map((m) => m.evidence);
  // what the API objects configure (a ConfigMap, its Pod's flags), never what a node served
  const configured = configuredMode(ctx);
  const drifted = configured ? per.filter((m) => m.mode !== configured) : [];
  if (distinct.length > 1 || drifted.length > 0)
    out.push(
      finding(
        'proxy-mode-differs',
        'warn',
        distinct.length > 1
          ? `the nodes run different proxy modes: ${list(distinct)}`
          : `${list(drifted.map((m) => m.node))} run${drifted.length === 1 ? 's' : ''} ${drifted[0]!.mode}, the ConfigMap says ${configured}`,
        {
          explanation: `kube-proxy reads its mode when it starts: a ConfigMap edited without restarting every kube-proxy Pod leaves nodes in different modes, and the rules of the old mode stay behind on the nodes that switched.`,
          evidence,
          next: kubectl('kube-system', 'rollout', 'restart', 'daemonset', 'kube-proxy'),
        },
      ),
    );
  else if (distinct.length === 1)
    out.push(
      finding('proxy-mode', 'pass', `${distinct[0]} mode on ${count(per.length, 'node')}`, {
        explanation: `kube-proxy runs in ${distinct[0]} mode, as its /proxyMode answer, its /configz or its rules show.`,
        evidence,
      }),
    );
  return out;
}

/** kube-proxy's configuration file does not parse: not read, and what that leaves unknown. */
function unreadable(error: string): Finding {
  return finding(
    'kube-proxy-config-unreadable',
    'skip',
    "kube-proxy's configuration cannot be read",
    {
      explanation: `${error}. What only the configuration tells is not known: the cluster IP masquerade condition (masqueradeAll, clusterCIDR, detectLocalMode) and, on a node where nothing else said it, the proxy mode. kdebug compares nothing against them; the masquerade condition is read from each node's rules.`,
      evidence: [unseen(`kube-proxy's configuration: ${error}`)],
      next: kubectl('kube-system', 'get', 'configmap', 'kube-proxy', '-o', 'yaml'),
    },
  );
}

/** The mode kube-proxy's configuration in the API objects names ("iptables" where it names
 * none); undefined where none was read, or it cannot be. */
function configuredMode(ctx: CheckContext): string | undefined {
  const config = configInObjects(ctx.view);
  // unreadable: kube-proxy-config-unreadable says so
  return config.error || config.from === 'default' || !configTells(config.value, 'mode')
    ? undefined
    : config.value.mode;
}

/** The nodes whose mode nobody there said: a stale answer, the configuration, or the default. */
function notObserved(ctx: CheckContext, modes: readonly NodeMode[]): Finding {
  const stale = modes.filter((m) => m.stale);
  const configured = modes.filter((m) => !m.stale);
  // the mode a ConfigMap names, or kube-proxy's default where none was read
  const said = [
    ...new Set(
      configured.map((m) => `${m.evidence.kind === 'read' ? 'configured' : 'default'}: ${m.mode}`),
    ),
  ];
  const nodes = (ms: readonly NodeMode[]) => namedFew(ms.map((m) => m.node));
  const parts = [
    ...(stale.length > 0 ? [`kube-proxy is not running on ${nodes(stale)}`] : []),
    ...(configured.length > 0 ? [`${nodes(configured)} not read (${said.join(', ')})`] : []),
  ];
  return finding(
    'proxy-mode-not-observed',
    'skip',
    `proxy mode not observed on ${count(modes.length, 'node')}: ${parts.join('; ')}`,
    {
      explanation: [
        ...(stale.length > 0
          ? [
              `The recorded /proxyMode answer of ${list(stale.map((m) => m.node))} came from a kube-proxy that is not running now (its Pod is not Running and Ready): it says what mode it had, not what runs.`,
            ]
          : []),
        ...(configured.length > 0
          ? [
              `Nothing on ${configured.length === 1 ? 'that node' : 'those nodes'} said its mode (kube-proxy's /proxyMode, its /configz or its rules): the mode its configuration names is what kube-proxy would run after a restart, not what runs now.`,
            ]
          : []),
      ].join(' '),
      evidence: modes.map((m) => m.evidence),
      next: kubeProxyPodsWide(ctx),
    },
  );
}
