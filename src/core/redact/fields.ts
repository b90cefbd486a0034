// What a redacted snapshot keeps of each object: the fields kube/objects/ and the checks read, per kind,
// as data; everything else is dropped. A new read of a raw field is added here too
// (test/core/redact-allowlist.test.ts compares the model and the diagnosis before and after).
import type { KubeObject } from '../model.js';
import { familyOf } from '../ipv6.js';
import { kubernetesPlugin } from '../checks/dns/records.js';
import { parseVersion } from '../version.js';
import { FLAGS, PROXY_CONFIG_DATA } from './kube-proxy-fields.js';
import { each, isObj, Rewrite, S, strings, type Fields } from './prune.js';

/** What stands in for a value whose presence is read but whose text is not. */
const REDACTED = '(redacted)';

const TYPE = { apiVersion: S, kind: S };
const NAMED = { name: S, namespace: S };

const SERVICE: Fields = {
  ...TYPE,
  // checks/dns/records.ts finds the kube-dns Service by this label
  metadata: { ...NAMED, labels: strings('k8s-app') },
  spec: {
    type: S,
    clusterIP: S,
    clusterIPs: each(S),
    ports: each({ name: S, protocol: S, port: S, targetPort: S, nodePort: S, appProtocol: S }),
    selector: strings(),
    externalIPs: each(S),
    loadBalancerSourceRanges: each(S),
    externalTrafficPolicy: S,
    internalTrafficPolicy: S,
    sessionAffinity: S,
    sessionAffinityConfig: { clientIP: { timeoutSeconds: S } },
    publishNotReadyAddresses: S,
    healthCheckNodePort: S,
    externalName: S,
  },
  status: { loadBalancer: { ingress: each({ ip: S, ipMode: S }) } },
};

const TARGET_REF = { kind: S, name: S, namespace: S };

const ENDPOINT_SLICE: Fields = {
  ...TYPE,
  addressType: S,
  metadata: {
    ...NAMED,
    labels: strings('kubernetes.io/service-name', 'endpointslice.kubernetes.io/managed-by'),
  },
  ports: each({ name: S, port: S, protocol: S, appProtocol: S }),
  endpoints: each({
    addresses: each(S),
    conditions: { ready: S, serving: S, terminating: S },
    nodeName: S,
    topology: strings('kubernetes.io/hostname'),
    hostname: S,
    zone: S,
    targetRef: TARGET_REF,
  }),
};

const ADDRESS = each({ ip: S, nodeName: S, targetRef: TARGET_REF });

const ENDPOINTS: Fields = {
  ...TYPE,
  metadata: NAMED,
  subsets: each({
    addresses: ADDRESS,
    notReadyAddresses: ADDRESS,
    ports: each({ name: S, port: S, protocol: S }),
  }),
};

/** A probe's kind, port and path: what the readiness explanation says. Never its headers, host
 * or command: an exec probe keeps only that it runs one. */
