// The scenario snapshots (snapshots/<name>): the demo cluster on Kubernetes v1.29, each with one
// fault. A stuck kube-proxy is modelled the way it happens: its node holds the rules computed
// for the API state it last synced. `npx tsx test/support/make-scenarios.ts` writes them;
// test/snapshots/scenarios.test.ts checks the directories are exactly what this makes.
//
// IP conventions (from the demo): nodes vm-12-7-centos 10.0.12.7 (Pods 10.244.0.0/24) and
// vm-12-11-centos 10.0.12.11 (Pods 10.244.1.0/24), Pod CIDR 10.244.0.0/16, Services 10.1.0.0/16.
import { expectedRules, type ExpectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import {
  expectedIpvs,
  ipsetSaveLines,
  ipvsadmSaveLines,
} from '../../src/core/dataplane/ipvs/expected/expected.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import {
  CAPTURED_AT,
  VERSION,
  before,
  endpointSlice,
  endpoints,
  modernCluster,
  pod,
  service,
  sortedKeys,
  type Json,
  type SliceEndpoint,
} from './scenario-cluster.js';
import { ciliumStaleBackend } from './cilium-scenario.js';
import { ipBrief, nodeDump, type Leftovers } from './scenario-dump.js';

export interface Scenario {
  name: string;
  facts: Facts;
  readme: string;
}

export const NODES = {
  'vm-12-7-centos': { ip: '10.0.12.7', podCIDR: '10.244.0.0/24' },
  'vm-12-11-centos': { ip: '10.0.12.11', podCIDR: '10.244.1.0/24' },
} as const;
export type NodeName = keyof typeof NODES;

const SAVED_AT = new Date(Date.parse(CAPTURED_AT) + 3000)
  .toUTCString()
  .replace(/^(\w+), (\d+) (\w+) (\d+) ([\d:]+) GMT$/, '$1 $3 $2 $5 $4');

export const key = (o: Json | KubeObject) => {
  const m = o['metadata'] as { namespace?: string; name?: string };
  return `${o['kind']}/${m.namespace ?? ''}/${m.name}`;
};

/** The objects with some replaced (same kind/namespace/name), added or removed. */
export function edit(
  objects: KubeObject[],
  changes: { put?: Json[]; drop?: string[] },
): KubeObject[] {
  const put = new Map((changes.put ?? []).map((o) => [key(o), o]));
  const out = objects
    .filter((o) => !changes.drop?.includes(key(o)))
    .map((o) => (put.has(key(o)) ? (put.get(key(o)) as KubeObject) : o));
  for (const [k, o] of put) if (!objects.some((x) => key(x) === k)) out.push(o as KubeObject);
  return out;
}

export const find = (objects: KubeObject[], k: string) =>
  structuredClone(objects.find((o) => key(o) === k)) as unknown as Json;

const expectedOn = (objects: KubeObject[], node: NodeName): ExpectedRules =>
  expectedRules(clusterView(objects), node);

/** A node's recorded outputs: its rules as kube-proxy wrote them for `synced` objects. */
function nodeOutputs(
  current: KubeObject[],
  node: NodeName,
  synced = current,
  leftovers?: Leftovers,
) {
  const n = NODES[node];
  const pods = clusterView(current).pods.filter(
    (p) => p.nodeName === node && !p.hostNetwork,
  ).length;
  return {
    'iptables-save': nodeDump(
      expectedOn(synced, node),
      { node, podCIDR: n.podCIDR, clusterCIDR: '10.244.0.0/16', savedAt: SAVED_AT },
      leftovers,
    ),
    'ip-addr': ipBrief(node, n.ip, n.podCIDR, pods),
    'proxy-mode': 'iptables',
  };
}

export function facts(objects: KubeObject[], nodes: Facts['nodes'], note: string): Facts {
  return {
    objects: objects.map((o) => sortedKeys(o) as KubeObject),
    nodes,
    meta: {
      context: 'kubernetes-admin@kubernetes',
      server: 'https://10.0.12.7:6443',
      // the Service each scenario is about: svc --snapshot without a name diagnoses it
      namespace: 'default',
      service: 'nginx-svc',
      capturedAt: CAPTURED_AT,
      kdebugVersion: '0.1.0',
      note,
    },
  };
}

