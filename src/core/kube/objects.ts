// Raw API JSON -> the model kdebug reasons over. Lenient on shape (objects come from real
// clusters and hand-made snapshots), strict on meaning (defaults as the API server applies them).
import { load as loadYaml } from 'js-yaml';
import type { KubeObject, ServicePortName } from '../model.js';
import { canonicalIP } from '../ipv4.js';
import { canonicalCidrOf } from '../ipv6.js';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface ServicePort {
  name: string;
  protocol: Protocol;
  port: number;
  /** A number, or a container port name. */
  targetPort: number | string;
  nodePort?: number;
  appProtocol?: string;
}

export interface Service {
  namespace: string;
  name: string;
  type: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  /** The primary ClusterIP; "None" for headless Services. */
  clusterIP?: string;
  clusterIPs: string[];
  headless: boolean;
  ports: ServicePort[];
  /** Undefined when the Service has no selector (endpoints managed by hand). */
  selector?: Record<string, string>;
  externalIPs: string[];
  /** status.loadBalancer.ingress IPs kube-proxy programs (ipMode Proxy excluded). */
  loadBalancerIPs: string[];
  loadBalancerSourceRanges: string[];
  externalTrafficPolicy: 'Cluster' | 'Local';
  internalTrafficPolicy: 'Cluster' | 'Local';
  sessionAffinity: 'None' | 'ClientIP';
  sessionAffinityTimeout: number;
  publishNotReadyAddresses: boolean;
  healthCheckNodePort?: number;
  externalName?: string;
  raw: KubeObject;
}

export interface EndpointConditions {
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions: EndpointConditions;
  nodeName?: string;
  hostname?: string;
  zone?: string;
  targetRef?: { kind?: string; name?: string; namespace?: string };
}

export interface EndpointSlice {
  namespace: string;
  name: string;
  /** The kubernetes.io/service-name label. */
  serviceName?: string;
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  ports: { name: string; port?: number; protocol: Protocol; appProtocol?: string }[];
  endpoints: SliceEndpoint[];
  managedBy?: string;
  raw: KubeObject;
}

/** The legacy v1 Endpoints object. */
export interface LegacyEndpoints {
  namespace: string;
  name: string;
  subsets: {
    addresses: { ip: string; nodeName?: string; targetRef?: { name?: string } }[];
    notReadyAddresses: { ip: string; nodeName?: string; targetRef?: { name?: string } }[];
    ports: { name: string; port: number; protocol: Protocol }[];
  }[];
  raw: KubeObject;
}

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

/** kube-proxy's own Pod (kubeadm's DaemonSet, or any Pod labelled k8s-app=kube-proxy). */
export const isKubeProxyPod = (p: Pod) =>
  p.namespace === 'kube-system' &&
  (p.labels['k8s-app'] === 'kube-proxy' ||
    (p.ownerKind === 'DaemonSet' && p.ownerName === 'kube-proxy'));

/** A Windows node runs kube-proxy in kernelspace (HNS) mode: no iptables to read. */
export const isWindows = (n: Pick<Node, 'os'>) => n.os === 'windows';

export interface ConfigMap {
  namespace: string;
  name: string;
  data: Record<string, string>;
  raw: KubeObject;
  /** Its data read as kube-proxy's configuration, kept once read: every node's state, the
   * dataplane and the expected rules ask for it (kubeProxyConfigOf). */
  proxyConfig?: KubeProxyConfig;
}

/** What kube-proxy was configured with (the kube-proxy ConfigMap's config.conf). */
export interface KubeProxyConfig {
  mode: 'iptables' | 'ipvs' | 'nftables' | 'kernelspace' | 'userspace' | string;
  clusterCIDR?: string;
  detectLocalMode: 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix' | string;
  bridgeInterface?: string;
  interfaceNamePrefix?: string;
  masqueradeAll: boolean;
  masqueradeBit: number;
  localhostNodePorts: boolean;
  nodePortAddresses: string[];
  /** IPVS mode's scheduler (`ipvs.scheduler`; kube-proxy's default, rr, when unset). */
  ipvsScheduler?: string;
  /** The feature gates set (`featureGates`, `--feature-gates`): each gate named, on or off. */
  featureGates: Record<string, boolean>;
  /** Where the values came from, for evidence. */
  source: string;
}

