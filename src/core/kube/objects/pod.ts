// A Pod as kdebug reads it: its containers, their ports, probes and states, the ports it opens on
// the node, and whether it is kube-proxy's own.
import type { KubeObject } from '../../model.js';
import { arr, nameOf, namespaceOf, num, obj, protocol, str, type Protocol } from './fields.js';

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol: Protocol;
}

export interface HostPort {
  hostPort: number;
  /** Where the node opens it; undefined: every address. */
  hostIP?: string;
  containerPort: number;
  protocol: Protocol;
}

export interface ContainerProbe {
  kind: 'httpGet' | 'tcpSocket' | 'exec' | 'grpc' | 'unknown';
  port?: number | string;
  path?: string;
  command?: string[];
}

export interface Container {
  name: string;
  /** spec.containers[].image: for kube-proxy and the Cilium agent, their version. */
  image?: string;
  ports: ContainerPort[];
  readinessProbe?: ContainerProbe;
  livenessProbe?: ContainerProbe;
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  state: {
    kind: 'running' | 'waiting' | 'terminated' | 'unknown';
    reason?: string;
    message?: string;
    exitCode?: number;
  };
  lastState?: {
    kind: 'running' | 'waiting' | 'terminated' | 'unknown';
    reason?: string;
    exitCode?: number;
  };
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

export interface Pod {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  nodeName?: string;
  podIP?: string;
  podIPs: string[];
  hostIP?: string;
  phase: string;
  hostNetwork: boolean;
  hostname?: string;
  subdomain?: string;
  containers: Container[];
  /** The ports its containers, init ones too, open on the node (spec...ports[].hostPort). */
  hostPorts: HostPort[];
  containerStatuses: ContainerStatus[];
  conditions: PodCondition[];
  deleting: boolean;
  uid?: string;
  ownerKind?: string;
  ownerName?: string;
  raw: KubeObject;
}

/** kube-proxy's own Pod (kubeadm's DaemonSet, or any Pod labelled k8s-app=kube-proxy), or the
 * mirror of a kube-proxy static Pod its Node runs (RKE2's: component=kube-proxy, owned by the Node). */
export const isKubeProxyPod = (p: Pod) =>
  p.namespace === 'kube-system' &&
  (p.labels['k8s-app'] === 'kube-proxy' ||
    (p.ownerKind === 'DaemonSet' && p.ownerName === 'kube-proxy') ||
    (p.ownerKind === 'Node' && p.labels['component'] === 'kube-proxy'));

function probe(v: unknown): ContainerProbe | undefined {
  const o = obj(v);
  if (Object.keys(o).length === 0) return undefined;
  if (o['httpGet']) {
    const h = obj(o['httpGet']);
    return {
      kind: 'httpGet',
      port: (num(h['port']) ?? str(h['port'])) as number | string | undefined,
      path: str(h['path']),
    };
  }
  if (o['tcpSocket'])
    return {
      kind: 'tcpSocket',
      port: (num(obj(o['tcpSocket'])['port']) ?? str(obj(o['tcpSocket'])['port'])) as
        number | string | undefined,
    };
  if (o['exec']) return { kind: 'exec', command: arr(obj(o['exec'])['command']).map(String) };
  if (o['grpc']) return { kind: 'grpc', port: num(obj(o['grpc'])['port']) };
  return { kind: 'unknown' };
}

function containerState(v: unknown): ContainerStatus['state'] {
  const o = obj(v);
  for (const kind of ['running', 'waiting', 'terminated'] as const) {
    if (o[kind]) {
      const s = obj(o[kind]);
      return {
        kind,
        reason: str(s['reason']),
        message: str(s['message']),
        exitCode: num(s['exitCode']),
      };
    }
  }
  return { kind: 'unknown' };
}

export function toPod(raw: KubeObject): Pod {
  const spec = obj(raw['spec']);
  const status = obj(raw['status']);
  const owner = obj(arr(raw.metadata?.['ownerReferences'])[0]);
  const podIPs = arr(status['podIPs'])
    .map((x) => str(obj(x)['ip']))
    .filter((x): x is string => !!x);
  const podIP = str(status['podIP']);
  return {
    namespace: namespaceOf(raw) || 'default',
    name: nameOf(raw),
    labels: raw.metadata?.labels ?? {},
    nodeName: str(spec['nodeName']),
    podIP,
    podIPs: podIPs.length > 0 ? podIPs : podIP ? [podIP] : [],
    hostIP: str(status['hostIP']),
    phase: str(status['phase']) ?? 'Unknown',
    hostNetwork: spec['hostNetwork'] === true,
    hostname: str(spec['hostname']),
    subdomain: str(spec['subdomain']),
    containers: arr(spec['containers']).map((c) => {
      const o = obj(c);
      return {
        name: str(o['name']) ?? '',
        ...(str(o['image']) !== undefined ? { image: str(o['image']) } : {}),
        ports: arr(o['ports']).map((p) => {
          const q = obj(p);
          return {
            name: str(q['name']),
            containerPort: num(q['containerPort']) ?? 0,
            protocol: protocol(q['protocol']),
          };
        }),
        readinessProbe: probe(o['readinessProbe']),
        livenessProbe: probe(o['livenessProbe']),
      };
    }),
    hostPorts: [...arr(spec['initContainers']), ...arr(spec['containers'])].flatMap((c) =>
      arr(obj(c)['ports']).flatMap((p): HostPort[] => {
        const q = obj(p);
        const hostPort = num(q['hostPort']) ?? 0;
        if (hostPort <= 0) return [];
        const hostIP = str(q['hostIP']);
        return [
          {
            hostPort,
            ...(hostIP !== undefined ? { hostIP } : {}),
            containerPort: num(q['containerPort']) ?? 0,
            protocol: protocol(q['protocol']),
          },
        ];
      }),
    ),
    containerStatuses: arr(status['containerStatuses']).map((c) => {
      const o = obj(c);
      const last = containerState(o['lastState']);
      return {
        name: str(o['name']) ?? '',
        ready: o['ready'] === true,
        restartCount: num(o['restartCount']) ?? 0,
        state: containerState(o['state']),
        lastState: last.kind === 'unknown' ? undefined : last,
      };
    }),
    conditions: arr(status['conditions']).map((c) => {
      const o = obj(c);
      const s = str(o['status']);
      return {
        type: str(o['type']) ?? '',
        status: s === 'True' || s === 'False' ? s : 'Unknown',
        reason: str(o['reason']),
        message: str(o['message']),
      };
    }),
    deleting: typeof raw.metadata?.['deletionTimestamp'] === 'string',
    ...(str(raw.metadata?.['uid']) !== undefined ? { uid: str(raw.metadata?.['uid']) } : {}),
    ownerKind: str(owner['kind']),
    ownerName: str(owner['name']),
    raw,
  };
}
