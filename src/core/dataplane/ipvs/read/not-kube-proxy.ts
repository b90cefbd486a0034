// What an ipvsadm listing shows that kube-proxy's IPVS proxier never writes: it gives each real
// server its address, port and weight alone (pkg/util/ipvs toIPVSDestination), so the kernel
// forwards to every one by NAT (Masq, or Local for one of the node's own addresses). Direct
// routing (Route) and IP-in-IP (Tunnel) are keepalived's/LVS's or kube-router's DSR.
import type { IpvsService, IpvsTable } from './listing.js';

/** Whether kube-proxy could have written this virtual server's forwarding. */
export const kubeProxyForwarding = (vs: IpvsService): boolean =>
  vs.realServers.every((r) => r.forward !== 'Route' && r.forward !== 'Tunnel');

/** The real server lines forwarded as kube-proxy never does, and how; undefined where none. */
export function foreignForwarding(t: IpvsTable): ForeignForwarding | undefined {
  const theirs = t.services.filter((vs) => !kubeProxyForwarding(vs));
  const rows = theirs
    .flatMap((vs) => vs.realServers)
    .filter((r) => r.forward === 'Route' || r.forward === 'Tunnel');
  if (rows.length === 0) return undefined;
  const forwards = [...new Set(rows.map((r) => r.forward as 'Route' | 'Tunnel'))].sort();
  const persistent = theirs.some((vs) => vs.persistent !== undefined);
  return { lines: rows.map((r) => r.line), forwards, persistent };
}

export interface ForeignForwarding {
  lines: number[];
  forwards: ('Route' | 'Tunnel')[];
  /** One of their virtual servers is persistent: not read as a Service's session affinity. */
  persistent: boolean;
}

const FORWARD_WORDS = { Route: 'direct routing (Route)', Tunnel: 'IP-in-IP (Tunnel)' };

/** What those lines say of whose virtual servers these are. */
export const foreignForwardingText = (f: ForeignForwarding): string =>
  `real servers forwarded by ${f.forwards.map((w) => FORWARD_WORDS[w]).join(' and ')}, which kube-proxy's IPVS proxier never writes (it forwards every real server by NAT, Masq): their virtual servers are not kube-proxy's, or not only its (keepalived/LVS, kube-router's DSR ...), and are not called Service IPs${f.persistent ? "; their persistence is not read as a Service's session affinity" : ''}`;
