// Which kube-proxy releases wrote an nftables table, by what it holds that only some releases
// write (kube-proxy/releases.ts CHANGES): where a node's version was not read or is not modelled,
// expect and drift model the release its table shows, as iptables drift reads its dump's signs.
import { shownBy, type Shown, type Sign } from '../../kube-proxy/releases.js';
import type { NftTable } from '../read/listing.js';
import { ruleText } from '../render.js';
import { portChain } from '../trees/port-chain.js';

/** The releases `t` reads as written by. Cheap: a few chains and sets by name, then the
 * Service chains only until the first that tells what the others do not. */
export function nftShown(t: NftTable): Shown {
  const signs: Sign[] = [];
  const shows = (what: string, change: Sign['change'], since: boolean) =>
    signs.push({ what, change, since });
  if (t.chain('filter-output-post-dnat'))
    shows('a filter-output-post-dnat chain', 'nftPreDnatFilterChains', false);
  if (t.chain('filter-prerouting-pre-dnat') || t.chain('filter-output-pre-dnat'))
    shows('filter-*-pre-dnat chains', 'nftPreDnatFilterChains', true);
  const markChain = t.chain('mark-for-masquerade') !== undefined;
  if (markChain) shows('a mark-for-masquerade chain', 'nftInlineMasquerade', false);
  const hairpin = t.set('hairpin-connections') !== undefined;
  if (hairpin) shows('a hairpin-connections set', 'nftInlineMasquerade', true);
  const fw = t.set('firewall-ips')?.elements[0];
  if (fw)
    shows(
      `firewall-ips elements ${fw.comment ? 'with' : 'without'} a comment`,
      'nftFirewallElementUncommented',
      !fw.comment,
    );
  // before 1.36 the Service chain marks cluster IP traffic (with its port before 1.34); from 1.36
  // it DNATs itself, through a numgen map of one element before 1.37, straight to the one after
  let masq = !markChain;
  let dnat = !hairpin;
  for (const c of t.chains) {
    if (masq && dnat) break;
    const kind = portChain(c.name)?.kind;
    if (kind !== 'service' && kind !== 'local') continue;
    for (const r of c.rules) {
      const text = ruleText(r);
      if (!masq && / daddr .*jump mark-for-masquerade$/.test(text)) {
        masq = true;
        shows(
          `a Service chain's masquerade rule ${/ dport /.test(text) ? 'with' : 'without'} its port`,
          'nftMasqueradeWithoutPort',
          !/ dport /.test(text),
        );
      } else if (!dnat && /\bdnat\b/.test(text) && !/numgen random mod (?!1 )/.test(text)) {
        dnat = true;
        const map = text.includes('numgen');
        shows(
          `a one-endpoint Service chain's DNAT ${map ? 'through a numgen map' : 'straight to it'}`,
          'nftSingleEndpointDnat',
          !map,
        );
      }
    }
  }
  return shownBy(signs);
}
