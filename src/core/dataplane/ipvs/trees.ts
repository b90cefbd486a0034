// IPVS virtual servers read into the Service trees of the common model: one tree per Service port
// where the objects name it (its cluster IP, node ports on each node address, external and
// load-balancer IPs all merge into it), else one per virtual server ("TCP 10.96.0.10:53"). Each
// real server is an endpoint with its share as its scheduler fixes it (schedulers.ts: one each for
// rr, by weight for wrr; kube-proxy writes weight 1, and 0 for a terminating endpoint), else the
// share unknown with what picks it (connections, a hash of the source). Persistence is affinity where kube-proxy wrote it.
import { sharesOf } from './schedulers.js';
import type { ServicePortName } from '../../model.js';
import {
  emptyTree,
  onLoopback,
  type EntryPoint,
  type ServiceTree,
  type ServiceTrees,
  type TreeEndpoint,
} from '../trees.js';
import { hostAndPort } from './read/addresses.js';
import { loopBackEntry } from './expected/expected.js';
import { REAL_SERVER_WIDTH } from './read/printing.js';
import type { IpvsService, IpvsTable } from './read/listing.js';
import {
  kubeProxyForwarding,
  kubeProxyMarks,
  kubeProxyPersistence,
  persistenceText,
} from './read/not-kube-proxy.js';
import { SERVICE_PORTS } from './read/service-names.js';

/** What the objects say an address and port is: its Service port and which kind of entry. */
export interface IpvsKnown {
  name: ServicePortName;
  kind: EntryPoint['kind'];
}

export interface IpvsTreeOptions {
  /** "tcp 10.96.0.10:53" (or "tcp :30080" for any node address) -> the Service port it is. */
  known?: Map<string, IpvsKnown>;
  /** The KUBE-LOOP-BACK ipset's entries, where read: an endpoint in it is masqueraded when it
   * reaches itself (hairpin); one not in it, unknown (a remote endpoint needs none here). */
  loopBack?: Set<string>;
}

