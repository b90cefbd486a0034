// A node where kube-proxy and a Cilium agent with a partial kube-proxy replacement both program
// Services: kube-proxy's rules and the agent's table are each compared, the agent's for the kinds
// it serves (its expected frontends are those kinds only: expected/expected.ts), kube-proxy's for
// all (its rules still hold them); each finding names its component. A packet is walked through
// the agent first, as its hooks (the socket, tc at the device) meet it before netfilter does:
// where the agent holds no frontend for it, kube-proxy's rules translate it.
import type { CiliumDataplane, Dataplane } from '../dataplane.js';
import type { DriftFinding, NodeDrift } from '../drift.js';
import type { NodeNetwork, TracePacket, TraceResult } from '../trace/trace.js';
import { partialText, type PartialReplacement } from './agent/agent.js';
import { servedByCilium } from './drift/left-to-kube-proxy.js';

/** Which component a finding is about, on a node where both program Services. */
export type Component = 'kube-proxy' | 'cilium';

const tagged = (component: Component) => (f: DriftFinding) => ({
  ...f,
  drift: { ...f.drift, component },
});

/** kube-proxy's drift and the agent's, as one node's: kube-proxy's rules named kube-proxy's, the
 * agent's findings named Cilium's; what the agent compared is said beside (NodeDrift.ciliumBeside). */
export function bothDrift(
  kubeProxy: NodeDrift,
  agent: NodeDrift,
  replacement: PartialReplacement,
): NodeDrift {
  const kp = servedByCilium(kubeProxy, replacement, true);
  const findings = [
    ...kp.findings.map(tagged('kube-proxy')),
    ...agent.findings.map(tagged('cilium')),
  ];
  const notes = [
    ...(kp.notes ?? []).map(tagged('kube-proxy')),
    ...(agent.notes ?? []).map(tagged('cilium')),
  ];
  const notRead = [
    ...(kp.notRead ?? []).map(tagged('kube-proxy')),
    ...(agent.notRead ?? []).map(tagged('cilium')),
  ];
  const readInPart = [...(kp.readInPart ?? []), ...(agent.readInPart ?? [])];
  return {
    ...kp,
    findings,
    ...(notes.length ? { notes } : {}),
    ...(notRead.length ? { notRead } : {}),
    ...(readInPart.length ? { readInPart } : {}),
    ...(agent.cilium
      ? {
          ciliumBeside: {
            ...agent.cilium,
            source: agent.source,
            servicePorts: agent.servicePorts,
            replacement: partialText(replacement),
          },
        }
      : {}),
    drifted: kp.drifted || agent.drifted,
  };
}

/** Whether the agent's walk did anything to the packet: translated, dropped or rejected it. An
 * untouched packet (no frontend of its destination in the agent's table) goes on to netfilter. */
const agentTook = (walked: TraceResult) =>
  walked.outcomes.some((o) => o.destination !== null || o.verdict !== 'ACCEPT');

/** A packet walked through the agent first, as its hooks (the socket, tc at the devices) meet it
 * before netfilter, and through kube-proxy's rules where the agent did nothing to it; `text`: the
 * replacement in words; `atDevice`: the agent load-balances at the node's devices (NodePort on). */
export function agentFirst(
  kubeProxy: Dataplane,
  agent: CiliumDataplane,
  o: {
    text: string;
    atDevice: boolean;
    fromOutside: (packet: TracePacket, net: NodeNetwork) => boolean;
  },
): Pick<Dataplane, 'trace' | 'readStop'> {
  // the walks the agent took, for readStop: its listing, not kube-proxy's rules, was walked
  const byAgent = new WeakSet<TraceResult>();
  return {
    trace: (packet, net) => {
      // without NodePort the agent loads no load balancer at the device (ENABLE_NODEPORT off):
      // traffic from outside passes it to netfilter whatever its table holds
      const first =
        o.atDevice || !o.fromOutside(packet, net) ? agent.trace(packet, net) : undefined;
      if (first && agentTook(first)) {
        const walked = {
          ...first,
          notes: [
            `Cilium's agent takes this packet before kube-proxy's rules see it (${o.text}): kube-proxy's rules on this node are not walked`,
            ...first.notes,
          ],
        };
        byAgent.add(walked);
        return walked;
      }
      const walked = kubeProxy.trace(packet, net);
      return {
        ...walked,
        notes: [
          first
            ? `Cilium's agent holds no frontend for ${packet.dst}${packet.dport ? `:${packet.dport}` : ''}/${packet.protocol.toUpperCase()} in ${agent.source} (${o.text}), so the packet passes it untranslated and kube-proxy's rules translate it`
            : `Cilium's agent load-balances nothing at the node's device (${o.text}: no NodePort), so a packet from outside passes it untranslated and kube-proxy's rules translate it`,
          ...walked.notes,
        ],
      };
    },
    readStop: (walked, file) =>
      byAgent.has(walked) ? agent.readStop?.(walked, file) : kubeProxy.readStop?.(walked, file),
  };
}

/** kube-proxy's dataplane on a node whose agent serves `replacement`'s kinds ahead of it;
 * `fromOutside`: whether a packet comes in at the node's device (not a Pod's, nor the host's). */
export function besideKubeProxy(
  kubeProxy: Dataplane,
  agent: CiliumDataplane,
  replacement: PartialReplacement,
  fromOutside: (packet: TracePacket, net: NodeNetwork) => boolean,
): Dataplane {
  return {
    ...kubeProxy,
    drift: (node, expected, trees, scope) =>
      bothDrift(
        kubeProxy.drift(node, expected, trees, scope),
        agent.drift(node, expected, trees, scope),
        replacement,
      ),
    ...agentFirst(kubeProxy, agent, {
      text: partialText(replacement),
      atDevice: replacement.handles?.includes('NodePort') ?? false,
      fromOutside,
    }),
  } as Dataplane;
}