export const CLUSTER = `| what | value |
|---|---|
| nodes | \`vm-12-7-centos\` 10.0.12.7 (control plane, Pods 10.244.0.0/24), \`vm-12-11-centos\` 10.0.12.11 (Pods 10.244.1.0/24) |
| software | Kubernetes ${VERSION} (kubeadm), containerd 1.7.22, flannel v0.25.6 vxlan, Rocky Linux 9.4, iptables 1.8.10 (nf_tables); docker is installed too (docker0, its chains) |
| Pod CIDR / Service CIDR | 10.244.0.0/16 / 10.1.0.0/16 |
| kube-proxy | kubeadm's v1.29 configuration: \`mode: ""\` (iptables), \`clusterCIDR: 10.244.0.0/16\`, no masquerade-all |`;

export const MADE = `## How it was made

The demo snapshot (\`snapshots/nginx-svc\`) upgraded to the same cluster on Kubernetes ${VERSION}
(images, versions, containerd, \`podIPs\`, kubeadm's v1.29 kube-proxy ConfigMap, times shifted to
${CAPTURED_AT}), then the change this scenario is about. Each node's \`iptables-save.txt\` is
what kube-proxy ${VERSION} writes for the API state it last synced (computed by
\`src/core/dataplane/kube-proxy/expected.ts\`), with kubelet's chains (\`KUBE-IPTABLES-HINT\`, \`KUBE-KUBELET-CANARY\`,
\`KUBE-FIREWALL\`), flannel v0.25's \`FLANNEL-POSTRTG\` / \`FLANNEL-FWD\` and docker's chains around it;
Service order in the shared chains is shuffled per node, as Go's map order does. Every dump loads
with the real \`iptables-restore\` (checked by \`test/snapshots/scenarios.test.ts\`).
Regenerate with \`npx tsx test/support/make-scenarios.ts\`; the test fails when the files differ
from what \`test/support/scenarios.ts\` makes.`;

// --- the objects scenarios add ----------------------------------------------------------------

const NGINX_SLICE = 'EndpointSlice/default/nginx-svc-7c6vz';
const NGINX_KH24K = { ip: '10.244.0.3', node: 'vm-12-7-centos', pod: 'nginx-55fc968d9-kh24k' };
const nginxEndpoints = (second: SliceEndpoint, minutes: number) => {
  const list = [NGINX_KH24K, second];
  return [
    endpointSlice({ name: 'nginx-svc' }, '7c6vz', 80, list, minutes),
    endpoints({ name: 'nginx-svc' }, 80, list, minutes),
  ];
};

const WEB_IMAGE = 'docker.io/nginxinc/nginx-unprivileged:1.27';
const webPod = (name: string, node: NodeName, ip: string, age: number) =>
  pod({
    name,
    app: 'web',
    template: '7f9c8d6b5',
    node,
    hostIP: NODES[node].ip,
    ip,
    port: 8080,
    image: WEB_IMAGE,
    age,
  });

// --- the scenarios ----------------------------------------------------------------------------

/** nginx-55fc968d9-4pddn (10.244.1.7) replaced by nginx-55fc968d9-w7x2q (10.244.1.8, same node)
 * 12 minutes ago, with `also` changed; vm-12-11-centos's kube-proxy last synced before that. */
export function podReplaced<T>(
  base: KubeObject[],
  also: Json[],
  outputs: (current: KubeObject[], node: NodeName, synced?: KubeObject[]) => T,
) {
  const replaced = { ip: '10.244.1.8', node: 'vm-12-11-centos', pod: 'nginx-55fc968d9-w7x2q' };
  const current = edit(base, {
    drop: ['Pod/default/nginx-55fc968d9-4pddn'],
    put: [webLike(replaced), ...nginxEndpoints(replaced, 12), ...also],
  });
  const nodes = {
    'vm-12-7-centos': outputs(current, 'vm-12-7-centos'),
    'vm-12-11-centos': outputs(current, 'vm-12-11-centos', base),
  };
  return { current, nodes };
}

