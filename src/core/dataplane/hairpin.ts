// A Pod reaching itself through its own Service, as one node's state answers it: the DNAT makes
// source and destination the same Pod, and unless that connection is masqueraded the reply goes
// back inside the Pod from its own address and the client drops it.
import type { NextCommand } from '../findings/next-command.js';
import type { StateLine } from './dataplane.js';
import type { TreeEndpoint } from './trees.js';

/** One ready endpoint on its own node, with its entry in the node's Service tree where it has one. */
export interface HairpinQuery {
  node: string;
  ip: string;
  port: number;
  protocol: string;
  /** The endpoint's Pod, where the EndpointSlice names it. */
  podName?: string;
  endpoint?: TreeEndpoint;
}

/** What the node does with that endpoint's hairpin connection. */
export type Hairpin =
  | { kind: 'masqueraded'; lines: StateLine[] }
  | {
      kind: 'missing';
      /** What the node lacks, after "WHO cannot reach itself through the Service: ". */
      title: string;
      explanation: string;
      lines: StateLine[];
      /** The command that shows it, or kube-proxy's restart (its Pod on the node). */
      next: NextCommand | 'restart-kube-proxy' | undefined;
      /** Earlier findings this one follows from. */
      causes: readonly string[];
    }
  | { kind: 'not-checked'; why: string };

/** The bridge's part, which no rule shows. */
export const BRIDGE_NOTE =
  'The bridge must also send the packet back out of the port it came in on: kubelet --hairpin-mode (hairpin-veth or promiscuous-bridge) or the CNI plugin\'s "hairpinMode": true. If a Pod still cannot reach itself through the Service, read /sys/class/net/<bridge>/brif/*/hairpin_mode on its node (1 is on).';
