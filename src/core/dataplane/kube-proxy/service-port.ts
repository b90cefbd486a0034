// One Service port as kube-proxy programs it on a node (proxier.go's servicePortInfo and its
// endpoints): its chains, endpoints by traffic policy, verdicts without endpoints, and its rules'
// text, made when first asked for.
import { hash16 } from './chain-names.js';
import { categorize, portEndpoints, type ProxyEndpoint } from './endpoints.js';
import {
  servicePortRules,
  type RuleLine,
  type ServiceRulesContext,
} from '../iptables/rule-text.js';
import { canonicalAddress, canonicalCidrOf, FAMILY, familyOf, type IPFamily } from '../../ipv6.js';
import {
  servicePortName,
  type EndpointSlice,
  type KubeProxyConfig,
  type Service,
  type ServicePort,
} from '../../kube/objects.js';
import type { ServicePortName } from '../../model.js';
import type { ExpectedNode, LocalDetector } from './node.js';

/** An endpoint with its KUBE-SEP chain (`chain`, computed on first use). */
export type ExpectedEndpoint = ProxyEndpoint;

export interface ExpectedServicePort {
  name: ServicePortName;
  namespace: string;
  service: string;
  protocol: 'tcp' | 'udp' | 'sctp';
  /** The suffix its KUBE-SVC/SVL/EXT/FW chains share. */
  hash: string;
  clusterIP: string;
  port: number;
  nodePort?: number;
  healthCheckNodePort?: number;
  externalIPs: string[];
  loadBalancerIPs: string[];
  sourceRanges: string[];
  externallyAccessible: boolean;
  externalPolicyLocal: boolean;
  internalPolicyLocal: boolean;
  /** sessionAffinity ClientIP timeout, seconds. */
  affinitySeconds?: number;
  hasEndpoints: boolean;
  hasInternalEndpoints: boolean;
  hasExternalEndpoints: boolean;
  /** The chains kube-proxy creates for it (absent: not created). */
  chains: { svc?: string; svl?: string; ext?: string; fw?: string };
  /** Where cluster IP traffic jumps (KUBE-SVC, or KUBE-SVL with internalTrafficPolicy Local). */
  internalChain: string;
  /** Where external traffic ends up (KUBE-SVC, or KUBE-SVL with externalTrafficPolicy Local). */
  externalPolicyChain: string;
  clusterEndpoints: ExpectedEndpoint[];
  localEndpoints: ExpectedEndpoint[];
  reachableEndpoints: ExpectedEndpoint[];
  /** Every endpoint the slices list for this port, usable or not (for messages). */
  allEndpoints: ProxyEndpoint[];
  terminatingFallback: boolean;
  /** What the cluster IP masquerade rule matches: "! -s 10.244.0.0/16", "all", or none. */
  clusterIPMasquerade?: string;
  /** The filter target when traffic has nowhere to go: REJECT (no endpoints) or DROP (no local). */
  internalVerdict?: 'REJECT' | 'DROP';
  externalVerdict?: 'REJECT' | 'DROP';
  /** Its nat and filter rules, each chain's together, computed on first use (rulesOf: uncached). */
  readonly nat: RuleLine[];
  readonly filter: RuleLine[];
}

/** What every Service port's rules depend on, known once all ports are (large-cluster mode). */
export interface SharedContext {
  rules: ServiceRulesContext | undefined;
}

/** The prototype of the Service port literals. The text of 10,000 Service ports is 40 MB: it is
 * made when asked for, and kept once asked for. */
class ServicePortRules {
  declare shared: SharedContext;
  declare rules: { nat: RuleLine[]; filter: RuleLine[] } | undefined;
  get nat(): RuleLine[] {
    return this.made().nat;
  }
  get filter(): RuleLine[] {
    return this.made().filter;
  }
  private made() {
    return (this.rules ??= servicePortRules(
      this as unknown as ExpectedServicePort,
      this.shared.rules!,
    ));
  }
}

export function servicePortsOf(
  svc: Service,
  slices: Map<string, EndpointSlice[]>,
  node: ExpectedNode,
  family: IPFamily,
  config: KubeProxyConfig,
  detector: LocalDetector | undefined,
  shared: SharedContext,
): ExpectedServicePort[] {
  const id = `${svc.namespace}/${svc.name}`;
  if (svc.type === 'ExternalName' || svc.headless) return [];
  // the other family's proxier writes a Service with no cluster IP of this family
  const clusterIP = svc.clusterIPs.filter((ip) => familyOf(ip) === family).map(canonicalAddress)[0];
  if (!clusterIP) return [];
  const host = (c: string | undefined): c is string =>
    c !== undefined && familyOf(c) === family && c.endsWith(FAMILY[family].host);
  const externalIPs = svc.externalIPs.map(canonicalCidrOf).filter(host);
  const loadBalancerIPs = svc.loadBalancerIPs.map(canonicalCidrOf).filter(host);
  const sourceRanges = svc.loadBalancerSourceRanges
    .map(canonicalCidrOf)
    .filter((r): r is string => r !== undefined && familyOf(r) === family);
  const apiExternal =
    svc.type === 'LoadBalancer' ||
    svc.type === 'NodePort' ||
    (svc.type === 'ClusterIP' && svc.externalIPs.length > 0);
  return svc.ports
    .filter((p) => p.port > 0)
    .map((port) =>
      servicePort(svc, port, {
        slices: slices.get(id) ?? [],
        node,
        family,
        config,
        detector,
        clusterIP,
        externalIPs,
        loadBalancerIPs,
        sourceRanges,
        externalPolicyLocal: apiExternal && svc.externalTrafficPolicy === 'Local',
        shared,
      }),
    );
}

