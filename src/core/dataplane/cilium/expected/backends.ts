// The backends the agent on a node selects for each frontend, modelled on Cilium's load-balancer
// control plane: reflectors/conversions.go's convertEndpoints (each EndpointSlice address and
// port, its state) and writer.DefaultSelectBackends (protocol, family, port name, topology).
import type { EndpointSlice, Service } from '../../../kube/objects.js';
import { familyOf } from '../../../ipv6.js';
import { familyOn } from './families.js';
import type { BackendState, CiliumProtocol } from '../read/listing.js';
import type {
  CiliumExpectOptions,
  CiliumNode,
  ExpectedBackend,
  ExpectedFrontend,
} from './expected.js';
import { annotations } from './service-meta.js';

const isIPv6 = (ip: string) => familyOf(ip) === 'IPv6';

/** The endpoint Cilium's Ingress and Gateway API controllers put in their Services' slices to
 * make older agents program them. */
const INGRESS_DUMMY = { ip: '192.192.192.192', port: 9999 };

interface Backend extends ExpectedBackend {
  portNames: string[];
  zone?: string;
  forZones?: string[];
}

type Conditions = EndpointSlice['endpoints'][number]['conditions'];

/** convertEndpoints' state (1.18.5 on): ready is active; terminating and serving is terminating;
 * terminating and not serving stays, unused; otherwise maintenance. */
function stateOf(c: Conditions): BackendState {
  if (c.ready) return 'active';
  if (c.terminating) return c.serving ? 'terminating' : 'terminating-not-serving';
  return 'maintenance';
}

/** Before 1.18.5 (cilium#42708) only a serving endpoint (serving unset: as ready) is a backend:
 * terminating where it is not ready and terminates, else active. */
function servingStateOf(c: Conditions, serving: boolean | undefined): BackendState | undefined {
  if (c.ready) return 'active';
  if (!(serving ?? false)) return undefined;
  return c.terminating ? 'terminating' : 'active';
}

/** Cilium's DefaultBackendWeight (pkg/loadbalancer/loadbalancer.go). */
export const DEFAULT_BACKEND_WEIGHT = 100;

/** The weight of a slice's backends (1.20's ParseEndpointSliceV1 and convertEndpoints): its
 * service.cilium.io/weight where that is a 16-bit number, 0 putting them in maintenance; one that
 * is not is ignored, as is the annotation before 1.20: then 100. */
function weightOf(slice: EndpointSlice, o: CiliumExpectOptions): number {
  const value = (slice.raw.metadata as { annotations?: Record<string, string> } | undefined)
    ?.annotations?.['service.cilium.io/weight'];
  // strconv.ParseUint(value, 10, 16): decimal digits only, at most 65535
  if (!o.sliceWeights || value === undefined || !/^[0-9]+$/.test(value))
    return DEFAULT_BACKEND_WEIGHT;
  const n = Number(value);
  return n <= 0xffff ? n : DEFAULT_BACKEND_WEIGHT;
}

/** convertEndpoints: each address and port of the Service's EndpointSlices, one backend per
 * address and port (several slices naming one address are one backend), in a state from its
 * conditions: ready is active; terminating and serving is terminating; terminating and not
 * serving stays, unused; otherwise maintenance; and from 1.20 maintenance in a slice weighted 0;
 * each with its slice's weight. */
export function backendsOf(slices: EndpointSlice[], o: CiliumExpectOptions): Backend[] {
  const byKey = new Map<string, Backend>();
  for (const slice of slices) {
    if (slice.addressType === 'FQDN') continue;
    const weight = weightOf(slice, o);
    const drained = weight === 0;
    const raw =
      (slice.raw['endpoints'] as
        | {
            hints?: { forZones?: { name?: string }[] };
            deprecatedTopology?: Record<string, string>;
            conditions?: { serving?: boolean };
          }[]
        | undefined) ?? [];
    slice.endpoints.forEach((ep, i) => {
      const state = drained
        ? 'maintenance'
        : o.servingEndpointsOnly
          ? servingStateOf(ep.conditions, raw[i]?.conditions?.serving)
          : stateOf(ep.conditions);
      if (state === undefined) return;
      const forZones = raw[i]?.hints?.forZones?.map((z) => z.name ?? '');
      // a slice written through discovery/v1beta1 may name its node in deprecatedTopology only,
      // which the agent reads as its node name (ParseEndpointSliceV1)
      const nodeName = ep.nodeName ?? raw[i]?.deprecatedTopology?.['kubernetes.io/hostname'];
      for (const ip of ep.addresses) {
        if (!familyOn(o, ip)) continue;
        for (const p of slice.ports) {
          if (p.port === undefined) continue;
          // the dummy endpoint Cilium's Ingress and Gateway API controllers give their Services
          // is no backend from 1.18 (reflectors/conversions.go, isIngressDummyEndpoint)
          if (ip === INGRESS_DUMMY.ip && p.port === INGRESS_DUMMY.port && !o.ingressDummyBackend)
            continue;
          const protocol = p.protocol.toLowerCase() as CiliumProtocol;
          const key = `${ip} ${p.port} ${protocol}`;
          const known = byKey.get(key);
          if (known) {
            known.portNames.push(p.name);
            continue;
          }
          byKey.set(key, {
            ip,
            port: p.port,
            protocol,
            state,
            weight,
            portNames: [p.name],
            ...(nodeName ? { nodeName } : {}),
            ...(ep.targetRef?.name
              ? {
                  target: `${ep.targetRef.kind ?? 'Pod'} ${ep.targetRef.namespace ?? slice.namespace}/${ep.targetRef.name}`,
                }
              : {}),
            ...(ep.zone ? { zone: ep.zone } : {}),
            ...(forZones ? { forZones } : {}),
          });
        }
      }
    });
  }
  return [...byKey.values()];
}

