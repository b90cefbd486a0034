// Builders for the diagnosis tests: raw API objects as `kubectl get -o json` prints them, with
// the smallest set of fields a test has to think about. Each takes overrides for what it tests.
//
// IP conventions: nodes node-a 192.0.2.10 (Pods 10.244.0.0/24) and node-b 192.0.2.11 (Pods
// 10.244.1.0/24); Pod CIDR 10.244.0.0/16; Service CIDR 10.96.0.0/16; the Service "web" is
// 10.96.0.50:80 -> Pods 10.244.0.5:8080 (node-a) and 10.244.1.6:8080 (node-b); kube-dns is
// 10.96.0.10 -> CoreDNS 10.244.0.2 (node-a).
import { expectedRules, expectedSave } from '../../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import type { Facts, KubeObject } from '../../../src/core/model.js';
import { CheckContext, type DiagnoseOptions } from '../../../src/core/checks/context.js';
import type { Check } from '../../../src/core/checks/check.js';
import { runStep } from '../../../src/core/diagnose.js';
import type { Finding } from '../../../src/core/model.js';
import { aCiliumAgent, aCiliumConfig } from '../../support/builders.js';
import { allModes } from '../../support/modes.js';

type J = Record<string, unknown>;

export function aService(o: { name?: string; namespace?: string; spec?: J } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: o.name ?? 'web', namespace: o.namespace ?? 'default' },
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.0.50',
      clusterIPs: ['10.96.0.50'],
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }],
      ...o.spec,
    },
  };
}

export interface EndpointSpec {
  ip: string;
  node?: string;
  pod?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  hostname?: string;
}

