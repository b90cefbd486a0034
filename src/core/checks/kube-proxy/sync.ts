// Whether kube-proxy wrote every change it was told about, from its /metrics: each node's last
// sync, and what a drift finding says when kube-proxy's own metrics show it in sync.
import type { DriftFinding } from '../../dataplane/drift.js';
import { seen, unseen } from '../../findings/evidence.js';
import type { Finding } from '../../model.js';
import { kubectl, valid, onNode } from '../../findings/next-command.js';
import { count, findingOf, FEW_NODES, foldNodes, listFew } from '../check.js';
import type { CheckContext } from '../context.js';
import { kubeProxyLogs, kubeProxyLogsAll, kubeProxyPods } from './pods.js';

const finding = findingOf('kube-proxy');

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
  // its log shows nothing of another writer: restarting it rewrites the rules it owns
  const pod = kubeProxyPods(ctx).find((p) => p.nodeName === node);
  return {
    ...f,
    next: pod ? kubectl('kube-system', 'delete', 'pod', valid.name(pod.name)) : f.next,
    advice: `kube-proxy on ${node} reports in its /metrics that its last sync applied every change it was told about, so these rules were changed after that sync (by hand, or by another program), or something else writes them; restarting kube-proxy rewrites every rule it owns.`,
  };
}

/** `logs POD`, or the DaemonSet's logs when the node's Pod is not known. */
const podOrDaemonSet = (pod: string | undefined) =>
  pod === undefined ? 'ds/kube-proxy' : valid.name(pod);

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

export function freshness(ctx: CheckContext): Finding[] {
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
      kubeProxyLogsAll(ctx),
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
