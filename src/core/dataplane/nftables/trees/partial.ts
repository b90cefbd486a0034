// What a listing that is not whole leaves unknown of the trees: a paste cut short, lines elided,
// sets left out, lines nft does not print there; each Service port they may hold facts of is
// partial, never said to lack them.
import type { OrphanChain, ServiceTree } from '../../trees.js';
import { missingSets, type NftTable, type NftUnread } from '../read/listing.js';
import { portChain } from './port-chain.js';

/** Why a listing may not hold all of the table: cut short, lines elided ("..."), or sets and
 * maps its rules refer to left out (nft lists none such: the paste was abridged by hand). */
export function abridgedBy(t: NftTable): string | undefined {
  if (t.cut) return `the listing is cut at line ${t.cut.line}`;
  if (t.elided && t.elided.length > 0)
    return `the listing elides lines (line ${t.elided.join(', ')})`;
  const missing = missingSets(t);
  if (missing.length > 0)
    return `the listing does not hold ${missing.join(', ')}, which its rules use`;
  return undefined;
}

/** In an abridged listing a Service chain that is absent, elided inside, or the one the cut
 * falls in may hold more rules than the paste shows. */
export function markAbridged(t: NftTable, x: ServiceTree, why: string): void {
  const own = x.chains.svc ?? x.chains.svl;
  const chain = own === undefined ? undefined : t.chain(own);
  if (own === undefined || chain === undefined)
    x.partial = `its chain is not in the listing: ${why}`;
  else if (
    chain.elided ||
    t.cut?.inside.endsWith(`chain ${own}`) ||
    t.cut?.inside === 'the nft -j listing' ||
    t.cut?.anywhere
  )
    x.partial = why;
  else if (x.endpoints.some((e) => e.chainMissing))
    x.partial ??= `an endpoint chain is not in the listing: ${why}`;
}

/** The sets and maps every Service port's tree is read from, and the chain whose mark applies to
 * every cluster IP: a line of them that was not read may hold any Service's facts. */
const SHARED = [
  'service-ips',
  'service-nodeports',
  'no-endpoint-services',
  'no-endpoint-nodeports',
  'cluster-ips',
  'firewall-ips',
  'hairpin-connections',
  'services',
];

/** The Service ports a line the listing could not read names (by a Service port's chain, an
 * affinity set, a no-endpoint element's "ns/name:port" comment); undefined where it names none. */
export function unreadNames(u: NftUnread): Set<string> | undefined {
  const named = new Set<string>();
  // an affinity set is named as the endpoint chain it is for
  for (const word of [u.block?.name ?? '', ...u.text.split(/[\s,{}"]+/)]) {
    const c = portChain(word.replace(/^affinity-/, 'endpoint-'));
    if (c) named.add(c.name);
  }
  for (const [, name] of u.text.matchAll(/comment "([^"]+)"/g)) named.add(name!);
  return named.size > 0 ? named : undefined;
}

/** The first line the listing could not read that may hold facts of a Service port: one naming
 * it, or naming none in a block every Service is read from. Each line's names are read once, not
 * once per Service port asked about. */
export function unreadBearing(unread: NftUnread[]): (service: string) => NftUnread | undefined {
  const lines = unread.map((u) => ({
    u,
    names: unreadNames(u),
    shared: SHARED.includes(u.block?.name ?? ''),
  }));
  return (service) => lines.find((l) => (l.names ? l.names.has(service) : l.shared))?.u;
}

/** Each line the listing could not read leaves partial the Services it may hold facts of (and
 * their chains no entry reaches: the line may be their entry). */
export function markUnread(t: NftTable, services: ServiceTree[], orphans: OrphanChain[]): void {
  if (!t.unread?.length) return;
  const bearing = unreadBearing(t.unread);
  const why = (u: NftUnread) =>
    `line ${u.line}${u.block ? ` (${u.block.kind} ${u.block.name})` : ''} was not read`;
  for (const x of services) {
    const u = bearing(x.name ?? '');
    if (u) x.partial ??= why(u);
  }
  for (const o of orphans) {
    const u = bearing(portChain(o.chain)!.name);
    if (u) o.partial ??= why(u);
  }
}
