// IPVS virtual servers read into the Service trees of the common model: one tree per Service port
// where the objects name it (its cluster IP, node ports on each node address, external and
// load-balancer IPs all merge into it), else one per virtual server ("TCP 10.96.0.10:53"). Each
// real server is an endpoint with its share: weight / sum of weights for rr and wrr (kube-proxy
// writes weight 1, and 0 for a terminating endpoint); for the connection-based schedulers the share
// depends on the connections, said in a quirk. Persistence is session affinity.
import type { ServicePortName } from '../model.js';
import {
  emptyTree,
  type EntryPoint,
  type ServiceTree,
  type ServiceTrees,
} from '../service-tree.js';
import { loopBackEntry } from './expected.js';
import type { IpvsService, IpvsTable } from './listing.js';

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

/** Schedulers whose choice is the weights alone. */
const BY_WEIGHT = new Set(['rr', 'wrr']);

export function buildIpvsTrees(t: IpvsTable, o: IpvsTreeOptions = {}): ServiceTrees {
  const trees = new Map<string, ServiceTree>();
  for (const vs of t.services) {
    if (vs.protocol === 'fwmark') continue; // kube-proxy writes no firewall-mark services
    const { host, port } = split(vs.address);
    const known =
      o.known?.get(`${vs.protocol} ${host}:${port}`) ?? o.known?.get(`${vs.protocol} :${port}`);
    const id = known?.name ?? `${vs.protocol.toUpperCase()} ${vs.address}`;
    let tree = trees.get(`${id} ${vs.protocol}`);
    if (!tree)
      trees.set(
        `${id} ${vs.protocol}`,
        (tree = emptyTree({ name: known?.name, id, protocol: vs.protocol })),
      );
    const kind = known?.kind ?? 'cluster-ip';
    const chain = `${vs.protocol.toUpperCase()} ${vs.address}`;
    tree.entries.push({
      kind,
      address: host,
      port,
      protocol: vs.protocol,
      chain,
      from: 'ipvs',
      line: vs.line,
    });
    if (kind === 'cluster-ip') {
      tree.clusterIP ??= host;
      tree.port ??= port;
    } else if (kind === 'node-port' && !tree.nodePorts.includes(port)) tree.nodePorts.push(port);
    else if (kind === 'external-ip' && !tree.externalIPs.includes(host))
      tree.externalIPs.push(host);
    else if (kind === 'load-balancer' && !tree.loadBalancerIPs.includes(host))
      tree.loadBalancerIPs.push(host);
    if (vs.persistent !== undefined) tree.affinitySeconds = vs.persistent;
    // the cluster IP's virtual server stands for the Service port's endpoints
    if (kind === 'cluster-ip' || tree.endpoints.length === 0) {
      tree.endpoints = endpointsOf(vs, o.loopBack);
      tree.chains.svc = chain;
    }
  }
  return { services: [...trees.values()].sort((a, b) => (a.id < b.id ? -1 : 1)), orphans: [] };
}

function endpointsOf(vs: IpvsService, loopBack?: Set<string>): ServiceTree['endpoints'] {
  const total = vs.realServers.reduce((n, r) => n + r.weight, 0);
  const byWeight = BY_WEIGHT.has(vs.scheduler);
  return vs.realServers.map((r) => ({
    address: r.address,
    chain: `${vs.protocol.toUpperCase()} ${vs.address}`,
    probability: total > 0 ? r.weight / total : 0,
    hairpinMasquerade: loopBack?.has(loopBackOf(vs.protocol, r.address)) ? true : null,
    affinity: vs.persistent !== undefined,
    ...(byWeight
      ? {}
      : {
          quirk: `scheduler ${vs.scheduler}: the share depends on the connections, not on the weight alone`,
        }),
    line: r.line,
  }));
}

/** A real server's KUBE-LOOP-BACK entry. */
function loopBackOf(protocol: string, address: string): string {
  const { host, port } = split(address);
  return loopBackEntry(host, protocol, port);
}

/** "10.96.0.10:53" -> host and port; "[fd00::a]:53" -> "fd00::a" and 53. */
function split(address: string): { host: string; port: number } {
  const m = /^\[?(.+?)\]?:(\d+)$/.exec(address);
  return m ? { host: m[1]!, port: Number(m[2]) } : { host: address, port: 0 };
}