// --- small readers over unknown JSON ---------------------------------------------------------

type J = Record<string, unknown>;
const obj = (v: unknown): J =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as J) : {};
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
/** The non-empty strings of a JSON array (a copy of exactly their size when all are). */
function strings(v: unknown): string[] {
  const a = arr(v);
  return a.every((x) => typeof x === 'string' && x !== '')
    ? (a.slice() as string[])
    : (a.filter((x) => typeof x === 'string' && x !== '') as string[]);
}
// a big cluster's 100,000 endpoints share these eight read-only objects
const CONDITIONS: readonly EndpointConditions[] = Array.from({ length: 8 }, (_, k) =>
  Object.freeze({ ready: (k & 1) !== 0, serving: (k & 2) !== 0, terminating: (k & 4) !== 0 }),
);
const strMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(obj(v)).filter(([, x]) => typeof x === 'string')) as Record<
    string,
    string
  >;
const protocol = (v: unknown): Protocol => {
  const p = str(v)?.toUpperCase();
  return p === 'UDP' || p === 'SCTP' ? p : 'TCP';
};

export const kindOf = (o: KubeObject) => o.kind ?? '';
export const nameOf = (o: KubeObject) => o.metadata?.name ?? '';
export const namespaceOf = (o: KubeObject) => o.metadata?.namespace ?? '';

// --- objects ----------------------------------------------------------------------------------

/** A Service address as kube-proxy reads it: "172.30.0.041" is 172.30.0.41 in its rules. */
function serviceIP(x: string): string {
  return x === 'None' ? x : canonicalIP(x);
}

export function toService(raw: KubeObject): Service {
  const spec = obj(raw['spec']);
  const status = obj(raw['status']);
  const clusterIP =
    str(spec['clusterIP']) === undefined ? undefined : serviceIP(str(spec['clusterIP'])!);
  const clusterIPs = strings(spec['clusterIPs']).map(serviceIP);
  const type = (str(spec['type']) ?? 'ClusterIP') as Service['type'];
  const ports: ServicePort[] = arr(spec['ports']).map((p) => {
    const o = obj(p);
    const port = num(o['port']) ?? 0;
    const tp = o['targetPort'];
    return {
      name: str(o['name']) ?? '',
      protocol: protocol(o['protocol']),
      port,
      // an unset targetPort defaults to port; "8080" written as a string is still a number
      targetPort:
        typeof tp === 'number'
          ? tp
          : typeof tp === 'string'
            ? /^\d+$/.test(tp)
              ? Number(tp)
              : tp
            : port,
      nodePort: num(o['nodePort']),
      appProtocol: str(o['appProtocol']),
    };
  });
  const selector =
    spec['selector'] === undefined || spec['selector'] === null
      ? undefined
      : strMap(spec['selector']);
  const affinityTimeout = num(
    obj(obj(spec['sessionAffinityConfig'])['clientIP'])['timeoutSeconds'],
  );
  const lbIngress = arr(obj(status['loadBalancer'])['ingress']).map(obj);
  return {
    namespace: namespaceOf(raw) || 'default',
    name: nameOf(raw),
    type,
    clusterIP,
    clusterIPs:
      clusterIPs.length > 0 ? clusterIPs : clusterIP && clusterIP !== 'None' ? [clusterIP] : [],
    headless: clusterIP === 'None',
    ports,
    selector: selector && Object.keys(selector).length > 0 ? selector : undefined,
    externalIPs: strings(spec['externalIPs']).map(serviceIP),
    loadBalancerIPs: lbIngress
      .filter((i) => str(i['ipMode']) !== 'Proxy')
      .map((i) => str(i['ip']))
      .filter((x): x is string => !!x)
      .map(serviceIP),
    loadBalancerSourceRanges: strings(spec['loadBalancerSourceRanges']).map((x) => x.trim()),
    externalTrafficPolicy: str(spec['externalTrafficPolicy']) === 'Local' ? 'Local' : 'Cluster',
    internalTrafficPolicy: str(spec['internalTrafficPolicy']) === 'Local' ? 'Local' : 'Cluster',
    sessionAffinity: str(spec['sessionAffinity']) === 'ClientIP' ? 'ClientIP' : 'None',
    sessionAffinityTimeout: affinityTimeout ?? 10800,
    publishNotReadyAddresses: spec['publishNotReadyAddresses'] === true,
    healthCheckNodePort: num(spec['healthCheckNodePort']),
    externalName: str(spec['externalName']),
    raw,
  };
}

