// What Cilium's agent on a node should hold for the objects: its frontends and, for each, the
// backends it selects, modelled on Cilium's own load-balancer control plane (pkg/loadbalancer:
// reflectors/conversions.go turns Services and EndpointSlices into frontends and backends,
// writer.DefaultSelectBackends picks each frontend's backends, in backends.ts). Tested against the
// states of Cilium's own script tests and against its control plane run in the lab.
import type { ClusterView, Service } from '../../../kube/objects.js';
import { canonicalIP } from '../../../ipv4.js';
import { familyOf } from '../../../ipv6.js';
import type { BackendState, CiliumProtocol, FrontendType } from '../read/listing.js';
import { knows, type ConfigOnlySetting } from '../agent/agent.js';
import { healthServerFrontends } from './health-server.js';
import { hostPortFrontends } from './host-ports.js';
import { parseNodeSelector } from './node-selector.js';
import { sourceRangesOf, type IgnoredRange } from './source-ranges.js';
import { backendsOf, selected } from './backends.js';
import { familyNotKnown, familyOn } from './families.js';
import { annotations, labels } from './service-meta.js';
import {
  DEFAULT_NODE_PORT_RANGE,
  nodePortConflict,
  type NodePortRange,
} from '../agent/node-port-range.js';

const isIPv6 = (ip: string) => familyOf(ip) === 'IPv6';

/** The agent settings the frontends depend on (Cilium's defaults where not read). */
export interface CiliumExpectOptions {
  /** kube-proxy-replacement: NodePort, LoadBalancer and ExternalIPs frontends exist only with it. */
  kubeProxyReplacement: boolean;
  /** A partial replacement's enable-node-port and enable-host-port as its status lists them
   * (agent.ts PartialReplacement): NodePort, LoadBalancer and ExternalIPs frontends (1.14's
   * k8s.ParseService), and host ports, exist with them. Undefined: as kube-proxy replacement. */
  nodePort?: boolean;
  hostPort?: boolean;
  /** The settings not known (agent.ts notKnown): without kube-proxy replacement, the frontends
   * only it makes are expected as kprNotKnown. */
  notKnown?: readonly ConfigOnlySetting[];
  ipv4: boolean;
  ipv6: boolean;
  /** enable-internal-traffic-policy (default true). */
  internalTrafficPolicy: boolean;
  /** enable-service-topology (default false): zone hints are honoured only with it. */
  serviceTopology: boolean;
  /** Topology hints that leave this zone no backend fall back to all (Cilium 1.18.1 and later;
   * before, such a frontend had none). */
  zoneHintsFallback: boolean;
  /** k8s-service-proxy-name: the Services with this service-proxy-name label (empty: those
   * without one). */
  serviceProxyName: string;
  /** The frontend types a Service's loadBalancerSourceRanges guard: LoadBalancer, ExternalIPs
   * too from 1.20, or every type (bpf-lb-source-range-all-types; 1.18.0 to 1.18.5 always). */
  sourceRangeTypes: 'all' | readonly FrontendType[];
  /** enable-health-check-nodeport (default on): a health server for each Service with
   * externalTrafficPolicy Local and a healthCheckNodePort. */
  healthCheckNodePort: boolean;
  /** enable-health-check-loadbalancer-ip (default off): that server on the Service's
   * LoadBalancer IPs too, through a frontend of the agent's own (health-server.ts). */
  healthCheckLoadBalancerIP: boolean;
  /** node-port-range: host ports inside it are ignored. */
  nodePortRange: NodePortRange;
  /** LoadBalancer and ExternalIPs frontends on a NodePort address at a port in that range are
   * dropped (1.20 on and 1.19.7, cilium#45314). */
  nodePortConflicts: boolean;
  /** The trafficDistribution values honoured: PreferClose only (before 1.20), or PreferSameZone
   * and PreferSameNode too, the spec's value before the topology annotations (1.20 on). */
  trafficDistributions?: 'prefer-close' | 'all';
  /** The backends the topology safeguards (a same-node or same-zone backend exists, every one
   * has hints) weigh: every backend of the Service (before 1.20), or those the frontend could
   * select that are not terminating (1.20.0, 1.20.1) or are active (1.20.2). */
  topologyCandidates?: 'every' | 'not-terminating' | 'active';
  /** An EndpointSlice's service.cilium.io/weight "0" puts its backends in maintenance (1.20 on;
   * other weights only weigh the Maglev table). */
  sliceWeights?: boolean;
  /** Without kube-proxy replacement the agent still makes a Service's LoadBalancer and
   * ExternalIPs frontends, only NodePort ones not (1.19 on; before, none but the ClusterIPs). */
  nonKprFrontends?: boolean;
  /** The dummy endpoint Cilium's Ingress and Gateway API controllers give their Services
   * (192.192.192.192:9999) is a backend like any other (through 1.17; 1.18's control plane drops
   * it). */
  ingressDummyBackend?: boolean;
  /** loadBalancerSourceRanges read trimmed, as 1.17's control plane does; from 1.18 each is
   * parsed as it is (netip.ParsePrefix), and one it cannot parse ignored. */
  trimmedSourceRanges?: boolean;
  /** The service.cilium.io/node-selector annotation is no annotation of the release's (1.17;
   * 1.18 on honour it). */
  nodeSelectorIgnored?: boolean;
  /** That selector's ')' right after ",," fails to parse, as in apimachinery v0.33 (1.18); v0.35
   * (1.19 on) reads any run of commas in a set. */
  strictSelectorCommas?: boolean;
  /** A LoadBalancer ingress IP of ipMode Proxy gets a frontend like any other (before 1.17, and
   * 1.18.0, cilium#40913; the rest skip it, as kube-proxy does). */
  ipModeIgnored?: boolean;
  /** Only serving endpoints are backends, as servingStateOf reads them (before 1.18.5). */
  servingEndpointsOnly?: boolean;
  /** A Service without spec.ipFamilies gets its NodePorts on 0.0.0.0 for an IPv6 cluster IP too
   * (1.18, 1.19.0 to 1.19.4). */
  deducedIPv6AsIPv4?: boolean;
  /** A host port a Pod opens for several protocols keeps the last one's frontends only (1.18.0
   * to 1.18.2). */
  hostPortLastProtocol?: boolean;
}

