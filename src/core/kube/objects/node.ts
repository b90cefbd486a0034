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
  /** status.nodeInfo.operatingSystem, else the kubernetes.io/os label ("linux", "windows"). */
  os?: string;
  raw: KubeObject;
}

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
    ...osOf(raw, status),
    raw,
  };
}

function osOf(raw: KubeObject, status: Record<string, unknown>): { os?: string } {
  const os =
    str(obj(status['nodeInfo'])['operatingSystem']) ?? raw.metadata?.labels?.['kubernetes.io/os'];
  return os ? { os: os.toLowerCase() } : {};
}