export function staleEndpoint(): Scenario {
  const base = modernCluster();
  const proxy = find(base, 'Pod/kube-system/kube-proxy-n2jtl');
  const status = proxy['status'] as Json;
  status['conditions'] = (status['conditions'] as Json[]).map((c) =>
    c['type'] === 'Ready' || c['type'] === 'ContainersReady'
      ? {
          ...c,
          status: 'False',
          reason: 'ContainersNotReady',
          message: 'containers with unready status: [kube-proxy]',
          lastTransitionTime: before(19),
        }
      : c,
  );
  const cs = (status['containerStatuses'] as Json[])[0]!;
  Object.assign(cs, {
    ready: false,
    restartCount: 7,
    started: false,
    lastState: {
      terminated: {
        containerID: cs['containerID'],
        exitCode: 1,
        finishedAt: before(3),
        reason: 'Error',
        startedAt: before(3.2),
      },
    },
    state: {
      waiting: {
        message:
          'back-off 5m0s restarting failed container=kube-proxy pod=kube-proxy-n2jtl_kube-system(0933ab6e-4ff8-40e4-9fac-1a5fd77324ee)',
        reason: 'CrashLoopBackOff',
      },
    },
  });
  const ds = find(base, 'DaemonSet/kube-system/kube-proxy');
  Object.assign(ds['status'] as Json, { numberAvailable: 1, numberReady: 1, numberUnavailable: 1 });
  const { current, nodes } = podReplaced(base, [proxy, ds], nodeOutputs);
  return {
    name: 'stale-endpoint',
    facts: facts(
      current,
      nodes,
      'Fault: vm-12-11-centos still routes nginx-svc to a deleted Pod (kube-proxy crash-looping). See README.md.',
    ),
    readme: `# Scenario: a node whose rules still point at a deleted Pod

**Fault: kube-proxy on \`vm-12-11-centos\` is crash-looping, so that node still sends half of
\`default/nginx-svc\`'s connections to 10.244.1.7, a Pod that no longer exists.**

Pod \`nginx-55fc968d9-4pddn\` (10.244.1.7 on vm-12-11-centos) was deleted 12 minutes before the
capture; its ReplicaSet replaced it with \`nginx-55fc968d9-w7x2q\` (10.244.1.8, same node). The
EndpointSlice \`nginx-svc-7c6vz\` and the Endpoints list 10.244.0.3 and 10.244.1.8.
\`kube-proxy-n2jtl\`, the kube-proxy Pod on vm-12-11-centos, has been in CrashLoopBackOff since
before that (7 restarts, not ready; the DaemonSet shows 1 of 2 available). A kube-proxy that is
not running leaves its last rules in place: vm-12-11-centos still DNATs 50% of nginx-svc's new
connections to 10.244.1.7:80 (they time out) and has no rule for 10.244.1.8:80.
vm-12-7-centos is up to date.

## The cluster

${CLUSTER}

Services as in the demo: \`default/nginx-svc\` 10.1.190.219:8080 -> 80, \`default/kubernetes\`,
\`kube-system/kube-dns\`.

## What kdebug should say

- \`kdebug drift --snapshot snapshots/stale-endpoint --node vm-12-11-centos\`: \`endpoint-stale\`
  (error, 10.244.1.7:80, "a Pod that no longer exists") and \`endpoint-missing\` (warning,
  10.244.1.8:80); exit 1. \`--node vm-12-7-centos\`: no drift.
- A diagnosis of \`default/nginx-svc\`: the Service, its selector, Pods and endpoints are fine;
  the rules on vm-12-11-centos are stale, and kube-proxy on that node is not running.

${MADE}
`,
  };
}

