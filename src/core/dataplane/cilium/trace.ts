// A packet walked through a Cilium node's load balancer, as its BPF programs handle it: a Pod's
// (and, with socket LB outside hostns-only, the host's) TCP and UDP to a frontend is translated
// to a backend where it is sent (connect/sendmsg, or the Pod's own interface); traffic from
// outside meets the NodePort, ExternalIPs and LoadBalancer frontends at the node's device, while
// ClusterIPs are non-routable from there. ICMP is never load-balanced: an echo to a Service
// address skips the service lookup and is routed on unchanged (ping.ts).
import { hostPort } from '../../ipv6.js';
import type {
  BackendSelection,
  MatchedRule,
  NodeNetwork,
  TraceOutcome,
  TracePacket,
  TraceResult,
} from '../trace/trace.js';
import {
  entryOf,
  frontendKey,
  type CiliumBackend,
  isDropEntry,
  isWildcard,
  type CiliumFrontend,
  type CiliumTable,
} from './read/listing.js';
import { nodePortsText, type CiliumNodePorts } from './agent/devices.js';
import { knows, type CiliumAgent, type ConfigOnlySetting } from './agent/agent.js';
import {
  SETTING_NAMES,
  sourceText,
  wasRead,
  type SettingSources,
  type SourcedSetting,
} from './agent/provenance.js';
import { SETTING_NOT_KNOWN } from './agent/refused.js';
import { originOf, peerHook, type TraceSenders } from './trace-source.js';
import { followed, usedOf } from './trace-maps.js';
import { ciliumIcmp } from './ping.js';

/** The agent's settings the walk depends on, and what it knows of the senders (trace-source.ts):
 * a Pod's packet is walked where the Pod sends it, the host's where it does, any other where it
 * comes in. */
export interface CiliumTraceOptions extends TraceSenders {
  /** bpf-lb-sock: translation at the socket for the host (and Pods). */
  socketLB: boolean;
  /** bpf-lb-sock-hostns-only: the socket hook serves the host only; Pods are translated at
   * their interface instead (the outcome is the same backend). */
  hostnsOnly: boolean;
  /** bpf-lb-external-clusterip: ClusterIPs answer traffic from outside too. */
  externalClusterIP: boolean;
  /** service-no-backend-response: reject (ICMP unreachable, 1.15+ default) or drop. */
  noBackend: 'reject' | 'drop';
  /** bpf-lb-algorithm: random or maglev. */
  algorithm?: string;
  /** bpf-lb-algorithm-annotation: a Service's service.cilium.io/lb-algorithm may pick another. */
  algorithmAnnotation?: boolean;
  /** The agent's NodePort addresses: from outside, NodePorts answer on these only. */
  nodePorts?: CiliumNodePorts;
  /** Its BPF maps, where read besides the table: 1.19's wildcard drop entries are there only. */
  maps?: CiliumTable;
  /** The settings above that are not known (agent.ts notKnown): the walk says so, takes what the
   * agent's own listing shows, else Cilium's default, and says it assumed that. */
  notKnown?: readonly ConfigOnlySetting[];
  /** Where each setting was read (agent/provenance.ts): one not read, its default taken, is said
   * an assumption of the walk that rests on it. */
  sources?: { agent: Pick<CiliumAgent, 'pod' | 'node' | 'configMap'>; of: SettingSources };
}

/** Each of `keys` the walk rests on that was not read (known, not refused: Cilium's default is
 * taken), said as the assumption it is. */
function defaultsTaken(o: CiliumTraceOptions, keys: readonly SourcedSetting[]): string[] {
  const s = o.sources;
  if (!s) return [];
  return keys
    .filter((k) => s.of[k].from === 'not read' && knows(o, k))
    .map((k) => `${SETTING_NAMES[k]} ${sourceText(s.agent, s.of[k])}: walked with that default`);
}

