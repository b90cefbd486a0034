// The API objects of the scenario snapshots: the demo cluster (snapshots/nginx-svc) upgraded to
// what the same two kubeadm nodes look like on Kubernetes v1.29 (containerd, Rocky Linux 9,
// flannel v0.25, current kube-proxy), plus builders for the objects a scenario adds. Generated
// fields (uids, resourceVersions, container IDs) are derived from names, so output is stable.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KubeObject } from '../../src/core/model.js';

export type Json = Record<string, unknown>;

/** When the scenarios were captured; the demo's own capture time maps to this. */
export const CAPTURED_AT = '2026-11-28T10:15:09Z';
const DEMO_CAPTURED_AT = '2019-08-22T08:41:09Z';
const SHIFT = Date.parse(CAPTURED_AT) - Date.parse(DEMO_CAPTURED_AT);

export const VERSION = 'v1.29.10';

/** A stable hex string from a seed. */
export const digest = (seed: string, length = 64) =>
  createHash('sha256').update(seed).digest('hex').slice(0, length);

export function uid(seed: string): string {
  const h = digest(`uid:${seed}`, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A time `minutes` before the capture, as the API prints it. */
export function before(minutes: number): string {
  return new Date(Date.parse(CAPTURED_AT) - minutes * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
}

// text replacements that turn the v1.15 / docker / CentOS 7 objects into v1.29 / containerd / Rocky 9
const REPLACE: [string, string][] = [
  [
    'registry.aliyuncs.com/google_containers/coredns:1.3.1',
    'registry.k8s.io/coredns/coredns:v1.11.1',
  ],
  ['registry.aliyuncs.com/google_containers/coredns@', 'registry.k8s.io/coredns/coredns@'],
  ['registry.aliyuncs.com/google_containers/etcd:3.3.10', 'registry.k8s.io/etcd:3.5.15-0'],
  ['registry.aliyuncs.com/google_containers', 'registry.k8s.io'],
  ['quay.io/coreos/flannel:v0.11.0-amd64', 'docker.io/flannel/flannel:v0.25.6'],
  ['quay.io/coreos/flannel@', 'docker.io/flannel/flannel@'],
  ['v1.15.2', VERSION],
  ['docker://18.9.8', 'containerd://1.7.22'],
  ['docker-pullable://nginx@', 'docker.io/library/nginx@'],
  ['docker-pullable://', ''],
  ['docker://', 'containerd://'],
  ['/var/run/dockershim.sock', 'unix:///var/run/containerd/containerd.sock'],
  ['kubelet-config-1.15', 'kubelet-config'],
  ['kubeadm.k8s.io/v1beta2', 'kubeadm.k8s.io/v1beta3'],
  ['CentOS Linux 7 (Core)', 'Rocky Linux 9.4 (Blue Onyx)'],
  ['3.10.0-957.21.3.el7.x86_64', '5.14.0-427.13.1.el9_4.x86_64'],
  ['node-role.kubernetes.io/master', 'node-role.kubernetes.io/control-plane'],
];

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function shiftTimes(v: unknown): unknown {
  if (typeof v === 'string')
    return TIME.test(v) ? new Date(Date.parse(v) + SHIFT).toISOString().replace(/\.\d+Z$/, 'Z') : v;
  if (Array.isArray(v)) return v.map(shiftTimes);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shiftTimes(x)]));
  return v;
}

/** kubeadm v1.29's kube-proxy configuration for this cluster (its ConfigMap's config.conf). */
export const KUBE_PROXY_CONFIG = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
bindAddress: 0.0.0.0
bindAddressHardFail: false
clientConnection:
  acceptContentTypes: ""
  burst: 0
  contentType: ""
  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
  qps: 0
clusterCIDR: 10.244.0.0/16
configSyncPeriod: 0s
conntrack:
  maxPerCore: null
  min: null
  tcpBeLiberal: false
  tcpCloseWaitTimeout: null
  tcpEstablishedTimeout: null
  udpStreamTimeout: 0s
  udpTimeout: 0s
detectLocal:
  bridgeInterface: ""
  interfaceNamePrefix: ""
detectLocalMode: ""
enableProfiling: false
healthzBindAddress: ""
hostnameOverride: ""
iptables:
  localhostNodePorts: null
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
ipvs:
  excludeCIDRs: null
  minSyncPeriod: 0s
  scheduler: ""
  strictARP: false
  syncPeriod: 0s
  tcpFinTimeout: 0s
  tcpTimeout: 0s
  udpTimeout: 0s