/** The replacement nginx Pod, shaped like its siblings. */
function webLike(e: SliceEndpoint): Json {
  return pod({
    name: e.pod,
    app: 'nginx',
    template: '55fc968d9',
    node: e.node,
    hostIP: NODES[e.node as NodeName].ip,
    ip: e.ip,
    port: 80,
    image: 'nginx',
    age: 12,
  });
}

function webObjects(opts: {
  nodePort?: number;
  local?: boolean;
  pods: [string, NodeName, string][];
  age: number;
}) {
  const list = opts.pods.map(([p, node, ip]) => ({ ip, node, pod: p }));
  return [
    service({
      name: 'web',
      app: 'web',
      clusterIP: '10.1.23.45',
      port: 80,
      targetPort: 8080,
      age: opts.age,
      ...(opts.nodePort
        ? {
            type: 'NodePort' as const,
            nodePort: opts.nodePort,
            externalTrafficPolicy: opts.local ? ('Local' as const) : ('Cluster' as const),
          }
        : {}),
    }),
    ...opts.pods.map(([p, node, ip]) => webPod(p, node, ip, opts.age - 1)),
    endpointSlice({ name: 'web' }, 'x4k2p', 8080, list, opts.age - 2),
    endpoints({ name: 'web' }, 8080, list, opts.age - 2),
  ];
}

export function missingServiceRules(): Scenario {
  const demo = modernCluster();
  // nginx-svc (and the slice and Endpoints the controllers wrote for it) created 25 minutes ago
  const recent = ['Service/default/nginx-svc', NGINX_SLICE, 'Endpoints/default/nginx-svc'];
  const retimed = recent.map((k) => {
    const o = find(demo, k);
    const meta = o['metadata'] as Json;
    meta['creationTimestamp'] = before(25);
    const ann = meta['annotations'] as Json | undefined;
    if (ann?.['endpoints.kubernetes.io/last-change-trigger-time'])
      ann['endpoints.kubernetes.io/last-change-trigger-time'] = before(25);
    return o;
  });
  const current = edit(demo, { put: retimed });
  const before25 = edit(demo, { drop: recent });
  const nodes = {
    'vm-12-7-centos': nodeOutputs(current, 'vm-12-7-centos'),
    // kube-proxy on vm-12-11-centos stopped syncing before nginx-svc was created
    'vm-12-11-centos': nodeOutputs(current, 'vm-12-11-centos', before25),
  };
  return {
    name: 'missing-service-rules',
    facts: facts(
      current,
      nodes,
      'Fault: vm-12-11-centos has no rules for default/nginx-svc (kube-proxy stuck). See README.md.',
    ),
    readme: `# Scenario: a node missing one Service's rules entirely

**Fault: kube-proxy on \`vm-12-11-centos\` stopped syncing before \`default/nginx-svc\` was
created, so that node has no rule at all for nginx-svc's ClusterIP 10.1.190.219:8080: from
vm-12-11-centos and its Pods the Service does not answer, from vm-12-7-centos it works.**

\`default/nginx-svc\` (ClusterIP 10.1.190.219, \`http\` 8080/TCP -> 80) was created 25 minutes
before the capture, in front of the existing nginx Deployment: \`nginx-55fc968d9-kh24k\`
10.244.0.3 on vm-12-7-centos and \`nginx-55fc968d9-4pddn\` 10.244.1.7 on vm-12-11-centos, both
ready and in the EndpointSlice \`nginx-svc-7c6vz\`. vm-12-7-centos has nginx-svc's rules.
vm-12-11-centos has every other Service's rules, exactly as kube-proxy wrote them before
nginx-svc existed, and none of nginx-svc's: connections to 10.1.190.219:8080 from there leave the
node unchanged and time out. Nothing in the objects shows it: \`kube-proxy-n2jtl\` is Running and
Ready (kubeadm's kube-proxy has no readiness probe); only its health endpoint
(\`:10256/healthz\`) and its log would say that syncs are failing.

## The cluster

${CLUSTER}

Services as in the demo: \`default/nginx-svc\`, \`default/kubernetes\`, \`kube-system/kube-dns\`.

## What kdebug should say

- \`kdebug drift --snapshot snapshots/missing-service-rules --node vm-12-11-centos\`:
  \`service-rules-missing\` (error) for \`default/nginx-svc:http\` (10.1.190.219:8080/tcp); exit 1.
  \`--node vm-12-7-centos\`: no drift.
- A diagnosis of \`default/nginx-svc\`: Service, Pods and endpoints are fine; kube-proxy on
  vm-12-11-centos has not written this Service.

${MADE}
`,
  };
}

