// The endpoints a Service port's service- or local- chain sends to, with their shares: through
// endpoint chains and a numgen vmap (1.29-1.32, and affinity), or DNAT through a numgen map in the
// chain itself (1.33 on).
import { hostPort } from '../../../ipv6.js';
import type { ServiceTree, TreeEndpoint } from '../../trees.js';
import { scalar, verdictOf, type NftChain, type NftRule, type NftTable } from '../read/listing.js';
import { goesTo, isObject } from './expr.js';
import { marksBySource, type HairpinSet } from './masquerade.js';
import { nameEndpoint, portChain } from './port-chain.js';

/** The endpoints a service- or local- chain sends to, each with its share. */
export function endpointsOf(
  t: NftTable,
  rules: NftRule[],
  reached: Set<NftChain>,
  x: ServiceTree,
  hairpin: HairpinSet | undefined,
): TreeEndpoint[] {
  const out: TreeEndpoint[] = [];
  // 1.33 on: the masquerading chain's hairpin-connections set lists this node's endpoints; one
  // not in it is another node's (no hairpin there) or a local one missing: unknown without Pods
  const held = hairpin?.get(x.protocol);
  const hairpinned = (to: DnatTo | undefined) =>
    to?.port !== undefined && held?.get(to.ip)?.includes(to.port) === true ? true : null;
  const byChain = new Map<string, TreeEndpoint>();
  const endpointChain = (name: string): TreeEndpoint => {
    let ep = byChain.get(name);
    if (!ep) {
      const chain = t.chain(name);
      if (chain) reached.add(chain);
      let dnat: ReturnType<typeof dnatOf>;
      // 1.29-1.32: `ip saddr <the endpoint> jump mark-for-masquerade` in the endpoint chain
      let hairpin = false;
      for (const r of chain?.rules ?? []) {
        dnat ??= dnatOf(r);
        hairpin ||= marksBySource(r);
      }
      // kube-proxy names an endpoint chain after its endpoint: the address, said to be its name's
      const named = chain ? undefined : portChain(name);
      const to = dnat && 'ip' in dnat ? dnat : named && nameEndpoint(named);
      ep = {
        address: to && addressOf(to),
        chain: name,
        probability: 0,
        hairpinMasquerade: hairpin ? true : hairpinned(to),
        affinity: false,
        line: 0,
      };
      if (!chain) {
        ep.chainMissing = true;
        if (ep.address) ep.addressFromName = true;
      }
      // its rules go on where the paste elides them: a DNAT rule not shown is unknown, not absent
      else if (chain.elided) ep.chainPartial = 'the listing elides lines in it';
      byChain.set(name, ep);
      out.push(ep);
    }
    return ep;
  };
  for (const r of rules) {
    const affinity = affinitySet(r);
    const target = goesTo(r);
    if (affinity && target) {
      const ep = endpointChain(target);
      ep.affinity = true;
      x.affinitySeconds ??= t.set(affinity)?.timeout;
      continue;
    }
    const vmap = numgenVmap(r);
    if (vmap) {
      // numgen random mod N picks each of 0..N-1 alike: a listed target gets 1/N
      for (const target of vmap.targets) endpointChain(target).probability += 1 / vmap.mod;
      x.partial ??= elidedMap(r, vmap);
      continue;
    }
    const dnat = dnatOf(r);
    if (!dnat) continue;
    if ('mod' in dnat) x.partial ??= elidedMap(r, dnat);
    const [targets, share] = 'mod' in dnat ? [dnat.targets, 1 / dnat.mod] : [[dnat], 1];
    for (const to of targets)
      out.push({
        address: addressOf(to),
        chain: r.chain,
        probability: share,
        hairpinMasquerade: hairpinned(to),
        affinity: false,
        line: 0,
      });
  }
  return out;
}

/** The rules of a service or local chain that send new connections to `ep` (endpointsOf's):
 * its affinity lookup and the numgen map naming its chain, or the DNAT naming its address. */