kind: KubeProxyConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
  verbosity: 0
metricsBindAddress: ""
mode: ""
nftables:
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
nodePortAddresses: null
oomScoreAdj: null
portRange: ""
showHiddenMetricsForAlpha: ""
winkernel:
  enableDSR: false
  forwardHealthCheckVip: false
  networkName: ""
  rootHnsEndpointName: ""
  sourceVip: ""
`;

const DEMO = new URL('../../snapshots/nginx-svc/', import.meta.url);

/** The demo's objects, as a v1.29 cluster of the same shape. */
export function modernCluster(): KubeObject[] {
  let text = readFileSync(new URL('objects.json', DEMO), 'utf8');
  for (const [from, to] of REPLACE) text = text.split(from).join(to);
  const list = shiftTimes(JSON.parse(text)) as { items: Json[] };
  for (const o of list.items) modernise(o);
  return list.items as KubeObject[];
}

function modernise(o: Json): void {
  const spec = o['spec'] as Json | undefined;
  const status = o['status'] as Json | undefined;
  const meta = o['metadata'] as Json;
  if (o['kind'] === 'Node' && spec && status) {
    spec['podCIDRs'] = [spec['podCIDR']];
    const info = status['nodeInfo'] as Json;
    info['containerRuntimeVersion'] = 'containerd://1.7.22';
    info['kubeProxyVersion'] = VERSION;
  }
  if (o['kind'] === 'Pod' && status?.['podIP']) {
    status['podIPs'] = [{ ip: status['podIP'] }];
    status['hostIPs'] = [{ ip: status['hostIP'] }];
  }
  if (o['kind'] === 'ConfigMap' && meta['name'] === 'kube-proxy') {
    (o['data'] as Json)['config.conf'] = KUBE_PROXY_CONFIG;
  }
}

// --- builders for the objects scenarios add ------------------------------------------------

export interface PodSpec {
  name: string;
  namespace?: string;
  app: string;
  template: string;
  node: string;
  hostIP: string;
  ip: string;
  port: number;
  image: string;
  /** Minutes before the capture it started. */
  age: number;
}

export function pod(p: PodSpec): Json {
  const ns = p.namespace ?? 'default';
  const started = before(p.age);
  const rs = `${p.app}-${p.template}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      creationTimestamp: started,
      generateName: `${rs}-`,
      labels: { app: p.app, 'pod-template-hash': p.template },
      name: p.name,
      namespace: ns,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          blockOwnerDeletion: true,
          controller: true,
          kind: 'ReplicaSet',
          name: rs,
          uid: uid(`${ns}/${rs}`),
        },
      ],
      resourceVersion: String(900000 + parseInt(digest(p.name, 4), 16)),
      uid: uid(`${ns}/${p.name}`),
    },
    spec: {
      containers: [
        {
          image: p.image,
          imagePullPolicy: 'IfNotPresent',
          name: p.app,
          ports: [{ containerPort: p.port, name: 'http', protocol: 'TCP' }],
          readinessProbe: {
            failureThreshold: 3,
            httpGet: { path: '/', port: p.port, scheme: 'HTTP' },
            periodSeconds: 10,
            successThreshold: 1,
            timeoutSeconds: 1,
          },
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      nodeName: p.node,
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccount: 'default',
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
    },
    status: {
      conditions: [
        { lastProbeTime: null, lastTransitionTime: started, status: 'True', type: 'Initialized' },
        {
          lastProbeTime: null,
          lastTransitionTime: before(p.age - 1),
          status: 'True',
          type: 'Ready',
        },
        {
          lastProbeTime: null,
          lastTransitionTime: before(p.age - 1),
          status: 'True',
          type: 'ContainersReady',
        },
        { lastProbeTime: null, lastTransitionTime: started, status: 'True', type: 'PodScheduled' },
      ],
      containerStatuses: [
        {
          containerID: `containerd://${digest(`container:${p.name}`)}`,
          image: p.image,
          imageID: `${p.image.replace(/:[^/:]+$/, '')}@sha256:${digest(`image:${p.image}`)}`,
          lastState: {},
          name: p.app,
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt: before(p.age - 0.5) } },
        },
      ],
      hostIP: p.hostIP,
      hostIPs: [{ ip: p.hostIP }],
      phase: 'Running',
      podIP: p.ip,
      podIPs: [{ ip: p.ip }],
      qosClass: 'BestEffort',
      startTime: started,
    },
  };
}