export const CILIUM_DEFAULTS: CiliumExpectOptions = {
  kubeProxyReplacement: true,
  ipv4: true,
  ipv6: true,
  internalTrafficPolicy: true,
  serviceTopology: false,
  zoneHintsFallback: true,
  serviceProxyName: '',
  sourceRangeTypes: ['LoadBalancer'],
  healthCheckNodePort: true,
  healthCheckLoadBalancerIP: false,
  nodePortRange: DEFAULT_NODE_PORT_RANGE,
  nodePortConflicts: false,
  trafficDistributions: 'prefer-close',
  topologyCandidates: 'every',
};

export interface ExpectedBackend {
  ip: string;
  port: number;
  protocol: CiliumProtocol;
  state: BackendState;
  /** Its load-balancing weight (backends.ts weightOf): Maglev fills its table by it; 0 in
   * maintenance. */
  weight: number;
  nodeName?: string;
  /** The Pod (or other object) the EndpointSlice names. */
  target?: string;
}

export interface ExpectedFrontend {
  ip: string;
  port: number;
  protocol: CiliumProtocol;
  type: FrontendType;
  /** "ns/name". */
  service: string;
  portName: string;
  /** The Service port this frontend serves (its port, not the node port). */
  servicePort: number;
  /** The internal scope of a NodePort or LoadBalancer frontend when only one traffic policy is
   * Local ("/i"): traffic from inside the cluster. */
  internal?: boolean;
  /** Only this node's backends (a Local traffic policy applies). */
  localOnly: boolean;
  /** sessionAffinity ClientIP: how long a client keeps its backend, in seconds. */
  affinitySeconds?: number;
  /** The Service's loadBalancerSourceRanges, on the types they guard (GetSourceRangesEnabled):
   * the clients the frontend admits where the agent checks them (sourceRangeCheck). */
  sourceRanges?: string[];
  /** Those of the Service's ranges the agent ignores (source-ranges.ts), on the same types. */
  ignoredRanges?: IgnoredRange[];
  /** The agent holds one of its Service's frontends so marked, which one is not known (the
   * health server's, where the Service has several LoadBalancer IPs). */
  oneOf?: boolean;
  /** With oneOf: the agent may hold none of them (the last it saw was one it drops). */
  orNone?: boolean;
  /** Made only with kube-proxy replacement, which is not known (a refused cilium-config): the
   * agent's own listing says whether it holds it, no finding its absence. */
  kprNotKnown?: boolean;
  /** Of a family whose enable-ipv4/enable-ipv6 is not known: compared only where the agent's
   * listing holds a frontend of that family (then it runs it), else not compared. */
  familyNotKnown?: 'IPv4' | 'IPv6';
  /** Whether the agent handles its Service (k8s-service-proxy-name) is not known: compared only
   * where it lists it, no finding its absence. */
  proxyNameNotKnown?: boolean;
  /** The backends it holds with service topology on, where that is not known and they differ
   * from `backends` (with it off): the listing's, where it holds exactly these, are taken. */
  topologyNotKnown?: ExpectedBackend[];
  backends: ExpectedBackend[];
}

