// A packet walked through a Cilium node's load balancer, as its BPF programs handle it: a Pod's
// (and, with socket LB outside hostns-only, the host's) TCP and UDP to a frontend is translated
// to a backend where it is sent (connect/sendmsg, or the Pod's own interface); traffic from
// outside meets the NodePort, ExternalIPs and LoadBalancer frontends at the node's device, while
// ClusterIPs are non-routable from there. ICMP is never load-balanced: the datapath drops an
// echo to a Service address (no Cilium release up to 1.20 answers it).
import { hostPort } from '../../ipv6.js';
import type {
  MatchedRule,
  NodeNetwork,
  TraceOutcome,
  TracePacket,
  TraceResult,
} from '../trace/trace.js';
import { inRotation } from './expected/expected.js';
import {
  frontendKey,
  isDropEntry,
  isL7Proxied,
  isWildcard,
  type CiliumFrontend,
  type CiliumTable,
} from './read/listing.js';
import { nodePortsText, type CiliumNodePorts } from './agent/devices.js';

export interface CiliumTraceOptions {
  /** bpf-lb-sock: translation at the socket for the host (and Pods). */
  socketLB: boolean;
  /** bpf-lb-sock-hostns-only: the socket hook serves the host only; Pods are translated at
   * their interface instead (the outcome is the same backend). */
  hostnsOnly: boolean;
  /** bpf-lb-external-clusterip: ClusterIPs answer traffic from outside too. */
  externalClusterIP: boolean;
  /** service-no-backend-response: reject (ICMP unreachable, 1.15+ default) or drop. */
  noBackend: 'reject' | 'drop';
  /** The cluster's Pod IPs: a packet from one comes from a Pod, any other from outside. */
  podIPs: Set<string>;
  /** The agent's NodePort addresses: from outside, NodePorts answer on these only. */
  nodePorts?: CiliumNodePorts;
  /** Its BPF maps, where read besides the table: 1.19's wildcard drop entries are there only. */
  maps?: CiliumTable;
}