export function nodePortLocalNoEndpoint(): Scenario {
  const demo = modernCluster();
  const nginx = find(demo, 'Service/default/nginx-svc');
  const spec = nginx['spec'] as Json;
  Object.assign(spec, { type: 'NodePort', externalTrafficPolicy: 'Local' });
  (spec['ports'] as Json[])[0]!['nodePort'] = 30080;
  const current = edit(demo, {
    // the Deployment was scaled to one replica: the Pod on vm-12-11-centos went away
    drop: ['Pod/default/nginx-55fc968d9-4pddn'],
    put: [
      nginx,
      endpointSlice({ name: 'nginx-svc' }, '7c6vz', 80, [NGINX_KH24K], 55),
      endpoints({ name: 'nginx-svc' }, 80, [NGINX_KH24K], 55),
      ...webObjects({
        age: 40,
        nodePort: 30081,
        pods: [
          ['web-7f9c8d6b5-2xkqp', 'vm-12-7-centos', '10.244.0.5'],
          ['web-7f9c8d6b5-q8nrm', 'vm-12-11-centos', '10.244.1.5'],
        ],
      }),
    ],
  });
  const nodes = {
    'vm-12-7-centos': nodeOutputs(current, 'vm-12-7-centos'),
    'vm-12-11-centos': nodeOutputs(current, 'vm-12-11-centos'),
  };
  return {
    name: 'nodeport-local-no-endpoint',
    facts: facts(
      current,
      nodes,
      'Fault: node port 30080 of default/nginx-svc (externalTrafficPolicy Local) times out on vm-12-11-centos, which runs no nginx Pod. See README.md.',
    ),
    readme: `# Scenario: a NodePort Service with externalTrafficPolicy Local, and a node without a local endpoint

**Fault: \`http://10.0.12.11:30080\` (\`default/nginx-svc\` through vm-12-11-centos) times out,
while \`http://10.0.12.7:30080\` works: nginx-svc has \`externalTrafficPolicy: Local\` and its
only Pod runs on vm-12-7-centos. kube-proxy is doing exactly what it should: a node without a
local endpoint drops external traffic for such a Service (the rule
\`"default/nginx-svc:http has no local endpoints" ... -j DROP\` in filter KUBE-EXTERNAL-SERVICES).**

\`default/nginx-svc\`: NodePort, ClusterIP 10.1.190.219, \`http\` 8080/TCP -> 80, node port
30080, \`externalTrafficPolicy: Local\`. The nginx Deployment was scaled to one replica 55 minutes
before the capture: \`nginx-55fc968d9-kh24k\` 10.244.0.3 on vm-12-7-centos is its only Pod. Pods
and processes on vm-12-11-centos still reach nginx-svc through its ClusterIP, and even through the
node port (kube-proxy sends locally originated traffic to all endpoints).
For contrast \`default/web\` (ClusterIP 10.1.23.45, \`http\` 80/TCP -> 8080) is a NodePort too
(node port 30081, \`externalTrafficPolicy: Cluster\`) with a Pod on each node: it answers on both
nodes, masqueraded, because either node may forward to the Pod on the other one.

## The cluster

${CLUSTER}

## What kdebug should say

- \`kdebug drift --snapshot snapshots/nodeport-local-no-endpoint --all-nodes\`: no drift (exit 0);
  on vm-12-11-centos an informational \`local-policy-drop\` for \`default/nginx-svc:http\`
  explaining the drop and naming the node that answers.
- \`kdebug trace --snapshot snapshots/nodeport-local-no-endpoint --node vm-12-11-centos --src 203.0.113.50 --dst 10.0.12.11:30080\`:
  DROP. The same on vm-12-7-centos: DNAT to 10.244.0.3:80, not masqueraded (the client IP is
  kept). Through web's node port 30081: DNAT to either web Pod, masqueraded.
- A diagnosis of \`default/nginx-svc\`: the Service works; explain externalTrafficPolicy Local
  and which node to use (or switch to \`Cluster\` if the client IP does not matter).

${MADE}
`,
  };
}