export function buildIpvsTrees(t: IpvsTable, o: IpvsTreeOptions = {}): ServiceTrees {
  const trees = new Map<string, ServiceTree>();
  const guessed = o.known ? undefined : entryKinds(t);
  const firsts = new Map<string, IpvsService>(); // a node port's tree -> its first virtual server
  // a node port (kube-proxy binds it on every node address) is kube-proxy's mark on the listing
  const marked = !o.known && (kubeProxyMarks(t) || [...guessed!.values()].includes('node-port'));
  for (const vs of t.services) {
    // kube-proxy writes no firewall-mark service; kube-router's DSR and keepalived do
    if (vs.protocol === 'fwmark') {
      const tree = markTree(vs, t.view, o.loopBack);
      trees.set(`${tree.id} fwmark`, tree);
      continue;
    }
    const { host, port } = vsSplit(vs);
    const known =
      port > 0
        ? (o.known?.get(`${vs.protocol} ${host}:${port}`) ??
          o.known?.get(`${vs.protocol} :${port}`))
        : undefined;
    // without its port a virtual server is no Service port's entry the listing can show
    const kind =
      port > 0 ? (known?.kind ?? guessed?.get(vs) ?? 'virtual-server') : 'virtual-server';
    // kube-proxy binds cluster, external and load-balancer IPs alike: only the objects tell them
    const serviceIP =
      kind === 'virtual-server' &&
      !o.known &&
      port > 0 &&
      !inRange(port) &&
      kubeProxyForwarding(vs);
    // persistence is a Service's affinity only where kube-proxy wrote it: the objects name the
    // virtual server, or the listing bears kube-proxy's marks
    const affinity = kubeProxyPersistence(vs) && (o.known ? known !== undefined : marked);
    const persistence =
      vs.persistent !== undefined && !affinity ? persistenceText(vs.persistent) : undefined;
    const label = [serviceIP ? SERVICE_IP : undefined, persistence].filter(Boolean).join('; ');
    // a node port's virtual servers (one per node address) are one entry of one Service port,
    // where the listing shows each whole with the same real servers (kube-proxy writes them so)
    const nodePort = `${vs.protocol.toUpperCase()} node port ${port}`;
    const merged = kind === 'node-port' && !known && sameRealServers(firsts.get(nodePort), vs);
    if (merged) firsts.set(nodePort, firsts.get(nodePort) ?? vs);
    const id = known?.name ?? (merged ? nodePort : vsName(vs));
    let tree = trees.get(`${id} ${vs.protocol}`);
    if (!tree)
      trees.set(
        `${id} ${vs.protocol}`,
        (tree = emptyTree({ name: known?.name, id, protocol: vs.protocol })),
      );
    const chain = vsName(vs);
    tree.entries.push({
      kind,
      ...(label ? { label } : {}),
      ...(kind === 'node-port' && onLoopback(host) ? { localhost: true as const } : {}),
      address: host,
      ...(port > 0 ? { port } : {}),
      protocol: vs.protocol,
      chain,
      from: 'ipvs',
      line: vs.line,
    });
    if (kind === 'cluster-ip') tree.clusterIP ??= host;
    // a Service IP's port is the Service port, whichever kind of IP it is
    if (kind === 'cluster-ip' || serviceIP) tree.port ??= port;
    else if (kind === 'node-port' && !tree.nodePorts.includes(port)) tree.nodePorts.push(port);
    else if (kind === 'external-ip' && !tree.externalIPs.includes(host))
      tree.externalIPs.push(host);
    else if (kind === 'load-balancer' && !tree.loadBalancerIPs.includes(host))
      tree.loadBalancerIPs.push(host);
    if (affinity) tree.affinitySeconds = vs.persistent;
    // the cluster IP's virtual server stands for the Service port's endpoints
    if (kind === 'cluster-ip' || tree.endpoints.length === 0) {
      tree.endpoints = endpointsOf(vs, t.view, o.loopBack, affinity);
      tree.chains.svc = chain;
    }
    if (vs.partial) tree.partial = vs.partial;
  }
  return { services: [...trees.values()].sort((a, b) => (a.id < b.id ? -1 : 1)), orphans: [] };
}

/** Whether a node port's virtual server joins the tree of that node port: it is the first, or it
 * and the tree's first are both whole with the same real servers (a cut one is shown apart, its
 * cut said of it alone, and so is one whose real servers differ). */
function sameRealServers(first: IpvsService | undefined, vs: IpvsService): boolean {
  if (!first) return true;
  if (first.partial || vs.partial) return false;
  const key = (r: IpvsService['realServers'][number]) => `${r.address} ${r.weight} ${r.forward}`;
  const its = vs.realServers.map(key);
  return (
    first.realServers.length === its.length && first.realServers.every((r, i) => key(r) === its[i])
  );
}

/**
 * A firewall-mark virtual service ("FWM  1481 rr"): it balances the packets iptables rules marked
 * 1481, whatever their address, port and protocol; those rules (kube-router's mangle rules for a
 * DSR Service's external IP) are not in an ipvsadm listing, so its entry says the mark alone.
 */
function markTree(vs: IpvsService, view: IpvsTable['view'], loopBack?: Set<string>): ServiceTree {
  const id = markId(vs);
  const tree = emptyTree({ id, protocol: '' });
  tree.entries.push({
    kind: 'virtual-server',
    label: `firewall mark ${vs.address}${vs.ipv6 ? ' of IPv6' : ''} (the rules that set the mark, and so its addresses and ports, are not in an ipvsadm listing)${vs.persistent !== undefined ? `; ${persistenceText(vs.persistent)}` : ''}`,
    protocol: '',
    chain: id,
    from: 'ipvs',
    line: vs.line,
  });
  tree.endpoints = endpointsOf(vs, view, loopBack);
  tree.chains.svc = id;
  if (vs.partial) tree.partial = vs.partial;
  return tree;
}

