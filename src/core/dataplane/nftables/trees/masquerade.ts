// The masquerade marks kube-proxy's nftables rules set (in the services chain for every cluster
// IP, in a Service port's own chains) and its hairpin-connections set.
import type { MasqueradeRule } from '../../trees.js';
import { matchesSet, type NftRule, type NftTable } from '../read/listing.js';
import { goesTo, isObject, matchText } from './expr.js';

/** `meta mark set …` (nft JSON: {"mangle": {"key": {"meta": {"key": "mark"}}, …}}). */
function setsMark(mangle: unknown): boolean {
  const key = isObject(mangle) ? mangle['key'] : undefined;
  const meta = isObject(key) ? key['meta'] : undefined;
  return isObject(meta) && meta['key'] === 'mark';
}

/** Whether a rule marks packets for masquerade (`meta mark set …` or `jump mark-for-masquerade`). */
const marks = (r: NftRule) =>
  r.expr.some((e) => setsMark(e['mangle'])) || goesTo(r) === 'mark-for-masquerade';

/** What a `meta mark set meta mark | 0x4000` rule marks: "all", or its match in nft words. */
export function markRule(r: NftRule): string | undefined {
  if (!marks(r)) return undefined;
  const conditions = r.expr.filter((e) => 'match' in e).map(matchText);
  return conditions.length > 0 ? conditions.join(' ') : 'all';
}

/** Whether a rule marks packets by their source for masquerade: 1.29-1.32's endpoint chain's
 * `ip saddr <the endpoint> jump mark-for-masquerade` (markRule's words hold "saddr"; none joined
 * here: every endpoint chain's rules are asked). */
export const marksBySource = (r: NftRule) =>
  marks(r) && r.expr.some((e) => 'match' in e && matchText(e).includes('saddr'));

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

/** The hairpin-connections set's endpoints by protocol, then address: the ports of each, as
 * written. An endpoint is looked up by its own address and port as its DNAT holds them: no
 * "ip:port" string is made per element or endpoint. */
export type HairpinSet = Map<string, Map<string, string[]>>;

/** The hairpin-connections set's endpoints (its elements' destination address and port). */
export function hairpinSet(t: NftTable): HairpinSet | undefined {
  const s = t.set('hairpin-connections');
  if (!s) return undefined;
  const out: HairpinSet = new Map();
  for (const { key } of s.elements) {
    const protocol = String(key[2]);
    let addresses = out.get(protocol);
    if (!addresses) out.set(protocol, (addresses = new Map()));
    const ip = String(key[1]);
    const port = String(key[3]);
    const ports = addresses.get(ip);
    // most endpoints serve one port: an array of one, no Set per address
    if (ports) ports.push(port);
    else addresses.set(ip, [port]);
  }
  return out;
}
