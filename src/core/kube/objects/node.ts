// A Node as kdebug reads it: its addresses (InternalIP first), Pod CIDRs, readiness and OS.
import type { KubeObject } from '../../model.js';
import { arr, nameOf, obj, str } from './fields.js';

export interface NodeAddress {
  type: string;
  address: string;
}

export interface Node {
  name: string;
  addresses: NodeAddress[];
  /** InternalIP addresses first, then ExternalIP. */
  ips: string[];
  podCIDRs: string[];
  labels: Record<string, string>;
  ready: boolean | undefined;
  /** The Ready condition as the API holds it, where the Node has one. */
  readyCondition?: NodeCondition;
  /** The taints the node controller sets on a node it finds down (unreachable, not-ready). */
  downTaints: string[];
  /** status.nodeInfo.operatingSystem, else the kubernetes.io/os label ("linux", "windows"). */
  os?: string;
  raw: KubeObject;
}

export interface NodeCondition {
  /** "True", "False" or "Unknown" (the kubelet stopped posting its status). */
  status: string;
  reason?: string;
  lastTransitionTime?: string;
}

/** The taint keys the node controller puts on a node whose Ready is False or Unknown. */
const DOWN_TAINTS = new Set(['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready']);

/** A Windows node runs kube-proxy in kernelspace (HNS) mode: no iptables to read. */
export const isWindows = (n: Pick<Node, 'os'>) => n.os === 'windows';

export function toNode(raw: KubeObject): Node {
  const spec = obj(raw['spec']);
  const status = obj(raw['status']);
  const addresses = arr(status['addresses']).map((a) => ({
    type: str(obj(a)['type']) ?? '',
    address: str(obj(a)['address']) ?? '',
  }));
  const ready = arr(status['conditions'])
    .map(obj)
    .find((c) => c['type'] === 'Ready');
  const podCIDRs = arr(spec['podCIDRs'])
    .map(str)
    .filter((x): x is string => !!x);
  const podCIDR = str(spec['podCIDR']);
  const ips = [
    ...addresses.filter((a) => a.type === 'InternalIP'),
    ...addresses.filter((a) => a.type === 'ExternalIP'),
  ].map((a) => a.address);
  return {
    name: nameOf(raw),
    addresses,
    ips,
    podCIDRs: podCIDRs.length > 0 ? podCIDRs : podCIDR ? [podCIDR] : [],
    labels: raw.metadata?.labels ?? {},
    ready: ready ? ready['status'] === 'True' : undefined,
    ...(ready ? { readyCondition: conditionOf(ready) } : {}),
    downTaints: arr(spec['taints'])
      .map(obj)
      .flatMap((t) => {
        const key = str(t['key']);
        return key && DOWN_TAINTS.has(key) ? [`${key}:${str(t['effect']) ?? ''}`] : [];
      }),
    ...osOf(raw, status),
    raw,
  };
}

function conditionOf(c: Record<string, unknown>): NodeCondition {
  const [reason, since] = ['reason', 'lastTransitionTime'].map((k) => str(c[k]));
  return {
    status: str(c['status']) ?? 'Unknown',
    ...(reason ? { reason } : {}),
    ...(since ? { lastTransitionTime: since } : {}),
  };
}

function osOf(raw: KubeObject, status: Record<string, unknown>): { os?: string } {
  const os =
    str(obj(status['nodeInfo'])['operatingSystem']) ?? raw.metadata?.labels?.['kubernetes.io/os'];
  return os ? { os: os.toLowerCase() } : {};
}