export function traceCiliumPacket(
  table: CiliumTable,
  net: NodeNetwork,
  packet: TracePacket,
  o: CiliumTraceOptions,
): TraceResult {
  const { dst, protocol } = packet;
  const origin = originOf(packet, net.localAddresses, o);
  const fromPod = origin.from === 'pod';
  const fromHost = origin.from === 'host';
  const where = fromHost ? 'the host' : fromPod ? 'a Pod on this node' : 'outside the node';
  let hook = hookOf(o, { fromHost, fromPod, icmp: protocol === 'icmp' });
  // the socket hook serves a NodePort on any local address; the device, on its NodePort ones
  const served = fromPod || fromHost ? undefined : o.nodePorts?.addresses;
  const port = packet.dport ?? 0;
  const walk =
    protocol === 'icmp'
      ? undefined
      : followed(table, o.maps, (t) => findFrontend(t, { dst, port, protocol, net, served }));
  const walkedAt = () =>
    `Cilium: ${walk && walk.source !== table.source ? "the entries of its BPF maps, which the datapath looks up (not its agent's table)," : "the frontends of its agent's table"} are walked at ${hook}; no iptables rule is involved`;
  const notes = [walkedAt(), ...(walk?.said ?? [])];
  // what the walk takes of the sender, for every outcome (another node's, once its frontend is
  // known), and the socket LB settings its hook rests on where they were not read
  const lead = [
    ...(origin.assumed ? [origin.assumed] : []),
    ...(protocol === 'icmp' || (!fromHost && !fromPod)
      ? []
      : defaultsTaken(o, fromHost ? ['socketLB'] : ['socketLB', 'hostnsOnly'])),
    ...(walk?.assumed ?? []),
  ];
  const outcome = (x: Partial<TraceOutcome> & Pick<TraceOutcome, 'rules'>): TraceOutcome => ({
    probability: 1,
    destination: null,
    masquerade: false,
    verdict: 'ACCEPT',
    delivery: 'forward',
    mark: 0,
    ...x,
    // the sender taken without knowing it holds for every outcome
    assumptions: [...lead, ...(x.assumptions ?? [])],
  });
  const result = (outcomes: TraceOutcome[], selection?: BackendSelection): TraceResult => ({
    // the node's own source address is walked as the host's: the packet says so
    packet: fromHost && !packet.fromHost ? { ...packet, fromHost } : packet,
    enters: hook,
    outcomes,
    notes,
    ...(selection ? { selection } : {}),
  });
  const dropped = (rule: MatchedRule) =>
    result([outcome({ verdict: 'DROP', destination: 'DROP', rules: [rule] })]);
  // ICMP to a Service address skips the lookup: routed on unchanged, as its own address is not
  if (protocol === 'icmp' && [table, o.maps].some((t) => t?.frontends.some((f) => f.ip === dst))) {
    const own = net.localAddresses.includes(dst);
    return result([
      outcome({
        delivery: own ? 'local' : 'forward',
        rules: [
          {
            table: 'cilium',
            chain: 'frontends',
            line: 0,
            rule: `Cilium load-balances TCP, UDP and SCTP only: ${ciliumIcmp(fromHost ? 'host' : fromPod ? 'pod' : 'network')}`,
            effect: own
              ? 'delivered to the node itself'
              : `routed unchanged: no interface owns ${dst}, so nothing answers the echo`,
          },
        ],
      }),
    ]);
  }
  const fe = walk?.f;
  if (!fe) {
    const own = net.localAddresses.includes(dst);
    const elsewhere =
      served && own && findFrontend(table, { dst, port, protocol, net, served: undefined });
    // 1.19's wildcard entry of a Service address (port 0, ANY) drops its other ports at the
    // device only: the socket and Pod hooks look it up east-west, which skips it (bpf/lib/lb.h)
    const outside = !fromPod && !fromHost;
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
        : (walk?.unwritten ??
          `no frontend ${hostPort(dst, port)}/${protocol.toUpperCase()} in ${table.source}${o.maps && o.maps !== table ? ` nor in its BPF map ${o.maps.source}` : ''}`),
      effect: own ? 'delivered to the node itself' : 'routed unchanged',
    };
    return result([outcome({ delivery: own ? 'local' : 'forward', rules: [rule] })]);
  }
  const rule = (effect: string): MatchedRule => ({
    table: 'cilium',
    chain: `${fe.type ?? 'frontend'} ${frontendKey(fe)}`,
    line: fe.line,
    rule: `${walk!.source}:${fe.line}`,
    effect,
  });
  // another node's host sending to a ClusterIP: its own agent may have translated it there
  const peer =
    origin.peer && fe.type === 'ClusterIP'
      ? peerHook(packet.src, hostPort(dst, port), origin.peer)
      : undefined;
  if (peer) lead.push(peer.said);
  if (peer?.at) {
    hook = peer.at;
    notes[0] = walkedAt();
  }
  const routing =
    !fromPod && !fromHost && !peer?.at && fe.type === 'ClusterIP' && routableOf(fe, table, o);
  if (routing && !routing.routable)
    return result([
      outcome({
        verdict: 'DROP',
        destination: 'DROP',
        rules: [rule(`a ClusterIP is non-routable from ${where}: dropped (${routing.said})`)],
        assumptions: routing.assumed ? [routing.assumed] : [],
      }),
    ]);
  // the datapath redirects an L7 load balancer's connections before it looks at any backend
  if (fe.l7Proxy)
    return result([
      outcome({
        delivery: 'local',
        // no DNAT: Envoy takes the connection transparently, to the address it was sent to
        destination: `Cilium's L7 proxy (Envoy)${fe.l7Proxy.port ? ` on port ${fe.l7Proxy.port}` : ''}`,
        rules: [
          rule(
            `l7-load-balancer: sent to Cilium's L7 proxy (Envoy) on this node${fe.l7Proxy.port ? ` at port ${fe.l7Proxy.port}` : ' (its port not in this listing)'}, no backend picked from the map; Envoy's own configuration, not in this listing, picks the upstream`,
          ),
        ],
      }),
    ]);
  const used = usedOf(fe);
  // a backend's state is the table's: the map listing shows none
  const stateOf = (b: CiliumBackend) =>
    b.state ?? walk?.table?.backends.find((t) => t.ip === b.ip && t.port === b.port)?.state;
  if (used.length === 0) {
    // not known, Cilium's default: reject
    const known = knows(o, 'noBackend');
    const response = known ? o.noBackend : 'reject';
    const source = o.sources?.of.noBackend;
    const from =
      known && source && source.from !== 'not read'
        ? `, from ${sourceText(o.sources!.agent, source)}`
        : '';
    return result([
      outcome({
        verdict: response === 'reject' ? 'REJECT' : 'DROP',
        destination: response === 'reject' ? 'REJECT' : 'DROP',
        rules: [
          rule(
            `no backend takes new connections: ${response === 'reject' ? 'answered with ICMP port unreachable' : 'dropped'} (service-no-backend-response=${known ? `${response}${from}` : `reject, Cilium's default; the agent's own is ${SETTING_NOT_KNOWN}`})`,
          ),
        ],
        assumptions: known
          ? defaultsTaken(o, ['noBackend'])
          : [
              "service-no-backend-response is Cilium's default, reject; the agent's own is not known, and drop leaves the client waiting for a timeout",
            ],
      }),
    ]);
  }
  const selection = selectionOf(fe, o);
  // the Maglev table, where the listing shows it, is each backend's share (trees.ts)
  const maglev = used.reduce((n, b) => n + (b.maglev ?? 0), 0);
  return result(
    used.map((b) => {
      const to = hostPort(b.ip, b.port);
      return outcome({
        probability: maglev ? (b.maglev ?? 0) / maglev : 1 / used.length,
        destination: to,
        dnat: to,
        delivery: net.localAddresses.includes(b.ip) ? 'local' : 'forward',
        rules: [
          rule(
            `translated${peer?.at ? ` on node ${origin.peer!.node}` : ''} to backend ${to}${stateOf(b) ? ` (${stateOf(b)}${b.state ? '' : " in the agent's table"})` : ''}, 1 of ${used.length}${maglev ? `, ${b.maglev ?? 0} of ${maglev} Maglev entries` : ''}, by ${selection.algorithm === 'not known' ? 'a selection not known' : `${selection.algorithm} selection`}`,
          ),
        ],
      });
    }),
    selection,
  );
}

