// The masquerade marks kube-proxy's nftables rules set (in the services chain for every cluster
// IP, in a Service port's own chains) and its hairpin-connections set.
import { hostPort } from '../../../ipv6.js';
import type { MasqueradeRule } from '../../trees.js';
import { matchesSet, type NftRule, type NftTable } from '../read/listing.js';
import { goesTo, isObject, matchText } from './expr.js';

/** `meta mark set …` (nft JSON: {"mangle": {"key": {"meta": {"key": "mark"}}, …}}). */
function setsMark(mangle: unknown): boolean {
  const key = isObject(mangle) ? mangle['key'] : undefined;
  const meta = isObject(key) ? key['meta'] : undefined;
  return isObject(meta) && meta['key'] === 'mark';
}

/** What a `meta mark set meta mark | 0x4000` rule marks: "all", or its match in nft words. */
export function markRule(r: NftRule): string | undefined {
  const marks = r.expr.some((e) => setsMark(e['mangle'])) || goesTo(r) === 'mark-for-masquerade';
  if (!marks) return undefined;
  const conditions = r.expr.filter((e) => 'match' in e).map(matchText);
  return conditions.length > 0 ? conditions.join(' ') : 'all';
}

/** The services chain's cluster-IP masquerade: `ip daddr @cluster-ips ip saddr != CIDR`. */
export function clusterIpMasquerade(t: NftTable): Omit<MasqueradeRule, 'line'> | undefined {
  for (const r of t.chain('services')?.rules ?? []) {
    if (!markRule(r)) continue;
    const conditions = r.expr
      .filter((e) => 'match' in e && !matchesSet(e, 'cluster-ips'))
      .map(matchText);
    return { chain: 'services', condition: conditions.join(' ') || 'all' };
  }
  return undefined;
}

/** The hairpin-connections set's (endpoint, protocol) pairs: "ip:port/proto" of each element. */
export function hairpinSet(t: NftTable): Set<string> | undefined {
  const s = t.set('hairpin-connections');
  if (!s) return undefined;
  return new Set(
    // "ip:port/proto" as the trees write an endpoint ("[fd00::3]:80/tcp" for the ip6 table)
    s.elements.map((e) => `${hostPort(String(e.key[1]), Number(e.key[3]))}/${String(e.key[2])}`),
  );
}