export function traceCiliumPacket(
  table: CiliumTable,
  net: NodeNetwork,
  packet: TracePacket,
  o: CiliumTraceOptions,
): TraceResult {
  const { dst, protocol } = packet;
  const fromPod = !packet.fromHost && o.podIPs.has(packet.src);
  const where = packet.fromHost ? 'the host' : fromPod ? 'a Pod on this node' : 'outside the node';
  const hook = packet.fromHost
    ? o.socketLB && protocol !== 'icmp'
      ? 'the socket hook (connect/sendmsg) of the host'
      : 'the host device on the way out'
    : fromPod
      ? o.socketLB && !o.hostnsOnly && protocol !== 'icmp'
        ? "the socket hook (connect/sendmsg) in the Pod's namespace"
        : "the Pod's interface (tc)"
      : "the node's device (tc/XDP at ingress)";
  const notes = [
    `Cilium: the frontends of its agent's table are walked at ${hook}; no iptables rule is involved`,
  ];
  const outcome = (x: Partial<TraceOutcome> & Pick<TraceOutcome, 'rules'>): TraceOutcome => ({
    probability: 1,
    destination: null,
    masquerade: false,
    verdict: 'ACCEPT',
    delivery: 'forward',
    mark: 0,
    assumptions: [],
    ...x,
  });
  const result = (outcomes: TraceOutcome[]): TraceResult => ({
    packet,
    enters: hook,
    outcomes,
    notes,
  });
  const dropped = (rule: MatchedRule) =>
    result([outcome({ verdict: 'DROP', destination: 'DROP', rules: [rule] })]);
  // the datapath drops ICMP to a Service address (DROP_UNSUPP_SERVICE_PROTO, bpf/lib/lb.h)
  if (protocol === 'icmp' && table.frontends.some((f) => f.ip === dst))
    return dropped({
      table: 'cilium',
      chain: 'frontends',
      line: 0,
      rule: `Cilium load-balances TCP, UDP and SCTP only: an ICMP echo to Service address ${dst} is not translated`,
      effect:
        'dropped by the datapath (unsupported protocol for a Service): ping fails while TCP and UDP work',
    });
  // the socket hook serves a NodePort on any local address; the device, on its NodePort ones
  const served = fromPod || packet.fromHost ? undefined : o.nodePorts?.addresses;
  const port = packet.dport ?? 0;
  const fe =
    protocol === 'icmp' ? undefined : findFrontend(table, { dst, port, protocol, net, served });
  if (!fe) {
    const own = net.localAddresses.includes(dst);
    const elsewhere =
      served && own && findFrontend(table, { dst, port, protocol, net, served: undefined });
    // 1.19's wildcard entry of a Service address (port 0, ANY) drops its other ports at the
    // device only: the socket and Pod hooks look it up east-west, which skips it (bpf/lib/lb.h)
    const outside = !fromPod && !packet.fromHost;
    const wildcard = elsewhere || !outside ? undefined : wildcardEntry([table, o.maps], dst);
    if (wildcard)
      return dropped({
        table: 'cilium',
        chain: `${wildcard.f.type ?? 'frontend'} ${frontendKey(wildcard.f)}`,
        line: wildcard.f.line,
        rule: `${wildcard.source}:${wildcard.f.line}`,
        effect: `no Service uses ${protocol.toUpperCase()} port ${port} of ${dst}: dropped from outside the node by the address's wildcard entry (DROP_NO_SERVICE, Cilium 1.19+)`,
      });
    const rule: MatchedRule = {
      table: 'cilium',
      chain: 'frontends',
      line: 0,
      rule: elsewhere
        ? `${dst} is not a NodePort address of this node (NodePorts on ${nodePortsText(o.nodePorts!)}, from ${o.nodePorts!.source}): NodePort ${port}/${protocol.toUpperCase()} is not load-balanced there for traffic from outside`
        : `no frontend ${hostPort(dst, port)}/${protocol.toUpperCase()} in ${table.source}`,
      effect: own ? 'delivered to the node itself' : 'routed unchanged',
    };
    return result([outcome({ delivery: own ? 'local' : 'forward', rules: [rule] })]);
  }
  const rule = (effect: string): MatchedRule => ({
    table: 'cilium',
    chain: `${fe.type ?? 'frontend'} ${frontendKey(fe)}`,
    line: fe.line,
    rule: `${table.source}:${fe.line}`,
    effect,
  });
  if (!fromPod && !packet.fromHost && fe.type === 'ClusterIP' && !o.externalClusterIP)
    return result([
      outcome({
        verdict: 'DROP',
        destination: 'DROP',
        rules: [
          rule(
            `a ClusterIP is non-routable from ${where}: dropped (bpf-lb-external-clusterip is off)`,
          ),
        ],
      }),
    ]);
  // the datapath redirects an L7 load balancer's connections before it looks at any backend
  if (isL7Proxied(fe))
    return result([
      outcome({
        delivery: 'local',
        // no DNAT: Envoy takes the connection transparently, to the address it was sent to
        destination: `Cilium's L7 proxy (Envoy)${fe.l7ProxyPort ? ` on port ${fe.l7ProxyPort}` : ''}`,
        rules: [
          rule(
            `l7-load-balancer: sent to Cilium's L7 proxy (Envoy) on this node${fe.l7ProxyPort ? ` at port ${fe.l7ProxyPort}` : ' (its port not in this listing)'}, no backend picked from the map; Envoy's own configuration, not in this listing, picks the upstream`,
          ),
        ],
      }),
    ]);
  const used = fe.backends.some((b) => b.inRotation !== undefined)
    ? fe.backends.filter((b) => b.inRotation)
    : inRotation(fe.backends);
  if (used.length === 0)
    return result([
      outcome({
        verdict: o.noBackend === 'reject' ? 'REJECT' : 'DROP',
        destination: o.noBackend === 'reject' ? 'REJECT' : 'DROP',
        rules: [
          rule(
            `no backend takes new connections: ${o.noBackend === 'reject' ? 'answered with ICMP port unreachable' : 'dropped'} (service-no-backend-response=${o.noBackend})`,
          ),
        ],
      }),
    ]);
  return result(
    used.map((b) => {
      const to = hostPort(b.ip, b.port);
      return outcome({
        probability: 1 / used.length,
        destination: to,
        dnat: to,
        delivery: net.localAddresses.includes(b.ip) ? 'local' : 'forward',
        rules: [
          rule(`translated to backend ${to}${b.state ? ` (${b.state})` : ''}, 1 of ${used.length}`),
        ],
      });
    }),
  );
}

/** The frontend a packet's destination hits: exact, else a NodePort on one of the node's own
 * addresses (the wildcard frontend, or its per-address entries), where `served` (the NodePort
 * addresses, when known) says it answers. */
function findFrontend(
  table: CiliumTable,
  o: { dst: string; port: number; protocol: string; net: NodeNetwork; served?: string[] },
): CiliumFrontend | undefined {
  const { dst: ip, port, protocol, net } = o;
  const proto = (f: CiliumFrontend) =>
    f.protocol === undefined || f.protocol === protocol || f.protocol === 'any';
  return (
    table.frontends.find((f) => !f.internal && f.ip === ip && f.port === port && proto(f)) ??
    (net.localAddresses.includes(ip) && (!o.served || o.served.includes(ip))
      ? table.frontends.find(
          (f) =>
            !f.internal &&
            isWildcard(f.ip) &&
            f.port === port &&
            proto(f) &&
            f.ip.includes(':') === ip.includes(':'),
        )
      : undefined)
  );
}

/** The wildcard drop entry of an address (Cilium 1.19+), in the first listing holding one. */
function wildcardEntry(
  tables: (CiliumTable | undefined)[],
  ip: string,
): { source: string; f: CiliumFrontend } | undefined {
  for (const t of tables) {
    const f = t?.frontends.find((x) => !x.internal && x.ip === ip && isDropEntry(x));
    if (t && f) return { source: t.source, f };
  }
  return undefined;
}
