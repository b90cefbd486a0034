// The iptables-mode rules current kube-proxy (1.28 and later) writes on one node, computed from
// the API objects (pkg/proxy/iptables/proxier.go syncProxyRules): a model per Service port for the
// drift check, and the rules in iptables-save's canonical form for `kdebug expect`.
//
// Knobs kube-proxy reads from the node rather than from the objects are options (ExpectOptions);
// the ConfigMap gives clusterCIDR / detectLocalMode, masqueradeAll, masqueradeBit,
// localhostNodePorts and nodePortAddresses. One family at a time, as kube-proxy runs one proxier
// per family: IPv4 (iptables) by default, IPv6 (ip6tables) with `family`.
import { hash16 } from './chain-names.js';
import { categorize, portEndpointCount, portEndpoints, type ProxyEndpoint } from './endpoints.js';
import {
  fixedRules,
  servicePortRules,
  type RuleLine,
  type ServiceRulesContext,
} from '../iptables/rule-text.js';
import {
  canonicalAddress,
  canonicalCidrOf,
  containsAny,
  FAMILY,
  familyOf,
  type IPFamily,
} from '../../ipv6.js';
import {
  kubeProxyConfigOf,
  servicePortName,
  type ClusterView,
  type EndpointSlice,
  type KubeProxyConfig,
  type Service,
  type ServicePort,
} from '../../kube/objects.js';
import type { ServicePortName } from '../../model.js';
import { modelledRelease, writes, type Release } from './releases.js';

export type { RuleLine } from '../iptables/rule-text.js';
export { declaredChains, expectedSave } from '../iptables/save.js';

/** What kube-proxy learns from the node itself, not from the API objects. */
export interface ExpectOptions {
  /** Which proxier: IPv4 (iptables-save, the default) or IPv6 (ip6tables-save). */
  family?: IPFamily;
  /** The configuration kube-proxy runs with on the node (its /configz), over the objects'. */
  config?: KubeProxyConfig;
  /** MASQUERADE --random-fully: on whenever the iptables binary supports it (1.6.2+). Default true. */
  randomFully?: boolean;
  /** nfacct counters exist (kube-proxy 1.31+, nfnetlink_acct loaded): `-m nfacct` rules. Default false. */
  nfacct?: boolean;
  /** sysctl net.netfilter.nf_conntrack_tcp_be_liberal=1: no INVALID drop in KUBE-FORWARD. Default false. */
  conntrackTcpBeLiberal?: boolean;
  /** Overrides the ConfigMap's iptables.localhostNodePorts (default true). */
  localhostNodePorts?: boolean;
  /** Extra addresses of the node's interfaces, for nodePortAddresses CIDRs (the Node's IPs are always used). */
  interfaceAddresses?: string[];
  /** The kube-proxy release whose rules to write (undefined: the newest modelled). */
  release?: Release;
}

export const DEFAULT_EXPECT_OPTIONS = {
  randomFully: true,
  nfacct: false,
  conntrackTcpBeLiberal: false,
} as const;

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

export interface ExpectedRules {
  node: ExpectedNode;
  config: KubeProxyConfig;
  /** The release modelled (a modelled one: releases.ts). */
  release: Release;
  /** The release the caller said the node runs, modelled or not. */
  requested?: Release;
  options: Required<Omit<ExpectOptions, 'interfaceAddresses' | 'config' | 'family' | 'release'>> & {
    interfaceAddresses: string[];
  };
  /** The mark KUBE-MARK-MASQ sets, e.g. 0x4000. */
  masqueradeMark: number;
  localDetector?: LocalDetector;
  /** More than 1000 endpoints: no comments on KUBE-SEP rules and SVC -> SEP jumps. */
  largeClusterMode: boolean;
  servicePorts: ExpectedServicePort[];
  /** Rules written on every sync whatever the Services: jumps, KUBE-POSTROUTING, KUBE-FORWARD ... */
  fixed: { nat: RuleLine[]; filter: RuleLine[] };
  /** The node's addresses node ports answer on ("all": every local address). */
  nodePortIPs: 'all' | string[];
  /** What was left out and why ("headless", "IPv6 only", ...). */
  notes: string[];
  /** What the rule text of every Service port depends on besides the port itself. */
  ruleContext: ServiceRulesContext;
}

/** Which Services to model: all (the node's whole rule set), or only some (one Service's answer;
 * what depends on every Service, large-cluster mode, is still counted over all). */
export interface ExpectScope {
  only?: Pick<Service, 'namespace' | 'name'>[];
}

