// What each comparison of nftables drift is given: the node, its table and listing, kube-proxy's
// model, where findings go, the lines not read.
import { lineAt, type AddFinding as Add } from '../../drift.js';
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import type { Release } from '../../kube-proxy/releases.js';
import { hostPort } from '../../../ipv6.js';
import type { NftRule, NftTable, NftUnread } from '../read/listing.js';
import { ruleText } from '../render.js';

export interface PortCheck {
  node: string;
  source: string;
  table: NftTable;
  exp: ExpectedRules;
  add: Add;
  /** The script's lines, printed when a finding quotes them. */
  script: () => string[];
  /** hairpin-connections' elements by protocol: the "ip:port" of each (a finding adds its own). */
  hairpin: Map<string, Set<string>>;
  release: Release;
  /** The lines of the listing not read that this comparison may rest on. */
  unread: NftUnread[];
  /** The first of them a Service port's comparison may rest on. */
  bearing: (service: string) => NftUnread | undefined;
  /** The node's kube-proxy Pod (undefined: none in the API). */
  kubeProxyPod: string | undefined;
}

export const keyText = (e: { key: (string | number)[] }) => e.key.join(' . ');

/** A rule the node has, as evidence names it: "FILE:LINE: TEXT" (no line: the file alone). */
export const ruleAt = (source: string, r: NftRule) => lineAt(source, r.line, ruleText(r));

/** An element of `map` the node has, in nft's words ("service-ips 10.96.0.1 . tcp . 443 : goto
 * CHAIN"), as evidence names it: "FILE:LINE: TEXT" (its line not known: the file alone). */
export function elementAt(
  c: { source: string; table: NftTable },
  map: string,
  key: (string | number)[],
  value?: string,
): string {
  const text = key.join(' . ');
  const e = c.table.set(map)?.elements.find((x) => keyText(x) === text);
  return lineAt(c.source, e?.line, `${map} ${text}${value ? ` : ${value}` : ''}`);
}

/** hairpin-connections' elements kube-proxy writes (`ip . ip . proto . port`: an endpoint to
 * itself) by protocol, each as its "ip:port": an endpoint is looked up by its own address, no key
 * string made per endpoint. */
export function hairpinElements(t: NftTable): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const { key } of t.set('hairpin-connections')?.elements ?? []) {
    if (key.length !== 4 || String(key[0]) !== String(key[1])) continue;
    const protocol = String(key[2]);
    let addresses = out.get(protocol);
    if (!addresses) out.set(protocol, (addresses = new Set()));
    addresses.add(hostPort(String(key[0]), key[3]!));
  }
  return out;
}
