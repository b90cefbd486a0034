// What each proxy mode does, known before any node's state was read: how its state is read and
// named, why a ping to a Service address behaves as it does there, and what it does with external
// traffic on a node without a local endpoint.
import type { IPFamily } from '../ipv6.js';
import type { Dataplane } from './dataplane.js';
import { NFTABLES_STATE } from './nftables/traits.js';
import { IPVS_STATE } from './ipvs/traits.js';
import { CILIUM_STATE } from './cilium/traits.js';
import type { PingExplained, PingFacts } from './ping.js';
import { iptablesPing } from './iptables/ping.js';
import { nftablesPing } from './nftables/ping.js';
import { ipvsPing } from './ipvs/ping.js';
import { ciliumPing } from './cilium/ping.js';

/** How a mode whose state lives outside iptables is read and named (nftables, IPVS, Cilium). */
export interface StateTraits {
  /** "nftables", "IPVS", "Cilium". */
  word: string;
  /** The finding that says it was not read. */
  notObserved:
    'rules-nftables-not-observed' | 'rules-ipvs-not-observed' | 'rules-cilium-not-observed';
  /** What was not read: "its table ip kube-proxy". */
  what(family: IPFamily): string;
  /** The file stem a snapshot keeps it under. */
  stem(family: IPFamily): string;
  /** The command that lists it on the node (empty: it is read from an agent Pod, not the node). */
  command(family: IPFamily): string[];
  /** Who keeps it on the node: "kube-proxy on node-a runs in nftables mode". */
  who(node: string): string;
  /** What it sends a Service to: "endpoints", or a Cilium frontend's "backends". */
  sendsTo: string;
  /** One state per family (kube-proxy's tables), or one for both (Cilium's agent). */
  perFamily: boolean;
  /** A frontend's backends are its own (Cilium): no local-only trees to pick from. */
  ownBackends: boolean;
  /** A listing read in part where it may hold the Service says no match at all (what it lacks
   * may be missing from the listing only); false: the match is said, the lines not read beside
   * it as not observed. */
  partReadNoMatch: boolean;
}

/** What each mode does, known before any node's state was read. */
interface ModeTraits {
  /** Undefined for iptables mode, whose rules are the iptables dump itself. */
  state?: StateTraits;
  /** Why a ping to a Service address behaves as it does. */
  ping(p: PingFacts): PingExplained;
  /** External traffic on a node with no local endpoint under externalTrafficPolicy Local: dropped,
   * or (IPVS, kubernetes#97081) sent to other nodes' endpoints without masquerading. */
  withoutLocalEndpoint: 'drop' | 'forward-unmasqueraded';
  /** Who programs a Service's traffic on the node in this mode. */
  programmedBy: 'kube-proxy' | 'cilium-agent';
}

const MODES: Record<Dataplane['mode'], ModeTraits> = {
  iptables: { ping: iptablesPing, withoutLocalEndpoint: 'drop', programmedBy: 'kube-proxy' },
  nftables: {
    ping: nftablesPing,
    withoutLocalEndpoint: 'drop',
    programmedBy: 'kube-proxy',
    state: NFTABLES_STATE,
  },
  ipvs: {
    ping: ipvsPing,
    withoutLocalEndpoint: 'forward-unmasqueraded',
    programmedBy: 'kube-proxy',
    state: IPVS_STATE,
  },
  cilium: {
    ping: ciliumPing,
    withoutLocalEndpoint: 'drop',
    programmedBy: 'cilium-agent',
    state: CILIUM_STATE,
  },
};

/** What a mode does, by the name a node's state gives it; undefined for a mode kdebug does not
 * model (userspace, kernelspace, or whatever a ConfigMap says). */
export const modeTraits = (mode: string | undefined): ModeTraits | undefined =>
  mode !== undefined && Object.hasOwn(MODES, mode) ? MODES[mode as Dataplane['mode']] : undefined;

/** Whether a mode's state is the node's iptables dump itself (iptables mode), not one of its own. */
export const stateIsIptablesDump = (mode: string | undefined): boolean => {
  const traits = modeTraits(mode);
  return traits !== undefined && traits.state === undefined;
};
