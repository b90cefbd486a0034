// Step 7 on a node whose kube-proxy runs in nftables mode: the Service's trees read back from
// its nftables table, and their endpoints compared with the ones kube-proxy should send to (the
// same endpoint choice as iptables mode: ready, else serving and terminating; local ones for
// the local policies), and every other part of the table kube-proxy should write, as
// `kdebug drift` compares it.
import type { Service } from '../kube.js';
import type { Finding } from '../model.js';
import { driftToFinding } from '../drift.js';
import { nftStems } from '../facts.js';
import type { IPFamily } from '../ipv6.js';
import { percent } from '../model.js';
import { count, familyLabel, finding } from './check.js';
import type { CheckContext } from './context.js';

/** The Rules step's findings for one nftables-mode node, in one family's table (`ip` or `ip6`
 * kube-proxy); a dual-stack Service's findings start with their family. */
export function nftablesNode(
  ctx: CheckContext,
  node: string,
  svc: Service,
  family: IPFamily = 'IPv4',
): Finding[] {
  const label = familyLabel(svc, family);
  const table = `${family === 'IPv6' ? 'ip6' : 'ip'} kube-proxy`;
  const n = ctx.analysis.node(node, undefined, family);
  const read = n.nft();
  const stem = nftStems(family).json;
  if (!read)
    return [
      finding(
        'rules-nftables-not-observed',
        'skip',
        `${label}${node}: nftables mode, its table not read`,
        {
          explanation: `kube-proxy on ${node} runs in nftables mode and kdebug did not read its table ${table} (nodes/${node}/${stem}.txt is not in the facts), so ${svc.namespace}/${svc.name} is not checked there.`,
          next: `nft -j list table ${table} > nodes/${node}/${stem}.txt   (on ${node})`,
          node,
        },
      ),
    ];
  const trees = read.table && n.trees(ctx.scope);
  if (!trees)
    return [
      finding('rules-unreadable', 'warn', `${label}${node}: the nftables table cannot be read`, {
        explanation: read.error ?? 'unreadable',
        evidence: [read.source],
        node,
      }),
    ];
  // the drift of this Service's ports, as `kdebug drift` computes it in this mode
  const out: Finding[] = n
    .drift(ctx.scope)
    .findings.map(driftToFinding)
    .map((f) => ({ ...f, title: `${label}${f.title}`, evidence: [read.source, ...f.evidence] }));
  const parts: string[] = [];
  const evidence: string[] = [];
  for (const port of svc.ports) {
    const tree = trees.services.find((t) => t.name === ctx.servicePortName(port));
    if (!tree) continue;
    const label = `${port.port}/${port.protocol}`;
    const eps = tree.chains.svc ? tree.endpoints : (tree.localEndpoints ?? []);
    evidence.push(
      ...tree.entries.map(
        (e) =>
          `${read.source}: ${e.from} ${e.address ? `${e.address} . ` : ''}${e.protocol} . ${e.port} : goto ${e.chain}`,
      ),
      ...eps.map((e) => `  ${percent(e.probability)} -> ${e.address ?? '?'} (${e.chain})`),
    );
    const reject = tree.verdicts.some((v) => v.kind === 'reject');
    parts.push(
      eps.length > 0
        ? `${label} -> ${count(eps.length, 'endpoint')}`
        : reject
          ? `${label} -> REJECT (no endpoints)`
          : `${label} -> no endpoints`,
    );
  }
  if (!out.some((f) => f.status === 'fail' || f.status === 'warn') && parts.length > 0)
    out.push(
      finding(
        'rules-match',
        'pass',
        `${label}${node}: ${parts.join(', ')} in nftables, as expected`,
        {
          explanation: `kube-proxy's nftables table on ${node} sends ${svc.namespace}/${svc.name} to exactly the endpoints it should for the current objects.`,
          evidence,
          node,
        },
      ),
    );
  return out;
}
