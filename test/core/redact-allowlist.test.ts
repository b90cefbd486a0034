// Redaction by allowlist: a marker put in every field an object can hold survives only where the
// explanation quotes the kubelet's words, and every bundled snapshot reads, types and diagnoses the
// same once redacted. IP conventions: Pod CIDR 10.244.0.0/16, Service CIDR 10.96.0.0/16, nodes
// 192.0.2.10 (node-a), 192.0.2.11 (node-b).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { isCiliumAgentPod } from '../../src/core/dataplane/cilium/agent/agent.js';
import { diagnose } from '../../src/core/diagnose.js';
import {
  clusterView,
  kubeProxyConfigOf,
  isKubeProxyPod,
  kubeProxyMounts,
  serviceCIDRs,
  type Pod,
} from '../../src/core/kube/objects.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { familyOf } from '../../src/core/ipv6.js';
import { redactFacts } from '../../src/core/redact/redact.js';
import { allModes } from '../support/modes.js';

/** The secret: letters only, so no encoding (JSON, YAML, a URL) can hide it from a search. */
const M = 'KDEBUGMARKER';
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** Encoded, as annotations and binaryData carry it: searched for too. */
const ENCODED = [b64(`password=${M}`), b64(M)];

const ANNOTATIONS = {
  'example.com/plain': M,
  'example.com/yaml': `db:\n  password: ${M}\n`,
  'example.com/json': JSON.stringify({ password: M }),
  'example.com/base64': ENCODED[0]!,
  [`example.com/${M}`]: 'the key holds it',
  'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ env: [{ value: M }] }),
};

const metadata = (name: string, namespace: string | undefined, labels: Record<string, string>) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: M,
  resourceVersion: M,
  generateName: M,
  labels,
  annotations: ANNOTATIONS,
  finalizers: [M],
  managedFields: [{ manager: M, fieldsV1: { [`f:${M}`]: {} } }],
});

/** Every secret shape a command line has. */
const SECRET_WORDS = [
  `--db-url=postgres://u:${M}@db:5432/app`,
  '-p',
  M,
  `--auth=${M}`,
  '--token',
  M,
  `--header=Authorization: Bearer ${M}`,
  'sh',
  '-c',
  `curl -H "Authorization: Bearer ${M}" http://x`,
  M,
];

const container = (name: string, command: string[], image = `registry.example/${M}:1`) => ({
  name,
  image,
  command,
  args: SECRET_WORDS,
  workingDir: M,
  env: [
    { name: 'DB_PASSWORD', value: M },
    { name: M, valueFrom: { secretKeyRef: { name: M, key: M } } },
  ],
  envFrom: [{ secretRef: { name: M } }, { configMapRef: { name: M }, prefix: M }],
  ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP', hostIP: M }],
  readinessProbe: {
    httpGet: {
      path: `/healthz?token=${M}`,
      port: 8080,
      host: M,
      httpHeaders: [{ name: 'Authorization', value: `Bearer ${M}` }],
    },
  },
  livenessProbe: { exec: { command: ['/bin/check', `--password=${M}`] } },
  startupProbe: { tcpSocket: { port: 8080, host: M } },
  lifecycle: {
    postStart: { exec: { command: [M] } },
    preStop: { httpGet: { path: M, port: 80, httpHeaders: [{ name: 'X', value: M }] } },
  },
  volumeMounts: [{ name: 'v', mountPath: `/${M}`, subPath: M }],
  securityContext: { seLinuxOptions: { user: M } },
  terminationMessagePath: M,
});

/** A volume of every type that can name or hold a secret. */
const VOLUMES = [
  { name: 'a', secret: { secretName: M, items: [{ key: M, path: M }] } },
  { name: 'b', configMap: { name: M } },
  {
    name: 'c',
    csi: {
      driver: 'secrets-store.csi.k8s.io',
      volumeAttributes: { secretProviderClass: M, [M]: M },
      nodePublishSecretRef: { name: M },
    },
  },
  { name: 'd', flexVolume: { driver: 'x/y', options: { password: M }, secretRef: { name: M } } },
  { name: 'e', hostPath: { path: `/${M}` } },
  { name: 'f', nfs: { server: M, path: `/${M}` } },
  { name: 'g', iscsi: { targetPortal: M, iqn: M, lun: 0, secretRef: { name: M } } },
  { name: 'h', rbd: { monitors: [M], image: M, user: M, keyring: M } },
  {
    name: 'i',
    projected: {
      sources: [
        { serviceAccountToken: { audience: M, path: 'token' } },
        { secret: { name: M } },
        { configMap: { name: M } },
      ],
    },
  },
  { name: 'j', ephemeral: { volumeClaimTemplate: { spec: { storageClassName: M } } } },
  { name: 'k', persistentVolumeClaim: { claimName: M } },
  { name: 'l', gitRepo: { repository: `https://u:${M}@git.example/r.git` } },
  { name: 'm', image: { reference: `registry.example/${M}` } },
];