/** The rules kube-proxy would write on `nodeName` for the objects in `view`. */
export function expectedRules(
  view: ClusterView,
  nodeName: string,
  options: ExpectOptions = {},
  scope: ExpectScope = {},
): ExpectedRules {
  const family = options.family ?? 'IPv4';
  const config = options.config ?? kubeProxyConfigOf(view);
  const node = nodeOf(view, nodeName, family);
  const notes: string[] = [];
  if (!node.known) notes.push(`no Node object named ${nodeName}: its IPs and Pod CIDR are unknown`);
  const nodePortCidrs = nodePortAddresses(config, node, family);
  // localhost node ports (route_localnet) exist in IPv4 only
  const localhostNodePorts =
    family === 'IPv4' &&
    (options.localhostNodePorts ?? config.localhostNodePorts) &&
    (nodePortCidrs === 'all' || nodePortCidrs.some((c) => containsAny(c, '127.0.0.1')));
  const { family: _family, release: asked, ...rest } = definedOnly(options);
  const { release, note } = modelledRelease(asked);
  if (note) notes.push(note);
  // before 1.37 kube-proxy asks iptables whether it has --random-fully: said by the node's rules
  if (rest.randomFully === undefined && !writes(release, 'iptablesAlwaysRandomFully'))
    notes.push(
      `MASQUERADE --random-fully assumed: kube-proxy v1.${release.minor} writes it where the node's iptables supports it (1.6.2+), and the node's rules were not read`,
    );
  const opts = {
    ...DEFAULT_EXPECT_OPTIONS,
    ...rest,
    localhostNodePorts,
    interfaceAddresses: options.interfaceAddresses ?? [],
  };
  const localDetector = detectorOf(config, node, family, notes);
  const slices = slicesByService(view.endpointSlices);
  const shared: SharedContext = { rules: undefined };
  const only = scope.only && new Set(scope.only.map((s) => `${s.namespace}/${s.name}`));
  const ports = view.services
    .filter((svc) => !only || only.has(`${svc.namespace}/${svc.name}`))
    .flatMap((svc) => servicePortsOf(svc, slices, node, family, config, localDetector, shared))
    .sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : a.protocol < b.protocol ? -1 : 1,
    );
  const largeClusterMode = only
    ? endpointsExceed(view.services, slices, family, LARGE_CLUSTER_ENDPOINTS)
    : ports.reduce((n, p) => n + p.allEndpoints.length, 0) > LARGE_CLUSTER_ENDPOINTS;
  const masqueradeMark = 2 ** config.masqueradeBit;
  const local = localDetector?.ifLocal;
  const ctx = {
    family,
    largeClusterMode,
    nodeIPs: node.ips,
    localhostCounter: localhostNodePorts && opts.nfacct,
    podTraffic: local?.source
      ? `-s ${local.source}`
      : local
        ? `-i ${local.inInterface}`
        : undefined,
  };
  shared.rules = ctx;
  const nodePortIPs =
    nodePortCidrs === 'all'
      ? 'all'
      : // every node has lo's 127.0.0.1, listed by kube-proxy's GetNodeIPs though no `ip addr` was read
        [
          ...node.ips,
          ...opts.interfaceAddresses,
          ...(family === 'IPv4' ? ['127.0.0.1'] : []),
        ].filter(
          (ip, i, all) =>
            familyOf(ip) === family &&
            all.indexOf(ip) === i &&
            (ip.startsWith('127.') ? localhostNodePorts : ip !== '::1') &&
            nodePortCidrs.some((c) => containsAny(c, ip)),
        );
  const fixed = fixedRules({
    family,
    masqueradeMark,
    randomFully: opts.randomFully,
    nfacct: opts.nfacct,
    conntrackTcpBeLiberal: opts.conntrackTcpBeLiberal,
    localhostNodePorts,
    nodePortDestinations: nodePortIPs,
  });
  return {
    node,
    config,
    release,
    ...(asked ? { requested: asked } : {}),
    options: opts,
    masqueradeMark,
    localDetector,
    largeClusterMode,
    servicePorts: ports,
    fixed,
    nodePortIPs,
    notes,
    ruleContext: ctx,
  };
}

/** What every Service port's rules depend on, known once all ports are (large-cluster mode). */
interface SharedContext {
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

/**
 * A Service port's rules, computed afresh and not kept (for one pass over every port); with
 * `sample`, per-endpoint rules only for its first and last endpoint, each with its position.
 */
export function rulesOf(exp: ExpectedRules, sp: ExpectedServicePort, sample = false) {
  return servicePortRules(sp, exp.ruleContext, sample);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function nodeOf(view: ClusterView, name: string, family: IPFamily): ExpectedNode {
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
function nodePortAddresses(
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

function detectorOf(
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

function slicesByService(slices: EndpointSlice[]): Map<string, EndpointSlice[]> {
  const map = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    if (!s.serviceName) continue;
    const key = `${s.namespace}/${s.serviceName}`;
    const list = map.get(key);
    if (list) list.push(s);
    else map.set(key, [s]);
  }
  return map;
}

function servicePortsOf(
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

/** How many endpoints kube-proxy programs for all these Services (its totalEndpoints). */
/** kube-proxy's largeClusterEndpointsThreshold: above it, no per-endpoint comments. */
const LARGE_CLUSTER_ENDPOINTS = 1000;

/** The whole node's endpoint count is over `limit` (counted only as far as it takes to know). */
function endpointsExceed(
  services: Service[],
  slices: Map<string, EndpointSlice[]>,
  family: IPFamily,
  limit: number,
): boolean {
  let total = 0;
  for (const svc of services) {
    if (svc.type === 'ExternalName' || svc.headless) continue;
    if (!svc.clusterIPs.some((ip) => familyOf(ip) === family)) continue;
    const own = slices.get(`${svc.namespace}/${svc.name}`) ?? [];
    for (const port of svc.ports) if (port.port > 0) total += portEndpointCount(own, port, family);
    if (total > limit) return true;
  }
  return false;
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