/** DefaultSelectBackends: the frontend's protocol and family, its port name, this node's own
 * backends under a Local policy; then the Service's topology preference where service topology
 * is on: this node's backends (PreferSameNode, 1.20) or the zone's hints, each only where the
 * safeguards find a backend for it. */
export function selected(
  fe: Omit<ExpectedFrontend, 'backends'>,
  svc: Service,
  backends: Backend[],
  node: CiliumNode,
  o: CiliumExpectOptions,
): ExpectedBackend[] {
  const v6 = isIPv6(fe.ip);
  const matches = (b: Backend) =>
    b.protocol === fe.protocol &&
    isIPv6(b.ip) === v6 &&
    (fe.portName === '' || b.portNames.every((n) => n === '') || b.portNames.includes(fe.portName));
  const local = (b: Backend) => !fe.localOnly || !b.nodeName || b.nodeName === node.name;
  const candidates = o.topologyCandidates ?? 'every';
  const candidate = (b: Backend) =>
    candidates === 'every' ||
    (candidates === 'active'
      ? b.state === 'active'
      : b.state !== 'terminating' && b.state !== 'terminating-not-serving');
  const strip = ({ portNames: _n, zone: _z, forZones: _f, ...b }: Backend): ExpectedBackend => b;
  const preference = o.serviceTopology ? topologyPreference(svc, o) : undefined;
  if (preference === 'node') {
    const same = backends.filter((b) => b.nodeName === node.name && matches(b) && candidate(b));
    if (same.length > 0) return same.map(strip);
  }
  const zone = node.labels['topology.kubernetes.io/zone'];
  // the safeguards weigh every backend of the Service before 1.20, the frontend's candidates
  // from 1.20; 1.18.0 had none (zoneHintsFallback off): hints were followed as they were
  const weighed =
    candidates === 'every'
      ? backends
      : backends.filter((b) => matches(b) && local(b) && candidate(b));
  const useHints =
    preference === 'zone' &&
    zone !== undefined &&
    (o.zoneHintsFallback
      ? weighed.every((b) => (b.forZones?.length ?? 0) > 0) &&
        weighed.some((b) => b.forZones!.includes(zone))
      : true);
  return backends
    .filter((b) => matches(b) && local(b))
    .filter(
      (b) => !useHints || (b.forZones?.length ? b.forZones.includes(zone!) : !o.zoneHintsFallback),
    )
    .map(strip);
}

/** The Service's topology preference as the agent reads it: none under an internal traffic
 * policy Local; the topology annotations (the deprecated one first) or trafficDistribution
 * PreferClose are the zone's; from 1.20 trafficDistribution comes first, PreferSameZone is the
 * zone's too and PreferSameNode the node's. */
function topologyPreference(svc: Service, o: CiliumExpectOptions): 'zone' | 'node' | undefined {
  if (o.internalTrafficPolicy && svc.internalTrafficPolicy === 'Local') return undefined;
  const a = annotations(svc);
  const value =
    a['service.kubernetes.io/topology-aware-hints'] ??
    a['service.kubernetes.io/topology-mode'] ??
    '';
  const annotated = !['', 'disabled', 'Disabled'].includes(value);
  const distribution = (svc.raw['spec'] as { trafficDistribution?: string } | undefined)
    ?.trafficDistribution;
  if ((o.trafficDistributions ?? 'prefer-close') === 'prefer-close')
    return annotated || distribution === 'PreferClose' ? 'zone' : undefined;
  if (distribution === 'PreferSameNode') return 'node';
  if (distribution === 'PreferSameZone' || distribution === 'PreferClose') return 'zone';
  return annotated ? 'zone' : undefined;
}

/** The backends that take new connections: the active ones, else the terminating (serving)
 * ones; quarantined, maintenance and terminating-not-serving backends only keep their own. */
export function inRotation<B extends { state?: BackendState; preferred?: boolean }>(
  backends: readonly B[],
): B[] {
  const active = backends.filter((b) => (b.state ?? 'active') === 'active');
  // cluster-mesh affinity: the agent puts only the preferred active backends in rotation
  const preferred = active.filter((b) => b.preferred);
  if (preferred.length > 0) return preferred;
  return active.length > 0 ? active : backends.filter((b) => b.state === 'terminating');
}
