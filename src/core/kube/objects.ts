// Raw API JSON -> the model kdebug reasons over. Lenient on shape (objects come from real
// clusters and hand-made snapshots), strict on meaning (defaults as the API server applies them).
// Each kind's reader is in objects/; here the whole cluster view, typed and indexed.
import type { KubeObject } from '../model.js';
import { canonicalCidrOf } from '../ipv6.js';
import { kindOf, obj, strings } from './objects/fields.js';
import { toService, type Service } from './objects/service.js';
import {
  toEndpointSlice,
  toLegacyEndpoints,
  type EndpointSlice,
  type LegacyEndpoints,
} from './objects/endpoints.js';
import { toPod, type Pod } from './objects/pod.js';
import { toNode, type Node } from './objects/node.js';
import { toConfigMap, type ConfigMap } from './objects/kube-proxy-config.js';

// every kind's reader is imported from here by most of kdebug: one path for the whole model
export { kindOf, nameOf, namespaceOf, type Protocol } from './objects/fields.js';
export { servicePortName, toService, type Service, type ServicePort } from './objects/service.js';
export {
  toEndpointSlice,
  toLegacyEndpoints,
  type EndpointConditions,
  type EndpointSlice,
  type LegacyEndpoints,
  type SliceEndpoint,
} from './objects/endpoints.js';
export {
  isKubeProxyPod,
  toPod,
  type Container,
  type ContainerPort,
  type ContainerProbe,
  type ContainerStatus,
  type HostPort,
  type Pod,
  type PodCondition,
} from './objects/pod.js';
export { isWindows, toNode, type Node, type NodeAddress } from './objects/node.js';
export {
  configFromConfigz,
  configMapsMounted,
  configTells,
  DEFAULT_KUBE_PROXY_CONFIG,
  DEFAULT_MODE,
  kubeProxyConfigOf,
  kubeProxyMounts,
  toConfigMap,
  toKubeProxyConfig,
  type ConfigMap,
  type KubeProxyConfig,
} from './objects/kube-proxy-config.js';

/** Every object of a Facts list, typed and indexed. */
export interface ClusterView {
  services: Service[];
  endpointSlices: EndpointSlice[];
  endpoints: LegacyEndpoints[];
  pods: Pod[];
  nodes: Node[];
  configMaps: ConfigMap[];
  networkPolicies: KubeObject[];
  daemonSets: KubeObject[];
  other: KubeObject[];
}

/** Flattens `List` objects (as `kubectl get -o json` prints them) into their items. */
export function flattenObjects(objects: KubeObject[]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const o of objects) {
    if (Array.isArray(o['items'])) {
      // list items carry no kind: take it from "ServiceList" etc.
      const itemKind =
        kindOf(o).endsWith('List') && kindOf(o) !== 'List' ? kindOf(o).slice(0, -4) : undefined;
      for (const item of o['items'] as KubeObject[]) {
        out.push(
          ...flattenObjects([
            item.kind || !itemKind ? item : { kind: itemKind, apiVersion: o.apiVersion, ...item },
          ]),
        );
      }
    } else out.push(o);
  }
  return out;
}

export function clusterView(objects: KubeObject[]): ClusterView {
  const v: ClusterView = {
    services: [],
    endpointSlices: [],
    endpoints: [],
    pods: [],
    nodes: [],
    configMaps: [],
    networkPolicies: [],
    daemonSets: [],
    other: [],
  };
  for (const o of flattenObjects(objects)) {
    switch (kindOf(o)) {
      case 'Service':
        v.services.push(toService(o));
        break;
      case 'EndpointSlice':
        v.endpointSlices.push(toEndpointSlice(o));
        break;
      case 'Endpoints':
        v.endpoints.push(toLegacyEndpoints(o));
        break;
      case 'Pod':
        v.pods.push(toPod(o));
        break;
      case 'Node':
        v.nodes.push(toNode(o));
        break;
      case 'ConfigMap':
        v.configMaps.push(toConfigMap(o));
        break;
      case 'NetworkPolicy':
        v.networkPolicies.push(o);
        break;
      case 'DaemonSet':
        v.daemonSets.push(o);
        break;
      default:
        v.other.push(o);
    }
  }
  return v;
}

/** The cluster's ServiceCIDRs (networking.k8s.io ServiceCIDR spec.cidrs), sorted: kube-proxy
 * in nftables mode drops traffic to the addresses in them that no Service holds. */
export function serviceCIDRs(view: Pick<ClusterView, 'other'>): string[] {
  const out = new Set<string>();
  for (const o of view.other)
    if (kindOf(o) === 'ServiceCIDR')
      for (const c of strings(obj(o['spec'])['cidrs'])) {
        const cidr = canonicalCidrOf(c);
        if (cidr) out.add(cidr);
      }
  return [...out].sort();
}

/** Does the label selector match these labels (equality-based, as Service selectors are)? */
export function selectorMatches(
  selector: Record<string, string>,
  labels: Record<string, string>,
): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

export function findService(
  view: ClusterView,
  namespace: string,
  name: string,
): Service | undefined {
  return view.services.find((s) => s.namespace === namespace && s.name === name);
}

export function slicesOf(
  view: ClusterView,
  svc: { namespace: string; name: string },
): EndpointSlice[] {
  return view.endpointSlices.filter(
    (s) => s.namespace === svc.namespace && s.serviceName === svc.name,
  );
}
