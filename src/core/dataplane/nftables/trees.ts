// kube-proxy's nftables table read back into the Service trees iptables mode gives (the same
// ServiceTree model: every screen, JSON field and check reads them unchanged): entry points from
// the service-ips / service-nodeports verdict maps, the service-, local-, external- and
// firewall- chains of each Service port, its endpoints with their shares (numgen mod N: 1/N
// each), affinity, the no-endpoint rejects and the masquerade marks.
//
// Two generations of kube-proxy are read: the endpoint-<H>-... chain per endpoint, DNATing
// (1.29-1.32), and the DNAT inlined in the service chain through a numgen map, with endpoint
// chains only for session affinity (1.33 on, as 1.37 writes it in the lab).
import type { ServicePortName } from '../../model.js';
import {
  emptyTree,
  EXTERNAL_OR_LB,
  type EntryPoint,
  type OrphanChain,
  type ServiceTree,
  type ServiceTrees,
} from '../trees.js';
import type { NftChain, NftTable } from './read/listing.js';
import { portChain, type PortChain } from './trees/port-chain.js';
import { abridgedBy, markAbridged, markUnread } from './trees/partial.js';
import { endpointsOf, mapElisions } from './trees/endpoints.js';
import { goesTo } from './trees/expr.js';
import { clusterIpMasquerade, hairpinSet, markRule } from './trees/masquerade.js';

export interface NftTreeOptions {
  /** Load-balancer ingress IPs (from the Services): told apart from external IPs by them. */
  loadBalancerIPs?: ReadonlySet<string>;
}

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

/** The tree's slot for each kind of a Service port's own chain. */
const SLOT = { service: 'svc', local: 'svl', external: 'ext', firewall: 'fw' } as const;

export function buildNftServiceTrees(t: NftTable, o: NftTreeOptions = {}): ServiceTrees {
  const trees = new Map<ServicePortName, ServiceTree>();
  // the chains a map element or a jump leads to, as the table's lookup by name gives them (a
  // paste may list a chain twice), and each Service port's own chains as listed: most are
  // endpoint chains, and only chains it holds are orphans
  const reached = new Set<NftChain>();
  const reach = (name: string) => {
    const chain = t.chain(name);
    if (chain) reached.add(chain);
    return chain;
  };
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
      const x = tree(c);
      // a map element leading to a chain the listing lacks: only a paste can (nft refuses it)
      if (!reach(target) && !x.absentChains?.includes(target))
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
    x.chains[SLOT[c.kind as keyof typeof SLOT]] = chain.name;
    reached.add(chain); // as listed: no lookup of the chain in hand (a twice-listed one: each)
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
        if (v) reach(v);
      }
  }
  // the firewall chains hang off their own map
  for (const e of t.set('firewall-ips')?.elements ?? [])
    if (e.verdict?.target) {
      reach(e.verdict.target);
      const c = portChain(e.verdict.target);
      if (c && trees.get(c.name)) trees.get(c.name)!.chains.fw = e.verdict.target;
    }

  // the services chain marks cluster IP traffic for masquerade, for every cluster IP at once
  if (masqueradeAll)
    for (const x of trees.values())
      if (x.clusterIP && x.entries.length > 0) x.masquerade.unshift({ ...masqueradeAll, line: 0 });

  const orphans: OrphanChain[] = t.chains
    .filter((ch) => !reached.has(ch) && !reached.has(t.chain(ch.name)!) && portChain(ch.name))
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
