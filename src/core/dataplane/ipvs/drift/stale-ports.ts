// The virtual servers at a missing cluster IP's address on a port no current Service port has:
// what a port change leaves until kube-proxy syncs. IPVS ties no virtual server to a Service port
// (no chain named for it, as iptables and nftables have), so where the cluster IP lacks several,
// each is told to be a Service port's only by its real servers: those of that port alone.
import type { ExpectedIpvs, ExpectedVirtualServer } from '../expected/expected.js';
import type { IpvsService, IpvsTable } from '../read/listing.js';
import { hostAndPort } from '../read/addresses.js';

/** The stale virtual servers of a Service port's cluster IP: those told to be its, and those that
 * may be its or another missing port's. */
export interface StalePorts {
  told: IpvsService[];
  untold: IpvsService[];
  /** Told by its real servers, where the cluster IP lacks several ports or has several stale. */
  byServers: boolean;
}

/** Whether the virtual server's real servers are the expected one's, no more, no fewer. */
const sameServers = (s: IpvsService, v: ExpectedVirtualServer) => {
  const got = new Set(s.realServers.map((r) => r.address));
  return got.size === v.realServers.length && v.realServers.every((a) => got.has(a));
};

/** `want`'s stale virtual servers: `known` the expected ones' "protocol address", `listed`
 * whether the node has an expected one. */
export function stalePorts(
  want: ExpectedVirtualServer,
  exp: ExpectedIpvs,
  table: IpvsTable,
  known: Set<string>,
  listed: (v: ExpectedVirtualServer) => boolean,
): StalePorts {
  if (want.kind !== 'cluster-ip') return { told: [], untold: [], byServers: false };
  const stale = table.services.filter(
    (s) =>
      s.protocol === want.protocol &&
      hostAndPort(s.address)?.host === want.ip &&
      !known.has(`${s.protocol} ${s.address}`),
  );
  // the Service ports of this cluster IP the node lacks: a stale server may be any one's
  const missing = exp.virtualServers.filter(
    (v) =>
      v.kind === 'cluster-ip' && v.ip === want.ip && v.protocol === want.protocol && !listed(v),
  );
  if (missing.length === 1 && stale.length === 1)
    return { told: stale, untold: [], byServers: false };
  const out: StalePorts = { told: [], untold: [], byServers: true };
  for (const s of stale) {
    const by = missing.filter((v) => sameServers(s, v));
    if (by.length === 1 && by[0] !== want) continue; // another port's, said in its finding
    const alike = stale.filter((o) => sameServers(o, want)).length;
    (by.length === 1 && alike === 1 ? out.told : out.untold).push(s);
  }
  return out;
}

/** What the node has at the cluster IP instead, in the finding of the Service port it lacks. */
export function stalePortsText({ told, untold, byServers }: StalePorts): string {
  const at = (xs: IpvsService[]) => xs.map((s) => s.address).join(', ');
  const one = untold.length === 1;
  return [
    told.length > 0
      ? `It has one at ${at(told)}, a port of this cluster IP no current Service port has${byServers ? ", with this Service port's real servers and no other's" : ''}: it is left from before a change of this Service port's port that kube-proxy has not applied.`
      : '',
    untold.length > 0
      ? `It ${told.length > 0 ? 'also ' : ''}has ${one ? 'one' : 'virtual servers'} at ${at(untold)}, ${one ? 'a port' : 'ports'} of this cluster IP no current Service port has, left from before a change of the Service's ports that kube-proxy has not applied; ${one ? "whether it was this Service port's" : "which of them was this Service port's"}, the listing cannot tell (IPVS ties no virtual server to a Service port, and ${one ? 'its' : 'their'} real servers do not tell ${one ? 'it' : 'them'} apart).`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
}
