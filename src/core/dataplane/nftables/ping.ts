// A ping to a ClusterIP in nftables mode: kube-proxy knows every ClusterIP and rejects whatever
// is not for one of its Service ports, a ping included, at once.
import type { ClusterIpQuery, StateLine } from '../dataplane.js';
import type { PingExplained, PingFacts } from '../ping.js';
import { matchesSet, type NftTable } from './read/listing.js';

export function nftablesPing(p: PingFacts): PingExplained {
  return {
    title: p.title('in nftables mode other ports are rejected at once'),
    text: `In nftables mode kube-proxy knows every ClusterIP and rejects any packet for one that is not for a Service port: a ping or a connection to another port fails at once with an ICMP error instead of timing out. ${p.silent ? "The ping recorded here got no reply at all rather than that error, which kube-proxy's table does not do: something dropped it first (a host firewall), or the node is not in nftables mode after all. " : ''}${p.curl} ${
      p.connection === 'forwarded'
        ? 'is DNATed to an endpoint'
        : p.connection === 'rejected'
          ? 'is rejected right now too, by the rule kube-proxy writes for a Service without ready endpoints; once it has some, it is DNATed to one of them'
          : // the table was not read: what kube-proxy writes, not what the node holds
            'is DNATed by kube-proxy to an endpoint (or rejected while the Service has no ready endpoints)'
    }: that is the test that counts.`,
  };
}

/** The address is a cluster IP (set cluster-ips), only its Service ports are in service-ips, and
 * anything else for it is rejected by cluster-ips-check (where a ping ends, with an ICMP error). */
export function nftablesClusterIpLines(
  t: NftTable,
  source: string,
  q: ClusterIpQuery,
): StateLine[] {
  const out: string[] = [];
  if (t.set('cluster-ips')?.elements.some((e) => e.key[0] === q.ip))
    out.push(`${source}: set cluster-ips holds ${q.ip}`);
  const proto = q.protocol.toLowerCase();
  const entry = t
    .set('service-ips')
    ?.elements.find((e) => e.key[0] === q.ip && e.key[1] === proto && e.key[2] === q.port);
  if (entry?.verdict?.target)
    out.push(
      `${source}: map service-ips: ${q.ip} . ${proto} . ${q.port} : ${entry.verdict.kind} ${entry.verdict.target} (the only way in for ${q.ip})`,
    );
  const reject = t
    .chain('cluster-ips-check')
    ?.rules.find(
      (r) => r.expr.some((e) => matchesSet(e, 'cluster-ips')) && r.expr.some((e) => 'reject' in e),
    );
  if (reject)
    out.push(
      `${source}: chain cluster-ips-check: ip daddr @cluster-ips reject${reject.comment ? ` ("${reject.comment}")` : ''}`,
    );
  if (out.length === 0) return [];
  return [`kube-proxy's nftables table on ${q.node}:`, ...out].map((text) => ({ text, source }));
}
