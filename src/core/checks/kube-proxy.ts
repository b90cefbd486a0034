// Step 6: who programs the Service on each node. kube-proxy's mode per node (its /proxyMode,
// else the ConfigMap), a kube-proxy Pod running on every node, how fresh its last sync is (its
// /metrics), or a replacement such as Cilium, said plainly.
import type { DriftFinding } from '../dataplane/drift.js';
import {
  kubeProxyPodsReadOn,
  rolloutOf,
  rolloutText,
  settled,
  type Rollout,
} from '../kube/daemon-set.js';
import { read, seen, unseen } from '../evidence.js';
import { kubeProxyPodOn } from '../dataplane/iptables/drift/context.js';
import { nodeDump } from '../facts.js';
import { nodeBackends } from '../dataplane/iptables/backend.js';
import { isKubeProxyPod, isWindows, type Pod } from '../kube/objects.js';
import { configInObjects } from '../nodes/state.js';
import type { Evidence, Finding } from '../model.js';
import { namedFew } from '../nodes/access.js';
import { kubectl, valid, onNode, type NextCommand } from '../next-command.js';
import {
  type Check,
  count,
  findingOf,
  FEW_NODES,
  foldNodes,
  list,
  listFew,
  noRulesFor,
  pending,
} from './check.js';
import type { CheckContext } from './context.js';
import { podReady, whyNotReady, type NotReady } from './pod-health.js';

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

/** The mode most nodes run (the header shows it). */
export function clusterMode(ctx: CheckContext): string | undefined {
  if (replacement(ctx)) return undefined;
  const modes = proxyModes(ctx).map((m) => m.mode);
  if (modes.length === 0) return ctx.kubeProxyConfig().config.mode;
  // counted once: a sort that counted in each comparison took seconds on thousands of nodes
  const count = new Map<string, number>();
  for (const m of modes) count.set(m, (count.get(m) ?? 0) + 1);
  return [...count].sort((a, b) => b[1] - a[1])[0]![0];
}

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
const kubeProxyPodsWide = (ctx: CheckContext) =>
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

/** kube-proxy on the node says, in its /metrics, that its last sync has every change it was
 * told about. */
export function kubeProxyInSync(ctx: CheckContext, node: string): boolean {
  const text = ctx.output(node, 'proxy-metrics');
  if (text === undefined) return false;
  const m = parseProxyMetrics(text);
  return m.lastSync !== undefined && m.lastQueued !== undefined && m.lastSync >= m.lastQueued;
}

/** A drift finding that blames a kube-proxy its own metrics show in sync names the cause its
 * evidence leaves open instead: the rules changed after that sync. */
export function withSyncShown(ctx: CheckContext, node: string, f: DriftFinding): Finding {
  if (!f.drift.notSynced) return f;
  // not in sync: the log of the kube-proxy Pod the facts name on that node
  if (!kubeProxyInSync(ctx, node)) return { ...f, next: kubeProxyLogs(ctx, node) };
  return {
    ...f,
    advice: `kube-proxy on ${node} reports in its /metrics that its last sync applied every change it was told about, so these rules were changed after that sync (by hand, or by another program), or something else writes them; restarting kube-proxy rewrites every rule it owns.`,
  };
}

/** kube-proxy's log on a node: its Pod's, or the command that finds that Pod. */
export function kubeProxyLogs(ctx: CheckContext, node: string) {
  const pod = kubeProxyPods(ctx).find((p) => p.nodeName === node);
  return pod ? kubectl('kube-system', 'logs', valid.name(pod.name)) : kubeProxyPodOn(node);
}

/** `logs POD`, or the DaemonSet's logs when the node's Pod is not known. */
const podOrDaemonSet = (pod: string | undefined) =>
  pod === undefined ? 'ds/kube-proxy' : valid.name(pod);

/** The nodes where Cilium's agent replaces kube-proxy (their node state says so). */
export const ciliumNodes = (ctx: CheckContext): string[] =>
  ctx.nodeNames().filter((n) => ctx.analysis.state(n).mode.value === 'cilium');

