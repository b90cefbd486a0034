// What a packet walk takes and gives in every mode: the packet asked about, the node's network,
// and each outcome with its chance, the rules it matched and what it assumed.
import { ipv4 } from '../../ipv4.js';
import { ipv6 } from '../../ipv6.js';
import type { Node } from '../../kube/objects.js';
import { parseIpBrief } from '../../nodes/outputs.js';
import { percent } from '../../model.js';

import type { TraceProtocol } from './packet.js';

export type { TraceProtocol };

export interface TracePacket {
  src: string;
  dst: string;
  /** Destination port (ignored for icmp). */
  dport?: number;
  /** Source port; kube-proxy's rules never look at it. Default 40000. */
  sport?: number;
  protocol: TraceProtocol;
  /** From a process on the node (nat OUTPUT) rather than a Pod or the network (nat PREROUTING). */
  fromHost: boolean;
}

/** What the walk knows about the node. */
export interface NodeNetwork {
  /** The node's addresses: its IPs and every interface address (addrtype LOCAL). */
  localAddresses: string[];
  /** Interfaces and their CIDRs ("cni0", ["10.244.0.1/24"]), to tell which one a packet uses. */
  interfaces: { name: string; cidrs: string[] }[];
  /** The interface of the node's own IP, taken for traffic from and to everything else. */
  defaultInterface?: string;
}

export interface MatchedRule {
  table: string;
  chain: string;
  line: number;
  rule: string;
  /** What the rule did: "jump", "mark 0x4000", "DNAT 10.244.0.3:80", "50% branch" ... */
  effect: string;
  /** The chain a jump or goto entered (iptables): where a packet that leaves it unchanged fell
   * through. */
  into?: string;
  /** The chain a jump named that the rules read do not hold (iptables): the walk went on past
   * the jump, where the packet really goes is not shown. */
  absent?: string;
}

/** What a walk met that a listing cut short does not hold, where it stopped: its name
 * ("chain services") and how the walk came to it, a clause. */
export interface CutMet {
  what: string;
  reached: string;
}

export interface TraceOutcome {
  /** Chance of this outcome for a new connection, 0..1. */
  probability: number;
  /** Why this outcome's share is not known (its probability then 0, saying nothing). */
  shareUnknown?: string;
  /** "IP:PORT" after DNAT, "REJECT", "DROP", or null: no rule changed it, routed unchanged. */
  destination: string | null;
  /** SNAT (MASQUERADE) in nat POSTROUTING. */
  masquerade: boolean;
  verdict: 'ACCEPT' | 'DROP' | 'REJECT';
  /** Delivered to the node itself, or forwarded on. */
  delivery: 'local' | 'forward';
  /** The DNAT target when the destination was changed. */
  dnat?: string;
  /** IPVS: sent to `destination` without DNAT, by its real server's forwarding method: direct
   * routing (the MAC rewritten), IP-in-IP, or the node's own address (passed up unchanged). */
  forward?: 'route' | 'tunnel' | 'local';
  mark: number;
  rules: MatchedRule[];
  assumptions: string[];
  /** The walk stopped here, at what the listing (cut short) does not hold: past it, not read. */
  cut?: CutMet;
}

/** The rule that rejects a connection to a Service port without ready endpoints, as kube-proxy's
 * rules (iptables, nftables) write it. */
export const rejectRuleOn = (node: string) =>
  `by the REJECT rule on ${node} that kube-proxy writes for a Service without ready endpoints`;

/** An outcome's share as text: "?" where it is not known. */
export const shareText = (o: Pick<TraceOutcome, 'probability' | 'shareUnknown'>): string =>
  o.shareUnknown ? '?' : percent(o.probability);

export interface BackendSelection {
  algorithm: 'random' | 'maglev' | 'not known';
  /** Where it was read: "ConfigMap kube-system/cilium-config bpf-lb-algorithm", a map's LBALG. */
  source: string;
}

export interface TraceResult {
  packet: TracePacket;
  /** Where the walk starts: "nat OUTPUT" / "nat PREROUTING" (iptables), "the output hook" ... */
  enters: string;
  outcomes: TraceOutcome[];
  /** What the walk could not do ("the dump holds no filter table"). */
  notes: string[];
  /** How the datapath picked the backend among several (Cilium: random or maglev), and where
   * that was read; absent where the walk picked none. */
  selection?: BackendSelection;
  /** Tables the walk passes that the rules read do not hold (a dump of part of them, or cut
   * before them): what their chains do to the packet was not read. */
  tablesNotRead?: string[];
  /** The entry chain does not lead to the Service chains, whose rules would translate the
   * packet (iptables: nat PREROUTING without its jump to KUBE-SERVICES; nftables: chain
   * nat-prerouting without its jump to services). */
  servicesSkipped?: { from: string; to: string };
  /** nftables: the Service rules were entered, but the map that leads each Service port to its
   * chain holds no element for the packet's key ("10.96.0.10 . tcp . 53"). */
  entryMissing?: { map: string; key: string };
  /** nftables: every walk was refused by a filter chain hooked before the nat chain, so the
   * Service's rules never met it: the rules that refused it, in order. */
  refusedBeforeDnat?: MatchedRule[];
}

/**
 * What a node's facts say about its network: its IPs (Node object) and, when recorded, its
 * interfaces and their addresses (`ip -br addr`).
 */
export function nodeNetwork(node: Node | undefined, ipBrief?: string): NodeNetwork {
  const ifaces = ipBrief ? parseIpBrief(ipBrief) : [];
  const addresses = ifaces.flatMap((i) => i.addresses.map((a) => a.split('/')[0]!));
  const ips = node?.ips ?? [];
  return {
    localAddresses: [...new Set([...ips, ...addresses])].filter(
      (a) => ipv4(a) !== undefined || ipv6(a) !== undefined,
    ),
    interfaces: ifaces.map((i) => ({ name: i.name, cidrs: i.addresses })),
    defaultInterface: ifaces.find((i) => i.addresses.some((a) => ips.includes(a.split('/')[0]!)))
      ?.name,
  };
}
