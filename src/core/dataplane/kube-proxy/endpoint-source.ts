// Which object kube-proxy takes a Service's endpoints from, by release: the EndpointSlices from
// 1.19 on Linux (EndpointSliceProxying beta and on by default, pkg/features/kube_features.go at
// v1.19.0), the legacy Endpoints before, unless a feature gate set in the node's configuration
// says otherwise: EndpointSlice at 1.16 and 1.17 (alpha, then beta and off by default; their
// cmd/kube-proxy/app/server.go watches the EndpointSlices when it is on, the Endpoints else),
// EndpointSliceProxying from 1.18 to 1.21 (alpha and off at v1.18.0). Expect, drift and the checks
// all ask here.
import { familyOf } from '../../ipv6.js';
import {
  slicesOf,
  type ClusterView,
  type EndpointSlice,
  type LegacyEndpoints,
  type ServicePort,
} from '../../kube/objects.js';
import type { KubeProxyConfig } from '../../kube/objects/kube-proxy-config.js';
import { categorize, portEndpoints, type ProxyEndpoint } from './endpoints.js';
import type { Release } from './releases.js';

/** The first minor whose kube-proxy proxies from the EndpointSlices by default. */
export const SLICE_PROXYING = 19;

export interface EndpointSource {
  reads: 'EndpointSlices' | 'Endpoints';
  /** The release did not say (kube-proxy's version unknown): what was assumed, in words that
   * follow a clause ("written as v1.37 writes it, ..."). */
  assumed?: string;
  /** The feature gate that decided it, where the node's configuration sets it: "GATE=false in
   * SOURCE". */
  gate?: string;
  /** Why the objects it reads were not captured (facts/captured.ts): its endpoints are not
   * observed. */
  notRead?: string;
}

/** Why each kind of object was not captured, where it was not. */
export type EndpointsUnread = Partial<Record<EndpointSource['reads'], string>>;

/** The gate each release range of kube-proxy reads (from `since`, before `until`): on, it
 * proxies from the EndpointSlices. From 1.22 EndpointSliceProxying is locked on (GA,
 * pkg/features/kube_features.go at v1.22.0; removed at v1.25.0); before 1.16 there is no
 * EndpointSlice. */
const GATES = [
  { gate: 'EndpointSlice', since: 16, until: 18 },
  { gate: 'EndpointSliceProxying', since: 18, until: 22 },
] as const;

export function endpointSource(
  release: Release | undefined,
  config?: Pick<KubeProxyConfig, 'featureGates' | 'source'>,
  unread: EndpointsUnread = {},
): EndpointSource {
  const read = release && GATES.find((g) => release.minor >= g.since && release.minor < g.until);
  const gate = read && config?.featureGates[read.gate];
  const gated = read !== undefined && gate !== undefined;
  const source: EndpointSource = !release
    ? {
        reads: 'EndpointSlices',
        assumed: `its endpoints taken from the EndpointSlices, as kube-proxy 1.${SLICE_PROXYING} and later reads them (older releases read the legacy Endpoints)`,
      }
    : gated
      ? {
          reads: gate ? 'EndpointSlices' : 'Endpoints',
          gate: `${read.gate}=${gate} in ${config!.source}`,
        }
      : { reads: release.minor >= SLICE_PROXYING ? 'EndpointSlices' : 'Endpoints' };
  const notRead = unread[source.reads];
  return notRead ? { ...source, notRead } : source;
}

/** The Service's endpoints as that kube-proxy reads them, as EndpointSlices: the slices, or each
 * legacy Endpoints object made one slice per family (its ready addresses ready, its not-ready
 * ones neither ready nor serving: kube-proxy before 1.19 skips them). */
export function proxiedSlices(view: ClusterView, source: EndpointSource): EndpointSlice[] {
  return source.reads === 'EndpointSlices'
    ? view.endpointSlices
    : view.endpoints.flatMap(slicesOfEndpoints);
}

/** The same for one Service. */
export function proxiedSlicesOf(
  view: ClusterView,
  svc: { namespace: string; name: string },
  source: EndpointSource,
): EndpointSlice[] {
  return source.reads === 'EndpointSlices'
    ? slicesOf(view, svc)
    : endpointsOf(view, svc).flatMap(slicesOfEndpoints);
}