export function orphanChains(): Scenario {
  const base = modernCluster();
  // what kube-proxy last wrote for default/old-web, before the Service was deleted
  const old = edit(base, {
    put: [
      service({
        name: 'old-web',
        app: 'old-web',
        clusterIP: '10.1.77.7',
        port: 80,
        targetPort: 8080,
        age: 3000,
      }),
      endpointSlice(
        { name: 'old-web' },
        'q2w4r',
        8080,
        [
          { ip: '10.244.0.6', node: 'vm-12-7-centos', pod: 'old-web-5d8f6b9c4-hx2lm' },
          { ip: '10.244.1.6', node: 'vm-12-11-centos', pod: 'old-web-5d8f6b9c4-zr7tq' },
        ],
        2990,
      ),
    ],
  });
  const sp = expectedOn(old, 'vm-12-7-centos').servicePorts.find(
    (s) => s.name === 'default/old-web:http',
  )!;
  const leftovers = sp.nat.filter((l) => l.chain !== 'KUBE-SERVICES');
  const nodes = {
    'vm-12-7-centos': nodeOutputs(base, 'vm-12-7-centos', base, leftovers),
    'vm-12-11-centos': nodeOutputs(base, 'vm-12-11-centos'),
  };
  return {
    name: 'orphan-chains',
    facts: facts(
      base,
      nodes,
      'Fault: vm-12-7-centos keeps the chains of the deleted Service default/old-web. See README.md.',
    ),
    readme: `# Scenario: leftover chains of a deleted Service

**Fault: vm-12-7-centos still holds the nat chains of \`default/old-web\`, a Service deleted
40 minutes before the capture: \`KUBE-SVC-...\` and two \`KUBE-SEP-...\` chains that DNAT to
10.244.0.6:8080 and 10.244.1.6:8080, Pods that no longer exist. Nothing jumps to them, so they
route no traffic; they are a sign that kube-proxy's cleanup failed on that node.**

\`default/old-web\` (ClusterIP 10.1.77.7, \`http\` 80/TCP -> 8080) and its Deployment were deleted;
no object in the snapshot mentions it any more. kube-proxy rewrites KUBE-SERVICES on every sync,
so the entry rule for 10.1.77.7 is gone on both nodes; it deletes a removed Service's own chains
only when it can list the chains that exist (an \`iptables-save\` during the sync: "Failed to
execute iptables-save: stale chains will not be deleted"). On vm-12-7-centos that listing failed in
the sync that removed old-web, and the chains stayed, with the rules they had. vm-12-11-centos is
clean.

## The cluster

${CLUSTER}

Services as in the demo: \`default/nginx-svc\`, \`default/kubernetes\`, \`kube-system/kube-dns\`.

## What kdebug should say

- \`kdebug drift --snapshot snapshots/orphan-chains --node vm-12-7-centos\`: \`orphan-chain\`
  (warning) naming \`default/old-web:http\`, its chains and their DNAT targets; exit 1.
  \`--node vm-12-11-centos\`: no drift.
- They do not affect any current Service: a diagnosis of \`default/nginx-svc\` is healthy.

${MADE}
`,
  };
}

/** A node's recorded outputs in IPVS mode: its virtual servers, ipsets and kube-ipvs0 as
 * kube-proxy programmed them for `synced` objects, and the nat table's IPVS-mode rules. */
