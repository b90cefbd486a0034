// Thousands of Nodes that exist in the lab's API only, made in seconds: each with its kube-proxy
// Pod as the DaemonSet makes one (its labels, its owner, its template, bound by spec.nodeName),
// and the status a kubelet would write on both. No kubelet serves them: an exec there fails, as
// on a lost node. Their addresses are TEST-NET-2 and TEST-NET-3, which nothing routes.
import type { ApiWrite } from './api-writer.js';
import type { ClusterClient } from './client.js';

export const simName = (i: number) => `sim-${String(i).padStart(4, '0')}`;

/** 508 documentation addresses, repeated past that: nothing reaches any of them. */
export const simAddress = (i: number) => {
  const k = i % 508;
  return k < 254 ? `198.51.100.${k + 1}` : `203.0.113.${k - 253}`;
};

export interface Simulated {
  count: number;
  /** The first one's index (sim-FROM): a cluster grown in steps adds Nodes after its own. */
  from?: number;
  /** Nodes (by name) whose Ready condition is False. */
  notReady?: string[];
  /** Nodes whose kube-proxy runs but is not ready. */
  proxyNotReady?: string[];
  /** Nodes whose kube-proxy restarted (and is ready). */
  proxyRestarted?: string[];
  /** Writes in flight at once (default 32). */
  inFlight?: number;
}

interface Owner {
  uid: string;
  labels: Record<string, string>;
  spec: { containers: { name: string; image: string }[] } & Record<string, unknown>;
}

/** The kube-proxy DaemonSet as its Pods carry it: its UID, their labels (the revision's hash
 * with them, so the DaemonSet counts them current) and its Pod template. */
function daemonSet(c: ClusterClient): Owner {
  const ds = JSON.parse(c.kubectl(['-n', 'kube-system', 'get', 'ds', 'kube-proxy', '-o', 'json']));
  // a real node's Pod, asked for by node: the list of every one is MBs once there are thousands
  const pods = JSON.parse(
    c.kubectl([
      ...['-n', 'kube-system', 'get', 'pods', '-l', 'k8s-app=kube-proxy'],
      ...['--field-selector', `spec.nodeName=${c.info.nodes[0]!.name}`, '-o', 'json'],
    ]),
  ) as { items: { metadata: { labels: Record<string, string> } }[] };
  return {
    uid: ds.metadata.uid,
    labels: pods.items[0]!.metadata.labels,
    spec: ds.spec.template.spec,
  };
}

/** How many objects a list holds, from its first item alone (the API counts the rest). */
export function countOf(c: ClusterClient, path: string): number {
  const sep = path.includes('?') ? '&' : '?';
  const list = JSON.parse(c.kubectl(['get', '--raw', `${path}${sep}limit=1`])) as {
    items: unknown[];
    metadata: { remainingItemCount?: number };
  };
  return list.items.length + (list.metadata.remainingItemCount ?? 0);
}

const nodeDoc = (i: number, s: Simulated, now: string) => {
  const name = simName(i);
  const ready = !s.notReady?.includes(name);
  const capacity = { cpu: '4', memory: '16Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      // the TTL the TTL controller gives every Node past 1,800: it has none to rewrite
      annotations: { 'node.alpha.kubernetes.io/ttl': '300' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kdebug.lab/simulated': 'true',
      },
    },
    spec: { podCIDR: `10.${128 + (i >> 8)}.${i & 255}.0/24` },
    // a Node's status is kept on create (a kubelet registers with it)
    status: {
      addresses: [
        { type: 'InternalIP', address: simAddress(i) },
        { type: 'Hostname', address: name },
      ],
      conditions: [
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'KubeletReady' : 'KubeletNotReady',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
      capacity,
      allocatable: capacity,
    },
  };
};

const podName = (i: number) => `kube-proxy-${simName(i)}`;

const podDoc = (i: number, o: Owner) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: podName(i),
    namespace: 'kube-system',
    labels: o.labels,
    ownerReferences: [
      {
        ...{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'kube-proxy', uid: o.uid },
        ...{ controller: true, blockOwnerDeletion: true },
      },
    ],
  },
  spec: { ...o.spec, nodeName: simName(i) },
});

