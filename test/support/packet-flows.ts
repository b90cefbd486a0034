// kube-proxy's packet-flow vectors (test/fixtures/packet-flows/<release>/<mode>/<Test>.json, one
// release folder per modelled minor, from its latest patch's k8s.io/kubernetes module): each one
// a test function of pkg/proxy/{iptables,nftables}/proxier_test.go that builds Services
// and EndpointSlices, syncs its fake proxier and traces packets with runPacketFlowTests. Read
// here as the objects `kdebug expect` takes, the node's network as the fake proxier has it, and
// each row of the test as kube-proxy wrote it.
//
// The fake proxier (NewFakeProxier): node test-node, node IP 192.168.0.2 (2001:db8::1 on an
// IPv6 proxier), eth0 holding 192.168.0.2/24, 192.168.1.2/24, 192.168.99.11/24, 2001:db8::1/64
// and 2001:db8:1::2/64 (the tracer's testNodeIPs, its "local" addresses), local traffic
// detected by the Pod CIDR 10.0.0.0/8 (fd00:10::/64), masquerade bit 14. nftables mode also
// has the Service CIDRs 172.30.0.0/16 (fd00:10:96::/112) and nodePortAddresses
// 192.168.0.2/32, 2001:db8::1/128; iptables mode has no nodePortAddresses (every local IP)
// and localhost node ports on. Before 1.32 the node is test-hostname (testHostname), and 1.30's
// nftables fake takes its node-port addresses from the node IP (the same address).
import { readdirSync, readFileSync } from 'node:fs';
import type { KubeObject } from '../../src/core/model.js';
import type { NodeNetwork } from '../../src/core/dataplane/trace/trace.js';

/** One row of a packetFlowTest table, as the Go source has it (absent: Go's zero value). */
export interface FlowRow {
  name: string;
  sourceIP: string;
  /** "TCP", "UDP", "SCTP"; absent means TCP. */
  protocol?: string;
  destIP: string;
  destPort: number;
  /** "ip:port, ip:port" (the DNAT destinations, in rule order), "REJECT", "DROP", "ACCEPT" or "". */
  output?: string;
  masq?: boolean;
}

/** The fake proxier's configuration, or a case's changes to it. */
export interface FakeProxierConfig {
  /** The node kube-proxy runs on: testNodeName, "test-node" (testHostname, "test-hostname",
   * before 1.32). */
  nodeName?: string;
  family?: 'IPv4' | 'IPv6';
  /** The LocalTrafficDetector's CIDR; null: NewNoOpLocalDetector(). */
  clusterCIDR?: string | null;
  /** null: every local IP (proxyutil.NewNodePortAddresses(family, nil)); [] in nftables mode:
   * the node IP alone (1.30's NewNodePortAddresses(family, nil, nodeIP)). */
  nodePortAddresses?: string[] | null;
  localhostNodePorts?: boolean;
  masqueradeAll?: boolean;
  /** nftables mode's serviceCIDRs (the ServiceCIDR objects kdebug reads). */
  serviceCIDRs?: string[];
}

export interface FlowCase {
  /** The table entry's or t.Run's name, when the test has several setups. */
  name?: string;
  /** The source line of this case (its table entry, or the runPacketFlowTests call). */
  line: number;
  kubeProxy?: FakeProxierConfig;
  /** makeTestService: namespace, name, and the spec and status its closure sets. */
  services?: { namespace: string; name: string; spec: Record<string, unknown>; status?: unknown }[];
  /** makeTestEndpointSlice: the Service, the slice number, and what its closure sets. */
  endpointSlices?: {
    namespace: string;
    name: string;
    sliceNum: number;
    addressType: 'IPv4' | 'IPv6';
    endpoints: Record<string, unknown>[];
    ports: Record<string, unknown>[];
  }[];
  /** A rule dump kube-proxy's tracer walks instead (TestTracePacket*): a file beside the JSON. */
  dump?: string;
  /** Rows whose packet, from the node, the output hook treats otherwise than prerouting (where
   * kube-proxy's tracer enters it): row name -> why. Only for a fixed dump. */
  outputHookDiffers?: Record<string, string>;
  /** Each runPacketFlowTests call: its line and its rows. */
  flows: { line: number; rows: FlowRow[] }[];
}

export interface FlowFixture {
  source: { module: string; file: string; test: string; line: number };
  mode: 'iptables' | 'nftables';
  /** NewFakeProxier's configuration (the cases may change it). */
  kubeProxy: FakeProxierConfig;
  /** What the transcription left out, and why. */
  notes?: string[];
  cases: FlowCase[];
}

