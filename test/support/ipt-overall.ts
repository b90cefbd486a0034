// The objects of kube-proxy's TestOverallIPTablesRules (pkg/proxy/iptables/proxier_test.go), in
// its IP conventions: Pod IPs 10.180.0.0/16 in the cluster CIDR 10.0.0.0/8, ClusterIPs
// 172.30.0.0/16, node test-node 192.168.0.2, other node 192.168.0.3, external IPs
// 192.168.99.0/24, load balancers 1.2.3.4 / 5.6.7.8, source range 203.0.113.0/25.
import type { KubeObject } from '../../src/core/model.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from './builders.js';

export const NODE = 'test-node';

export const common = [
  aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
  aNode('other-node', '192.168.0.3', '10.180.1.0/24'),
  aKubeProxyConfig('clusterCIDR: 10.0.0.0/8\n'),
];

/** The Services and slices of kube-proxy's TestOverallIPTablesRules. */
export const overall: KubeObject[] = [
  aService('ns1/svc1', { clusterIP: '172.30.0.41' }),
  anEndpointSlice('ns1/svc1', ['10.180.0.1']),
  aService('ns2/svc2', {
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Local',
    clusterIP: '172.30.0.42',
    ports: [['p80', 80, 'TCP', 3001]],
    loadBalancerIPs: ['1.2.3.4'],
    externalIPs: ['192.168.99.22'],
    healthCheckNodePort: 30000,
  }),
  anEndpointSlice('ns2/svc2', ['10.180.0.2']),
  aService('ns3/svc3', {
    type: 'NodePort',
    clusterIP: '172.30.0.43',
    ports: [['p80', 80, 'TCP', 3003]],
  }),
  anEndpointSlice('ns3/svc3', ['10.180.0.3']),
  aService('ns4/svc4', {
    type: 'NodePort',
    clusterIP: '172.30.0.44',
    externalIPs: ['192.168.99.33'],
  }),
  anEndpointSlice('ns4/svc4', ['10.180.0.4', ['10.180.0.5', { node: NODE }]]),
  aService('ns5/svc5', {
    type: 'LoadBalancer',
    clusterIP: '172.30.0.45',
    ports: [['p80', 80, 'TCP', 3002]],
    loadBalancerIPs: ['5.6.7.8'],
    healthCheckNodePort: 30000,
    sourceRanges: [' 203.0.113.0/25'],
    affinity: 10800,
  }),
  anEndpointSlice('ns5/svc5', ['10.180.0.3']),
  aService('ns6/svc6', { clusterIP: '172.30.0.46' }),
];
