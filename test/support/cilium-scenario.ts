// The Cilium scenario: the demo cluster with Cilium 1.18 replacing kube-proxy (no kube-proxy
// DaemonSet, cilium-config's kube-proxy-replacement true, an agent Pod per node). Each node
// records what the agent lists, as it lists it: its status, its load-balancer tables and its BPF
// maps, written for the API state the agent last reconciled
// (src/core/dataplane/cilium/expected/render.ts).
import { CILIUM_STEMS } from '../../src/core/dataplane/cilium/agent/agent.js';
import {
  CILIUM_DEFAULTS,
  expectedCilium,
} from '../../src/core/dataplane/cilium/expected/expected.js';
import {
  CILIUM_MAP_DEFAULTS,
  expectedMaps,
} from '../../src/core/dataplane/cilium/maps/expected.js';
import {
  backendsTable,
  bpfLbList,
  frontendsTable,
} from '../../src/core/dataplane/cilium/expected/render.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { CAPTURED_AT, modernCluster, type Json } from './scenario-cluster.js';
import { ipBrief } from './scenario-dump.js';
import {
  CLUSTER,
  MADE,
  NODES,
  edit,
  facts,
  key,
  podReplaced,
  type NodeName,
  type Scenario,
} from './scenarios.js';

const CILIUM = 'v1.18.6';
const AGENTS: Record<NodeName, string> = {
  'vm-12-7-centos': 'cilium-5xq2d',
  'vm-12-11-centos': 'cilium-lk8wz',
};

function agentPod(node: NodeName): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: AGENTS[node],
      namespace: 'kube-system',
      labels: { 'k8s-app': 'cilium', 'app.kubernetes.io/name': 'cilium-agent' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'cilium', controller: true },
      ],
      creationTimestamp: new Date(Date.parse(CAPTURED_AT) - 86_400_000)
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
    },
    spec: {
      nodeName: node,
      hostNetwork: true,
      containers: [
        {
          name: 'cilium-agent',
          image: `quay.io/cilium/cilium:${CILIUM}@sha256:6fbe3e2b3c5bd7f3fb8a6a4bbcc0d7c3f2b0a4e4f1a9c1b2e3d4f5a6b7c8d9e0`,
        },
      ],
    },
    status: {
      phase: 'Running',
      hostIP: NODES[node].ip,
      podIP: NODES[node].ip,
      podIPs: [{ ip: NODES[node].ip }],
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [
        {
          name: 'cilium-agent',
          ready: true,
          restartCount: 0,
          state: { running: { startedAt: CAPTURED_AT } },
        },
      ],
    },
  };
}

const CILIUM_CONFIG: Json = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cilium-config', namespace: 'kube-system' },
  data: {
    'kube-proxy-replacement': 'true',
    'bpf-lb-sock': 'true',
    'bpf-lb-algorithm': 'random',
    'bpf-lb-mode': 'snat',
    'enable-ipv4': 'true',
    'enable-ipv6': 'false',
    'cluster-pool-ipv4-cidr': '10.244.0.0/16',
    'routing-mode': 'tunnel',
    'tunnel-protocol': 'vxlan',
  },
};

/** `cilium-dbg status --verbose`, the part kdebug reads. */
const status = (node: NodeName) => `KVStore:                 Disabled
Kubernetes:              Ok         1.29 (v1.29.10) [linux/amd64]
KubeProxyReplacement:    True   [eth0   ${NODES[node].ip} fe80::5054:ff:fe3c:1a2b (Direct Routing)]
Host firewall:           Disabled
SRv6:                    Disabled
CNI Chaining:            none
CNI Config file:         successfully wrote CNI configuration file to /host/etc/cni/net.d/05-cilium.conflist
Cilium:                  Ok   ${CILIUM.slice(1)} (v${CILIUM.slice(1)}-3bb33f3c)
NodeMonitor:             Listening for events on 2 CPUs with 64x4096 of shared memory
Cilium health daemon:    Ok
IPAM:                    IPv4: 6/254 allocated from ${NODES[node].podCIDR},
Routing:                 Network: Tunnel [vxlan]   Host: BPF
KubeProxyReplacement Details:
  Status:                 True
  Socket LB:              Enabled
  Socket LB Tracing:      Enabled
  Socket LB Coverage:     Full
  Devices:                eth0   ${NODES[node].ip} fe80::5054:ff:fe3c:1a2b (Direct Routing)
  Mode:                   SNAT
  Backend Selection:      Random
  Session Affinity:       Enabled
  NAT46/64 Support:       Disabled
  XDP Acceleration:       Disabled
  Services:
  - ClusterIP:      Enabled
  - NodePort:       Enabled (Range: 30000-32767)
  - LoadBalancer:   Enabled
  - externalIPs:    Enabled
  - HostPort:       Enabled
`;