/** One Service port's endpoints on a node, as that node's kube-proxy reads them. */
export interface NodeEndpoints {
  /** Every one on the node, ready or not, each family's: canonical, one copy each. */
  all: ProxyEndpoint[];
  /** Those its Local traffic policy chains hold: ready ones, else serving terminating ones,
   * each family's apart (a proxier per family, CategorizeEndpoints). */
  local: ProxyEndpoint[];
}

/** One Service port's endpoints on `node`, from the object its kube-proxy reads (`source`, by
 * its release): the one rule of which endpoints a node has that the checks ask. */
export function nodeEndpoints(
  view: ClusterView,
  svc: { namespace: string; name: string },
  port: ServicePort,
  node: string,
  source: EndpointSource,
): NodeEndpoints {
  const slices = proxiedSlicesOf(view, svc, source);
  const out: NodeEndpoints = { all: [], local: [] };
  for (const family of ['IPv4', 'IPv6'] as const) {
    const onNode = portEndpoints(slices, port, node, undefined, family).filter((e) => e.local);
    out.all.push(...onNode);
    out.local.push(...categorize(onNode, { cluster: false, local: true }).local);
  }
  return out;
}

/** The Service's legacy Endpoints object (one at most: it bears the Service's name). */
export const endpointsOf = (
  view: Pick<ClusterView, 'endpoints'>,
  svc: { namespace: string; name: string },
): LegacyEndpoints[] =>
  view.endpoints.filter((e) => e.namespace === svc.namespace && e.name === svc.name);

const READY = { ready: true, serving: true, terminating: false };
const NOT_READY = { ready: false, serving: false, terminating: false };

function slicesOfEndpoints(e: LegacyEndpoints): EndpointSlice[] {
  const out: EndpointSlice[] = [];
  e.subsets.forEach((subset, i) => {
    for (const family of ['IPv4', 'IPv6'] as const) {
      const of = (list: typeof subset.addresses, conditions: typeof READY) =>
        list
          .filter((a) => familyOf(a.ip) === family)
          .map((a) => ({
            addresses: [a.ip],
            conditions,
            ...(a.nodeName ? { nodeName: a.nodeName } : {}),
            ...(a.targetRef?.name
              ? { targetRef: { kind: 'Pod', name: a.targetRef.name, namespace: e.namespace } }
              : {}),
          }));
      const endpoints = [
        ...of(subset.addresses, READY),
        ...of(subset.notReadyAddresses, NOT_READY),
      ];
      if (endpoints.length === 0) continue;
      out.push({
        namespace: e.namespace,
        name: `${e.name} (Endpoints, subset ${i + 1})`,
        serviceName: e.name,
        addressType: family,
        ports: subset.ports,
        endpoints,
        raw: e.raw,
      });
    }
  });
  return out;
}

/** What the nodes' kube-proxy reads, in words, where that is not simply the EndpointSlices:
 * the nodes that read the Endpoints, and those whose version is not known. */
export function endpointSourceText(byNode: [string, EndpointSource][]): string | undefined {
  const legacy = byNode.filter(([, s]) => s.reads === 'Endpoints' && !s.gate).map(([n]) => n);
  const assumed = byNode.filter(([, s]) => s.assumed).map(([n]) => n);
  const gated = byNode.filter(([, s]) => s.gate);
  const said: string[] = [];
  if (legacy.length > 0)
    said.push(
      `On ${legacy.join(', ')} kube-proxy is older than 1.${SLICE_PROXYING} and proxies from the legacy Endpoints object, not the EndpointSlices, so its endpoints are taken from the Endpoints`,
    );
  for (const [n, s] of gated)
    said.push(`On ${n} kube-proxy proxies from the ${s.reads} (${s.gate})`);
  if (assumed.length > 0)
    said.push(
      `On ${assumed.join(', ')} kube-proxy's version is not known: its endpoints are taken from the EndpointSlices, as 1.${SLICE_PROXYING} and later reads them (older releases read the Endpoints)`,
    );
  return said.length > 0 ? `${said.join('. ')}.` : undefined;
}