/** The node the agent runs on: its name, labels (zone, exposure annotations), and its NodePort
 * addresses where the agent's status gave them. */
export interface CiliumNode {
  name: string;
  labels: Record<string, string>;
  nodePortAddresses?: readonly string[];
}

/** Every frontend the agent on `node` should hold, for `only` these Services or all. */
export function expectedCilium(
  view: ClusterView,
  node: CiliumNode,
  options: CiliumExpectOptions = CILIUM_DEFAULTS,
  only?: readonly Pick<Service, 'namespace' | 'name'>[],
): ExpectedFrontend[] {
  const wanted = only && new Set(only.map((s) => `${s.namespace}/${s.name}`));
  const out: ExpectedFrontend[] = [];
  // not known, what kube-proxy replacement makes is expected and marked so
  const unknown = !knows(options, 'kubeProxyReplacement');
  const kpr = unknown ? { ...options, kubeProxyReplacement: true } : options;
  for (const svc of view.services) {
    if (wanted && !wanted.has(`${svc.namespace}/${svc.name}`)) continue;
    if (!handled(svc, node, options)) continue;
    const backends = backendsOf(
      view.endpointSlices.filter(
        (s) => s.namespace === svc.namespace && s.serviceName === svc.name,
      ),
      options,
    );
    const frontends = frontendsOf(svc, options).filter(
      (fe) => !nodePortConflict(fe, node, options),
    );
    const mine: ExpectedFrontend[] = [
      ...frontends.map((fe) => ({ ...fe, ...selectedBoth(fe, svc, backends, node, options) })),
      ...kprMade(healthServerFrontends(svc, frontends, node, kpr), unknown),
    ];
    // whether the agent handles the Service at all is not known: its listing says
    out.push(
      ...(knows(options, 'serviceProxyName')
        ? mine
        : mine.map((f) => ({ ...f, proxyNameNotKnown: true }))),
    );
  }
  // the node's Pods' host ports: frontends of no Service, so of the whole node's answer only
  if (!only && (kpr.kubeProxyReplacement || options.hostPort))
    out.push(...kprMade(hostPortFrontends(view, node.name, options), unknown));
  return out;
}

/** The frontend's backends; where service topology is not known, with it off, and those it
 * selects with it on where they differ. */