/** "FWM 1481", "FWM 1481 IPv6": a mark may have a virtual service per family. */
const markId = (vs: IpvsService) => `FWM ${vs.address}${vs.ipv6 ? ' IPv6' : ''}`;

/** "TCP 10.96.0.10:53"; a name another virtual server of the listing prints too (two addresses of
 * one host, or names ipvsadm cut) is told apart by its line, in its tree's id and chain alike. */
const vsName = (vs: IpvsService) =>
  `${vs.protocol.toUpperCase()} ${vs.address}${vs.sharedName ? ` (line ${vs.line})` : ''}`;

/** The default NodePort range (--service-node-port-range). */
const NODE_PORTS = { min: 30000, max: 32767 };
const inRange = (port: number) => port >= NODE_PORTS.min && port <= NODE_PORTS.max;

/** What a virtual server outside the node-port range is, from a listing alone. */
const SERVICE_IP = 'Service IP (cluster, external or load-balancer IP: a listing does not say)';

/**
 * Which virtual servers are node ports, from the listing alone (no objects to ask): kube-proxy
 * writes a node port on every node address, loopback included, and no Service IP is a loopback
 * one. So a port on a loopback address is a node port whatever the node-port range, and so is
 * that port on every other address; a port in the default range on several addresses is one too,
 * and so is any such port on an address already seen holding one. Nothing else is told:
 * kube-proxy binds cluster, external and load-balancer IPs alike, and a lone node-range port may
 * be any of them.
 */
function entryKinds(t: IpvsTable): Map<IpvsService, EntryPoint['kind']> {
  const out = new Map<IpvsService, EntryPoint['kind']>();
  const hosts = new Map<string, Set<string>>(); // "tcp 32767" -> addresses
  // a virtual server whose port is not in the paste tells nothing of the others
  const all = t.services.filter((vs) => vs.protocol !== 'fwmark' && vsSplit(vs).port > 0);
  const key = (vs: IpvsService) => `${vs.protocol} ${vsSplit(vs).port}`;
  const onLoopback = new Set(all.filter((vs) => isLoopback(vsSplit(vs).host)).map(key));
  for (const vs of all) if (onLoopback.has(key(vs))) out.set(vs, 'node-port');
  const services = all.filter((vs) => inRange(vsSplit(vs).port));
  const rangePorts = new Map<string, Set<number>>();
  for (const vs of services) {
    const { host, port } = vsSplit(vs);
    hosts.set(key(vs), (hosts.get(key(vs)) ?? new Set()).add(host));
    rangePorts.set(host, (rangePorts.get(host) ?? new Set()).add(port));
  }
  // an address holding several node-range ports is a node's, where kube-proxy binds every one
  const nodeAddresses = new Set<string>();
  for (const vs of services) {
    const { host } = vsSplit(vs);
    if (isLoopback(host) || hosts.get(key(vs))!.size > 1 || rangePorts.get(host)!.size > 1)
      nodeAddresses.add(host);
  }
  for (const vs of services) if (nodeAddresses.has(vsSplit(vs).host)) out.set(vs, 'node-port');
  return out;
}

const isLoopback = (host: string) => /^127\./.test(host) || host === '::1';