const podStatus = (name: string) => ({
  phase: 'Running',
  podIP: '10.244.1.5',
  podIPs: [{ ip: '10.244.1.5' }],
  hostIP: '192.0.2.10',
  message: M,
  reason: M,
  nominatedNodeName: M,
  conditions: [
    // the kubelet's and the scheduler's words, quoted by the explanation: the policy keeps them
    { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: M },
    { type: 'PodScheduled', status: 'True', message: M },
    { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', message: M },
    { type: 'example.com/gate', status: 'False', reason: 'Gate', message: M },
  ],
  containerStatuses: [
    {
      name,
      ready: false,
      restartCount: 3,
      image: M,
      imageID: M,
      containerID: M,
      state: { waiting: { reason: 'CrashLoopBackOff', message: M } },
      lastState: { terminated: { exitCode: 1, reason: 'Error', message: M, containerID: M } },
    },
    {
      name: `${name}-sidecar`,
      ready: false,
      restartCount: 0,
      state: { terminated: { exitCode: 2, reason: 'Error', message: M } },
    },
  ],
  initContainerStatuses: [{ name: M, state: { terminated: { message: M } } }],
});

const podSpec = (c: ReturnType<typeof container>, volumes: object[]) => ({
  nodeName: 'node-a',
  hostNetwork: false,
  hostname: 'web-0',
  subdomain: 'web',
  serviceAccountName: M,
  imagePullSecrets: [{ name: M }],
  nodeSelector: { [M]: M },
  tolerations: [{ key: M, operator: 'Exists' }],
  affinity: { nodeAffinity: { preferred: [{ weight: 1, preference: { key: M } }] } },
  dnsConfig: { nameservers: [M], searches: [M], options: [{ name: M, value: M }] },
  hostAliases: [{ ip: '10.0.0.1', hostnames: [M] }],
  readinessGates: [{ conditionType: M }],
  initContainers: [container(M, [M])],
  ephemeralContainers: [container(M, [M])],
  containers: [c],
  volumes,
});

const web: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    ...metadata('web-0', 'default', { app: 'web' }),
    deletionTimestamp: '2024-05-01T10:00:00Z',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-55fc9', uid: M }],
  },
  spec: podSpec(container('web', SECRET_WORDS), VOLUMES),
  status: podStatus('web'),
};

const KUBE_PROXY_IMAGE = 'registry.k8s.io/kube-proxy:v1.33.1';
const kubeProxy: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: metadata('kube-proxy-x1', 'kube-system', { 'k8s-app': 'kube-proxy' }),
  spec: podSpec(
    container(
      'kube-proxy',
      [
        '/usr/local/bin/kube-proxy',
        `--kubeconfig=/${M}/kubeconfig.conf`,
        '--proxy-mode=ipvs',
        '--masquerade-all',
        M,
        `--feature-gates=EndpointSlice=false,Token=${M}`,
        `--hostname-override=${M}`,
        ...SECRET_WORDS,
      ],
      KUBE_PROXY_IMAGE,
    ),
    // the names of the ConfigMaps kube-proxy mounts are kept: where its configuration is
    [
      { name: 'kube-proxy', configMap: { name: 'kube-proxy', defaultMode: 420 } },
      ...VOLUMES.filter((v) => !('configMap' in v)),
    ],
  ),
  status: podStatus('kube-proxy'),
};

const service: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: metadata('web', 'default', { 'k8s-app': 'web', [M]: M, team: M }),
  spec: {
    type: 'LoadBalancer',
    clusterIP: '10.96.0.20',
    clusterIPs: ['10.96.0.20'],
    selector: { app: 'web' },
    ports: [
      {
        name: 'http',
        port: 80,
        targetPort: 'http',
        nodePort: 30080,
        protocol: 'TCP',
        appProtocol: 'http',
      },
    ],
    loadBalancerClass: M,
    externalIPs: ['198.51.100.7'],
    loadBalancerSourceRanges: ['10.0.0.0/8'],
    externalTrafficPolicy: 'Local',
    internalTrafficPolicy: 'Local',
    healthCheckNodePort: 31000,
    sessionAffinity: 'ClientIP',
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
    publishNotReadyAddresses: true,
  },
  status: {
    loadBalancer: {
      ingress: [
        { ip: '203.0.113.9', ipMode: 'VIP', hostname: M, ports: [{ error: M }] },
        { ip: '203.0.113.10', ipMode: 'Proxy' },
      ],
    },
    conditions: [{ type: 'x', status: 'True', message: M }],
  },
};