/** The status a kubelet writes on a running kube-proxy Pod (hostNetwork: the node's address). */
function proxyStatus(
  i: number,
  image: string,
  now: string,
  o: { ready?: boolean; restarts?: number } = {},
) {
  const ready = o.ready ?? true;
  const condition = (type: string, status: boolean) => ({
    type,
    status: status ? 'True' : 'False',
    lastTransitionTime: now,
  });
  const ip = simAddress(i);
  return {
    status: {
      phase: 'Running',
      ...{ hostIP: ip, hostIPs: [{ ip }], podIP: ip, podIPs: [{ ip }], startTime: now },
      conditions: [
        condition('PodScheduled', true),
        condition('Initialized', true),
        condition('ContainersReady', ready),
        condition('Ready', ready),
      ],
      containerStatuses: [
        {
          ...{ name: 'kube-proxy', image, imageID: image, ready, started: true },
          restartCount: o.restarts ?? 0,
          state: { running: { startedAt: now } },
        },
      ],
    },
  };
}

/** Nodes whose Pods are created before the Nodes themselves: a Pod waits a few seconds for its
 * Node at most (the Pod garbage collector waits 40 s). */
const BLOCK = 500;

/** The simulated Nodes and their kube-proxy Pods, Running as `s` says: in blocks, a block's
 * Pods, then its Nodes (each new Node has its Pod already, so the DaemonSet creates none: a Pod
 * and its Node made in the same instant race it), then every Pod's status. */
export async function addSimulatedNodes(c: ClusterClient, s: Simulated): Promise<void> {
  await createSimulatedNodes(c, s);
  await startSimulatedProxies(c, s);
}

/** The Nodes and their kube-proxy Pods, Pending: a DaemonSet rolling out. */
export async function createSimulatedNodes(c: ClusterClient, s: Simulated): Promise<void> {
  const owner = daemonSet(c);
  const now = new Date().toISOString();
  const all = Array.from({ length: s.count }, (_, i) => (s.from ?? 0) + i);
  const writes: (ApiWrite | 'wait')[] = [];
  for (let b = 0; b < s.count; b += BLOCK) {
    const block = all.slice(b, b + BLOCK);
    writes.push(...block.map((i) => create(PODS, podDoc(i, owner))), 'wait');
    writes.push(...block.map((i) => create('/api/v1/nodes', nodeDoc(i, s, now))), 'wait');
  }
  await c.apiWrites(writes, s.inFlight);
}

/** The status a kubelet would write on each kube-proxy Pod of the simulated Nodes: running. */
export async function startSimulatedProxies(c: ClusterClient, s: Simulated): Promise<void> {
  const image = daemonSet(c).spec.containers[0]!.image;
  const now = new Date().toISOString();
  const writes = Array.from({ length: s.count }, (_, k): ApiWrite => {
    const i = (s.from ?? 0) + k;
    const status = proxyStatus(i, image, now, {
      ready: !s.proxyNotReady?.includes(simName(i)),
      restarts: s.proxyRestarted?.includes(simName(i)) ? 2 : 0,
    });
    return { method: 'PATCH', path: `${PODS}/${podName(i)}/status`, type: MERGE, body: status };
  });
  await c.apiWrites(writes, s.inFlight);
}

const PODS = '/api/v1/namespaces/kube-system/pods';
const MERGE = 'application/merge-patch+json';
const create = (path: string, body: unknown): ApiWrite => ({ method: 'POST', path, body });

/** The kube-proxy DaemonSet's status: Nodes that should run its Pod, those that run one, and
 * those whose Pod is ready and of the current template. */
export function proxyRollout(c: ClusterClient): {
  desired: number;
  current: number;
  ready: number;
  updated: number;
} {
  const [desired, current, ready, updated] = c
    .kubectl([
      ...['-n', 'kube-system', 'get', 'ds', 'kube-proxy', '-o'],
      'jsonpath={.status.desiredNumberScheduled} {.status.currentNumberScheduled} {.status.numberReady} {.status.updatedNumberScheduled}',
    ])
    .split(' ')
    .map(Number);
  return { desired: desired!, current: current!, ready: ready!, updated: updated! };
}

/** The kube-proxy of a simulated node ready now, as its kubelet would say. */
export function proxyReady(c: ClusterClient, node: string): void {
  const i = Number(node.slice('sim-'.length));
  const image = c.kubectl([
    ...['-n', 'kube-system', 'get', 'ds', 'kube-proxy', '-o'],
    'jsonpath={.spec.template.spec.containers[0].image}',
  ]);
  c.kubectl([
    ...['-n', 'kube-system', 'patch', 'pod', podName(i), '--subresource=status'],
    ...['--type=merge', '-p', JSON.stringify(proxyStatus(i, image, new Date().toISOString()))],
  ]);
}