export function anEndpointSlice(
  o: {
    service?: string;
    namespace?: string;
    port?: number;
    portName?: string;
    protocol?: string;
    endpoints?: EndpointSpec[];
  } = {},
): KubeObject {
  const service = o.service ?? 'web';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-abcde`,
      namespace: o.namespace ?? 'default',
      labels: {
        'kubernetes.io/service-name': service,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    ports: [{ name: o.portName ?? 'http', port: o.port ?? 8080, protocol: o.protocol ?? 'TCP' }],
    endpoints: (
      o.endpoints ?? [
        { ip: '10.244.0.5', node: 'node-a', pod: 'web-1' },
        { ip: '10.244.1.6', node: 'node-b', pod: 'web-2' },
      ]
    ).map((e) => ({
      addresses: [e.ip],
      conditions: {
        ready: e.ready ?? true,
        serving: e.serving ?? e.ready ?? true,
        terminating: e.terminating ?? false,
      },
      nodeName: e.node,
      ...(e.hostname ? { hostname: e.hostname } : {}),
      ...(e.pod
        ? { targetRef: { kind: 'Pod', name: e.pod, namespace: o.namespace ?? 'default' } }
        : {}),
    })),
  };
}

export interface PodSpec {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  ip?: string;
  node?: string;
  ports?: { containerPort: number; name?: string; protocol?: string }[];
  ready?: boolean;
  /** Container state when not ready: 'probe' (running, readiness failing), 'crash', 'pull'. */
  why?: 'probe' | 'crash' | 'pull';
  restarts?: number;
  owner?: { kind: string; name: string };
  readinessProbe?: J;
}

export function aPod(o: PodSpec = {}): KubeObject {
  const ready = o.ready ?? true;
  const name = o.name ?? 'web-1';
  const state =
    ready || o.why === 'probe' || o.why === undefined
      ? { running: { startedAt: '2024-01-01T00:00:00Z' } }
      : o.why === 'crash'
        ? {
            waiting: {
              reason: 'CrashLoopBackOff',
              message: 'back-off 5m0s restarting failed container',
            },
          }
        : { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "web:typo"' } };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      labels: o.labels ?? { app: 'web', 'pod-template-hash': '7d9f8c' },
      ownerReferences: [o.owner ?? { kind: 'ReplicaSet', name: 'web-7d9f8c' }],
    },
    spec: {
      nodeName: o.node ?? 'node-a',
      containers: [
        {
          name: 'app',
          ports: (o.ports ?? [{ containerPort: 8080, name: 'http' }]).map((p) => ({
            protocol: 'TCP',
            ...p,
          })),
          readinessProbe: o.readinessProbe ?? { httpGet: { path: '/ready', port: 8080 } },
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: o.ip ?? '10.244.0.5',
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          ...(ready
            ? {}
            : { reason: 'ContainersNotReady', message: 'containers with unready status: [app]' }),
        },
      ],
      containerStatuses: [
        {
          name: 'app',
          ready,
          restartCount: o.restarts ?? 0,
          state,
          ...(o.why === 'crash'
            ? { lastState: { terminated: { exitCode: 1, reason: 'Error' } } }
            : {}),
        },
      ],
    },
  };
}

/** The two Pods behind the default slice. */
export const webPods = (o: Partial<PodSpec> = {}) => [
  aPod({ name: 'web-1', ip: '10.244.0.5', node: 'node-a', ...o }),
  aPod({ name: 'web-2', ip: '10.244.1.6', node: 'node-b', ...o }),
];

export function aNode(name: string, ip: string, podCIDR: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { podCIDR, podCIDRs: [podCIDR] },
    status: {
      addresses: [{ type: 'InternalIP', address: ip }],
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

export const twoNodes = () => [
  aNode('node-a', '192.0.2.10', '10.244.0.0/24'),
  aNode('node-b', '192.0.2.11', '10.244.1.0/24'),
];

export function kubeDns(o: { ready?: boolean; pods?: number } = {}): KubeObject[] {
  const ready = o.ready ?? true;
  const pods = Array.from({ length: o.pods ?? 1 }, (_, i) =>
    aPod({
      name: `coredns-5d78c9869d-${i}`,
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-dns' },
      ip: `10.244.${i}.2`,
      node: i === 0 ? 'node-a' : 'node-b',
      ready,
      why: 'crash',
      restarts: ready ? 0 : 12,
      ports: [{ containerPort: 53, name: 'dns', protocol: 'UDP' }],
    }),
  );
  return [
    aService({
      name: 'kube-dns',
      namespace: 'kube-system',
      spec: {
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        selector: { 'k8s-app': 'kube-dns' },
        ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 }],
      },
    }),
    anEndpointSlice({
      service: 'kube-dns',
      namespace: 'kube-system',
      portName: 'dns',
      port: 53,
      protocol: 'UDP',
      endpoints: pods.map((p, i) => ({
        ip: `10.244.${i}.2`,
        node: i === 0 ? 'node-a' : 'node-b',
        pod: p.metadata!.name,
        ready,
      })),
    }),
    ...pods,
  ];
}

export function kubeProxy(
  nodes = ['node-a', 'node-b'],
  o: { notReadyOn?: string } = {},
): KubeObject[] {
  return nodes.map((n, i) =>
    aPod({
      name: `kube-proxy-${i}x9z`,
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-proxy' },
      ip: i === 0 ? '192.0.2.10' : '192.0.2.11',
      node: n,
      owner: { kind: 'DaemonSet', name: 'kube-proxy' },
      ready: o.notReadyOn !== n,
      why: 'crash',
      ports: [],
    }),
  );
}

export function facts(objects: KubeObject[], nodes: Facts['nodes'] = {}): Facts {
  return { objects, nodes, meta: { context: 'test' } };
}

/** Facts whose Service lists are whole, as a live run's or `snapshot save --all -A`'s are: "no
 * Service X" then means the API has none (facts/service-list-scope.ts). */
export const listedWhole = (f: Facts): Facts => ({
  ...f,
  meta: { ...f.meta, capturedAt: '2026-01-01T00:00:00Z' },
});

/** A healthy two-node cluster around "web". */
export function healthy(): KubeObject[] {
  return [aService(), anEndpointSlice(), ...webPods(), ...twoNodes(), ...kubeDns(), ...kubeProxy()];
}

/** The same cluster where Cilium replaces kube-proxy: its agents run (with no status answered)
 * with cilium-config's `config`, and no kube-proxy does. */
export function ciliumCluster(config: Record<string, string> = {}): KubeObject[] {
  return [
    aService(),
    anEndpointSlice(),
    ...webPods(),
    ...twoNodes(),
    ...kubeDns(),
    aCiliumAgent('node-a'),
    aCiliumAgent('node-b'),
    aCiliumConfig(config),
  ];
}

export const TARGET = { namespace: 'default', service: 'web' };

/** Runs one check; a pending result is returned as a single "pending" pseudo-finding. */
export function run(
  check: Check,
  f: Facts,
  options: Partial<DiagnoseOptions> = {},
  target = TARGET,
): Finding[] {
  return runStep(check, new CheckContext(f, target, { code: allModes, ...options })).findings;
}

/** "id:status" of each finding, for one-line table assertions. */
export const ids = (findings: Finding[]) => findings.map((f) => `${f.id}:${f.status}`);

/** Replace the object of a kind/name in a list. */
export function replace(
  objects: KubeObject[],
  kind: string,
  name: string,
  by: KubeObject,
): KubeObject[] {
  return objects.map((o) => (o.kind === kind && o.metadata?.name === name ? by : o));
}

/** The iptables-save text current kube-proxy writes on `node` for these objects (expected.ts). */
export function dumpFor(objects: KubeObject[], node: string): string {
  return expectedSave(expectedRules(clusterView(objects), node));
}

/** Both nodes' dumps for these objects, as Facts node outputs. */
export function dumps(objects: KubeObject[], nodes = ['node-a', 'node-b']): Facts['nodes'] {
  return Object.fromEntries(nodes.map((n) => [n, { 'iptables-save': dumpFor(objects, n) }]));
}

/** What the probe scripts print (cluster/nodes/commands.ts). */
export const probeOut = {
  tcpOk: (ip: string, port: number) =>
    `Connection to ${ip} ${port} port [tcp/*] succeeded!\nkdebug-probe tcp-connect tool=nc exit=0\n`,
  tcpRefused: (ip: string, port: number) =>
    `nc: connect to ${ip} port ${port} (tcp) failed: Connection refused\nkdebug-probe tcp-connect tool=nc exit=1\n`,
  tcpTimeout: () => 'kdebug-probe tcp-connect tool=nc exit=124\n',
  pingLost: (ip: string) =>
    `PING ${ip} (${ip}) 56(84) bytes of data.\n\n--- ${ip} ping statistics ---\n1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\nkdebug-probe icmp-echo tool=ping exit=1\n`,
  pingOk: (ip: string) =>
    `PING ${ip} (${ip}) 56(84) bytes of data.\n64 bytes from ${ip}: icmp_seq=1 ttl=64 time=0.045 ms\n\n--- ${ip} ping statistics ---\n1 packets transmitted, 1 received, 0% packet loss, time 0ms\n\nkdebug-probe icmp-echo tool=ping exit=0\n`,
  dig: (name: string, type: string, answers: string[], status = 'NOERROR') =>
    `;; Got answer:\n;; ->>HEADER<<- opcode: QUERY, status: ${status}, id: 1\n\n;; ANSWER SECTION:\n${answers.map((a) => `${name}.\t30\tIN\t${type}\t${a}`).join('\n')}\n\nkdebug-probe dns-lookup tool=dig exit=0\n`,
  digRefused: (server: string) =>
    `;; communications error to ${server}#53: connection refused\n;; no servers could be reached\n\nkdebug-probe dns-lookup tool=dig exit=9\n`,
};
