// Builders for the API objects of rule tests: a Service, its EndpointSlice, a Node and the
// kube-proxy ConfigMap, as the API returns them, with only what a test cares about to pass in.
import type { KubeObject } from '../../src/core/model.js';

type Json = Record<string, unknown>;

export interface ServiceOptions {
  type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
  clusterIP?: string;
  /** [name, port, protocol?, nodePort?] per port. */
  ports?: [string, number, string?, number?][];
  externalIPs?: string[];
  loadBalancerIPs?: string[];
  sourceRanges?: string[];
  externalTrafficPolicy?: 'Cluster' | 'Local';
  internalTrafficPolicy?: 'Cluster' | 'Local';
  affinity?: number;
  healthCheckNodePort?: number;
}

/** "ns1/svc1" with the options given. */
export function aService(id: string, o: ServiceOptions = {}): KubeObject {
  const [namespace, name] = id.split('/');
  const spec: Json = {
    type: o.type ?? 'ClusterIP',
    clusterIP: o.clusterIP ?? '172.30.0.41',
    ports: (o.ports ?? [['p80', 80]]).map(([n, port, protocol, nodePort]) => ({
      name: n,
      port,
      protocol: protocol ?? 'TCP',
      targetPort: port,
      ...(nodePort ? { nodePort } : {}),
    })),
    selector: { app: name },
  };
  if (o.externalIPs) spec['externalIPs'] = o.externalIPs;
  if (o.sourceRanges) spec['loadBalancerSourceRanges'] = o.sourceRanges;
  if (o.externalTrafficPolicy) spec['externalTrafficPolicy'] = o.externalTrafficPolicy;
  if (o.internalTrafficPolicy) spec['internalTrafficPolicy'] = o.internalTrafficPolicy;
  if (o.healthCheckNodePort) spec['healthCheckNodePort'] = o.healthCheckNodePort;
  if (o.affinity !== undefined) {
    spec['sessionAffinity'] = 'ClientIP';
    spec['sessionAffinityConfig'] = { clientIP: { timeoutSeconds: o.affinity } };
  }
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec,
    status: { loadBalancer: { ingress: (o.loadBalancerIPs ?? []).map((ip) => ({ ip })) } },
  };
}

export interface EndpointOptions {
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  pod?: string;
}

/** One endpoint: "10.180.0.1" or ["10.180.0.1", { node: 'test-node' }]. */
export type EndpointSpec = string | [string, EndpointOptions];

/** The EndpointSlice of "ns1/svc1": its ports ([name, port, protocol?]) and endpoints. */
export function anEndpointSlice(
  id: string,
  endpoints: EndpointSpec[],
  ports: [string, number, string?][] = [['p80', 80]],
  suffix = 'abcde',
): KubeObject {
  const [namespace, name] = id.split('/');
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${name}-${suffix}`,
      namespace,
      labels: { 'kubernetes.io/service-name': name! },
    },
    addressType: 'IPv4',
    ports: ports.map(([n, port, protocol]) => ({ name: n, port, protocol: protocol ?? 'TCP' })),
    endpoints: endpoints.map((spec) => {
      const [ip, o] = typeof spec === 'string' ? [spec, {}] : spec;
      const conditions: Json = {};
      if (o.ready !== undefined) conditions['ready'] = o.ready;
      if (o.serving !== undefined) conditions['serving'] = o.serving;
      if (o.terminating !== undefined) conditions['terminating'] = o.terminating;
      return {
        addresses: [ip],
        conditions,
        ...(o.node ? { nodeName: o.node } : {}),
        ...(o.pod ? { targetRef: { kind: 'Pod', name: o.pod, namespace } } : {}),
      };
    }),
  };
}

export function aNode(name: string, ip: string, podCIDR?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: podCIDR ? { podCIDR, podCIDRs: [podCIDR] } : {},
    status: { addresses: [{ type: 'InternalIP', address: ip }] },
  };
}

/** The kube-proxy ConfigMap with a config.conf (YAML) made of these lines. */
export function aKubeProxyConfig(conf: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-proxy', namespace: 'kube-system' },
    data: { 'config.conf': `kind: KubeProxyConfiguration\n${conf}` },
  };
}

/** A Cilium agent Pod on `node` (the cilium DaemonSet's label, its agent container), running. */
export function aCiliumAgent(node: string, image = 'quay.io/cilium/cilium:v1.18.6'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `cilium-${node}`,
      namespace: 'kube-system',
      labels: { 'k8s-app': 'cilium' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'cilium', controller: true },
      ],
    },
    spec: { nodeName: node, containers: [{ name: 'cilium-agent', image }] },
    status: {
      phase: 'Running',
      containerStatuses: [{ name: 'cilium-agent', state: { running: {} } }],
    },
  };
}

/** Cilium's ConfigMap: kube-proxy replacement on, IPv6 off (the agent's default), and `data`. */
export function aCiliumConfig(data: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cilium-config', namespace: 'kube-system' },
    data: { 'kube-proxy-replacement': 'true', 'enable-ipv6': 'false', ...data },
  };
}
