// Builders for raw API objects, as `kubectl get -o json` prints them, and a small cluster made
// of them. Objects carry fields client-node's typed models would lose (an unknown spec field,
// RFC 3339 timestamps as strings) so tests can see that kdebug keeps them.
//
// IP conventions: Pod CIDR 10.244.0.0/16 (node-a 10.244.1.0/24, node-b 10.244.2.0/24),
// Service CIDR 10.96.0.0/12 (kube-dns 10.96.0.10), node IPs 192.0.2.10 (node-a), 192.0.2.11 (node-b).
import type { KubeObject } from '../../src/core/model.js';

const T = '2024-05-01T10:00:00Z';
let rv = 100;
const meta = (name: string, namespace?: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: `uid-${namespace ?? ''}-${name}`,
  resourceVersion: String(rv++),
  creationTimestamp: T,
  ...extra,
});

export function aService(
  name: string,
  namespace = 'default',
  o: { selector?: Record<string, string>; clusterIP?: string } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(name, namespace, { labels: { app: name } }),
    spec: {
      clusterIP: o.clusterIP ?? '10.96.0.20',
      clusterIPs: [o.clusterIP ?? '10.96.0.20'],
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }],
      ...(o.selector === undefined
        ? { selector: { app: name } }
        : Object.keys(o.selector).length
          ? { selector: o.selector }
          : {}),
      type: 'ClusterIP',
      // a field from a future API version: typed clients drop it
      trafficDistribution: 'PreferClose',
      futureField: { keep: true },
    },
    status: { loadBalancer: {} },
  };
}

export function aPod(
  name: string,
  namespace = 'default',
  o: { labels?: Record<string, string>; node?: string; ip?: string; containers?: string[] } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(name, namespace, { labels: o.labels ?? { app: 'web' } }),
    spec: {
      nodeName: o.node ?? 'node-a',
      containers: (o.containers ?? ['app']).map((c) => ({
        name: c,
        image: 'registry.example/app:1.0',
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
      })),
    },
    status: {
      phase: 'Running',
      podIP: o.ip ?? '10.244.1.5',
      podIPs: [{ ip: o.ip ?? '10.244.1.5' }],
      hostIP: '192.0.2.10',
      startTime: T,
      conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: T }],
    },
  };
}

export function anEndpointSlice(
  service: string,
  namespace: string,
  endpoints: { ip: string; pod: string; node?: string; ready?: boolean }[],
  name = `${service}-abc12`,
): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: meta(name, namespace, {
      labels: {
        'kubernetes.io/service-name': service,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
      generateName: `${service}-`,
    }),
    addressType: 'IPv4',
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true, serving: e.ready ?? true, terminating: false },
      nodeName: e.node ?? 'node-a',
      targetRef: { kind: 'Pod', name: e.pod, namespace, uid: `uid-${namespace}-${e.pod}` },
    })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

export function anEndpoints(
  service: string,
  namespace: string,
  addresses: { ip: string; pod: string }[],
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: meta(service, namespace),
    subsets: [
      {
        addresses: addresses.map((a) => ({
          ip: a.ip,
          nodeName: 'node-a',
          targetRef: { kind: 'Pod', name: a.pod, namespace },
        })),
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ],
  };
}

export function aNode(name: string, ip: string, podCIDR: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: meta(name, undefined, { labels: { 'kubernetes.io/hostname': name } }),
    spec: { podCIDR, podCIDRs: [podCIDR] },
    status: {
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          lastHeartbeatTime: T,
          lastTransitionTime: T,
          reason: 'KubeletReady',
        },
      ],
    },
  };
}

export function aConfigMap(
  name: string,
  namespace: string,
  data: Record<string, string>,
): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(name, namespace), data };
}

export function aDaemonSet(
  name: string,
  namespace: string,
  matchLabels: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: meta(name, namespace, { generation: 1 }),
    spec: {
      selector: { matchLabels },
      template: {
        metadata: { labels: matchLabels },
        spec: { containers: [{ name, image: 'registry.k8s.io/kube-proxy:v1.31.0' }] },
      },
    },
    status: { desiredNumberScheduled: 2, numberReady: 2 },
  };
}

export function aNetworkPolicy(name: string, namespace: string): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta(name, namespace),
    spec: { podSelector: {}, policyTypes: ['Ingress'] },
  };
}

export function aSecret(name: string, namespace: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: meta(name, namespace),
    type: 'Opaque',
    data: { password: 'aHVudGVyMg==' },
  };
}

/** Everything collect should read for default/web, and nothing it should not. */
export function webCluster(): { relevant: KubeObject[]; irrelevant: KubeObject[] } {
  const relevant = [
    aService('web', 'default'),
    anEndpointSlice('web', 'default', [
      { ip: '10.244.1.5', pod: 'web-1' },
      { ip: '10.244.2.6', pod: 'web-2', node: 'node-b' },
      // still listed, but its Pod no longer matches the selector
      { ip: '10.244.2.7', pod: 'old-web-0', node: 'node-b', ready: false },
    ]),
    anEndpoints('web', 'default', [
      { ip: '10.244.1.5', pod: 'web-1' },
      { ip: '10.244.2.6', pod: 'web-2' },
    ]),
    aPod('web-1', 'default', { ip: '10.244.1.5' }),
    aPod('web-2', 'default', { ip: '10.244.2.6', node: 'node-b' }),
    aPod('old-web-0', 'default', { ip: '10.244.2.7', node: 'node-b', labels: { app: 'old-web' } }),
    aNode('node-a', '192.0.2.10', '10.244.1.0/24'),
    aNode('node-b', '192.0.2.11', '10.244.2.0/24'),
    aConfigMap('kube-proxy', 'kube-system', {
      'config.conf':
        'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\nclusterCIDR: 10.244.0.0/16\n',
    }),
    aDaemonSet('kube-proxy', 'kube-system', { 'k8s-app': 'kube-proxy' }),
    aPod('kube-proxy-7xk2p', 'kube-system', {
      labels: { 'k8s-app': 'kube-proxy' },
      ip: '192.0.2.10',
    }),
    aPod('kube-proxy-9fj3q', 'kube-system', {
      labels: { 'k8s-app': 'kube-proxy' },
      ip: '192.0.2.11',
      node: 'node-b',
    }),
    aService('kube-dns', 'kube-system', {
      selector: { 'k8s-app': 'kube-dns' },
      clusterIP: '10.96.0.10',
    }),
    anEndpointSlice('kube-dns', 'kube-system', [
      { ip: '10.244.1.2', pod: 'coredns-5d78c9869d-abcde' },
    ]),
    aPod('coredns-5d78c9869d-abcde', 'kube-system', {
      labels: { 'k8s-app': 'kube-dns' },
      ip: '10.244.1.2',
    }),
    aConfigMap('coredns', 'kube-system', {
      Corefile:
        '.:53 {\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n    forward . /etc/resolv.conf\n}\n',
    }),
    aNetworkPolicy('default-deny', 'default'),
  ];
  const irrelevant = [
    aPod('batch-job-x', 'default', { labels: { app: 'batch' }, ip: '10.244.1.9' }),
    aService('webapp', 'default', { clusterIP: '10.96.0.21' }),
    aService('web', 'prod', { clusterIP: '10.96.0.22' }),
    aService('payments', 'prod', { clusterIP: '10.96.0.23' }),
    aSecret('web-tls', 'default'),
    aConfigMap('web-settings', 'default', { LOG_LEVEL: 'debug' }),
    aNetworkPolicy('prod-deny', 'prod'),
  ];
  return { relevant, irrelevant };
}