/** kube-proxy's ServicePortName: "ns/name:port", or "ns/name" for an unnamed port. */
export function servicePortName(
  svc: { namespace: string; name: string },
  port: { name: string },
): ServicePortName {
  return port.name ? `${svc.namespace}/${svc.name}:${port.name}` : `${svc.namespace}/${svc.name}`;
}

export function toEndpointSlice(raw: KubeObject): EndpointSlice {
  const labels = raw.metadata?.labels ?? {};
  const at = str(raw['addressType']);
  let endpoints: SliceEndpoint[] | undefined;
  return {
    namespace: namespaceOf(raw) || 'default',
    name: nameOf(raw),
    serviceName: labels['kubernetes.io/service-name'],
    addressType: at === 'IPv6' || at === 'FQDN' ? at : 'IPv4',
    ports: arr(raw['ports']).map((p) => {
      const o = obj(p);
      return {
        name: str(o['name']) ?? '',
        port: num(o['port']),
        protocol: protocol(o['protocol']),
        appProtocol: str(o['appProtocol']),
      };
    }),
    // typed on first use: one Service's answer on a big cluster reads few of the slices
    get endpoints() {
      return (endpoints ??= arr(raw['endpoints']).map(sliceEndpoint));
    },
    managedBy: labels['endpointslice.kubernetes.io/managed-by'],
    raw,
  };
}

function sliceEndpoint(e: unknown): SliceEndpoint {
  const o = obj(e);
  const c = obj(o['conditions']);
  const ref = obj(o['targetRef']);
  return {
    addresses: strings(o['addresses']).map(canonicalIP),
    // nil ready/serving mean true; nil terminating means false (discovery/v1)
    conditions:
      CONDITIONS[
        (c['ready'] !== false ? 1 : 0) |
          (c['serving'] !== false ? 2 : 0) |
          (c['terminating'] === true ? 4 : 0)
      ]!,
    nodeName: str(o['nodeName']) ?? strMap(o['topology'])['kubernetes.io/hostname'],
    hostname: str(o['hostname']),
    zone: str(o['zone']),
    targetRef: o['targetRef']
      ? { kind: str(ref['kind']), name: str(ref['name']), namespace: str(ref['namespace']) }
      : undefined,
  };
}

export function toLegacyEndpoints(raw: KubeObject): LegacyEndpoints {
  const addr = (a: unknown) => {
    const o = obj(a);
    return {
      ip: str(o['ip']) ?? '',
      nodeName: str(o['nodeName']),
      targetRef: o['targetRef'] ? { name: str(obj(o['targetRef'])['name']) } : undefined,
    };
  };
  return {
    namespace: namespaceOf(raw) || 'default',
    name: nameOf(raw),
    subsets: arr(raw['subsets']).map((s) => {
      const o = obj(s);
      return {
        addresses: arr(o['addresses']).map(addr),
        notReadyAddresses: arr(o['notReadyAddresses']).map(addr),
        ports: arr(o['ports']).map((p) => {
          const q = obj(p);
          return {
            name: str(q['name']) ?? '',
            port: num(q['port']) ?? 0,
            protocol: protocol(q['protocol']),
          };
        }),
      };
    }),
    raw,
  };
}

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

