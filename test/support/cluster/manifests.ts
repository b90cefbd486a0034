// What `up` creates through the API once the control plane runs, as kubeadm lays it out:
// kube-proxy's ConfigMap and DaemonSet, the kube-dns Service with a DNS Deployment behind it
// (the lab's stand-in for CoreDNS), and the RBAC of the limited user.
import type { ProxyMode } from './topology.js';

export const LIMITED_USER = 'kdebug-limited';

/** kube-proxy's configuration in the lab, as kind writes it: no host-wide conntrack sysctls. */
export function kubeProxyConfig(o: { clusterCIDR: string; mode: ProxyMode }): string {
  return [
    'apiVersion: kubeproxy.config.k8s.io/v1alpha1',
    'kind: KubeProxyConfiguration',
    `mode: ${o.mode}`,
    `clusterCIDR: ${o.clusterCIDR}`,
    'clientConnection:',
    '  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf',
    'conntrack:',
    '  maxPerCore: 0',
    '  tcpEstablishedTimeout: 0s',
    '  tcpCloseWaitTimeout: 0s',
    'iptables:',
    '  minSyncPeriod: 0s',
    '  syncPeriod: 1h', // a rule deleted by hand stays deleted until a Service changes
    'metricsBindAddress: 127.0.0.1:10249',
    '',
  ].join('\n');
}

const indent = (text: string, n: number) =>
  text
    .split('\n')
    .map((l) => (l ? ' '.repeat(n) + l : l))
    .join('\n');

export function manifests(o: { clusterCIDR: string; mode: ProxyMode; version: string }): string {
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-proxy
  namespace: kube-system
  labels: {app: kube-proxy}
data:
  config.conf: |
${indent(kubeProxyConfig(o), 4)}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-proxy, namespace: kube-system}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-proxy
  namespace: kube-system
  labels: {k8s-app: kube-proxy}
spec:
  selector:
    matchLabels: {k8s-app: kube-proxy}
  template:
    metadata:
      labels: {k8s-app: kube-proxy}
    spec:
      hostNetwork: true
      priorityClassName: system-node-critical
      serviceAccountName: kube-proxy
      nodeSelector: {kubernetes.io/os: linux}
      tolerations: [{operator: Exists}]
      containers:
      - name: kube-proxy
        image: registry.k8s.io/kube-proxy:${o.version}
        command: [/usr/local/bin/kube-proxy, --config=/var/lib/kube-proxy/config.conf, --hostname-override=$(NODE_NAME)]
        env:
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        securityContext: {privileged: true}
        volumeMounts:
        - {name: kube-proxy, mountPath: /var/lib/kube-proxy}
      volumes:
      - name: kube-proxy
        configMap: {name: kube-proxy}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  clusterIP: 10.96.0.10
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
  - {name: metrics, port: 9153, protocol: TCP, targetPort: 9153}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  selector:
    matchLabels: {k8s-app: kube-dns}
  template:
    metadata:
      labels: {k8s-app: kube-dns}
    spec:
      containers:
      - name: coredns
        image: registry.k8s.io/coredns/coredns:v1.12.1
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        - {name: metrics, containerPort: 9153, protocol: TCP}
        readinessProbe:
          tcpSocket: {port: 9153}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${LIMITED_USER}}
rules:
- apiGroups: [""]
  resources: [services, pods, nodes, namespaces, configmaps, endpoints]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${LIMITED_USER}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${LIMITED_USER}}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: ${LIMITED_USER}}
`;
}
