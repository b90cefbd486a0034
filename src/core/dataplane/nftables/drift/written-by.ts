// Which kube-proxy releases wrote an nftables table, by what it holds that only some releases
// write (kube-proxy/releases.ts CHANGES): where a node's version was not read, is not modelled or
// is newer than its table allows, expect and drift model the release its table shows. Only what
// is there is a sign, and only where a later release would have rewritten it: a missing rule, set
// or chain may be a fault, and a chain an older release made outlives an upgrade (a newer
// kube-proxy deletes only Service chains it no longer writes, pkg/proxy/nftables/proxier.go).
import { shownBy, type Shown, type Sign } from '../../kube-proxy/releases.js';
import { verdictOf, type NftExpr, type NftRule, type NftTable } from '../read/listing.js';
import { isObject } from '../trees/expr.js';
import { portChain } from '../trees/port-chain.js';

/** Base chains up to 1.32 hooked at priority -110 (dstnat - 10), which 1.33 and later re-create at
 * 0 (filter) on their first sync. */
const FILTER_HOOKED = ['filter-input', 'filter-forward', 'filter-output'];

/** The releases `t` reads as written by. Cheap: a few chains and sets by name, then the rules of
 * the Service chains until each kind of sign they may hold is found. */
export function nftShown(t: NftTable): Shown {
  const signs: Sign[] = [];
  const shows = (what: string, change: Sign['change'], since: boolean) =>
    signs.push({ what, change, since });
  if (t.chain('filter-prerouting-pre-dnat') || t.chain('filter-output-pre-dnat'))
    shows('filter-*-pre-dnat chains', 'nftPreDnatFilterChains', true);
  const early = FILTER_HOOKED.find((name) => t.chain(name)?.prio === -110);
  if (early) shows(`${early} at priority -110`, 'nftPreDnatFilterChains', false);
  if (t.set('hairpin-connections')) shows('a hairpin-connections set', 'nftInlineMasquerade', true);
  // kube-proxy 1.31 and later write firewall-ips elements with no comment: a comment is a sign,
  // its absence none
  if (t.set('firewall-ips')?.elements.some((e) => e.comment))
    shows('firewall-ips elements with a comment', 'nftFirewallElementUncommented', false);
  // the rules of the Service chains, rewritten on every full sync: before 1.36 they jump to
  // mark-for-masquerade (the Service chain's cluster IP rule with its port before 1.34); from
  // 1.36 the Service chain DNATs itself, through a numgen map, of one element before 1.37 where
  // there is one endpoint, straight to it after
  const found = new Set<string>();
  const once = (key: string, what: string, change: Sign['change'], since: boolean) => {
    if (found.has(key)) return;
    found.add(key);
    shows(what, change, since);
  };
  for (const c of t.chains) {
    if (found.has('mark') && found.has('port') && found.has('map') && found.has('one')) break;
    const kind = portChain(c.name)?.kind;
    if (kind === undefined) continue;
    const own = kind === 'service' || kind === 'local';
    for (const r of c.rules) {
      if (jumpsToMasquerade(r)) {
        once('mark', 'a rule jumping to mark-for-masquerade', 'nftInlineMasquerade', false);
        const fields = own ? matchedFields(r) : undefined;
        if (fields?.has('daddr')) {
          const port = fields.has('dport');
          once(
            'port',
            `a Service chain's masquerade rule ${port ? 'with' : 'without'} its port`,
            'nftMasqueradeWithoutPort',
            !port,
          );
        }
        continue;
      }
      const to = own ? dnatTo(r) : undefined;
      if (to === undefined) continue;
      if (to !== 'straight')
        once('map', "a Service chain's DNAT through a numgen map", 'nftInlineMasquerade', true);
      if (to !== 'numgen-many')
        once(
          'one',
          `a one-endpoint Service chain's DNAT ${to === 'numgen-one' ? 'through a numgen map' : 'straight to it'}`,
          'nftSingleEndpointDnat',
          to === 'straight',
        );
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