/** How the datapath picks among a frontend's backends: the map's own LBALG where the listing
 * shows one (a Service's annotation), else the agent's bpf-lb-algorithm, with its source. */
function selectionOf(fe: CiliumFrontend, o: CiliumTraceOptions): BackendSelection {
  if (fe.algorithm)
    return { algorithm: fe.algorithm, source: `the Service entry's LBALG (line ${fe.line})` };
  if (!o.algorithm || !knows(o, 'algorithm'))
    return { algorithm: 'not known', source: `bpf-lb-algorithm ${SETTING_NOT_KNOWN}` };
  const read = o.sources?.of.algorithm;
  const from = read ? sourceText(o.sources!.agent, read) : "the agent's settings";
  // a Service's annotation overrides it where the agent honours it; the listing shows none
  const unless = o.algorithmAnnotation
    ? "; a Service's service.cilium.io/lb-algorithm annotation may pick the other (bpf-lb-algorithm-annotation is on)"
    : '';
  return {
    algorithm: o.algorithm === 'maglev' ? 'maglev' : 'random',
    source: `bpf-lb-algorithm, from ${from}${unless}`,
  };
}

/** Where the walk starts: the socket hook (socket LB, for a Pod only outside hostns-only), else
 * the interface the packet leaves by or comes in at; either, said so, where socket LB is not
 * known. ICMP never meets the socket hook. */
