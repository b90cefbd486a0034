// The node as kube-proxy sees it: its addresses of the proxier's family, the addresses node ports
// answer on (nodePortAddresses), and how it tells Pod traffic from other traffic (detectLocalMode).
import { canonicalAddress, canonicalCidrOf, FAMILY, familyOf, type IPFamily } from '../../ipv6.js';
import type { ClusterView, KubeProxyConfig } from '../../kube/objects.js';

export interface ExpectedNode {
  name: string;
  /** InternalIP then ExternalIP addresses of the rule set's family. */
  ips: string[];
  podCIDR?: string;
  /** A Node object was found; otherwise only the name is known. */
  known: boolean;
}

/** How kube-proxy tells Pod traffic from other traffic (its LocalTrafficDetector). */
export interface LocalDetector {
  /** e.g. "ClusterCIDR 10.244.0.0/16" */
  description: string;
  /** The match for Pod traffic ("-s 10.244.0.0/16", "-i cni0"), canonical position in a rule. */
  ifLocal: { source?: string; inInterface?: string };
}

export function nodeOf(view: ClusterView, name: string, family: IPFamily): ExpectedNode {
  const n = view.nodes.find((x) => x.name === name);
  if (!n) return { name, ips: [], known: false };
  return {
    name,
    ips: n.ips.filter((ip) => familyOf(ip) === family).map(canonicalAddress),
    podCIDR: n.podCIDRs.map(canonicalCidrOf).find((c) => c !== undefined && familyOf(c) === family),
    known: true,
  };
}

/** The CIDRs node ports listen on ("all" when nodePortAddresses has none of this family, or
 * the family's 0/0). */
export function nodePortAddresses(
  config: KubeProxyConfig,
  node: ExpectedNode,
  family: IPFamily,
): 'all' | string[] {
  const cidrs: string[] = [];
  for (const a of config.nodePortAddresses) {
    if (a === 'primary')
      cidrs.push(...node.ips.slice(0, 1).map((ip) => `${ip}${FAMILY[family].host}`));
    else {
      const c = canonicalCidrOf(a);
      if (c && familyOf(c) === family) cidrs.push(c);
    }
  }
  return cidrs.length === 0 || cidrs.includes(FAMILY[family].any) ? 'all' : cidrs;
}

export function detectorOf(
  config: KubeProxyConfig,
  node: ExpectedNode,
  family: IPFamily,
  notes: string[],
): LocalDetector | undefined {
  const mode = config.detectLocalMode || 'ClusterCIDR';
  if (mode === 'ClusterCIDR') {
    const cidr = (config.clusterCIDR ?? '')
      .split(',')
      .map(canonicalCidrOf)
      .find((c) => c !== undefined && familyOf(c) === family);
    if (!cidr) {
      notes.push('kube-proxy has no clusterCIDR: no masquerade rule for cluster IP traffic');
      return undefined;
    }
    return { description: `ClusterCIDR ${cidr}`, ifLocal: { source: cidr } };
  }
  if (mode === 'NodeCIDR') {
    if (!node.podCIDR) {
      notes.push(`detectLocalMode NodeCIDR but node ${node.name} has no ${family} Pod CIDR`);
      return undefined;
    }
    return { description: `NodeCIDR ${node.podCIDR}`, ifLocal: { source: node.podCIDR } };
  }
  if (mode === 'BridgeInterface' && config.bridgeInterface)
    return {
      description: `BridgeInterface ${config.bridgeInterface}`,
      ifLocal: { inInterface: config.bridgeInterface },
    };
  if (mode === 'InterfaceNamePrefix' && config.interfaceNamePrefix)
    return {
      description: `InterfaceNamePrefix ${config.interfaceNamePrefix}`,
      ifLocal: { inInterface: `${config.interfaceNamePrefix}+` },
    };
  notes.push(`detectLocalMode ${mode} is not usable with this configuration: no local detector`);
  return undefined;
}
