// Which iptables backend, legacy or nft, holds kube-proxy's chains on each node.
import { seen } from '../../findings/evidence.js';
import { nodeDump } from '../../facts/facts.js';
import { nodeBackends } from '../../dataplane/iptables/backend.js';
import type { Finding } from '../../model.js';
import { onNode } from '../../findings/next-command.js';
import { findingOf, list } from '../check.js';
import type { CheckContext } from '../context.js';

const finding = findingOf('kube-proxy');

/**
 * Which iptables backend holds kube-proxy's chains on each node. Both at once means one set is
 * stale: the kernel runs the legacy and the nft tables alike, so the stale set still matches.
 */
export function backends(ctx: CheckContext): Finding[] {
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