function hookOf(
  o: CiliumTraceOptions,
  p: { fromHost: boolean; fromPod: boolean; icmp: boolean },
): string {
  if (!p.fromHost && !p.fromPod) return "the node's device (tc/XDP at ingress)";
  const socket = p.fromHost
    ? 'the socket hook (connect/sendmsg) of the host'
    : "the socket hook (connect/sendmsg) in the Pod's namespace";
  const device = p.fromHost ? 'the host device on the way out' : "the Pod's interface (tc)";
  if (p.icmp) return device;
  const keys = p.fromHost ? (['socketLB'] as const) : (['socketLB', 'hostnsOnly'] as const);
  if (keys.some((k) => !knows(o, k)))
    return `${socket}, or ${device} (bpf-lb-sock${p.fromHost ? '' : ' and bpf-lb-sock-hostns-only'} ${SETTING_NOT_KNOWN}; the backend is the same either way)`;
  return o.socketLB && (p.fromHost || !o.hostnsOnly) ? socket : device;
}

/** Whether a ClusterIP answers from outside the node, and why: bpf-lb-external-clusterip; where
 * that is not known, the BPF entry's non-routable flag as the agent listed it, else Cilium's
 * default (off), assumed. */
function routableOf(
  fe: CiliumFrontend,
  table: CiliumTable,
  o: CiliumTraceOptions,
): { routable: boolean; said: string; assumed?: string } {
  const source = o.sources?.of.externalClusterIP;
  const said = `bpf-lb-external-clusterip is ${o.externalClusterIP ? 'on' : 'off'}`;
  // read (or no source given): the setting decides; a default taken yields to the listing
  if (knows(o, 'externalClusterIP') && (!source || wasRead(source)))
    return {
      routable: o.externalClusterIP,
      said: source ? `${said}, from ${sourceText(o.sources!.agent, source)}` : said,
    };
  const listed = listedEntry(fe, table, o.maps);
  if (listed)
    return {
      routable: !listed.f.flags.includes('non-routable'),
      said: `its BPF map entry, ${listed.source}:${listed.f.line}, is non-routable`,
    };
  if (source && knows(o, 'externalClusterIP'))
    return {
      routable: o.externalClusterIP,
      said: `${said}, ${sourceText(o.sources!.agent, source)}`,
      assumed: `bpf-lb-external-clusterip ${sourceText(o.sources!.agent, source)}: walked with that default; on, the ClusterIP answers from outside`,
    };
  return {
    routable: false,
    said: `bpf-lb-external-clusterip ${SETTING_NOT_KNOWN}; Cilium's default is off`,
    assumed:
      "bpf-lb-external-clusterip is Cilium's default, off; the agent's own is not known, and on, the ClusterIP answers from outside",
  };
}

/** `fe`'s BPF map entry as the agent listed it (its Service row read, so its flags are shown): the
 * table's own where it is the BPF maps, else the maps read besides it. */
function listedEntry(
  fe: CiliumFrontend,
  table: CiliumTable,
  maps: CiliumTable | undefined,
): { source: string; f: CiliumFrontend } | undefined {
  const bpf = table.form === 'bpf-lb-list' || table.form === 'maps-dump' ? table : maps;
  // its own entry, else (a listing without protocols) the entry of every protocol's
  const key = frontendKey(fe);
  const f =
    bpf === table
      ? fe
      : (bpf?.frontends.find((m) => frontendKey(m) === key) ??
        bpf?.frontends.find((m) => entryOf(fe, m)));
  return bpf && f?.type !== undefined && !f.serviceRowUnseen
    ? { source: bpf.source, f }
    : undefined;
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