/** A node's agent listings, for the API state it last reconciled (`synced`). */
function ciliumNodeOutputs(current: KubeObject[], node: NodeName, synced = current) {
  const n = NODES[node];
  const pods = clusterView(current).pods.filter(
    (p) => p.nodeName === node && !p.hostNetwork,
  ).length;
  const view = clusterView(synced);
  const labels = view.nodes.find((x) => x.name === node)?.labels ?? {};
  const frontends = expectedCilium(
    view,
    { name: node, labels },
    { ...CILIUM_DEFAULTS, ipv6: false },
  );
  const lines = (l: string[]) => `${l.join('\n')}\n`;
  return {
    [CILIUM_STEMS.status]: status(node),
    [CILIUM_STEMS.frontends]: lines(frontendsTable(frontends)),
    [CILIUM_STEMS.backends]: lines(backendsTable(frontends)),
    [CILIUM_STEMS.bpf]: lines(
      bpfLbList(
        expectedMaps(frontends, {
          services: view.services,
          nodePortAddresses: [n.ip],
          options: CILIUM_MAP_DEFAULTS,
        }),
      ),
    ),
    'ip-addr': ipBrief(node, n.ip, n.podCIDR, pods),
  };
}

/** The demo cluster with kube-proxy replaced: its DaemonSet, Pods and ConfigMap gone. */
function ciliumCluster(): KubeObject[] {
  const base = modernCluster();
  const kubeProxy = base
    .filter((o) => /^(Pod|DaemonSet|ConfigMap)\/kube-system\/kube-proxy/.test(key(o)))
    .map(key);
  return edit(base, {
    drop: kubeProxy,
    put: [CILIUM_CONFIG, ...(Object.keys(NODES) as NodeName[]).map(agentPod)],
  });
}

export function ciliumStaleBackend(): Scenario {
  const { current, nodes } = podReplaced(ciliumCluster(), [], ciliumNodeOutputs);
  return {
    name: 'cilium-stale-backend',
    facts: facts(
      current,
      nodes,
      "Fault: Cilium replaces kube-proxy; vm-12-11-centos's agent still balances nginx-svc to a deleted Pod. See README.md.",
    ),
    readme: `# Scenario: Cilium replaces kube-proxy, and one agent still sends to a deleted Pod

**Fault: Cilium ${CILIUM} replaces kube-proxy; the agent on \`vm-12-11-centos\` has not reconciled
since Pod \`nginx-55fc968d9-4pddn\` (10.244.1.7) was replaced by \`nginx-55fc968d9-w7x2q\`
(10.244.1.8): its frontends of nginx-svc still list backend 10.244.1.7:80 and lack 10.244.1.8:80,
in its table and in its BPF maps alike.**

The cluster of the other scenarios without kube-proxy (no DaemonSet, no ConfigMap), with Cilium's
\`cilium-config\` (\`kube-proxy-replacement: true\`, socket LB, random selection, SNAT) and an agent
Pod per node. Each node records what kdebug reads from the agent: \`cilium-dbg status --verbose\`,
\`cilium-dbg shell -- db/show frontends\` and \`backends\`, \`cilium-dbg bpf lb list\`, written in
Cilium 1.18's own format by \`src/core/dataplane/cilium/expected/render.ts\` from what \`src/core/dataplane/cilium/expected/expected.ts\`
says the agent holds for the API state it last reconciled.

## The cluster

${CLUSTER.replace('| kube-proxy | kubeadm\'s v1.29 configuration: `mode: ""` (iptables), `clusterCIDR: 10.244.0.0/16`, no masquerade-all |', `| kube-proxy | none: Cilium ${CILIUM} replaces it (\`kube-proxy-replacement: true\`) |`)}

## What kdebug should say

- \`kdebug drift --snapshot snapshots/cilium-stale-backend --node vm-12-11-centos\`:
  \`cilium-backend-stale\` (10.244.1.7:80 on the ClusterIP and NodePort frontends) and
  \`cilium-backend-missing\` (10.244.1.8:80); exit 1. \`--node vm-12-7-centos\`: no drift.
- \`kdebug trace --snapshot snapshots/cilium-stale-backend --node vm-12-11-centos --src 10.244.1.8
  --dst 10.1.190.219:8080\`: half the connections to the deleted Pod's address.

${MADE}
`,
  };
}