function endpointsOf(
  vs: IpvsService,
  view: IpvsTable['view'],
  loopBack?: Set<string>,
  affinity = false,
): ServiceTree['endpoints'] {
  const weighed = vs.realServers.every((r) => r.weight !== undefined);
  const bare = vs.realServers.filter((r) => r.columnsMissing).map((r) => r.line);
  const read = vs.partial
    ? `${vs.partial}: the share of each is unknown`
    : bare.length > 0
      ? bareText(bare)
      : weighed
        ? undefined
        : `${VIEW_FLAG[vs.countersOnly ?? view] ?? 'this view'} shows no weights`;
  const byScheduler = read ? undefined : sharesOf(vs.scheduler, weights(vs));
  const shares = byScheduler && 'shares' in byScheduler ? byScheduler.shares : undefined;
  // a quiesced real server (weight 0) takes no new connection, whatever the scheduler
  const unknownOf = (r: IpvsService['realServers'][number]) =>
    read ??
    (byScheduler && 'unknown' in byScheduler && r.weight !== 0 ? byScheduler.unknown : undefined);
  return vs.realServers.map((r, i) => ({
    ...(r.nameCut ? cutName(r.address) : { address: r.address }),
    chain: vs.protocol === 'fwmark' ? markId(vs) : vsName(vs),
    // direct routing and IP-in-IP keep the virtual address as the destination: no DNAT
    ...(r.forward === 'Route' ? { forward: 'route' as const } : {}),
    ...(r.forward === 'Tunnel' ? { forward: 'tunnel' as const } : {}),
    ...(r.forward === undefined ? { forward: 'unknown' as const } : {}),
    probability: shares?.[i] ?? 0,
    ...(unknownOf(r) ? { shareUnknown: unknownOf(r) } : {}),
    // a cut name's port is not known: no ipset entry to look up
    hairpinMasquerade:
      !r.nameCut && loopBack?.has(loopBackOf(vs.protocol, r.address)) ? true : null,
    affinity,
    line: r.line,
  }));
}

const weights = (vs: IpvsService) => vs.realServers.map((r) => r.weight ?? 0);

/** Why no share is stated: these real servers' lines show no columns after the address. */
const bareText = (lines: number[]) =>
  lines.length === 1
    ? `its real server at line ${lines[0]} shows no columns after its address: its weight is not in the listing`
    : `its real servers at lines ${lines.join(', ')} show no columns after their addresses: their weights are not in the listing`;

const VIEW_FLAG: Partial<Record<IpvsTable['view'], string>> = {
  stats: 'ipvsadm --stats',
  rate: 'ipvsadm --rate',
  counters: 'this counter listing',
};

/** Why a real server's port is not said: ipvsadm -l cut its name. */
const REAL_NAME_CUT = `\`ipvsadm -l\` cut its name at the column's width (${REAL_SERVER_WIDTH} characters): its port is not in the listing`;

/** The same where the cut came before any ":": the host as printed may be only its start. */
const REAL_HOST_CUT = `\`ipvsadm -l\` cut its name at the column's width (${REAL_SERVER_WIDTH} characters) before any ":": its host may be cut too, its port is not in the listing`;

/** A cut "host:po" -> its host, port unknown; a cut without a ":" -> no address, its printed start
 * kept apart (a name ending at the column's width is not told from a cut one). */
const cutName = (address: string): Pick<TreeEndpoint, 'address' | 'hostStart' | 'portUnknown'> =>
  address.includes(':')
    ? { address: split(address).host, portUnknown: REAL_NAME_CUT }
    : { address: undefined, hostStart: address, portUnknown: REAL_HOST_CUT };

/** A real server's KUBE-LOOP-BACK entry. */
function loopBackOf(protocol: string, address: string): string {
  const { host, port } = split(address);
  return loopBackEntry(host, protocol, port);
}

/** A virtual server's host and port; its port unknown (0) where `ipvsadm -l` cut its name. */
function vsSplit(vs: IpvsService): { host: string; port: number } {
  const s = split(vs.address);
  return vs.nameCut ? { host: s.host, port: 0 } : s;
}

/** "10.96.0.10:53" -> host and port; "[fd00::a]:53" -> "fd00::a" and 53; `ipvsadm -l`'s
 * "host:https" -> the port its service name stands for (0 when not a well-known one, or where
 * ipvsadm's cut left "host:" without it). */
function split(address: string): { host: string; port: number } {
  const a = hostAndPort(address);
  if (!a) return { host: address, port: 0 };
  return {
    host: a.host,
    port: /^\d+$/.test(a.port) ? Number(a.port) : (SERVICE_PORTS.get(a.port) ?? 0),
  };
}
