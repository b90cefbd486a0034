// What each comparison of nftables drift is given: the node, its table and listing, kube-proxy's
// model, where findings go, the lines not read.
import { quote, type AddFinding as Add, type Quote } from '../../drift.js';
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import type { Release } from '../../kube-proxy/releases.js';
import type { NftRule, NftTable, NftUnread } from '../read/listing.js';
import { ruleText } from '../render.js';
import type { HairpinSet } from '../trees/masquerade.js';

export interface PortCheck {
  node: string;
  source: string;
  table: NftTable;
  exp: ExpectedRules;
  add: Add;
  /** The script's lines, printed when a finding quotes them. */
  script: () => string[];
  /** hairpin-connections' elements by protocol and address: their ports (a finding adds its own). */
  hairpin: HairpinSet;
  release: Release;
  /** The lines of the listing not read that this comparison may rest on. */
  unread: NftUnread[];
  /** The first of them a Service port's comparison may rest on. */
  bearing: (service: string) => NftUnread | undefined;
  /** The node's kube-proxy Pod (undefined: none in the API). */
  kubeProxyPod: string | undefined;
}

export const keyText = (e: { key: (string | number)[] }) => e.key.join(' . ');

/** A rule the node has, as a finding quotes it: "FILE:LINE: TEXT" (no line: the file alone); the
 * difference unless `asWritten` (kube-proxy's rule, shown beside it). */
export const ruleAt = (source: string, r: NftRule, asWritten = false): Quote =>
  quote(source, r.line, ruleText(r), asWritten);

/** An element of `map` the node has, in nft's words ("service-ips 10.96.0.1 . tcp . 443 : goto
 * CHAIN"), as a finding quotes it: "FILE:LINE: TEXT" (its line not known: the file alone); the
 * difference unless `asWritten`. */
export function elementAt(
  c: { source: string; table: NftTable },
  map: string,
  key: (string | number)[],
  value?: string,
  asWritten = false,
): Quote {
  const text = key.join(' . ');
  const e = c.table.set(map)?.elements.find((x) => keyText(x) === text);
  return quote(c.source, e?.line, `${map} ${text}${value ? ` : ${value}` : ''}`, asWritten);
}

/** hairpin-connections' elements kube-proxy writes (`ip . ip . proto . port`: an endpoint to
 * itself) by protocol, then address: the ports of each (a finding adds its own). An endpoint is
 * looked up by its own address and port: no "ip:port" string is made per element or endpoint. */
export function hairpinElements(t: NftTable): HairpinSet {
  const out: HairpinSet = new Map();
  for (const { key } of t.set('hairpin-connections')?.elements ?? []) {
    const ip = String(key[0]);
    if (key.length !== 4 || ip !== String(key[1])) continue;
    const protocol = String(key[2]);
    let addresses = out.get(protocol);
    if (!addresses) out.set(protocol, (addresses = new Map()));
    const port = String(key[3]);
    const ports = addresses.get(ip);
    // most endpoints serve one port: an array of one, no Set per address
    if (!ports) addresses.set(ip, [port]);
    else if (!ports.includes(port)) ports.push(port);
  }
  return out;
}
