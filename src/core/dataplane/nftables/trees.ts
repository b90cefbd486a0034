// kube-proxy's nftables table read back into the Service trees iptables mode gives (the same
// ServiceTree model: every screen, JSON field and check reads them unchanged): entry points from
// the service-ips / service-nodeports verdict maps, the service-, local-, external- and
// firewall- chains of each Service port, its endpoints with their shares (numgen mod N: 1/N
// each), affinity, the no-endpoint rejects and the masquerade marks.
//
// Two generations of kube-proxy are read: the endpoint-<H>-... chain per endpoint, DNATing
// (1.29-1.32), and the DNAT inlined in the service chain through a numgen map, with endpoint
// chains only for session affinity (1.33 on, as 1.37 writes it in the lab).
import { hostPort } from '../../ipv6.js';
import type { ServicePortName } from '../../model.js';
import {
  emptyTree,
  EXTERNAL_OR_LB,
  type EntryPoint,
  type MasqueradeRule,
  type OrphanChain,
  type ServiceTree,
  type ServiceTrees,
  type TreeEndpoint,
} from '../trees.js';
import {
  matchesSet,
  missingSets,
  scalar,
  verdictOf,
  type NftExpr,
  type NftRule,
  type NftTable,
  type NftUnread,
} from './read/listing.js';

/** A per-Service-port chain name: kind, hash, then "ns/name/proto/port" (and "__ip/port"). */
const PORT_CHAIN =
  /^(service|external|local|firewall|endpoint)-([A-Z2-7]{8})-([^/]+)\/([^/]+)\/([a-z]+)\/([^_]*)(?:__(.+))?$/;

interface PortChain {
  kind: string;
  hash: string;
  name: ServicePortName;
  protocol: string;
  /** "ip/port" of an endpoint chain. */
  endpoint?: string;
}

export function portChain(chain: string): PortChain | undefined {
  const m = PORT_CHAIN.exec(chain);
  if (!m) return undefined;
  const [, kind, hash, ns, svc, protocol, port, endpoint] = m;
  return {
    kind: kind!,
    hash: hash!,
    // an unnamed port is "ns/svc", as kube-proxy names it (ServicePortName.String)
    name: port ? `${ns}/${svc}:${port}` : `${ns}/${svc}`,
    protocol: protocol!,
    ...(endpoint ? { endpoint } : {}),
  };
}