const slice: KubeObject = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: metadata('web-abc12', 'default', {
    'kubernetes.io/service-name': 'web',
    'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    [M]: M,
  }),
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
  endpoints: [
    {
      addresses: ['10.244.1.5'],
      conditions: { ready: false, serving: true, terminating: false },
      nodeName: 'node-a',
      hostname: 'web-0',
      zone: 'z1',
      hints: { forZones: [{ name: M }] },
      deprecatedTopology: { [M]: M },
      topology: { 'kubernetes.io/hostname': 'node-a', [M]: M },
      targetRef: { kind: 'Pod', name: 'web-0', namespace: 'default', uid: M, resourceVersion: M },
    },
  ],
};

const endpoints: KubeObject = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: metadata('web', 'default', { [M]: M }),
  subsets: [
    {
      notReadyAddresses: [
        { ip: '10.244.1.5', hostname: M, nodeName: 'node-a', targetRef: { name: 'web-0', uid: M } },
      ],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    },
  ],
};

const node: KubeObject = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: metadata('node-a', undefined, { 'kubernetes.io/os': 'linux', [M]: M }),
  spec: {
    podCIDR: '10.244.1.0/24',
    podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'],
    providerID: M,
    taints: [
      { key: M, effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
    ],
  },
  status: {
    addresses: [
      { type: 'InternalIP', address: '192.0.2.10' },
      { type: 'Hostname', address: 'node-a' },
    ],
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: M,
        lastTransitionTime: '2019-08-20T02:13:52Z',
      },
    ],
    nodeInfo: { operatingSystem: 'linux', machineID: M, bootID: M, kernelVersion: M, osImage: M },
    images: [{ names: [M], sizeBytes: 1 }],
    volumesAttached: [{ name: M, devicePath: M }],
  },
};

const configMap = (name: string, namespace: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: metadata(name, namespace, { [M]: M }),
  data,
  binaryData: { [M]: ENCODED[1]! },
});

const CONFIG_MAPS = [
  configMap('kube-proxy', 'kube-system', {
    'config.conf': [
      'apiVersion: kubeproxy.config.k8s.io/v1alpha1',
      'kind: KubeProxyConfiguration',
      'mode: iptables',
      'clusterCIDR: 10.244.0.0/16',
      'detectLocalMode: BridgeInterface',
      'detectLocal:',
      '  bridgeInterface: cni0',
      '  interfaceNamePrefix: veth',
      'nodePortAddresses: [192.0.2.0/24]',
      'ipvs:',
      '  scheduler: lc',
      'clientConnection:',
      `  kubeconfig: /${M}/kubeconfig.conf`,
      `healthzBindAddress: ${M}`,
      'iptables:',
      '  masqueradeBit: 13',
      '  masqueradeAll: true',
      '  localhostNodePorts: false',
      `  ${M}: ${M}`,
      // gates are names set on or off: one set to anything else is not read, and not kept
      'featureGates:',
      '  KubeProxyNFTablesLocalhostNodePorts: true',
      `  EndpointSliceProxying: ${M}`,
      '',
    ].join('\n'),
    'kubeconfig.conf': `clusters:\n- cluster:\n    server: https://${M}.example:6443\nusers:\n- user:\n    token: ${M}\n`,
    [M]: M,
  }),
  configMap('coredns', 'kube-system', {
    Corefile: `.:53 {\n    errors\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n    }\n    forward . ${M}\n    hosts {\n      10.0.0.1 ${M}\n    }\n}\n`,
    [M]: M,
  }),
  configMap('cilium-config', 'kube-system', { 'kube-proxy-replacement': 'false', [M]: M }),
  configMap('app', 'default', { 'settings.ini': `password=${M}`, [M]: M }),
];

const template = (spec: object) => ({ metadata: { labels: { app: M } }, spec });