export function rulesTo(rules: NftRule[], ep: TreeEndpoint): NftRule[] {
  return rules.filter((r) => {
    if (affinitySet(r) && goesTo(r) === ep.chain) return true;
    if (numgenVmap(r)?.targets.includes(ep.chain)) return true;
    // a DNAT in the chain itself (1.33 on): the endpoint's chain is the Service chain
    const address = ep.address;
    if (r.chain !== ep.chain || address === undefined) return false;
    const dnat = dnatOf(r);
    const targets = !dnat ? [] : 'mod' in dnat ? dnat.targets : [dnat];
    return targets.some((to) => addressOf(to) === address);
  });
}

/** Why a numgen map whose elements an author left out does not show all the endpoints it picks
 * from (its N says how many); undefined where those shown are all N. */
function elidedMap(r: NftRule, map: { mod: number; targets: unknown[] }): string | undefined {
  if (!r.elided || map.targets.length >= map.mod) return undefined;
  return `its numgen map shows ${map.targets.length} of its ${map.mod} endpoints (line ${r.elided.join(', ')} elides the rest): the others' chains and shares are not in the listing`;
}

/** The lines eliding elements of the numgen maps of a Service port's service and local chains. */
export function mapElisions(t: NftTable, x: ServiceTree | undefined): number[] {
  const own = [x?.chains.svc, x?.chains.svl].map((c) => (c ? t.chain(c) : undefined));
  return own.flatMap((c) => c?.rules.flatMap((r) => r.elided ?? []) ?? []);
}

/** Where a DNAT sends: the address and port as the rule holds them (no port: the packet's). */
export interface DnatTo {
  ip: string;
  port: string | undefined;
}

/** An endpoint's "ip:port" ("[ip]:port" in IPv6), as the trees write it. */
const addressOf = (to: DnatTo) => (to.port === undefined ? to.ip : hostPort(to.ip, to.port));

/** A DNAT: its destination, or a numgen map's N and its destinations. */
function dnatOf(r: NftRule): DnatTo | { mod: number; targets: DnatTo[] } | undefined {
  for (const e of r.expr) {
    const d = e['dnat'];
    if (!isObject(d)) continue;
    const addr = d['addr'];
    if (typeof addr === 'string')
      return { ip: addr, port: d['port'] !== undefined ? String(d['port']) : undefined };
    const map = isObject(addr) && isObject(addr['map']) ? addr['map'] : undefined;
    const set = map && isObject(map['data']) ? map['data']['set'] : undefined;
    if (Array.isArray(set)) {
      const numgen = map && isObject(map['key']) ? map['key']['numgen'] : undefined;
      const mod = isObject(numgen) ? Number(numgen['mod']) : 0;
      const targets = set.map((pair) => {
        const v = Array.isArray(pair) ? pair[1] : undefined;
        const parts = isObject(v) && Array.isArray(v['concat']) ? (v['concat'] as unknown[]) : [v];
        return {
          ip: String(scalar(parts[0])),
          port: parts.length > 1 ? String(scalar(parts[1])) : undefined,
        };
      });
      return { mod: mod > 0 ? mod : targets.length, targets };
    }
  }
  return undefined;
}

/** `numgen random mod N vmap { 0 : goto X, ... }`: N and the targets in order. */
function numgenVmap(r: NftRule): { mod: number; targets: string[] } | undefined {
  for (const e of r.expr) {
    const v = e['vmap'];
    if (!isObject(v) || !isObject(v['key']) || !isObject(v['key']['numgen'])) continue;
    const set = isObject(v['data']) ? v['data']['set'] : undefined;
    if (!Array.isArray(set)) continue;
    const targets = set
      .map((pair) => (Array.isArray(pair) ? verdictOf(pair[1])?.target : undefined))
      .filter((x): x is string => x !== undefined);
    const mod = Number(v['key']['numgen']['mod']);
    return { mod: mod > 0 ? mod : targets.length, targets };
  }
  return undefined;
}

/** `ip saddr @affinity-...`: the affinity set a rule looks the client up in. */
function affinitySet(r: NftRule): string | undefined {
  for (const e of r.expr) {
    const m = e['match'];
    const right = isObject(m) ? m['right'] : undefined;
    if (typeof right === 'string' && right.startsWith('@affinity-')) return right.slice(1);
  }
  return undefined;
}