export interface ServiceSpec {
  name: string;
  namespace?: string;
  app: string;
  clusterIP: string;
  port: number;
  targetPort: number;
  type?: 'ClusterIP' | 'NodePort';
  nodePort?: number;
  externalTrafficPolicy?: 'Cluster' | 'Local';
  age: number;
}

export function service(s: ServiceSpec): Json {
  const ns = s.namespace ?? 'default';
  const type = s.type ?? 'ClusterIP';
  const port: Json = { name: 'http', port: s.port, protocol: 'TCP', targetPort: s.targetPort };
  if (s.nodePort) port['nodePort'] = s.nodePort;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      creationTimestamp: before(s.age),
      labels: { app: s.app },
      name: s.name,
      namespace: ns,
      resourceVersion: String(800000 + parseInt(digest(s.name, 4), 16)),
      uid: uid(`${ns}/service/${s.name}`),
    },
    spec: {
      clusterIP: s.clusterIP,
      clusterIPs: [s.clusterIP],
      ...(type === 'NodePort'
        ? { externalTrafficPolicy: s.externalTrafficPolicy ?? 'Cluster' }
        : {}),
      internalTrafficPolicy: 'Cluster',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [port],
      selector: { app: s.app },
      sessionAffinity: 'None',
      type,
    },
    status: { loadBalancer: {} },
  };
}

export interface SliceEndpoint {
  ip: string;
  node: string;
  pod: string;
}

/** The EndpointSlice the controller writes for a Service (all endpoints ready). */
export function endpointSlice(
  svc: { name: string; namespace?: string },
  suffix: string,
  port: number,
  endpoints: SliceEndpoint[],
  changedMinutesAgo: number,
): Json {
  const ns = svc.namespace ?? 'default';
  return {
    addressType: 'IPv4',
    apiVersion: 'discovery.k8s.io/v1',
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: e.node,
      targetRef: { kind: 'Pod', name: e.pod, namespace: ns, uid: uid(`${ns}/${e.pod}`) },
    })),
    kind: 'EndpointSlice',
    metadata: {
      annotations: {
        'endpoints.kubernetes.io/last-change-trigger-time': before(changedMinutesAgo),
      },
      creationTimestamp: before(changedMinutesAgo),
      generateName: `${svc.name}-`,
      generation: 1,
      labels: {
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        'kubernetes.io/service-name': svc.name,
      },
      name: `${svc.name}-${suffix}`,
      namespace: ns,
      ownerReferences: [
        {
          apiVersion: 'v1',
          blockOwnerDeletion: true,
          controller: true,
          kind: 'Service',
          name: svc.name,
          uid: uid(`${ns}/service/${svc.name}`),
        },
      ],
      resourceVersion: String(810000 + parseInt(digest(svc.name + suffix, 4), 16)),
      uid: uid(`${ns}/slice/${svc.name}-${suffix}`),
    },
    ports: [{ name: 'http', port, protocol: 'TCP' }],
  };
}

/** The legacy Endpoints object the endpoints controller still writes next to the slice. */
export function endpoints(
  svc: { name: string; namespace?: string },
  port: number,
  list: SliceEndpoint[],
  changedMinutesAgo: number,
): Json {
  const ns = svc.namespace ?? 'default';
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      annotations: {
        'endpoints.kubernetes.io/last-change-trigger-time': before(changedMinutesAgo),
      },
      creationTimestamp: before(changedMinutesAgo),
      labels: { app: svc.name },
      name: svc.name,
      namespace: ns,
      resourceVersion: String(820000 + parseInt(digest(svc.name, 4), 16)),
      uid: uid(`${ns}/endpoints/${svc.name}`),
    },
    subsets: [
      {
        addresses: list.map((e) => ({
          ip: e.ip,
          nodeName: e.node,
          targetRef: { kind: 'Pod', name: e.pod, namespace: ns, uid: uid(`${ns}/${e.pod}`) },
        })),
        ports: [{ name: 'http', port, protocol: 'TCP' }],
      },
    ],
  };
}

/** Sorts object keys recursively, as the demo's objects.json is written. */
export function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortedKeys((v as Json)[k])]),
    );
  return v;
}
