// One walk of a packet, shared by the iptables and the nftables tracers: its chance, the packet
// as it is now, the rules it matched and what it assumed; how it starts and how it ends.
import type { CutMet, MatchedRule, TraceOutcome, TracePacket } from './trace.js';
import { addressPort, packetAddress, type PacketState } from './packet.js';
import type { NodeRoutes } from './route.js';

export interface Walk {
  p: number;
  pkt: PacketState;
  rules: MatchedRule[];
  assumptions: Set<string>;
  end?: 'ACCEPT' | 'DROP' | 'REJECT';
  /** It stopped at what the listing, cut short, does not hold (its end is then ACCEPT). */
  cut?: CutMet;
}

/** The packet as it leaves its sender: a new connection, routed in (or out, from the node). */
export function startWalk(packet: TracePacket, routes: NodeRoutes): Walk {
  const src = packetAddress(packet.src, 'source');
  const dst = packetAddress(packet.dst, 'destination');
  const w: Walk = {
    p: 1,
    pkt: {
      src,
      dst,
      sport: packet.sport ?? 40000,
      dport: packet.protocol === 'icmp' ? 0 : (packet.dport ?? 0),
      protocol: packet.protocol,
      mark: 0,
      dnat: false,
      snat: false,
    },
    rules: [],
    assumptions: new Set(),
  };
  if (packet.fromHost) routes.route(w.pkt, 'out', routes.isLocal(dst) ? undefined : dst);
  else routes.route(w.pkt, 'in', routes.isLocal(src) ? undefined : src);
  return w;
}

/** A finished walk as the answer gives it. */
export function outcomeOf(w: Walk, delivery: 'local' | 'forward'): TraceOutcome {
  const end = w.end ?? 'ACCEPT';
  const dnat = w.pkt.dnat ? addressPort(w.pkt.dst, w.pkt.dport) : undefined;
  return {
    probability: w.p,
    destination: end !== 'ACCEPT' ? end : (dnat ?? null),
    masquerade: w.pkt.snat,
    verdict: end,
    delivery,
    ...(dnat ? { dnat } : {}),
    mark: w.pkt.mark,
    rules: w.rules,
    assumptions: [...w.assumptions],
    ...(w.cut ? { cut: w.cut } : {}),
  };
}