const OTHERS: KubeObject[] = [
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: metadata('deny', 'default', { [M]: M }),
    spec: {
      podSelector: {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }],
      },
      policyTypes: ['Ingress'],
      // its rules are read (who may connect): a marker only where nothing reads
      ingress: [
        {
          from: [{ ipBlock: { cidr: '192.0.2.0/24', note: M }, podSelector: {}, note: M }],
          ports: [{ protocol: 'TCP', port: 8080, note: M }],
          note: M,
        },
      ],
    },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: metadata('kube-proxy', 'kube-system', { [M]: M }),
    spec: {
      selector: { matchLabels: { [M]: M } },
      template: template(kubeProxy['spec'] as object),
    },
    status: { conditions: [{ message: M }] },
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'ServiceCIDR',
    metadata: metadata('kubernetes', undefined, {}),
    spec: { cidrs: ['10.96.0.0/16'] },
    status: { conditions: [{ type: 'Ready', status: 'True', message: M }] },
  },
  // kinds kdebug never reads: gone whole
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadata('s', 'default', {}),
    data: { k: ENCODED[1]! },
    stringData: { k: M },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata('web', 'default', {}),
    spec: { template: template(web['spec'] as object) },
  },
  { apiVersion: 'v1', kind: 'Namespace', metadata: metadata('default', undefined, { [M]: M }) },
  { apiVersion: 'v1', kind: 'Event', metadata: metadata('e', 'default', {}), message: M },
];

/** Maps whose keys are the user's (labels, data ...): no field is added to them. */
const MAPS = new Set([
  'labels',
  'annotations',
  'selector',
  'matchLabels',
  'data',
  'binaryData',
  'stringData',
  'topology',
  'deprecatedTopology',
  'nodeSelector',
  'volumeAttributes',
  'options',
  'fieldsV1',
]);

/** `o` with a field of a future API version, holding the marker, in every object it has. */
function sprinkle(o: unknown, key = ''): unknown {
  if (Array.isArray(o)) return o.map((x) => sprinkle(x));
  if (o === null || typeof o !== 'object') return o;
  const out = Object.fromEntries(Object.entries(o).map(([k, x]) => [k, sprinkle(x, k)]));
  return MAPS.has(key) ? out : { ...out, futureField: M };
}

const SERVER = `https://${M}.gr7.eu-west-1.eks.amazonaws.com`;
const CONTEXT = `arn:aws:eks:eu-west-1:${M}:cluster/prod`;
const USER = `${M}@example.com`;

const marked: Facts = {
  objects: [service, slice, endpoints, web, kubeProxy, node, ...CONFIG_MAPS, ...OTHERS].map(
    (o) => sprinkle(o) as KubeObject,
  ),
  nodes: {},
  meta: {
    context: CONTEXT,
    server: SERVER,
    user: USER,
    namespace: 'default',
    service: 'web',
    readErrors: [
      {
        what: 'NetworkPolicies in default',
        error: `access denied by RBAC: user "${USER}" cannot list networkpolicies (context "${CONTEXT}")`,
        reason: 'forbidden',
      },
      {
        what: 'Nodes',
        error: `the API server at ${SERVER} answered GET /api/v1/nodes with 500`,
        reason: 'server',
      },
    ],
    nodeErrors: [
      {
        node: 'node-a',
        command: 'ip-addr',
        exitCode: null,
        error: `dial tcp: lookup ${new URL(SERVER).hostname}: no such host`,
      },
    ],
  },
};

/** Where a string of `v` holds the marker (in a value or a key): "kind path", and how often. */
function markers(v: unknown, at: string, out = new Map<string, number>()): Map<string, number> {
  const hit = (s: string) => s.includes(M) || ENCODED.some((e) => s.includes(e));
  if (typeof v === 'string' && hit(v)) out.set(at, (out.get(at) ?? 0) + 1);
  if (Array.isArray(v)) v.forEach((x) => markers(x, `${at}[]`, out));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      if (hit(k)) out.set(`${at} (a key)`, (out.get(`${at} (a key)`) ?? 0) + 1);
      markers(x, `${at}.${k}`, out);
    }
  return out;
}