function selectedBoth(
  fe: Frontend,
  svc: Service,
  backends: Parameters<typeof selected>[2],
  node: CiliumNode,
  o: CiliumExpectOptions,
): Pick<ExpectedFrontend, 'backends' | 'topologyNotKnown'> {
  if (knows(o, 'serviceTopology')) return { backends: selected(fe, svc, backends, node, o) };
  const off = selected(fe, svc, backends, node, { ...o, serviceTopology: false });
  const on = selected(fe, svc, backends, node, { ...o, serviceTopology: true });
  const key = (b: ExpectedBackend) => `${b.ip} ${b.port} ${b.protocol}`;
  const same = on.length === off.length && on.every((b) => off.some((x) => key(x) === key(b)));
  return same ? { backends: off } : { backends: off, topologyNotKnown: on };
}

/** `frontends`, marked made only with kube-proxy replacement where it is `unknown`. */
const kprMade = (frontends: ExpectedFrontend[], unknown: boolean): ExpectedFrontend[] =>
  unknown ? frontends.map((f) => ({ ...f, kprNotKnown: true })) : frontends;

/** Whether the agent programs the Service at all: its service-proxy-name, the node exposure
 * annotations (service.cilium.io/node, node-selector), headless. */
function handled(svc: Service, node: CiliumNode, o: CiliumExpectOptions): boolean {
  if (svc.type === 'ExternalName') return false;
  // not known (a refused cilium-config), every Service is expected, marked
  const name = labels(svc)['service.kubernetes.io/service-proxy-name'] ?? '';
  if (knows(o, 'serviceProxyName') && name !== o.serviceProxyName) return false;
  const a = annotations(svc);
  const selector = a['service.cilium.io/node-selector'];
  if (selector !== undefined && !o.nodeSelectorIgnored) {
    // one the agent cannot parse is ignored, and with it the service.cilium.io/node annotation
    return parseNodeSelector(selector, o.strictSelectorCommas)?.(node.labels) ?? true;
  }
  const exposure = a['service.cilium.io/node'];
  if (exposure !== undefined && node.labels['service.cilium.io/node'] !== exposure) return false;
  return true;
}

type Frontend = Omit<ExpectedFrontend, 'backends'>;

/** convertService: ClusterIPs, then (with kube-proxy replacement) NodePorts on the wildcard
 * address of each family, LoadBalancer ingress IPs (VIP mode) and ExternalIPs; the
 * service.cilium.io/type annotation keeps one type only. */