/** A kube-proxy replacement, with the command that shows its Service table. */
export function replacement(
  ctx: CheckContext,
): { name: string; evidence: Evidence[]; next?: NextCommand } | undefined {
  if (kubeProxyPods(ctx).length > 0) return undefined;
  const cilium = ctx.view.pods.filter((p) => p.labels['k8s-app'] === 'cilium');
  const cfg = ctx.view.configMaps.find((c) => c.name === 'cilium-config')?.data[
    'kube-proxy-replacement'
  ];
  if (cilium.length > 0 || (cfg && cfg !== 'false' && cfg !== 'disabled'))
    return {
      name: 'Cilium',
      evidence: [
        ...(cfg ? [read(`ConfigMap cilium-config: kube-proxy-replacement: ${cfg}`)] : []),
        read(`${count(cilium.length, 'cilium Pod')} in kube-system, no kube-proxy Pods`),
      ],
      next: kubectl('kube-system', 'exec', 'ds/cilium', '--', 'cilium-dbg', 'service', 'list'),
    };
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

interface Metrics {
  lastSync?: number;
  lastQueued?: number;
  failures: number;
}

/** kube-proxy's /metrics: the sync timestamps and the restore failure counters. */
export function parseProxyMetrics(text: string): Metrics {
  const value = (name: string) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const failures =
    (value('kubeproxy_sync_proxy_rules_iptables_restore_failures_total') ?? 0) +
    (value('kubeproxy_sync_proxy_rules_nftables_sync_failures_total') ?? 0);
  return {
    lastSync: value('kubeproxy_sync_proxy_rules_last_timestamp_seconds'),
    lastQueued: value('kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds'),
    failures,
  };
}

function freshness(ctx: CheckContext): Finding[] {
  const out: Finding[] = [];
  const captured = ctx.facts.meta.capturedAt
    ? Date.parse(ctx.facts.meta.capturedAt) / 1000
    : undefined;
  for (const node of ctx.nodeNames()) {
    const text = ctx.output(node, 'proxy-metrics');
    if (text === undefined) continue;
    const m = parseProxyMetrics(text);
    const at = { node, source: `nodes/${node}/proxy-metrics.txt` };
    const ev = [
      `${node}: kubeproxy_sync_proxy_rules_last_timestamp_seconds ${m.lastSync ?? '(absent)'}`,
      `${node}: kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds ${m.lastQueued ?? '(absent)'}`,
      ...(m.failures > 0 ? [`${node}: restore/sync failures ${m.failures}`] : []),
    ].map((l) => seen(l, at));
    const behind =
      m.lastSync !== undefined && m.lastQueued !== undefined ? m.lastQueued - m.lastSync : 0;
    const age =
      captured !== undefined && m.lastQueued !== undefined ? captured - m.lastQueued : undefined;
    if ((behind > 0 && (age === undefined || age > 60)) || m.failures > 0)
      out.push(
        finding(
          'kube-proxy-sync-stale',
          'warn',
          `kube-proxy on ${node} ${m.failures > 0 ? `failed to write its rules ${count(m.failures, 'time')}` : 'has changes it has not written'}`,
          {
            explanation: `kube-proxy queued a change${age !== undefined ? ` ${Math.round(age)}s before the capture` : ''} that its last successful sync does not include, so the node's rules lag behind the API. Its log says why (often an iptables-restore error or a lock held by another program).`,
            evidence: ev,
            next: kubectl(
              'kube-system',
              'logs',
              podOrDaemonSet(kubeProxyPods(ctx).find((p) => p.nodeName === node)?.name),
              '--tail=50',
            ),
            node,
          },
        ),
      );
    else if (m.lastSync === undefined || m.lastQueued === undefined)
      // a metrics answer without the sync metrics (another proxy, an old version): not seen
      out.push(
        finding(
          'kube-proxy-sync-not-observed',
          'skip',
          `kube-proxy's sync on ${node} not observed`,
          {
            explanation: `${node}'s /metrics answer has no kubeproxy_sync_proxy_rules timestamps, so kdebug cannot tell whether kube-proxy has written every change it was told about. kube-proxy 1.x serves them on its metrics port (10249); another proxy, or a kube-proxy with metrics off, does not.`,
            evidence: [unseen(`${node}: no sync timestamps in /metrics`, node), ...ev],
            next: onNode(node, ['curl', '-s', 'http://127.0.0.1:10249/metrics'], {
              pipe: [['grep', 'kubeproxy_sync_proxy_rules']],
            }),
            node,
          },
        ),
      );
    else
      out.push(
        finding('kube-proxy-synced', 'pass', `kube-proxy on ${node} is in sync`, {
          explanation: 'Its last sync includes every change it was told about.',
          evidence: ev,
          node,
        }),
      );
  }
  const of = (id: Finding['id']) => out.filter((f) => f.id === id);
  // a few findings keep node order; more are said by condition, each folded past a few nodes
  if (out.length <= FEW_NODES) return out;
  return [
    ...foldNodes(
      of('kube-proxy-sync-stale'),
      (n) =>
        `kube-proxy behind or failing to write its rules on ${n.length} nodes (${listFew(n, 3)})`,
      // every kube-proxy's log, each line named by its Pod: not the first node's alone
      kubectl('kube-system', 'logs', '-l', kubeProxySelector(ctx), '--prefix', '--tail=20'),
    ),
    ...foldNodes(
      of('kube-proxy-sync-not-observed'),
      (n) => `kube-proxy's sync not observed on ${n.length} nodes (${listFew(n, 3)})`,
    ),
    ...foldNodes(
      of('kube-proxy-synced'),
      (n) => `kube-proxy is in sync on ${n.length} nodes (${listFew(n, 3)})`,
    ),
  ];
}

function running(ctx: CheckContext): Finding[] {
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
    if (!pod && ctx.analysis.state(node).embeddedIn) continue; // k3s, RKE2: embedded()
    if (!pod) missing.push(node);
    else {
      const why = whyNotReady(pod);
      down.set(why.short, [...(down.get(why.short) ?? []), { pod, node, why }]);
    }
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

function modes(ctx: CheckContext): Finding[] {
  const { error } = ctx.kubeProxyConfig();
  const all = proxyModes(ctx);
  // only a mode seen on the node counts: a stale answer or a configured one is shown, never counted
  const per = all.filter((m) => !m.stale && m.evidence.kind === 'observed');
  const distinct = [...new Set(per.map((m) => m.mode))];
  const out: Finding[] = [];
  const unobserved = all.filter((m) => !per.includes(m));
  if (unobserved.length > 0) out.push(notObserved(ctx, unobserved));
  if (error)
    out.push(
      finding('kube-proxy-config-unreadable', 'warn', 'the kube-proxy ConfigMap cannot be read', {
        explanation: `${error}. kdebug assumes kube-proxy's defaults (iptables mode).`,
        next: kubectl('kube-system', 'get', 'configmap', 'kube-proxy', '-o', 'yaml'),
      }),
    );
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

/** The mode kube-proxy's configuration in the API objects names ("iptables" where it names
 * none); undefined where none was read, or it cannot be. */
function configuredMode(ctx: CheckContext): string | undefined {
  const config = configInObjects(ctx.view);
  // unreadable: kube-proxy-config-unreadable says so
  return config.error || config.from === 'default' ? undefined : config.value.mode || 'iptables';
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

/** k3s and RKE2 run kube-proxy inside their own process, not as a Pod: said as what it is, from
 * the Nodes' kubelet version, never as a kube-proxy that is missing. */
function embedded(ctx: CheckContext): Finding | undefined {
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

/** kube-proxy's release on each Linux node, with where it was read (nodes/state.ts); the nodes
 * where nothing said it are named, never guessed. */
function versions(ctx: CheckContext): Finding[] {
  const states = ctx
    .nodeNames()
    .map((n) => ctx.analysis.state(n))
    .filter((s) => !s.windows);
  if (states.length === 0) return [];
  const known = states.filter((s) => s.version);
  const unknown = states.filter((s) => !s.version).map((s) => s.node);
  const byRelease = new Map<string, string[]>();
  for (const s of known)
    byRelease.set(s.version!.value.text, [...(byRelease.get(s.version!.value.text) ?? []), s.node]);
  const said = [...byRelease].map(([v, nodes]) =>
    byRelease.size === 1 ? `${v} on ${count(nodes.length, 'node')}` : `${v} on ${namedFew(nodes)}`,
  );
  const out: Finding[] = [];
  if (known.length > 0)
    out.push(
      finding('kube-proxy-version', 'pass', `kube-proxy ${said.join(', ')}`, {
        explanation:
          "kube-proxy writes its rules differently from release to release: kdebug compares each node with what its own release writes. The version comes from kube-proxy's /metrics (kubernetes_build_info), else the image tag of its Pod, else the Node's status.nodeInfo.kubeProxyVersion.",
        evidence: known.map((s) => s.version!.evidence),
        info: true,
        folded: true,
      }),
    );
  if (unknown.length > 0)
    out.push(
      finding(
        'kube-proxy-version-not-observed',
        'skip',
        `kube-proxy's version not observed on ${count(unknown.length, 'node')}: ${namedFew(unknown)}`,
        {
          explanation:
            "Nothing said kube-proxy's release there: no /metrics build info, no image tag on its Pod, no status.nodeInfo.kubeProxyVersion. kdebug models the newest release it knows on those nodes and says so where it matters.",
          evidence: unknown.map((n) =>
            unseen(`${n}: no /metrics build info, image tag or nodeInfo`, n),
          ),
          info: true,
          folded: true,
        },
      ),
    );
  return out;
}

/**
 * Which iptables backend holds kube-proxy's chains on each node. Both at once means one set is
 * stale: the kernel runs the legacy and the nft tables alike, so the stale set still matches.
 */
function backends(ctx: CheckContext): Finding[] {
  // the IPv6 proxier's rules live in ip6tables, with backends of their own
  const per = ctx
    .nodeNames()
    .flatMap((node) =>
      (['iptables', 'ip6tables'] as const).map((tool) => ({
        node,
        tool,
        label: tool === 'ip6tables' ? 'IPv6: ' : '',
        ...nodeBackends(
          Object.keys(ctx.facts.nodes[node] ?? {}),
          (s) => ctx.analysis.node(node).signs(s),
          tool,
        ),
      })),
    )
    .filter((b) => b.chains !== 'unknown');
  if (per.length === 0) return [];
  const evidence = per.map((b) =>
    seen(
      `${b.label}${b.node}: kube-proxy's chains in ${b.chains === 'both' ? 'legacy and nft' : b.chains === 'none' ? 'neither backend' : `${b.chains} only`} (${b.sources.join(', ')})`,
      { node: b.node },
    ),
  );
  const both = per.filter((b) => b.chains === 'both');
  if (both.length === 0) {
    const used = [...new Set(per.map((b) => b.chains).filter((v) => v !== 'none'))];
    if (used.length === 0) return [];
    return [
      finding(
        'iptables-backend',
        'pass',
        `kube-proxy's chains are in the ${list(used)} backend${used.length > 1 ? 's' : ''}, one per node`,
        {
          explanation:
            'Each node keeps its Service rules in one iptables backend; the other holds no kube-proxy chain.',
          evidence,
        },
      ),
    ];
  }
  return both.map((b) =>
    finding(
      'iptables-backends-both',
      'warn',
      `${b.label}${b.node}: kube-proxy chains in both ${b.tool} backends, legacy and nft`,
      {
        explanation: `The kernel runs the rules of both backends, so a packet meets both sets. kube-proxy writes to one of them (the one its image's ${b.tool} wrapper picked); the other set is stale, left by an older kube-proxy or by a switch of backend, and can still send a Service's traffic to endpoints that no longer exist. kdebug diagnosed ${nodeDump(ctx.facts, b.node, b.tool === 'ip6tables' ? 'IPv6' : 'IPv4')?.source ?? 'the default dump'}.`,
        evidence,
        advice: `Count each backend's endpoint rules (${b.tool}-nft-save -t nat likewise): the stale set is the one that disagrees with the EndpointSlices.`,
        next: onNode(b.node, [`${b.tool}-legacy-save`, '-t', 'nat'], {
          pipe: [['grep', '-c', '^-A KUBE-SEP']],
          hostBinaries: true,
        }),
        node: b.node,
      },
    ),
  );
}

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
    if (other)
      return [
        finding(
          'kube-proxy-replaced',
          'pass',
          `no kube-proxy: Services are handled by ${other.name}`,
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
      ...modes(ctx),
      ...versions(ctx),
      ...backends(ctx),
      ...freshness(ctx),
    ];
    const pods = kubeProxyPods(ctx);
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
    if (!out.some((f) => f.id === 'kube-proxy-not-running'))
      out.unshift(
        finding('kube-proxy-running', 'pass', `kube-proxy running on ${count(up, 'node')}`, {
          explanation:
            nodesUnseen || (unread && !unread.rollout)
              ? 'Each kube-proxy Pod kdebug read is ready.'
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
