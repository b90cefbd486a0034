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

/** The hairpin-connections set's endpoints by protocol: the "ip:port" of each element (as the
 * trees write an endpoint: "[fd00::3]:80" for the ip6 table), looked up by an endpoint's own
 * address, no key string made per endpoint. */
export function hairpinSet(t: NftTable): Map<string, Set<string>> | undefined {
  const s = t.set('hairpin-connections');
  if (!s) return undefined;
  const out = new Map<string, Set<string>>();
  for (const { key } of s.elements) {
    const protocol = String(key[2]);
    let addresses = out.get(protocol);
    if (!addresses) out.set(protocol, (addresses = new Set()));
    addresses.add(hostPort(String(key[1]), Number(key[3])));
  }
  return out;
}