describe('a marker in every field an object and meta.json can hold', () => {
  const { facts: out, redaction } = redactFacts(marked);
  const survivors = (o: KubeObject) => [...markers(o, o.kind ?? '')];

  it('survives only in the kubelet and scheduler messages the explanation quotes', () => {
    assert.deepEqual(out.objects.flatMap(survivors), [
      // web-0, then kube-proxy: Ready and PodScheduled, and the waiting container's message
      ['Pod.status.conditions[].message', 2],
      ['Pod.status.containerStatuses[].state.waiting.message', 1],
      ['Pod.status.conditions[].message', 2],
      ['Pod.status.containerStatuses[].state.waiting.message', 1],
    ]);
    const conditions = (out.objects[3]!['status'] as { conditions: object[] }).conditions;
    assert.deepEqual(conditions, [
      { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: M },
      { type: 'PodScheduled', status: 'True', message: M },
      { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady' },
      { type: 'example.com/gate', status: 'False', reason: 'Gate' },
    ]);
  });

  it('is nowhere in meta.json: the names are hashed, what was taken is listed without values', () => {
    assert.deepEqual([...markers(out.meta, 'meta')], []);
    assert.deepEqual([...markers(redaction, 'redaction')], []);
    assert.match(String(out.meta['user']), /^sha256:[0-9a-f]{16}$/);
  });

  it('keeps the kinds read and drops the others whole', () => {
    assert.deepEqual(
      out.objects.map((o) => o.kind),
      [
        'Service',
        'EndpointSlice',
        'Endpoints',
        'Pod',
        'Pod',
        'Node',
        'ConfigMap',
        'ConfigMap',
        'ConfigMap',
        'ConfigMap',
        'NetworkPolicy',
        'DaemonSet',
        'ServiceCIDR',
      ],
    );
    assert.deepEqual(
      redaction.removed.filter((r) => r.what.includes('a kind kdebug does not read')),
      ['Secret', 'Deployment', 'Namespace', 'Event'].map((kind) => ({
        what: `${kind} objects (a kind kdebug does not read)`,
        count: 1,
      })),
    );
  });

  it('keeps every label of a Pod (selectors match them), of other kinds only the ones read', () => {
    const labels = (o: KubeObject) => o.metadata?.labels;
    const [svc, es, ep, pod, proxy, n] = out.objects;
    assert.deepEqual(labels(pod!), { app: 'web' });
    assert.deepEqual(labels(proxy!), { 'k8s-app': 'kube-proxy' });
    assert.deepEqual(labels(svc!), { 'k8s-app': 'web' });
    assert.deepEqual(labels(es!), {
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    });
    assert.equal(labels(ep!), undefined);
    assert.deepEqual(labels(n!), { 'kubernetes.io/os': 'linux' });
  });

  it('reads the same model, and diagnoses the same, but for the fields narrowed on purpose', () => {
    assert.deepEqual(model(out, false), model(marked, true));
    const marks = (f: Facts) =>
      diagnose(f, { namespace: 'default', service: 'web' }, { code: allModes }).steps.map((s) => [
        s.id,
        s.status,
        s.findings.map((x) => `${x.id} ${x.status}`),
      ]);
    assert.deepEqual(marks(out), marks(marked));
  });

  it('keeps what the checks read of kube-proxy and of probes', () => {
    const [before, after] = [clusterView(marked.objects), clusterView(out.objects)];
    assert.deepEqual(kubeProxyConfigOf(after), kubeProxyConfigOf(before));
    assert.deepEqual(kubeProxyMounts(after), kubeProxyMounts(before));
    assert.deepEqual(
      after.pods.map((p) => [p.name, p.containers[0]!.readinessProbe, p.ownerKind, p.ownerName]),
      [
        ['web-0', { kind: 'httpGet', port: 8080, path: '/healthz' }, 'ReplicaSet', 'web-55fc9'],
        ['kube-proxy-x1', { kind: 'httpGet', port: 8080, path: '/healthz' }, undefined, undefined],
      ],
    );
    assert.deepEqual(after.pods[0]!.containers[0]!.livenessProbe, {
      kind: 'exec',
      command: ['(redacted)'],
    });
    const proxy = (out.objects[4]!['spec'] as { containers: Record<string, unknown>[] })
      .containers[0]!;
    assert.deepEqual(
      [proxy['image'], proxy['command'], proxy['args']],
      [
        KUBE_PROXY_IMAGE,
        ['--proxy-mode=ipvs', '--masquerade-all', '--feature-gates=EndpointSlice=false'],
        [],
      ],
    );
  });
});

/** The model of a snapshot without its raw objects, and what redaction narrows on purpose (a
 * container's own words, an exec probe's command, a probe's query, the labels of a Node but its
 * OS: no check reads them) read as a redacted one reads. */
function model(facts: Facts, narrow: boolean): unknown {
  const v = clusterView(facts.objects);
  const names = (os: KubeObject[]) => os.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`);
  const plain = <T extends { raw: unknown }>({ raw: _, ...rest }: T) => rest;
  return JSON.parse(
    JSON.stringify({
      services: v.services.map(plain),
      endpointSlices: v.endpointSlices.map((s) => ({ ...plain(s), endpoints: s.endpoints })),
      endpoints: v.endpoints.map(plain),
      pods: v.pods.map((p) => (narrow ? narrowed(plain(p)) : plain(p))),
      nodes: v.nodes.map((n) =>
        narrow ? { ...plain(n), labels: pick(n.labels, 'kubernetes.io/os') } : plain(n),
      ),
      configMaps: v.configMaps.map((c) => `${c.namespace}/${c.name}`),
      networkPolicies: v.networkPolicies.map(policyRead),
      daemonSets: names(v.daemonSets),
      serviceCIDRs: serviceCIDRs(v),
      kubeProxyConfig: kubeProxyConfigOf(v),
    }),
  );
}

const READ = new Set(
  'from ports podSelector namespaceSelector ipBlock cidr except protocol port endPort matchLabels matchExpressions key operator values'.split(
    ' ',
  ),
);

/** What network-policy.ts reads of a NetworkPolicy. */
function policyRead(p: KubeObject) {
  const spec = (p['spec'] ?? {}) as {
    podSelector?: { matchLabels?: object; matchExpressions?: unknown[] };
    policyTypes?: string[];
    ingress?: unknown;
  };
  return {
    name: `${p.metadata?.namespace}/${p.metadata?.name}`,
    matchLabels: spec.podSelector?.matchLabels,
    expressions: (spec.podSelector?.matchExpressions ?? []).length > 0,
    policyTypes: spec.policyTypes,
    // the fields network-policy.ts reads of the rules, in order
    ingress: JSON.stringify(spec.ingress, (k, v) =>
      k === '' || /^\d+$/.test(k) || READ.has(k) ? v : undefined,
    ),
  };
}

const pick = (m: Record<string, string>, key: string) =>
  m[key] === undefined ? {} : { [key]: m[key] };

function narrowed(p: Omit<Pod, 'raw'>): Omit<Pod, 'raw'> {
  const probe = (x: Pod['containers'][number]['readinessProbe']) =>
    x?.kind === 'exec'
      ? { ...x, command: ['(redacted)'] }
      : x?.path
        ? { ...x, path: x.path.split(/[?#]/)[0] }
        : x;
  const uid = /^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/;
  return {
    ...p,
    // a UID and a host IP are kept as such, nothing else in their place
    uid: p.uid && uid.test(p.uid) ? p.uid : undefined,
    hostPorts: p.hostPorts.map(({ hostIP, ...h }) =>
      hostIP && familyOf(hostIP) ? { ...h, hostIP } : h,
    ),
    containers: p.containers.map((c) => ({
      ...c,
      // the image is a version only of kube-proxy and of Cilium's agent: another Pod's is not kept
      image: isKubeProxyPod(p as Pod) || isCiliumAgentPod(p as Pod) ? c.image : undefined,
      readinessProbe: probe(c.readinessProbe),
      livenessProbe: probe(c.livenessProbe),
    })),
    containerStatuses: p.containerStatuses.map((s) => ({
      ...s,
      state: s.state.kind === 'waiting' ? s.state : { ...s.state, message: undefined },
      lastState: s.lastState && { ...s.lastState, message: undefined },
    })),
    conditions: p.conditions.map((c) =>
      c.type === 'Ready' || c.type === 'PodScheduled' ? c : { ...c, message: undefined },
    ),
  };
}

describe('every bundled snapshot reads and diagnoses the same once redacted', () => {
  for (const dir of readdirSync('snapshots').sort())
    it(dir, async () => {
      const original = await readSnapshot(`snapshots/${dir}`);
      const { facts: redacted } = redactFacts(original);
      assert.deepEqual(model(redacted, false), model(original, true));
      // nothing kept depends on something dropped
      assert.deepEqual(redactFacts(redacted).facts.objects, redacted.objects);
      const services = clusterView(original.objects).services;
      assert.ok(services.length >= 3);
      for (const s of services) {
        const target = { namespace: s.namespace, service: s.name };
        const steps = (f: Facts) => diagnose(f, target, { code: allModes }).steps;
        assert.deepEqual(steps(redacted), steps(original), `${dir}: ${target.service}`);
      }
    });
});
