// The objects of kube-proxy's TestOverallNFTablesRules and TestOverallNFTablesRulesIPv6
// (pkg/proxy/nftables/proxier_test.go), in their IP conventions: Pod CIDR 10.0.0.0/8 and
// fd00:10::/64, Service CIDR 172.30.0.0/16 and fd00:10:96::/112, node test-node 192.168.0.2 and
// 2001:db8::1, other node 192.168.0.3, external IPs 192.168.99.0/24 and 2001:db8:99::/64, load
// balancers 1.2.3.4, 5.6.7.8, 5555::1 and 5555::2, source ranges 203.0.113.0/25 and 2001:db8:203::/64.
import type { KubeObject } from '../../src/core/model.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from './builders.js';

export const NODE = 'test-node';
// 1.37's test turns on the localhost node-port rejects (an alpha gate): earlier releases have
// no such gate, and ignore it
const LOCALHOST_GATE = 'featureGates:\n  KubeProxyNFTablesLocalhostNodePorts: true\n';
export const aServiceCIDR = (cidrs: string[]): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'ServiceCIDR',
  metadata: { name: 'kubernetes' },
  spec: { cidrs },
});

export const objects: KubeObject[] = [
  aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
  aNode('other-node', '192.168.0.3', '10.180.1.0/24'),
  aKubeProxyConfig(`mode: nftables\nclusterCIDR: 10.0.0.0/8\n${LOCALHOST_GATE}`),
  aServiceCIDR(['172.30.0.0/16']),
  aService('ns1/svc1', { clusterIP: '172.30.0.41' }),
  anEndpointSlice('ns1/svc1', [['10.180.0.1', { node: NODE }]]),
  aService('ns2/svc2', {
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Local',
    clusterIP: '172.30.0.42',
    ports: [['p80', 80, 'TCP', 3001]],
    loadBalancerIPs: ['1.2.3.4'],
    externalIPs: ['192.168.99.22'],
    healthCheckNodePort: 30000,
  }),
  anEndpointSlice('ns2/svc2', [['10.180.0.2', { node: 'other-node' }]]),
  aService('ns3/svc3', {
    type: 'NodePort',
    clusterIP: '172.30.0.43',
    ports: [['p80', 80, 'TCP', 3003]],
  }),
  anEndpointSlice('ns3/svc3', [['10.180.0.3', { node: NODE }]]),
  aService('ns4/svc4', {
    type: 'NodePort',
    clusterIP: '172.30.0.44',
    externalIPs: ['192.168.99.33'],
  }),
  anEndpointSlice('ns4/svc4', [
    ['10.180.0.4', { node: 'other-node' }],
    ['10.180.0.5', { node: NODE }],
  ]),
  aService('ns5/svc5', {
    type: 'LoadBalancer',
    clusterIP: '172.30.0.45',
    ports: [['p80', 80, 'TCP', 3002]],
    loadBalancerIPs: ['5.6.7.8'],
    healthCheckNodePort: 30000,
    sourceRanges: [' 203.0.113.0/25'],
    affinity: 10800,
  }),
  anEndpointSlice('ns5/svc5', [['10.180.0.3', { node: NODE }]]),
  aService('ns6/svc6', { clusterIP: '172.30.0.46' }),
];

/** The IPv6 test's objects: the same six Services, on the IPv6 proxier of a dual-stack node. */
export const objectsV6: KubeObject[] = [
  {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    spec: { podCIDRs: ['10.180.0.0/24', 'fd00:10::/64'] },
    status: {
      addresses: [
        { type: 'InternalIP', address: '192.168.0.2' },
        { type: 'InternalIP', address: '2001:db8::1' },
      ],
    },
  },
  aKubeProxyConfig(`mode: nftables\nclusterCIDR: 10.0.0.0/8,fd00:10::/64\n${LOCALHOST_GATE}`),
  aServiceCIDR(['172.30.0.0/16', 'fd00:10:96::/112']),
  aService('ns1/svc1', { clusterIP: 'fd00:172:30::41' }),
  v6(anEndpointSlice('ns1/svc1', [['fd00:10:180::1', { node: NODE }]])),
  aService('ns2/svc2', {
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Local',
    clusterIP: 'fd00:172:30::42',
    ports: [['p80', 80, 'TCP', 3001]],
    loadBalancerIPs: ['5555::1'],
    externalIPs: ['2001:db8:99::22'],
    healthCheckNodePort: 30000,
  }),
  v6(anEndpointSlice('ns2/svc2', [['fd00:10:180::2', { node: 'other-node' }]])),
  aService('ns3/svc3', {
    type: 'NodePort',
    clusterIP: 'fd00:172:30::43',
    ports: [['p80', 80, 'TCP', 3003]],
  }),
  v6(anEndpointSlice('ns3/svc3', [['fd00:10:180::3', { node: NODE }]])),
  aService('ns4/svc4', {
    type: 'NodePort',
    clusterIP: 'fd00:172:30::44',
    externalIPs: ['2001:db8:99::33'],
  }),
  v6(
    anEndpointSlice('ns4/svc4', [
      ['fd00:10:180::4', { node: 'other-node' }],
      ['fd00:10:180::5', { node: NODE }],
    ]),
  ),
  aService('ns5/svc5', {
    type: 'LoadBalancer',
    clusterIP: 'fd00:172:30::45',
    ports: [['p80', 80, 'TCP', 3002]],
    loadBalancerIPs: ['5555::2'],
    healthCheckNodePort: 30000,
    sourceRanges: [' 2001:db8:203::/64'],
    affinity: 10800,
  }),
  v6(anEndpointSlice('ns5/svc5', [['fd00:10:180::3', { node: NODE }]])),
  aService('ns6/svc6', { clusterIP: 'fd00:172:30::46' }),
];

function v6(slice: KubeObject): KubeObject {
  return { ...slice, addressType: 'IPv6' };
}
