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

/** The longest session affinity timeout a Service may have (validation's MaxClientIPServiceAffinitySeconds):
 * kube-proxy writes it as the persistence timeout (proxier.go: FlagPersistent, StickyMaxAgeSeconds). */
const MAX_AFFINITY_SECONDS = 86400;

/** Whether a virtual server's persistence may be kube-proxy's: it sets persistence only from a
 * Service's ClientIP affinity, its timeout within what a Service may have, on servers it forwards
 * by NAT. */
export const kubeProxyPersistence = (vs: IpvsService): boolean =>
  vs.persistent !== undefined &&
  vs.persistent >= 1 &&
  vs.persistent <= MAX_AFFINITY_SECONDS &&
  kubeProxyForwarding(vs);

/** What else in a listing says kube-proxy wrote its virtual servers, without Service objects: the
 * apiserver's `kubernetes` Service (port 443 to the apiserver's secure port, 6443 by default), the
 * cluster DNS Service (kube-dns: port 53 over TCP and UDP on one address, to the same Pods), or
 * kube-proxy's own ipsets pasted beside it. Node ports are told by the caller (trees.ts). */
export const kubeProxyMarks = (t: IpvsTable): boolean =>
  t.services.some((vs) => apiserverService(vs) || clusterDns(t, vs)) ||
  (t.ipsets?.names.some((n) => n.startsWith('KUBE-')) ?? false);

const apiserverService = (vs: IpvsService) =>
  vs.protocol === 'tcp' &&
  /:443$/.test(vs.address) &&
  vs.realServers.length > 0 &&
  vs.realServers.every((r) => /:6443$/.test(r.address));

const clusterDns = (t: IpvsTable, vs: IpvsService) => {
  if (vs.protocol !== 'udp' || !/:53$/.test(vs.address) || vs.realServers.length === 0)
    return false;
  const pods = (s: IpvsService) =>
    s.realServers
      .map((r) => r.address)
      .sort()
      .join(' ');
  return t.services.some(
    (o) => o.protocol === 'tcp' && o.address === vs.address && pods(o) === pods(vs),
  );
};

/** What a persistent virtual server shows where nothing says kube-proxy wrote it: IPVS
 * persistence, not a Service's session affinity. */
export const persistenceText = (seconds: number): string =>
  `persistent ${seconds} s (IPVS persistence: nothing in the listing says kube-proxy wrote this virtual server, so it is not read as a Service's session affinity)`;
