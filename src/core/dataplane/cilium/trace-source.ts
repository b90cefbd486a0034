// Where a packet walked on a Cilium node comes from, by what is known of its source address:
// Cilium translates where a packet is sent (a Pod's or the host's socket, a Pod's interface), not
// where it arrives, so the walk needs the sender where the iptables walk needs only the interface
// (trace/route.ts). A Pod read from the API is one; an address in a Pod range (the agent's IPAM
// as its status says it, a Node's spec.podCIDRs, cilium-config's cluster pool) is walked as a
// Pod and the node's own address as the host, each said as an assumption; any other comes from
// the network, said as one too where the address is no node's.
import type { ClusterView } from '../../kube/objects.js';
import { cidrHolds } from '../../ipv6.js';
import type { TracePacket } from '../trace/trace.js';
import {
  agentName,
  ciliumAgentOn,
  ciliumAgentPodOn,
  ciliumConfig,
  type CiliumAgent,
} from './agent/agent.js';
import { readSourcesText, wasRead } from './agent/provenance.js';

/** A Pod range and where it was read. */
export interface PodRange {
  cidr: string;
  /** The node it is the Pod range of; none for the cluster's pool. */
  node?: string;
  /** Where it was read: "the agent's status (IPAM)", "Node spec.podCIDRs" ... */
  source: string;
}

/** What the walk knows of the cluster's senders. */
export interface TraceSenders {
  /** The cluster's Pod IPs (not on the host's network), as read from the API. */
  podIPs: ReadonlySet<string>;
  /** The node walked, where known. */
  node?: string;
  /** The Pod ranges read, this node's first. */
  podRanges?: readonly PodRange[];
  /** The other nodes' addresses. */
  nodeIPs?: ReadonlySet<string>;
  /** Another node's address: that node and what is known of its agent. */
  peer?: (ip: string) => PeerNode | undefined;
}

/** Another node, as what sends from its address meets first: its Cilium agent, where one was
 * read, whether its socket LB is on and whether it replaces kube-proxy (undefined: not known). */
export interface PeerNode {
  node: string;
  agent?: { pod: string; socketLB?: boolean; kubeProxyReplacement?: boolean; source: string };
}

/** Where the walk takes the packet from, and what it assumed to; the node it was sent on where
 * that is another node. */
export interface TraceOrigin {
  from: 'host' | 'pod' | 'network';
  assumed?: string;
  peer?: PeerNode;
}

/** The sender of `packet`: --from-host, a Pod read, the node's own address, a Pod range, another
 * node's address, else a client outside the cluster. */
export function originOf(
  packet: Pick<TracePacket, 'src' | 'fromHost'>,
  localAddresses: readonly string[],
  s: TraceSenders,
): TraceOrigin {
  const { src } = packet;
  const node = s.node ? `node ${s.node}` : 'this node';
  const ranges = s.podRanges ?? [];
  if (packet.fromHost) return { from: 'host' };
  if (s.podIPs.has(src)) return { from: 'pod' };
  if (localAddresses.includes(src))
    return {
      from: 'host',
      assumed: `${src} is an address of ${node}: walked as sent by a process on it (the host), not as a packet come in with that source`,
    };
  const range = ranges.find((r) => cidrHolds(r.cidr)(src));
  if (range) {
    const whose = range.node ? `node ${range.node}'s Pod range` : "the cluster's Pod range";
    const there = !range.node
      ? `walked as a Pod of ${node}`
      : range.node === s.node
        ? 'walked as a Pod there'
        : "walked as a Pod sending from this node (Cilium translates a Pod's connection at its own node's hooks, as here)";
    return {
      from: 'pod',
      assumed: `${src} is in ${whose} (${range.cidr}, ${range.source}) and no Pod read has it: ${there}`,
    };
  }
  if (s.nodeIPs?.has(src)) {
    const peer = s.peer?.(src);
    return { from: 'network', ...(peer ? { peer } : {}) };
  }
  const read = [...new Set(ranges.map((r) => r.cidr))];
  return {
    from: 'network',
    assumed: `${src} is no Pod read, no node's address and in no Pod range read (${read.length > 0 ? read.join(', ') : 'none was read'}): walked as a client outside the cluster, coming in at the node's device`,
  };
}

/** What the walk on `node` knows of the cluster's senders: its Pods and nodes as read, and the Pod
 * ranges, this node's first (its agent's IPAM as its status says it, its spec.podCIDRs), then the
 * other nodes', then cilium-config's cluster pool; another node's agent as `agentOf` gives it
 * (that node's state), else as the API shows it. */