/** testNodeIPs: what the tracers take as the node's own addresses. */
export const TEST_NODE_IPS = [
  '192.168.0.2',
  '192.168.1.2',
  '192.168.99.11',
  '2001:db8::1',
  '2001:db8:1::2',
];

export const DEFAULTS: Record<FlowFixture['mode'], Required<FakeProxierConfig>> = {
  iptables: {
    nodeName: 'test-node',
    family: 'IPv4',
    clusterCIDR: '10.0.0.0/8',
    nodePortAddresses: null,
    localhostNodePorts: true,
    masqueradeAll: false,
    serviceCIDRs: [],
  },
  nftables: {
    nodeName: 'test-node',
    family: 'IPv4',
    clusterCIDR: '10.0.0.0/8',
    nodePortAddresses: ['192.168.0.2/32', '2001:db8::1/128'],
    localhostNodePorts: false,
    masqueradeAll: false,
    serviceCIDRs: ['172.30.0.0/16'],
  },
};

/** The configuration a case runs with: the mode's fake proxier, the fixture's, the case's. */
export function configOf(f: FlowFixture, c: FlowCase): Required<FakeProxierConfig> {
  const v6 = (c.kubeProxy?.family ?? f.kubeProxy.family) === 'IPv6';
  const base = {
    ...DEFAULTS[f.mode],
    ...(v6
      ? {
          clusterCIDR: 'fd00:10::/64',
          serviceCIDRs: f.mode === 'nftables' ? ['fd00:10:96::/112'] : [],
        }
      : {}),
  };
  return { ...base, ...f.kubeProxy, ...c.kubeProxy };
}

/** The objects `kdebug expect` takes for a case: the Node, kube-proxy's ConfigMap, the
 * ServiceCIDR (nftables), the Services and the EndpointSlices. */
export function objectsOf(f: FlowFixture, c: FlowCase): KubeObject[] {
  const k = configOf(f, c);
  const conf = [
    `mode: ${f.mode}`,
    ...(k.clusterCIDR ? [`clusterCIDR: ${k.clusterCIDR}`] : []),
    ...(k.nodePortAddresses ? [`nodePortAddresses: ${JSON.stringify(k.nodePortAddresses)}`] : []),
    `iptables:\n  localhostNodePorts: ${k.localhostNodePorts}\n  masqueradeAll: ${k.masqueradeAll}`,
    `nftables:\n  masqueradeAll: ${k.masqueradeAll}`,
  ].join('\n');
  const objects: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: k.nodeName },
      spec: {},
      status: {
        addresses: [
          { type: 'InternalIP', address: '192.168.0.2' },
          { type: 'InternalIP', address: '2001:db8::1' },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-proxy', namespace: 'kube-system' },
      data: { 'config.conf': `kind: KubeProxyConfiguration\n${conf}\n` },
    },
  ];
  if (k.serviceCIDRs.length > 0)
    objects.push({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'ServiceCIDR',
      metadata: { name: 'kubernetes' },
      spec: { cidrs: k.serviceCIDRs },
    });
  for (const s of c.services ?? [])
    objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: s.name, namespace: s.namespace, annotations: {} },
      spec: s.spec,
      status: s.status ?? {},
    });
  for (const e of c.endpointSlices ?? [])
    objects.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${e.name}-${e.sliceNum}`,
        namespace: e.namespace,
        labels: { 'kubernetes.io/service-name': e.name },
      },
      addressType: e.addressType,
      endpoints: e.endpoints,
      ports: e.ports,
    });
  return objects;
}

/** The node's network as the fake proxier's: every test node IP on eth0, lo's loopback. */
export const FAKE_NETWORK: NodeNetwork = {
  localAddresses: TEST_NODE_IPS,
  interfaces: [
    {
      name: 'eth0',
      cidrs: [
        '192.168.0.2/24',
        '192.168.1.2/24',
        '192.168.99.11/24',
        '2001:db8::1/64',
        '2001:db8:1::2/64',
      ],
    },
    { name: 'lo', cidrs: ['127.0.0.1/8', '::1/128'] },
  ],
  defaultInterface: 'eth0',
};

/** Every fixture of a release: [mode/file, fixture]. */
export function flowFixtures(release: string): [string, FlowFixture][] {
  const dir = new URL(`../fixtures/packet-flows/${release}/`, import.meta.url);
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as FlowFixture]);
}

/** A dump beside a fixture. */
export const dumpOf = (release: string, mode: string, file: string) =>
  readFileSync(
    new URL(`../fixtures/packet-flows/${release}/${mode}/${file}`, import.meta.url),
    'utf8',
  );
