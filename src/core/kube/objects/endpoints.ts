// A Service's endpoints as kdebug reads them: EndpointSlices (their endpoints typed on first use)
// and the legacy v1 Endpoints.
import type { KubeObject } from '../../model.js';
import { canonicalIP } from '../../ipv4.js';
import {
  arr,
  nameOf,
  namespaceOf,
  num,
  obj,
  protocol,
  str,
  strings,
  strMap,
  type Protocol,
} from './fields.js';

export interface EndpointConditions {
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions: EndpointConditions;
  nodeName?: string;
  hostname?: string;
  zone?: string;
  targetRef?: { kind?: string; name?: string; namespace?: string };
}

export interface EndpointSlice {
  namespace: string;
  name: string;
  /** The kubernetes.io/service-name label. */
  serviceName?: string;
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  ports: { name: string; port?: number; protocol: Protocol; appProtocol?: string }[];
  endpoints: SliceEndpoint[];
  managedBy?: string;
  raw: KubeObject;
}

/** The legacy v1 Endpoints object. */
export interface LegacyEndpoints {
  namespace: string;
  name: string;
  subsets: {
    addresses: { ip: string; nodeName?: string; targetRef?: { name?: string } }[];
    notReadyAddresses: { ip: string; nodeName?: string; targetRef?: { name?: string } }[];
    ports: { name: string; port: number; protocol: Protocol }[];
  }[];
  raw: KubeObject;
}

// a big cluster's 100,000 endpoints share these eight read-only objects
const CONDITIONS: readonly EndpointConditions[] = Array.from({ length: 8 }, (_, k) =>
  Object.freeze({ ready: (k & 1) !== 0, serving: (k & 2) !== 0, terminating: (k & 4) !== 0 }),
);

export function toEndpointSlice(raw: KubeObject): EndpointSlice {
  const labels = raw.metadata?.labels ?? {};
  const at = str(raw['addressType']);
  let endpoints: SliceEndpoint[] | undefined;
  return {
    namespace: namespaceOf(raw) || 'default',
    name: nameOf(raw),
    serviceName: labels['kubernetes.io/service-name'],
    addressType: at === 'IPv6' || at === 'FQDN' ? at : 'IPv4',
    ports: arr(raw['ports']).map((p) => {
      const o = obj(p);
      return {
        name: str(o['name']) ?? '',
        port: num(o['port']),
        protocol: protocol(o['protocol']),
        appProtocol: str(o['appProtocol']),
      };
    }),
    // typed on first use: one Service's answer on a big cluster reads few of the slices
    get endpoints() {
      return (endpoints ??= arr(raw['endpoints']).map(sliceEndpoint));
    },
    managedBy: labels['endpointslice.kubernetes.io/managed-by'],
    raw,
  };
}

function sliceEndpoint(e: unknown): SliceEndpoint {
  const o = obj(e);
  const c = obj(o['conditions']);
  const ref = obj(o['targetRef']);
  return {
    addresses: strings(o['addresses']).map(canonicalIP),
    // nil ready/serving mean true; nil terminating means false (discovery/v1)
    conditions:
      CONDITIONS[
        (c['ready'] !== false ? 1 : 0) |
          (c['serving'] !== false ? 2 : 0) |
          (c['terminating'] === true ? 4 : 0)
      ]!,
    nodeName: str(o['nodeName']) ?? strMap(o['topology'])['kubernetes.io/hostname'],
    hostname: str(o['hostname']),
    zone: str(o['zone']),
    targetRef: o['targetRef']
      ? { kind: str(ref['kind']), name: str(ref['name']), namespace: str(ref['namespace']) }
      : undefined,
  };
}

export function toLegacyEndpoints(raw: KubeObject): LegacyEndpoints {
  const addr = (a: unknown) => {
    const o = obj(a);
    return {
      ip: str(o['ip']) ?? '',
      nodeName: str(o['nodeName']),
      targetRef: o['targetRef'] ? { name: str(obj(o['targetRef'])['name']) } : undefined,
    };
  };
  return {
    namespace: namespaceOf(raw) || 'default',
    name: nameOf(raw),
    subsets: arr(raw['subsets']).map((s) => {
      const o = obj(s);
      return {
        addresses: arr(o['addresses']).map(addr),
        notReadyAddresses: arr(o['notReadyAddresses']).map(addr),
        ports: arr(o['ports']).map((p) => {
          const q = obj(p);
          return {
            name: str(q['name']) ?? '',
            port: num(q['port']) ?? 0,
            protocol: protocol(q['protocol']),
          };
        }),
      };
    }),
    raw,
  };
}