function ipvsNodeOutputs(current: KubeObject[], node: NodeName, synced = current) {
  const n = NODES[node];
  const pods = clusterView(current).pods.filter(
    (p) => p.nodeName === node && !p.hostNetwork,
  ).length;
  const brief = ipBrief(node, n.ip, n.podCIDR, pods);
  const own = brief
    .split('\n')
    .flatMap((l) => l.trim().split(/\s+/).slice(2))
    .map((a) => a.split('/')[0]!);
  const exp = expectedIpvs(expectedOn(synced, node), { nodeAddresses: own });
  return {
    'ipvsadm-save': `${ipvsadmSaveLines(exp).join('\n')}\n`,
    'ipset-save': `${ipsetSaveLines(exp).join('\n')}\n`,
    'ip-addr': `${brief.trimEnd()}\nkube-ipvs0       DOWN           ${exp.bound.map((ip) => `${ip}/32`).join(' ')} \n`,
    'iptables-save': IPVS_NAT,
    'proxy-mode': 'ipvs',
  };
}

/** The nat table kube-proxy writes in IPVS mode: its ipsets matched, no per-Service chains. */
const IPVS_NAT = `# Generated by iptables-save v1.8.10 (nf_tables) on ${SAVED_AT}
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-KUBELET-CANARY - [0:0]
:KUBE-LOAD-BALANCER - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-NODE-PORT - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SERVICES - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m comment --comment "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose" -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN
-A KUBE-SERVICES ! -s 10.244.0.0/16 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ
-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT
-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT
COMMIT
# Completed on ${SAVED_AT}
`;

export function ipvsStaleRealServer(): Scenario {
  const base = edit(modernCluster(), {}).map((o) => {
    if (key(o) !== 'ConfigMap/kube-system/kube-proxy') return o;
    const cm = structuredClone(o) as unknown as Json;
    const data = cm['data'] as Record<string, string>;
    data['config.conf'] = data['config.conf']!.replace('mode: ""', 'mode: ipvs');
    return cm as unknown as KubeObject;
  });
  const { current, nodes } = podReplaced(base, [], ipvsNodeOutputs);
  return {
    name: 'ipvs-stale-real-server',
    facts: facts(
      current,
      nodes,
      'Fault: in IPVS mode, vm-12-11-centos still balances nginx-svc to a deleted Pod. See README.md.',
    ),
    readme: `# Scenario: IPVS mode, a virtual server that still sends to a deleted Pod

**Fault: kube-proxy runs in IPVS mode, and on \`vm-12-11-centos\` it has not synced since Pod
\`nginx-55fc968d9-4pddn\` (10.244.1.7) was replaced by \`nginx-55fc968d9-w7x2q\` (10.244.1.8): that
node's virtual server 10.1.190.219:8080 still has the real server 10.244.1.7:80 and lacks
10.244.1.8:80.**

The cluster of the other scenarios with kube-proxy's ConfigMap set to \`mode: ipvs\` (scheduler rr,
the default). Each node records what kdebug reads in this mode: \`ipvsadm-save -n\`, \`ipset list
-o save\` and \`ip -br addr\` (every cluster IP on \`kube-ipvs0\`), computed from the objects by
\`src/core/dataplane/ipvs/expected/expected.ts\` for the API state each node last synced, and the
nat table's IPVS-mode rules (kdebug does not compare those).

## The cluster

${CLUSTER.replace('`mode: ""` (iptables)', '`mode: ipvs`')}

## What kdebug should say

- \`kdebug drift --snapshot snapshots/ipvs-stale-real-server --node vm-12-11-centos\`:
  \`endpoint-stale\` (10.244.1.7:80 still a real server), \`endpoint-missing\` (10.244.1.8:80) and
  \`ipset-entry-missing\` (KUBE-LOOP-BACK lacks the new local endpoint); exit 1.
  \`--node vm-12-7-centos\`: no drift.
- A diagnosis of \`default/nginx-svc\`: fails at Rules on vm-12-11-centos; the ping note says
  the node answers a ping itself, its cluster IP being on kube-ipvs0.

${MADE}
`,
  };
}

export const SCENARIOS = [
  staleEndpoint,
  missingServiceRules,
  nodePortLocalNoEndpoint,
  orphanChains,
  ipvsStaleRealServer,
  ciliumStaleBackend,
];