export function toConfigMap(raw: KubeObject): ConfigMap {
  return { namespace: namespaceOf(raw), name: nameOf(raw), data: strMap(raw['data']), raw };
}

/**
 * kube-proxy's configuration from its ConfigMap (kubeadm's `config.conf`, a
 * KubeProxyConfiguration in YAML). Throws with a message naming the key when it cannot be read.
 */
export function toKubeProxyConfig(cm: ConfigMap): KubeProxyConfig {
  const key =
    cm.data['config.conf'] !== undefined
      ? 'config.conf'
      : Object.keys(cm.data).find((k) => /conf/.test(k));
  const source = `ConfigMap ${cm.namespace}/${cm.name}${key ? ` key ${key}` : ''}`;
  let c: J = {};
  if (key) {
    try {
      c = obj(loadYaml(cm.data[key]!));
    } catch (e) {
      throw new Error(`${source}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return configFrom(c, source);
}

/** kube-proxy's answer on /configz ({"kubeproxy.config.k8s.io": {...}}): what it runs with, or
 * undefined when the text is not such an answer (kube-proxy down, an older version). */
export function configFromConfigz(text: string, node: string): KubeProxyConfig | undefined {
  // not read (most nodes of a large cluster): no document, and no exception to make of it
  if (text.trim() === '') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const c = obj(versionedNames(obj(doc)['kubeproxy.config.k8s.io']));
  if (Object.keys(c).length === 0) return undefined;
  // 1.31-1.35's internal type keeps the cluster CIDRs under detectLocal and masqueradeAll under
  // linux, for every mode
  const cidrs = arr(obj(c['detectLocal'])['clusterCIDRs']).map(str).filter(Boolean);
  if (!str(c['clusterCIDR']) && cidrs.length > 0) c['clusterCIDR'] = cidrs.join(',');
  const all = obj(c['linux'])['masqueradeAll'];
  if (typeof all === 'boolean')
    for (const mode of ['iptables', 'nftables']) c[mode] = { ...obj(c[mode]), masqueradeAll: all };
  return configFrom(c, `/configz of kube-proxy on ${node}`);
}

/** The internal type's Go field names whose JSON name is not the name with its first letter
 * lowered (kube-proxy/config/v1alpha1). */
const INTERNAL_NAMES: Record<string, string> = {
  IPTables: 'iptables',
  IPVS: 'ipvs',
  NFTables: 'nftables',
};

/** kube-proxy up to 1.35 serves its internal configuration type on /configz, with Go's field
 * names ("ClusterCIDR", "IPTables"; kubernetes/kubernetes#136044): read as the versioned names. */
function versionedNames(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(versionedNames);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => {
      const name = INTERNAL_NAMES[k] ?? `${k.charAt(0).toLowerCase()}${k.slice(1)}`;
      // a map's keys are data, not field names: the feature gates keep theirs
      return [name, name === 'featureGates' ? x : versionedNames(x)];
    }),
  );
}

/** A KubeProxyConfiguration document (the ConfigMap's file, or /configz) as the model. */
function configFrom(c: J, source: string): KubeProxyConfig {
  const mode = str(c['mode']) || 'iptables';
  // the masquerade knobs live in the section of the mode kube-proxy runs in
  const ipt = obj(c[mode === 'nftables' ? 'nftables' : 'iptables']);
  const cidr = str(c['clusterCIDR']);
  const scheduler = str(obj(c['ipvs'])['scheduler']);
  return {
    mode,
    clusterCIDR: cidr || undefined,
    detectLocalMode: str(c['detectLocalMode']) || 'ClusterCIDR',
    bridgeInterface: str(obj(c['detectLocal'])['bridgeInterface']),
    interfaceNamePrefix: str(obj(c['detectLocal'])['interfaceNamePrefix']),
    masqueradeAll: ipt['masqueradeAll'] === true,
    masqueradeBit: num(ipt['masqueradeBit']) ?? 14,
    localhostNodePorts: obj(c['iptables'])['localhostNodePorts'] !== false,
    nodePortAddresses: arr(c['nodePortAddresses'])
      .map(str)
      .filter((x): x is string => !!x),
    ...(scheduler ? { ipvsScheduler: scheduler } : {}),
    featureGates: gates(c['featureGates']),
    source,
  };
}

/** A featureGates map as the configuration file holds it (`Gate: true`, YAML's "true" too). */
const gates = (v: unknown): Record<string, boolean> =>
  Object.fromEntries(
    Object.entries(obj(v)).flatMap(([k, x]): [string, boolean][] =>
      x === true || x === 'true' ? [[k, true]] : x === false || x === 'false' ? [[k, false]] : [],
    ),
  );

/** The default when a cluster has no kube-proxy ConfigMap (k3s, managed clusters). */
export const DEFAULT_KUBE_PROXY_CONFIG: KubeProxyConfig = {
  mode: 'iptables',
  detectLocalMode: 'ClusterCIDR',
  masqueradeAll: false,
  masqueradeBit: 14,
  localhostNodePorts: true,
  nodePortAddresses: [],
  featureGates: {},
  source: 'defaults (no kube-proxy ConfigMap)',
};

// --- the whole cluster view -----------------------------------------------------------------

/** Every object of a Facts list, typed and indexed. */
export interface ClusterView {
  services: Service[];
  endpointSlices: EndpointSlice[];
  endpoints: LegacyEndpoints[];
  pods: Pod[];
  nodes: Node[];
  configMaps: ConfigMap[];
  networkPolicies: KubeObject[];
  daemonSets: KubeObject[];
  other: KubeObject[];
}

/** Flattens `List` objects (as `kubectl get -o json` prints them) into their items. */
export function flattenObjects(objects: KubeObject[]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const o of objects) {
    if (Array.isArray(o['items'])) {
      // list items carry no kind: take it from "ServiceList" etc.
      const itemKind =
        kindOf(o).endsWith('List') && kindOf(o) !== 'List' ? kindOf(o).slice(0, -4) : undefined;
      for (const item of o['items'] as KubeObject[]) {
        out.push(
          ...flattenObjects([
            item.kind || !itemKind ? item : { kind: itemKind, apiVersion: o.apiVersion, ...item },
          ]),
        );
      }
    } else out.push(o);
  }
  return out;
}

export function clusterView(objects: KubeObject[]): ClusterView {
  const v: ClusterView = {
    services: [],
    endpointSlices: [],
    endpoints: [],
    pods: [],
    nodes: [],
    configMaps: [],
    networkPolicies: [],
    daemonSets: [],
    other: [],
  };
  for (const o of flattenObjects(objects)) {
    switch (kindOf(o)) {
      case 'Service':
        v.services.push(toService(o));
        break;
      case 'EndpointSlice':
        v.endpointSlices.push(toEndpointSlice(o));
        break;
      case 'Endpoints':
        v.endpoints.push(toLegacyEndpoints(o));
        break;
      case 'Pod':
        v.pods.push(toPod(o));
        break;
      case 'Node':
        v.nodes.push(toNode(o));
        break;
      case 'ConfigMap':
        v.configMaps.push(toConfigMap(o));
        break;
      case 'NetworkPolicy':
        v.networkPolicies.push(o);
        break;
      case 'DaemonSet':
        v.daemonSets.push(o);
        break;
      default:
        v.other.push(o);
    }
  }
  return v;
}

/** The cluster's ServiceCIDRs (networking.k8s.io ServiceCIDR spec.cidrs), sorted: kube-proxy
 * in nftables mode drops traffic to the addresses in them that no Service holds. */
export function serviceCIDRs(view: Pick<ClusterView, 'other'>): string[] {
  const out = new Set<string>();
  for (const o of view.other)
    if (kindOf(o) === 'ServiceCIDR')
      for (const c of strings(obj(o['spec'])['cidrs'])) {
        const cidr = canonicalCidrOf(c);
        if (cidr) out.add(cidr);
      }
  return [...out].sort();
}

/** The ConfigMaps a Pod mounts (for kube-proxy's Pod: where its configuration file is). */
export const configMapsMounted = (p: Pod): string[] =>
  arr(obj(p.raw['spec'])['volumes'])
    .map((v) => str(obj(obj(v)['configMap'])['name']) ?? '')
    .filter((n) => n !== '');

/** The names of the ConfigMaps kube-proxy's Pods mount. */
export function kubeProxyMounts(view: Pick<ClusterView, 'pods'>): Set<string> {
  return new Set(view.pods.filter(isKubeProxyPod).flatMap(configMapsMounted));
}

/**
 * What kube-proxy runs with, as far as the objects say: the ConfigMap its Pod mounts (else
 * kubeadm's "kube-proxy" or EKS's "kube-proxy-config" in kube-system), then the command-line
 * flags of its Pod on top (they override the file). DEFAULT_KUBE_PROXY_CONFIG when none is read.
 */
export function kubeProxyConfigOf(
  view: ClusterView,
  pod: Pod | undefined = view.pods.find(isKubeProxyPod),
  mounted: ReadonlySet<string> = kubeProxyMounts(view),
): KubeProxyConfig {
  const inSystem = view.configMaps.filter((c) => c.namespace === 'kube-system');
  const cm =
    inSystem.find((c) => mounted.has(c.name)) ??
    inSystem.find((c) => c.name === 'kube-proxy' || c.name === 'kube-proxy-config');
  const base = cm ? (cm.proxyConfig ??= toKubeProxyConfig(cm)) : DEFAULT_KUBE_PROXY_CONFIG;
  const flags = pod ? proxyFlags(pod) : {};
  if (Object.keys(flags).length === 0) return base;
  return {
    ...base,
    ...flags,
    featureGates: { ...base.featureGates, ...flags.featureGates },
    source: `${cm ? `${base.source}, ` : ''}the flags of Pod kube-system/${pod!.name}`,
  };
}

/** The kube-proxy flags that change its rules, from its container's command and args. */
function proxyFlags(pod: Pod): Partial<KubeProxyConfig> {
  const c = obj(arr(obj(pod.raw['spec'])['containers'])[0]);
  const words = [...arr(c['command']), ...arr(c['args'])].map(str).filter((x): x is string => !!x);
  const value = (name: string) => {
    for (let i = 0; i < words.length; i++) {
      if (words[i] === `--${name}`) return words[i + 1];
      if (words[i]!.startsWith(`--${name}=`)) return words[i]!.slice(name.length + 3);
    }
    return undefined;
  };
  const out: Partial<KubeProxyConfig> = {};
  const mode = value('proxy-mode');
  if (mode) out.mode = mode;
  const cidr = value('cluster-cidr');
  if (cidr) out.clusterCIDR = cidr;
  const local = value('detect-local-mode');
  if (local) out.detectLocalMode = local;
  if (words.includes('--masquerade-all') || value('masquerade-all') === 'true')
    out.masqueradeAll = true;
  const scheduler = value('ipvs-scheduler');
  if (scheduler) out.ipvsScheduler = scheduler;
  const bit = value('iptables-masquerade-bit');
  if (bit && /^\d+$/.test(bit)) out.masqueradeBit = Number(bit);
  // --feature-gates=A=true,B=false: kube-proxy takes the flag's gates over the file's
  const flagged = value('feature-gates');
  if (flagged)
    out.featureGates = gates(Object.fromEntries(flagged.split(',').map((g) => g.split('=', 2))));
  return out;
}

/** Does the label selector match these labels (equality-based, as Service selectors are)? */
export function selectorMatches(
  selector: Record<string, string>,
  labels: Record<string, string>,
): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

export function findService(
  view: ClusterView,
  namespace: string,
  name: string,
): Service | undefined {
  return view.services.find((s) => s.namespace === namespace && s.name === name);
}

export function slicesOf(
  view: ClusterView,
  svc: { namespace: string; name: string },
): EndpointSlice[] {
  return view.endpointSlices.filter(
    (s) => s.namespace === svc.namespace && s.serviceName === svc.name,
  );
}
