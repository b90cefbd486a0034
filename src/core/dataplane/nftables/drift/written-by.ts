// Which kube-proxy releases wrote an nftables table, by what it holds that only some releases
// write (kube-proxy/releases.ts CHANGES): where a node's version was not read or is not modelled,
// expect and drift model the release its table shows, as iptables drift reads its dump's signs.
import { shownBy, type Shown, type Sign } from '../../kube-proxy/releases.js';
import { verdictOf, type NftExpr, type NftRule, type NftTable } from '../read/listing.js';
import { isObject } from '../trees/expr.js';
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
      const fields = !masq && jumpsToMasquerade(r) ? matchedFields(r) : undefined;
      if (fields?.has('daddr')) {
        masq = true;
        const port = fields.has('dport');
        shows(
          `a Service chain's masquerade rule ${port ? 'with' : 'without'} its port`,
          'nftMasqueradeWithoutPort',
          !port,
        );
      } else if (!dnat) {
        const to = dnatTo(r);
        if (to === undefined || to === 'numgen-many') continue;
        dnat = true;
        shows(
          `a one-endpoint Service chain's DNAT ${to === 'numgen-one' ? 'through a numgen map' : 'straight to it'}`,
          'nftSingleEndpointDnat',
          to === 'straight',
        );
      }
    }
  }
  return shownBy(signs);
}

/** The rule ends in `jump mark-for-masquerade`. */
function jumpsToMasquerade(r: NftRule): boolean {
  const last = verdictOf(r.expr.at(-1));
  return last?.kind === 'jump' && last.target === 'mark-for-masquerade';
}

/** The header fields a rule's matches test ("daddr", "dport"): nft's JSON names each payload's;
 * a match the reader kept as written (a text listing, kube-proxy's script) says them in its own
 * words ("ip daddr 10.96.0.10 tcp dport 53"), read from the input, not from a rendering. */
function matchedFields(r: NftRule): Set<string> {
  const fields = new Set<string>();
  const side = (v: unknown): void => {
    if (!isObject(v)) return;
    if (isObject(v['payload']) && typeof v['payload']['field'] === 'string')
      fields.add(v['payload']['field']);
    if (Array.isArray(v['concat'])) for (const x of v['concat']) side(x);
  };
  for (const e of r.expr) {
    const m = e['match'];
    if (!isObject(m)) continue;
    if (typeof m['text'] === 'string')
      for (const [, field] of m['text'].matchAll(
        /\b(?:ip6?|tcp|udp|sctp|th) ([sd](?:addr|port))\b/g,
      ))
        fields.add(field!);
    else side(m['left']);
  }
  return fields;
}

/** How a rule DNATs: straight to one address, through a numgen map of one element or of
 * several; undefined where it does not. */
function dnatTo(r: NftRule): 'straight' | 'numgen-one' | 'numgen-many' | undefined {
  for (const e of r.expr) {
    const d: NftExpr | undefined = isObject(e['dnat']) ? e['dnat'] : undefined;
    if (!d) continue;
    const map = isObject(d['addr']) && isObject(d['addr']['map']) ? d['addr']['map'] : undefined;
    const numgen = map && isObject(map['key']) ? map['key']['numgen'] : undefined;
    if (!isObject(numgen)) return 'straight';
    return numgen['mod'] === 1 ? 'numgen-one' : 'numgen-many';
  }
  return undefined;
}