export interface NftTreeOptions {
  /** Load-balancer ingress IPs (from the Services): told apart from external IPs by them. */
  loadBalancerIPs?: ReadonlySet<string>;
}

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
function markAbridged(t: NftTable, x: ServiceTree, why: string): void {
  const own = x.chains.svc ?? x.chains.svl;
  const chain = own === undefined ? undefined : t.chain(own);
  if (own === undefined || chain === undefined) x.partial = `its chain is not in the paste: ${why}`;
  else if (
    chain.elided ||
    t.cut?.inside.endsWith(`chain ${own}`) ||
    t.cut?.inside === 'the nft -j listing'
  )
    x.partial = why;
  else if (x.endpoints.some((e) => e.chainMissing))
    x.partial ??= `an endpoint chain is not in the paste: ${why}`;
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
function markUnread(t: NftTable, services: ServiceTree[], orphans: OrphanChain[]): void {
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

type J = Record<string, unknown>;
const isObject = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A no-endpoint map element as the checks quote it: "no-endpoint-services 10.96.0.9 . tcp . 80 :
 * drop" (reject: kube-proxy's `goto reject-chain`). */
export const noEndpointElement = (tree: ServiceTree, v: ServiceTree['verdicts'][number]) =>
  `${v.chain} ${v.address ? `${v.address} . ` : ''}${tree.protocol} . ${v.port} : ${v.kind}`;

/** Whether the listing holds Service ports' chains but not the map elements that lead to them:
 * no map (a fragment), or maps listed empty (`nft -t` omits elements). */
export function entriesNotListed(t: NftTable): boolean {
  const maps = [t.set('service-ips'), t.set('service-nodeports')];
  if (maps.some((m) => (m?.elements.length ?? 0) > 0)) return false;
  return t.chains.some((ch) => portChain(ch.name)?.kind === 'service');
}

export function buildNftServiceTrees(t: NftTable, o: NftTreeOptions = {}): ServiceTrees {
  const trees = new Map<ServicePortName, ServiceTree>();
  const reached = new Set<string>(); // chains a map element or a jump leads to
  const clusterIPs = new Set((t.set('cluster-ips')?.elements ?? []).map((e) => String(e.key[0])));
  const clusterSet = t.set('cluster-ips');
  const hasClusterIPs = clusterSet !== undefined && !clusterSet.elided;
  // loadBalancerSourceRanges apply to load-balancer IPs only: those in firewall-ips are LB IPs
  const firewalled = new Set((t.set('firewall-ips')?.elements ?? []).map((e) => String(e.key[0])));
  const isLoadBalancer = (ip: string) => o.loadBalancerIPs?.has(ip) || firewalled.has(ip);
  // kube-proxy sends a cluster IP's element to the port's service- chain (local- under
  // internalTrafficPolicy Local) and an external or load-balancer IP's to its external- chain
  // (syncProxyRules): where the cluster-ips set is not whole in the paste, the chain tells them
  const vipKind = (address: string, c: PortChain): EntryPoint['kind'] | undefined =>
    clusterIPs.has(address) || (!hasClusterIPs && (c.kind === 'service' || c.kind === 'local'))
      ? 'cluster-ip'
      : isLoadBalancer(address) || c.kind === 'firewall'
        ? 'load-balancer'
        : // with the Services read, an address no load balancer has is an external IP
          o.loadBalancerIPs
          ? 'external-ip'
          : undefined;
  const tree = (c: PortChain): ServiceTree => {
    let x = trees.get(c.name);
    if (!x)
      trees.set(
        c.name,
        (x = emptyTree({ name: c.name, id: c.name, hash: c.hash, protocol: c.protocol })),
      );
    return x;
  };

  // entry points: the maps the services chain looks packets up in
  for (const [map, kind] of [
    ['service-ips', 'vip'],
    ['service-nodeports', 'node-port'],
  ] as const)
    for (const e of t.set(map)?.elements ?? []) {
      const target = e.verdict?.target;
      const c = target ? portChain(target) : undefined;
      if (!c || !target) continue;
      reached.add(target);
      const x = tree(c);
      // a map element leading to a chain the listing lacks: only a paste can (nft refuses it)
      if (!t.chain(target) && !x.absentChains?.includes(target))
        x.absentChains = [...(x.absentChains ?? []), target];
      const [address, protocol, port] =
        kind === 'vip'
          ? [String(e.key[0]), String(e.key[1]), Number(e.key[2])]
          : [undefined, String(e.key[0]), Number(e.key[1])];
      const told = kind === 'node-port' ? 'node-port' : vipKind(address!, c);
      const entryKind = told ?? 'virtual-server';
      x.entries.push({
        kind: entryKind,
        ...(told ? {} : { label: EXTERNAL_OR_LB }),
        address,
        port,
        protocol,
        chain: target,
        from: map,
        line: 0,
      });
      if (entryKind === 'cluster-ip') {
        x.clusterIP ??= address;
        x.port ??= port;
      } else if (entryKind === 'node-port' && !x.nodePorts.includes(port)) x.nodePorts.push(port);
      else if (entryKind === 'external-ip' && !x.externalIPs.includes(address!))
        x.externalIPs.push(address!);
      else if (entryKind === 'load-balancer' && !x.loadBalancerIPs.includes(address!))
        x.loadBalancerIPs.push(address!);
    }

  // the no-endpoint maps: kube-proxy's REJECT / DROP for Service ports without endpoints
  for (const map of ['no-endpoint-services', 'no-endpoint-nodeports'])
    for (const e of t.set(map)?.elements ?? []) {
      const name = e.comment;
      if (!name || !e.verdict) continue;
      const protocol = String(map === 'no-endpoint-services' ? e.key[1] : e.key[0]);
      const x = tree({ kind: 'service', hash: '', name, protocol });
      const nodePort = map === 'no-endpoint-nodeports';
      const address = nodePort ? undefined : String(e.key[0]);
      const port = Number(nodePort ? e.key[1] : e.key[2]);
      x.verdicts.push({
        kind:
          e.verdict.target === 'reject-chain' || e.verdict.kind === 'reject' ? 'reject' : 'drop',
        table: t.headless ? '' : `${t.family} ${t.name}`, // a paste may lack the table line
        chain: map,
        comment: name,
        address,
        port,
        line: 0,
      });
      if (nodePort && !x.nodePorts.includes(port)) x.nodePorts.push(port);
      if (!nodePort && address && clusterIPs.has(address) && x.clusterIP === undefined) {
        x.clusterIP = address;
        x.port = port;
      }
    }

  // a paste without the maps that lead to the Service ports' chains (a fragment: one chain as
  // `nft list chain` prints it): each Service port's chain is read as its own tree, its entry not
  // in the paste, as an iptables paste of KUBE-SVC chains alone is
  // so too where the maps are listed without their elements (`nft -t` / `--terse` omits them) while
  // Service ports' chains are there: kube-proxy writes no such chain without its element
  if (entriesNotListed(t))
    for (const chain of t.chains) {
      const c = portChain(chain.name);
      if (c && c.kind !== 'endpoint') tree(c).entryAbsent = true;
    }

  // each Service port's own chains, and what they do
  const masqueradeAll = clusterIpMasquerade(t);
  const hairpin = hairpinSet(t); // read once: every Service port looks its endpoints up in it
  for (const chain of t.chains) {
    // most chains are endpoint chains, reached from their Service's: not named apart here
    if (chain.name.startsWith('endpoint-')) continue;
    const c = portChain(chain.name);
    if (!c || c.kind === 'endpoint') continue;
    const x = trees.get(c.name);
    if (!x) continue;
    const slot = ({ service: 'svc', local: 'svl', external: 'ext', firewall: 'fw' } as const)[
      c.kind as 'service' | 'local' | 'external' | 'firewall'
    ];
    x.chains[slot] = chain.name;
    reached.add(chain.name);
    if (c.kind === 'service' || c.kind === 'local') {
      // 1.29-1.32 mark cluster IP traffic in the service chain itself
      for (const r of chain.rules) {
        const m = goesTo(r) === 'mark-for-masquerade' ? markRule(r) : undefined;
        if (m) x.masquerade.push({ chain: chain.name, condition: m, line: 0 });
        // its cluster IP and port, where no map element in the paste says them: kube-proxy
        // 1.29-1.32 match them in this rule ("ip daddr 10.96.0.10 udp dport 53 ip saddr != …")
        const vip =
          m && x.entryAbsent ? /\bip6? daddr ([\da-f.:]+) \w+ dport (\d+)\b/.exec(m) : null;
        if (vip && x.clusterIP === undefined) [x.clusterIP, x.port] = [vip[1]!, Number(vip[2])];
      }
      const eps = endpointsOf(t, chain.rules, reached, x, hairpin);
      if (c.kind === 'service') x.endpoints = eps;
      else x.localEndpoints = eps;
    } else if (c.kind === 'external')
      for (const r of chain.rules) {
        const m = markRule(r);
        if (m) x.masquerade.push({ chain: chain.name, condition: m, line: 0 });
        const v = goesTo(r);
        if (v) reached.add(v);
      }
  }
  // the firewall chains hang off their own map
  for (const e of t.set('firewall-ips')?.elements ?? [])
    if (e.verdict?.target) {
      reached.add(e.verdict.target);
      const c = portChain(e.verdict.target);
      if (c && trees.get(c.name)) trees.get(c.name)!.chains.fw = e.verdict.target;
    }

  // the services chain marks cluster IP traffic for masquerade, for every cluster IP at once
  if (masqueradeAll)
    for (const x of trees.values())
      if (x.clusterIP && x.entries.length > 0) x.masquerade.unshift({ ...masqueradeAll, line: 0 });

  const orphans: OrphanChain[] = t.chains
    .filter((ch) => !reached.has(ch.name) && portChain(ch.name))
    .map((ch) => {
      const leftOut = mapElisions(t, trees.get(portChain(ch.name)!.name));
      return {
        chain: ch.name,
        rules: ch.rules.length,
        // an element its Service port's numgen map does not show may lead to it
        ...(leftOut.length > 0 && ch.name.startsWith('endpoint-')
          ? {
              partial: `line ${leftOut.join(', ')} elides elements of its Service port's numgen map: it may be among them`,
            }
          : {}),
      };
    });
  const services = [...trees.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const abridged = abridgedBy(t);
  if (abridged) for (const x of services) markAbridged(t, x, abridged);
  markUnread(t, services, orphans);
  return { services, orphans: orphans.sort((a, b) => (a.chain < b.chain ? -1 : 1)) };
}

/** The endpoints a service- or local- chain sends to, each with its share. */
function endpointsOf(
  t: NftTable,
  rules: NftRule[],
  reached: Set<string>,
  x: ServiceTree,
  hairpin: Set<string> | undefined,
): TreeEndpoint[] {
  const out: TreeEndpoint[] = [];
  const byChain = new Map<string, TreeEndpoint>();
  const endpointChain = (name: string): TreeEndpoint => {
    let ep = byChain.get(name);
    if (!ep) {
      reached.add(name);
      const chain = t.chain(name);
      let dnat: ReturnType<typeof dnatOf>;
      // 1.29-1.32: `ip saddr <the endpoint> jump mark-for-masquerade` in the endpoint chain
      let hairpin = false;
      for (const r of chain?.rules ?? []) {
        dnat ??= dnatOf(r);
        hairpin ||= markRule(r)?.includes('saddr') === true;
      }
      ep = {
        address: typeof dnat === 'string' ? dnat : undefined,
        chain: name,
        probability: 0,
        hairpinMasquerade: hairpin ? true : null,
        affinity: false,
        line: 0,
      };
      if (!chain) ep.chainMissing = true;
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
    if (typeof dnat === 'object') x.partial ??= elidedMap(r, dnat);
    if (typeof dnat === 'string')
      out.push({
        address: dnat,
        chain: r.chain,
        probability: 1,
        hairpinMasquerade: null,
        affinity: false,
        line: 0,
      });
    else if (dnat)
      for (const address of dnat.targets)
        out.push({
          address,
          chain: r.chain,
          probability: 1 / dnat.mod,
          hairpinMasquerade: null,
          affinity: false,
          line: 0,
        });
  }
  // 1.33 on: the masquerading chain's hairpin-connections set lists this node's endpoints; one
  // not in it is another node's (no hairpin there) or a local one missing: unknown without Pods
  for (const ep of out)
    if (ep.address && ep.hairpinMasquerade === null && hairpin?.has(`${ep.address}/${x.protocol}`))
      ep.hairpinMasquerade = true;
  return out;
}

/** Why a numgen map whose elements an author left out does not show all the endpoints it picks
 * from (its N says how many); undefined where those shown are all N. */
function elidedMap(r: NftRule, map: { mod: number; targets: string[] }): string | undefined {
  if (!r.elided || map.targets.length >= map.mod) return undefined;
  return `its numgen map shows ${map.targets.length} of its ${map.mod} endpoints (line ${r.elided.join(', ')} elides the rest): the others' chains and shares are not in the paste`;
}

/** The lines eliding elements of the numgen maps of a Service port's service and local chains. */
function mapElisions(t: NftTable, x: ServiceTree | undefined): number[] {
  const own = [x?.chains.svc, x?.chains.svl].map((c) => (c ? t.chain(c) : undefined));
  return own.flatMap((c) => c?.rules.flatMap((r) => r.elided ?? []) ?? []);
}

/** A DNAT: "ip:port", or a numgen map's N and its "ip:port" targets. */
function dnatOf(r: NftRule): string | { mod: number; targets: string[] } | undefined {
  for (const e of r.expr) {
    const d = e['dnat'];
    if (!isObject(d)) continue;
    const addr = d['addr'];
    if (typeof addr === 'string')
      return d['port'] !== undefined ? hostPort(addr, String(d['port'])) : addr;
    const map = isObject(addr) && isObject(addr['map']) ? addr['map'] : undefined;
    const set = map && isObject(map['data']) ? map['data']['set'] : undefined;
    if (Array.isArray(set)) {
      const numgen = map && isObject(map['key']) ? map['key']['numgen'] : undefined;
      const mod = isObject(numgen) ? Number(numgen['mod']) : 0;
      const targets = set.map((pair) => {
        const v = Array.isArray(pair) ? pair[1] : undefined;
        const parts = isObject(v) && Array.isArray(v['concat']) ? (v['concat'] as unknown[]) : [v];
        const [ip, port] = parts.map((p) => String(scalar(p)));
        return port === undefined ? ip! : hostPort(ip!, port);
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

/** The chain a rule's goto / jump leads to. */
function goesTo(r: NftRule): string | undefined {
  for (const e of r.expr) {
    const v = verdictOf(e);
    if (v?.target) return v.target;
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

/** `meta mark set …` (nft JSON: {"mangle": {"key": {"meta": {"key": "mark"}}, …}}). */
function setsMark(mangle: unknown): boolean {
  const key = isObject(mangle) ? mangle['key'] : undefined;
  const meta = isObject(key) ? key['meta'] : undefined;
  return isObject(meta) && meta['key'] === 'mark';
}

/** What a `meta mark set meta mark | 0x4000` rule marks: "all", or its match in nft words. */
function markRule(r: NftRule): string | undefined {
  const marks = r.expr.some((e) => setsMark(e['mangle'])) || goesTo(r) === 'mark-for-masquerade';
  if (!marks) return undefined;
  const conditions = r.expr.filter((e) => 'match' in e).map(matchText);
  return conditions.length > 0 ? conditions.join(' ') : 'all';
}

/** The services chain's cluster-IP masquerade: `ip daddr @cluster-ips ip saddr != CIDR`. */
function clusterIpMasquerade(t: NftTable): Omit<MasqueradeRule, 'line'> | undefined {
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
function hairpinSet(t: NftTable): Set<string> | undefined {
  const s = t.set('hairpin-connections');
  if (!s) return undefined;
  return new Set(
    // "ip:port/proto" as the trees write an endpoint ("[fd00::3]:80/tcp" for the ip6 table)
    s.elements.map((e) => `${hostPort(String(e.key[1]), Number(e.key[3]))}/${String(e.key[2])}`),
  );
}

/** A match expression as nft prints it, near enough to read: "ip saddr != 10.244.0.0/16". */
function matchText(e: NftExpr): string {
  const m = e['match'];
  if (!isObject(m)) return JSON.stringify(e);
  if (typeof m['text'] === 'string') return m['text']; // read from the text listing as it was
  const side = (v: unknown): string => {
    if (isObject(v) && isObject(v['payload']))
      return `${String(v['payload']['protocol'])} ${String(v['payload']['field'])}`;
    if (isObject(v) && isObject(v['meta'])) return `meta ${String(v['meta']['key'])}`;
    if (isObject(v) && isObject(v['fib']))
      return `fib ${((v['fib']['flags'] as unknown[]) ?? []).join(' ')} ${String(v['fib']['result'])}`;
    if (isObject(v) && Array.isArray(v['set']))
      return `{ ${(v['set'] as unknown[]).map((x) => String(scalar(x))).join(', ')} }`;
    return String(scalar(v));
  };
  const op = m['op'] === '==' ? '' : ` ${String(m['op'])}`;
  return `${side(m['left'])}${op} ${side(m['right'])}`;
}