interface PortContext {
  slices: EndpointSlice[];
  node: ExpectedNode;
  family: IPFamily;
  config: KubeProxyConfig;
  detector: LocalDetector | undefined;
  clusterIP: string;
  externalIPs: string[];
  loadBalancerIPs: string[];
  sourceRanges: string[];
  externalPolicyLocal: boolean;
  shared: SharedContext;
}

function servicePort(svc: Service, port: ServicePort, c: PortContext): ExpectedServicePort {
  const name = servicePortName(svc, port);
  const protocol = port.protocol.toLowerCase() as ExpectedServicePort['protocol'];
  const nodePort = port.nodePort || undefined;
  const bare = (x: string) => x.slice(0, x.lastIndexOf('/'));
  const externalIPs = c.externalIPs.map(bare);
  const loadBalancerIPs = c.loadBalancerIPs.map(bare);
  const externallyAccessible =
    nodePort !== undefined || loadBalancerIPs.length > 0 || externalIPs.length > 0;
  const internalPolicyLocal = svc.internalTrafficPolicy === 'Local';
  const externalPolicyLocal = c.externalPolicyLocal;
  const all = portEndpoints(c.slices, port, c.node.name, { name, protocol }, c.family);
  const eps = categorize(all, {
    cluster: !internalPolicyLocal || externallyAccessible,
    local: internalPolicyLocal || (externalPolicyLocal && externallyAccessible),
  });
  const hasEndpoints = eps.hasAny;
  const hasInternalEndpoints = hasEndpoints && (!internalPolicyLocal || eps.local.length > 0);
  const hasExternalEndpoints = hasEndpoints && (!externalPolicyLocal || eps.local.length > 0);
  const hash = hash16(name + protocol);
  const svcChain = `KUBE-SVC-${hash}`;
  const svlChain = `KUBE-SVL-${hash}`;
  const usesFW = hasEndpoints && loadBalancerIPs.length > 0 && c.sourceRanges.length > 0;
  const chains: ExpectedServicePort['chains'] = {};
  if (eps.cluster.length > 0) chains.svc = svcChain;
  if (eps.local.length > 0) chains.svl = svlChain;
  if (hasEndpoints && externallyAccessible) chains.ext = `KUBE-EXT-${hash}`;
  if (usesFW) chains.fw = `KUBE-FW-${hash}`;
  const noEndpoints = hasEndpoints ? undefined : 'REJECT';
  // one literal with every field and its prototype: V8 keeps its properties fast (Object.assign
  // onto a class instance, or getters in the literal, turn 32 properties into a dictionary)
  return {
    __proto__: ServicePortRules.prototype,
    shared: c.shared,
    rules: undefined,
    name,
    namespace: svc.namespace,
    service: svc.name,
    protocol,
    hash,
    clusterIP: c.clusterIP,
    port: port.port,
    nodePort,
    healthCheckNodePort:
      svc.type === 'LoadBalancer' && svc.externalTrafficPolicy === 'Local'
        ? svc.healthCheckNodePort
        : undefined,
    externalIPs,
    loadBalancerIPs,
    sourceRanges: c.sourceRanges,
    externallyAccessible,
    externalPolicyLocal,
    internalPolicyLocal,
    affinitySeconds: svc.sessionAffinity === 'ClientIP' ? svc.sessionAffinityTimeout : undefined,
    hasEndpoints,
    hasInternalEndpoints,
    hasExternalEndpoints,
    chains,
    internalChain: internalPolicyLocal ? svlChain : svcChain,
    externalPolicyChain: externalPolicyLocal ? svlChain : svcChain,
    clusterEndpoints: eps.cluster,
    localEndpoints: eps.local,
    reachableEndpoints: eps.reachable,
    allEndpoints: all,
    terminatingFallback: eps.clusterTerminating || eps.localTerminating,
    clusterIPMasquerade: c.config.masqueradeAll
      ? 'all'
      : c.detector?.ifLocal.source
        ? `! -s ${c.detector.ifLocal.source}`
        : c.detector?.ifLocal.inInterface
          ? `! -i ${c.detector.ifLocal.inInterface}`
          : undefined,
    internalVerdict: noEndpoints ?? (hasInternalEndpoints ? undefined : 'DROP'),
    externalVerdict: noEndpoints ?? (hasExternalEndpoints ? undefined : 'DROP'),
  } as unknown as ExpectedServicePort;
}