function frontendsOf(svc: Service, o: CiliumExpectOptions): Frontend[] {
  const a = annotations(svc);
  const none = svc.headless || svc.clusterIP?.toLowerCase() === 'none';
  if (none || 'service.kubernetes.io/headless' in labels(svc)) return [];
  const exposed = a['service.cilium.io/type'];
  const can = (t: string) =>
    !['ClusterIP', 'NodePort', 'LoadBalancer'].includes(exposed ?? '') || exposed === t;
  const on = (ip: string) => familyOn(o, ip);
  const service = `${svc.namespace}/${svc.name}`;
  const etpLocal = svc.externalTrafficPolicy === 'Local';
  const itpLocal = o.internalTrafficPolicy && svc.internalTrafficPolicy === 'Local';
  // one scope, unless exactly one policy is Local: then an internal one for in-cluster clients
  const scopes = etpLocal !== (svc.internalTrafficPolicy === 'Local') ? [false, true] : [false];
  const out: Frontend[] = [];
  const { ranges, ignored } = sourceRangesOf(svc, o.trimmedSourceRanges);
  // the Service's ClientIP affinity, enable-session-affinity on or off (convertService)
  const affinity = svc.sessionAffinity === 'ClientIP' ? svc.sessionAffinityTimeout : undefined;
  const guarded = (type: FrontendType) =>
    o.sourceRangeTypes === 'all' || o.sourceRangeTypes.includes(type);
  // kube-proxy replacement not known: the frontends only it makes are expected, marked so
  const unknown = !knows(o, 'kubeProxyReplacement');
  const kpr = o.kubeProxyReplacement || unknown || o.nodePort === true;
  const onlyKpr = (type: FrontendType) =>
    unknown && type !== 'ClusterIP' && (type === 'NodePort' || !o.nonKprFrontends);
  const add = (
    ip: string,
    port: number,
    p: Service['ports'][number],
    type: FrontendType,
    internal: boolean,
  ) => {
    const localOnly = type === 'ClusterIP' ? itpLocal : internal ? itpLocal : etpLocal;
    out.push({
      ip,
      port,
      protocol: p.protocol.toLowerCase() as CiliumProtocol,
      type,
      service,
      portName: p.name ?? '',
      servicePort: p.port,
      ...(internal ? { internal: true } : {}),
      localOnly,
      ...(affinity !== undefined ? { affinitySeconds: affinity } : {}),
      ...(guarded(type) && ranges.length > 0 ? { sourceRanges: ranges } : {}),
      ...(guarded(type) && ignored.length > 0 ? { ignoredRanges: ignored } : {}),
      ...(onlyKpr(type) ? { kprNotKnown: true } : {}),
      ...(familyNotKnown(o, ip) ? { familyNotKnown: familyNotKnown(o, ip) } : {}),
    });
  };
  if (can('ClusterIP')) {
    const ips =
      svc.clusterIPs.length > 0 ? [...svc.clusterIPs].sort() : svc.clusterIP ? [svc.clusterIP] : [];
    for (const ip of ips.filter(on))
      for (const p of svc.ports) add(ip, p.port, p, 'ClusterIP', false);
  }
  if (!kpr && !o.nonKprFrontends) return out;
  if (kpr && (svc.type === 'NodePort' || svc.type === 'LoadBalancer') && can('NodePort'))
    for (const internal of scopes)
      for (const family of familiesOf(svc, o))
        if (on(family === 'IPv6' ? '::' : '0.0.0.0'))
          for (const p of svc.ports)
            if (p.nodePort)
              add(family === 'IPv6' ? '::' : '0.0.0.0', p.nodePort, p, 'NodePort', internal);
  if (svc.type === 'LoadBalancer' && can('LoadBalancer'))
    for (const ip of loadBalancerIPs(svc, o).filter(on))
      for (const internal of scopes)
        for (const p of svc.ports) add(ip, p.port, p, 'LoadBalancer', internal);
  for (const ip of svc.externalIPs.filter(on))
    for (const p of svc.ports) add(ip, p.port, p, 'ExternalIPs', false);
  return out;
}

/** The LoadBalancer ingress IPs the agent makes frontends of: not one of ipMode Proxy (KEP-1860)
 * where the release heeds it. */
function loadBalancerIPs(svc: Service, o: CiliumExpectOptions): string[] {
  if (!o.ipModeIgnored) return svc.loadBalancerIPs;
  const status = svc.raw['status'] as
    { loadBalancer?: { ingress?: { ip?: string }[] } } | undefined;
  return (status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [canonicalIP(i.ip)] : []));
}

/** spec.ipFamilies, else the families of the cluster IPs. */
function familiesOf(svc: Service, o: CiliumExpectOptions): ('IPv4' | 'IPv6')[] {
  const declared = (svc.raw['spec'] as { ipFamilies?: string[] } | undefined)?.ipFamilies;
  if (declared?.length)
    return declared.filter((f): f is 'IPv4' | 'IPv6' => f === 'IPv4' || f === 'IPv6');
  const ips = svc.clusterIPs.length > 0 ? svc.clusterIPs : svc.clusterIP ? [svc.clusterIP] : [];
  return [
    ...new Set(
      ips
        .filter((ip) => ip !== 'None')
        // getIPFamilies' slip: an IPv6 cluster IP counted as IPv4 (fixed by cilium#46425)
        .map((ip): 'IPv4' | 'IPv6' => (isIPv6(ip) && !o.deducedIPv6AsIPv4 ? 'IPv6' : 'IPv4')),
    ),
  ];
}