const PROBE: Fields = {
  httpGet: {
    port: S,
    path: new Rewrite('the path without its query', (v) =>
      typeof v === 'string' ? v.split(/[?#]/)[0] : undefined,
    ),
  },
  tcpSocket: { port: S },
  grpc: { port: S },
  exec: {
    command: new Rewrite(`"${REDACTED}" in place of the command`, (v) =>
      Array.isArray(v) ? [REDACTED] : undefined,
    ),
  },
};

/** An address and no other text: a field the model reads as an IP. */
const IP = new Rewrite('an IP address only', (v) =>
  typeof v === 'string' && familyOf(v) ? v : undefined,
);

/** A container's port; a host port and its address make Cilium's HostPort frontends. */
const PORT = { name: S, containerPort: S, protocol: S, hostPort: S, hostIP: IP };

const CONTAINER = {
  name: S,
  ports: each(PORT),
  readinessProbe: PROBE,
  livenessProbe: PROBE,
};

/** The conditions whose message the Pod's explanation quotes (the kubelet's and the scheduler's). */
const QUOTED_CONDITIONS = ['Ready', 'PodScheduled'];
const CONDITION = { type: S, status: S, reason: S };

const POD_STATUS: Fields = {
  phase: S,
  podIP: S,
  podIPs: each({ ip: S }),
  hostIP: S,
  containerStatuses: each({
    name: S,
    ready: S,
    restartCount: S,
    // a waiting message is the kubelet's ("back-off ..."); a terminated one is the container's own
    state: {
      running: {},
      waiting: { reason: S, message: S },
      terminated: { reason: S, exitCode: S },
    },
    lastState: { running: {}, waiting: { reason: S }, terminated: { reason: S, exitCode: S } },
  }),
  conditions: each(
    new Rewrite(
      `type, status, reason; the message of ${QUOTED_CONDITIONS.join(' and ')}`,
      (c, keep) =>
        keep(
          c,
          isObj(c) && QUOTED_CONDITIONS.includes(String(c['type']))
            ? { ...CONDITION, message: S }
            : CONDITION,
        ),
    ),
  ),
};

const POD_METADATA = {
  ...NAMED,
  // every label: any Service or NetworkPolicy selector may name any of them, and the nearest
  // miss of a selector quotes their values
  labels: strings(),
  deletionTimestamp: S,
  ownerReferences: each({ kind: S, name: S }),
  // part of the name of each Cilium HostPort Service the Pod makes
  uid: new Rewrite('a UID only', (v) =>
    typeof v === 'string' && /^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(v)
      ? v
      : undefined,
  ),
};

const POD_SPEC = {
  nodeName: S,
  hostNetwork: S,
  hostname: S,
  subdomain: S,
  containers: each(CONTAINER),
  initContainers: each({ ports: each(PORT) }),
};

const POD: Fields = { ...TYPE, metadata: POD_METADATA, spec: POD_SPEC, status: POD_STATUS };

/** kube-proxy's Pod also keeps its image (the version), flags and the ConfigMaps it mounts. */
const KUBE_PROXY_POD: Fields = {
  ...POD,
  spec: {
    ...POD_SPEC,
    containers: each({ ...CONTAINER, image: S, command: FLAGS, args: FLAGS }),
    volumes: each({ configMap: { name: S } }),
  },
};

/** A Cilium agent's Pod also keeps its images: the tag is the agent's release where its status
 * was not read (cilium/agent/agent.ts's ciliumImageVersion). */
const CILIUM_AGENT_POD: Fields = {
  ...POD,
  spec: { ...POD_SPEC, containers: each({ ...CONTAINER, image: S }) },
};

const COREFILE_DATA = new Rewrite('Corefile, cut to its kubernetes plugin line', (v) => {
  if (!isObj(v) || typeof v['Corefile'] !== 'string') return undefined;
  // the line of the Corefile checks/dns/records.ts reads the cluster domain from
  const line = kubernetesPlugin(v['Corefile'])?.line;
  return { Corefile: line ? `${line}\n` : '' };
});

const CONFIG_MAP: Fields = { ...TYPE, metadata: NAMED };

/** nodes/state.ts reads kube-proxy's version there (k3s: the kubelet's, "+k3s1"). */
const VERSION = new Rewrite('only a version, such as v1.31.4+k3s1', (v) =>
  typeof v === 'string' && parseVersion(v) ? v : undefined,
);

/** The taints the node controller puts on a node it finds down: node-health.ts reads them. */
const DOWN_TAINT_KEYS = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'];
const DOWN_TAINT = new Rewrite(
  "the node controller's unreachable and not-ready taints only",
  (t, keep) =>
    isObj(t) && DOWN_TAINT_KEYS.includes(String(t['key']))
      ? keep(t, { key: S, effect: S })
      : undefined,
);

const NODE: Fields = {
  ...TYPE,
  metadata: { name: S, labels: strings('kubernetes.io/os') },
  spec: { podCIDR: S, podCIDRs: each(S), taints: each(DOWN_TAINT) },
  status: {
    addresses: each({ type: S, address: S }),
    // a node not Ready is said with its reason and since when (node-health.ts)
    conditions: each({ type: S, status: S, reason: S, lastTransitionTime: S }),
    nodeInfo: { operatingSystem: S, kubeletVersion: VERSION, kubeProxyVersion: VERSION },
  },
};

/** What a live diagnosis keeps of each Node it lists (every Node: thousands on a large cluster):
 * what the checks read, as NODE, with every label and annotation and the versions as written. */
export const NODE_READ: Fields = {
  ...NODE,
  metadata: { name: S, labels: strings(), annotations: strings() },
  status: {
    ...(NODE['status'] as Fields),
    nodeInfo: { operatingSystem: S, kubeletVersion: S, kubeProxyVersion: S },
  },
};

const LABEL_SELECTOR: Fields = {
  matchLabels: strings(),
  matchExpressions: each({ key: S, operator: S, values: each(S) }),
};

// which sources may reach the Service's port: its ingress rules, peers and ports
const NETWORK_POLICY: Fields = {
  ...TYPE,
  metadata: NAMED,
  spec: {
    podSelector: LABEL_SELECTOR,
    policyTypes: each(S),
    ingress: each({
      from: each({
        podSelector: LABEL_SELECTOR,
        namespaceSelector: LABEL_SELECTOR,
        ipBlock: { cidr: S, except: each(S) },
      }),
      ports: each({ protocol: S, port: S, endPort: S }),
    }),
  },
};

/** What redaction knows of the cluster to choose a rule: kube-proxy's Pods and its ConfigMaps,
 * Cilium's agents. */
export interface RuleContext {
  isKubeProxyPod(o: KubeObject): boolean;
  isCiliumAgentPod(o: KubeObject): boolean;
  isKubeProxyConfig(o: KubeObject): boolean;
}

export interface Rule {
  /** How meta.json names it: the kind, or the kind and which of its objects. */
  name: string;
  kind: string;
  when?: (o: KubeObject, c: RuleContext) => boolean;
  keep: Fields;
}

const named = (namespace: string | undefined, name: string) => (o: KubeObject) =>
  o.metadata?.name === name && (namespace === undefined || o.metadata?.namespace === namespace);

/** The first rule of an object's kind that applies to it decides; a kind not here is dropped. */
export const RULES: Rule[] = [
  { name: 'Service', kind: 'Service', keep: SERVICE },
  { name: 'EndpointSlice', kind: 'EndpointSlice', keep: ENDPOINT_SLICE },
  { name: 'Endpoints', kind: 'Endpoints', keep: ENDPOINTS },
  {
    name: 'Pod of kube-proxy',
    kind: 'Pod',
    when: (o, c) => c.isKubeProxyPod(o),
    keep: KUBE_PROXY_POD,
  },
  {
    name: 'Pod of a Cilium agent',
    kind: 'Pod',
    when: (o, c) => c.isCiliumAgentPod(o),
    keep: CILIUM_AGENT_POD,
  },
  { name: 'Pod', kind: 'Pod', keep: POD },
  { name: 'Node', kind: 'Node', keep: NODE },
  {
    name: "ConfigMap of kube-proxy's configuration",
    kind: 'ConfigMap',
    when: (o, c) => c.isKubeProxyConfig(o),
    keep: { ...CONFIG_MAP, data: PROXY_CONFIG_DATA },
  },
  {
    name: 'ConfigMap kube-system/coredns',
    kind: 'ConfigMap',
    when: named('kube-system', 'coredns'),
    keep: { ...CONFIG_MAP, data: COREFILE_DATA },
  },
  {
    name: 'ConfigMap cilium-config',
    kind: 'ConfigMap',
    when: named(undefined, 'cilium-config'),
    // the keys whose value a Cilium setting is said read from (cilium/agent/provenance.ts): modes
    // and switches, no address or name
    keep: {
      ...CONFIG_MAP,
      data: strings(
        'kube-proxy-replacement',
        'bpf-lb-sock',
        'bpf-lb-sock-hostns-only',
        'bpf-lb-algorithm',
        'bpf-lb-mode',
        'node-port-algorithm',
        'node-port-mode',
        'enable-session-affinity',
        'service-no-backend-response',
        'node-port-range',
      ),
    },
  },
  { name: 'ConfigMap', kind: 'ConfigMap', keep: CONFIG_MAP },
  { name: 'NetworkPolicy', kind: 'NetworkPolicy', keep: NETWORK_POLICY },
  // checks/kube-proxy/ reads whether a kube-proxy DaemonSet is there and, where its Pods were
  // read by node, its rollout (daemon-set.ts): counts and generations, no names
  {
    name: 'DaemonSet',
    kind: 'DaemonSet',
    keep: {
      ...TYPE,
      metadata: { ...NAMED, generation: S },
      status: {
        desiredNumberScheduled: S,
        numberReady: S,
        updatedNumberScheduled: S,
        numberAvailable: S,
        numberMisscheduled: S,
        observedGeneration: S,
      },
    },
  },
  {
    name: 'ServiceCIDR',
    kind: 'ServiceCIDR',
    keep: { ...TYPE, metadata: NAMED, spec: { cidrs: each(S) } },
  },
];

export function ruleFor(o: KubeObject, c: RuleContext): Rule | undefined {
  return RULES.find((r) => r.kind === o.kind && (!r.when || r.when(o, c)));
}
