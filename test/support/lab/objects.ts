// The Kubernetes objects of a lab, as the fake API server serves them: a Node per lab node, the
// Services with their EndpointSlices, the Pods, kube-proxy (DaemonSet, a Pod per node, its
// ConfigMap). Addresses are the lab's (test/support/lab/lab.ts), so what the API says and what
// the lab's kernel does agree.
import type { KubeObject } from '../../../src/core/model.js';
import type { LabPod, LabTopology } from './lab.js';

const T = '2024-05-01T10:00:00Z';
const running = (containers: string[], hostIP: string, podIP: string) => ({
  phase: 'Running',
  hostIP,
  podIP,
  podIPs: [{ ip: podIP }],
  startTime: T,
  conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
    type,
    status: 'True',
    lastTransitionTime: T,
  })),
  containerStatuses: containers.map((name) => ({
    name,
    ready: true,
    restartCount: 0,
    started: true,
    state: { running: { startedAt: T } },
  })),
});

/** The labels the lab's Services select: nginx Pods by app=nginx, the DNS Pod by k8s-app=kube-dns. */
const labelsOf = (p: LabPod): Record<string, string> =>
  p.app === 'http' ? { app: 'nginx' } : { 'k8s-app': 'kube-dns' };

export function labObjects(t: LabTopology): KubeObject[] {
  const nodeIP = (name: string) => t.nodes.find((n) => n.name === name)!.ip;
  const nodes = t.nodes.map((n) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: n.name, labels: { 'kubernetes.io/hostname': n.name } },
    spec: { podCIDR: n.podCIDR, podCIDRs: [n.podCIDR] },
    status: {
      addresses: [
        { type: 'InternalIP', address: n.ip },
        { type: 'Hostname', address: n.name },
      ],
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
    },
  }));
  const pods = t.pods.map((p) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: p.name,
      namespace: p.namespace,
      labels: labelsOf(p),
      // the ReplicaSet: the Pod name without its random suffix
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: p.name.replace(/-[^-]+$/, '') },
      ],
    },
    spec: {
      nodeName: p.node,
      containers: [
        {
          name: p.app === 'http' ? 'nginx' : 'coredns',
          image: p.app === 'http' ? 'nginx:1.27' : 'registry.k8s.io/coredns/coredns:v1.11.1',
          ports: [
            {
              name: p.app === 'http' ? 'http' : 'dns',
              containerPort: p.port,
              protocol: p.app === 'http' ? 'TCP' : 'UDP',
            },
          ],
        },
      ],
    },
    status: running([p.app === 'http' ? 'nginx' : 'coredns'], nodeIP(p.node), p.ip),
  }));
  const kubeProxyPods = t.nodes.map((n, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `kube-proxy-${['x7k2p', 'q4n8d', 'm2v9z', 'b5h6t'][i] ?? `n${i}abc`}`,
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-proxy' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'kube-proxy' }],
    },
    spec: {
      nodeName: n.name,
      hostNetwork: true,
      containers: [{ name: 'kube-proxy', image: 'registry.k8s.io/kube-proxy:v1.30.2' }],
    },
    status: running(['kube-proxy'], n.ip, n.ip),
  }));
  const services = t.services.flatMap((s) => {
    const backends = t.pods.filter((p) =>
      s.endpoints.some((e) => e.ip === p.ip && e.port === p.port),
    );
    const proto = s.protocol.toUpperCase();
    return [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: s.name, namespace: s.namespace },
        spec: {
          type: 'ClusterIP',
          clusterIP: s.clusterIP,
          clusterIPs: [s.clusterIP],
          selector: backends[0] ? labelsOf(backends[0]) : undefined,
          ports: [
            { name: s.portName, port: s.port, targetPort: backends[0]?.port, protocol: proto },
          ],
        },
      },
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `${s.name}-abcde`,
          namespace: s.namespace,
          labels: { 'kubernetes.io/service-name': s.name },
        },
        addressType: 'IPv4',
        ports: [{ name: s.portName, port: backends[0]?.port, protocol: proto }],
        endpoints: backends.map((p) => ({
          addresses: [p.ip],
          conditions: { ready: true, serving: true, terminating: false },
          nodeName: p.node,
          targetRef: { kind: 'Pod', name: p.name, namespace: p.namespace },
        })),
      },
    ];
  });
  const kubeProxy = [
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'kube-proxy', namespace: 'kube-system' },
      spec: { selector: { matchLabels: { 'k8s-app': 'kube-proxy' } } },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-proxy', namespace: 'kube-system' },
      data: {
        'config.conf': `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: ${t.clusterCIDR}\nmode: iptables\n`,
      },
    },
  ];
  return [...nodes, ...services, ...pods, ...kubeProxyPods, ...kubeProxy];
}
