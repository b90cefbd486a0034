// A Service as kdebug reads it: the API's defaults applied, its addresses as kube-proxy writes
// them, and kube-proxy's name for each of its ports.
import type { KubeObject, ServicePortName } from '../../model.js';
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

export interface ServicePort {
  name: string;
  protocol: Protocol;
  port: number;
  /** A number, or a container port name. */
  targetPort: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface Service {
  namespace: string;
  name: string;
  type: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  /** The primary ClusterIP; "None" for headless Services. */
  clusterIP?: string;
  clusterIPs: string[];
  headless: boolean;
  ports: ServicePort[];
  /** Undefined when the Service has no selector (endpoints managed by hand). */
  selector?: Record<string, string>;
  externalIPs: string[];
  /** status.loadBalancer.ingress IPs kube-proxy programs (ipMode Proxy excluded). */
  loadBalancerIPs: string[];
  loadBalancerSourceRanges: string[];
  externalTrafficPolicy: 'Cluster' | 'Local';
  internalTrafficPolicy: 'Cluster' | 'Local';
  sessionAffinity: 'None' | 'ClientIP';
  sessionAffinityTimeout: number;
  publishNotReadyAddresses: boolean;
  healthCheckNodePort?: number;
  externalName?: string;
  raw: KubeObject;
}

/** A Service address as kube-proxy reads it: "172.30.0.041" is 172.30.0.41 in its rules. */
function serviceIP(x: string): string {
  return x === 'None' ? x : canonicalIP(x);
}

export function toService(raw: KubeObject): Service {
  const spec = obj(raw['spec']);
  const status = obj(raw['status']);
  const clusterIP =
    str(spec['clusterIP']) === undefined ? undefined : serviceIP(str(spec['clusterIP'])!);
  const clusterIPs = strings(spec['clusterIPs']).map(serviceIP);
  const type = (str(spec['type']) ?? 'ClusterIP') as Service['type'];
  const ports: ServicePort[] = arr(spec['ports']).map((p) => {
    const o = obj(p);
    const port = num(o['port']) ?? 0;
    const tp = o['targetPort'];
    return {
      name: str(o['name']) ?? '',
      protocol: protocol(o['protocol']),
      port,
      // an unset targetPort defaults to port; "8080" written as a string is still a number
      targetPort:
        typeof tp === 'number'
          ? tp
          : typeof tp === 'string'
            ? /^\d+$/.test(tp)
              ? Number(tp)
              : tp
            : port,
      nodePort: num(o['nodePort']),
      appProtocol: str(o['appProtocol']),
    };
  });
  const selector =
    spec['selector'] === undefined || spec['selector'] === null
      ? undefined
      : strMap(spec['selector']);
  const affinityTimeout = num(
    obj(obj(spec['sessionAffinityConfig'])['clientIP'])['timeoutSeconds'],
  );
  const lbIngress = arr(obj(status['loadBalancer'])['ingress']).map(obj);
  return {
    namespace: namespaceOf(raw) || 'default',
    name: nameOf(raw),
    type,
    clusterIP,
    clusterIPs:
      clusterIPs.length > 0 ? clusterIPs : clusterIP && clusterIP !== 'None' ? [clusterIP] : [],
    headless: clusterIP === 'None',
    ports,
    selector: selector && Object.keys(selector).length > 0 ? selector : undefined,
    externalIPs: strings(spec['externalIPs']).map(serviceIP),
    loadBalancerIPs: lbIngress
      .filter((i) => str(i['ipMode']) !== 'Proxy')
      .map((i) => str(i['ip']))
      .filter((x): x is string => !!x)
      .map(serviceIP),
    loadBalancerSourceRanges: strings(spec['loadBalancerSourceRanges']).map((x) => x.trim()),
    externalTrafficPolicy: str(spec['externalTrafficPolicy']) === 'Local' ? 'Local' : 'Cluster',
    internalTrafficPolicy: str(spec['internalTrafficPolicy']) === 'Local' ? 'Local' : 'Cluster',
    sessionAffinity: str(spec['sessionAffinity']) === 'ClientIP' ? 'ClientIP' : 'None',
    sessionAffinityTimeout: affinityTimeout ?? 10800,
    publishNotReadyAddresses: spec['publishNotReadyAddresses'] === true,
    healthCheckNodePort: num(spec['healthCheckNodePort']),
    externalName: str(spec['externalName']),
    raw,
  };
}

/** kube-proxy's ServicePortName: "ns/name:port", or "ns/name" for an unnamed port. */
export function servicePortName(
  svc: { namespace: string; name: string },
  port: { name: string },
): ServicePortName {
  return port.name ? `${svc.namespace}/${svc.name}:${port.name}` : `${svc.namespace}/${svc.name}`;
}