export function sendersOf(
  view: ClusterView,
  agent: CiliumAgent,
  node: string,
  agentOf?: (node: string) => CiliumAgent | undefined,
): TraceSenders {
  const own = view.nodes.find((n) => n.name === node);
  const pool = ciliumConfig(view);
  const poolRanges = ['cluster-pool-ipv4-cidr', 'cluster-pool-ipv6-cidr'].flatMap((key) =>
    (pool?.data[key] ?? '')
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((cidr) => ({ cidr, source: `ConfigMap ${pool!.namespace}/cilium-config ${key}` })),
  );
  return {
    node,
    podIPs: new Set(view.pods.flatMap((p) => (p.hostNetwork ? [] : p.podIPs))),
    podRanges: [
      ...(agent.podCIDRs ?? []).map((cidr) => ({
        cidr,
        node,
        source: `the IPAM line of ${agentName(agent)}'s status`,
      })),
      ...(own?.podCIDRs ?? []).map((cidr) => ({ cidr, node, source: 'Node spec.podCIDRs' })),
      ...view.nodes
        .filter((n) => n.name !== node)
        .flatMap((n) =>
          n.podCIDRs.map((cidr) => ({ cidr, node: n.name, source: 'Node spec.podCIDRs' })),
        ),
      ...poolRanges,
    ],
    nodeIPs: new Set(view.nodes.filter((n) => n.name !== node).flatMap((n) => n.ips)),
    peer: peerLookup(view, node, agentOf),
  };
}

/** The node an address of another node is of, with its agent: as that node's own state has it
 * (`agentOf`: its recorded status first, each node's may differ), else as the API shows it
 * (cilium-config; not known where that is refused or unread). Looked up for the one address
 * walked, not for every node. */
function peerLookup(
  view: ClusterView,
  node: string,
  agentOf: ((node: string) => CiliumAgent | undefined) | undefined,
): (ip: string) => PeerNode | undefined {
  return (ip) => {
    const n = view.nodes.find((x) => x.name !== node && x.ips.includes(ip));
    if (!n) return undefined;
    const pod = ciliumAgentPodOn(view.pods, n.name)?.pod;
    const agent = agentOf ? agentOf(n.name) : ciliumAgentOn(view, pod, undefined);
    if (!agent) return { node: n.name };
    // each said where it was read; one not read (Cilium's default) is not known there
    const shown = (['socketLB', 'kubeProxyReplacement'] as const).filter((x) =>
      wasRead(agent.sources[x]),
    );
    const value = (x: (typeof shown)[number]) =>
      shown.includes(x) ? { [x]: agent.settings[x] } : {};
    return {
      node: n.name,
      agent: {
        pod: agent.pod ? `${agent.pod.namespace}/${agent.pod.name}` : agentName(agent),
        ...value('socketLB'),
        ...value('kubeProxyReplacement'),
        source: readSourcesText(agent, shown) ?? 'bpf-lb-sock and kube-proxy-replacement not read',
      },
    };
  };
}

/** Where on another node a packet its host sends from its own address to a ClusterIP is
 * translated, as that node's agent is known (its socket hook with socket LB on; its host device
 * on the way out with it off and kube-proxy replacement on, as this walk takes this node's host),
 * and why; `at` undefined where that is not known or no agent there does it: walked as arriving. */
export function peerHook(src: string, dst: string, peer: PeerNode): { at?: string; said: string } {
  const sender = `${src} is an address of node ${peer.node}`;
  const here = `walked as it arrives here, to ${dst} unchanged`;
  const a = peer.agent;
  if (!a)
    return {
      said: `${sender}, where no Cilium agent was read: ${here} (what load-balances Services on ${peer.node} was not read)`,
    };
  const agent = `agent ${a.pod} (${a.source})`;
  const leaves = `so the packet leaves ${peer.node} for a backend and never reaches this node as ClusterIP traffic; ${peer.node}'s table was not read here, its backends are taken as this node's lists them`;
  if (a.socketLB)
    return {
      at: `the socket hook (connect/sendmsg) of node ${peer.node}'s host`,
      said: `${sender}, whose ${agent} has socket LB on (bpf-lb-sock): a process there connecting to ${dst} is translated by ${peer.node}'s own socket hook, ${leaves}`,
    };
  if (a.socketLB === false && a.kubeProxyReplacement)
    return {
      at: `node ${peer.node}'s host device on the way out`,
      said: `${sender}, whose ${agent} replaces kube-proxy with socket LB off: ${peer.node}'s agent translates it on the way out of its host, ${leaves}`,
    };
  return {
    said: `${sender}: ${a.socketLB === false ? `its ${agent} neither translates at the socket nor replaces kube-proxy, and what else load-balances Services there was not read` : `whether its ${agent} translates it (bpf-lb-sock, kube-proxy-replacement) is not known`}; ${here}`,
  };
}
