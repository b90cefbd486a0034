// node-a's nftables table as the real kube-proxy v1.37.2 wrote it in the lab (test/fixtures/nft),
// and the objects behind one of its Services: matrix/cluster-ip (10.96.33.216:80), which the table
// sends to 10.244.1.4:80 and 10.244.2.2:80; node-a is 192.0.2.21, the Pod CIDR 10.244.0.0/16.
import { readFileSync } from 'node:fs';
import type { KubeObject } from '../../src/core/model.js';

export const NODE_A_TABLE = 'test/fixtures/nft/kube-proxy-1.37-node-a';

/** matrix/cluster-ip with these ready endpoints, node-a, and kube-proxy's ConfigMap (nftables). */
export function clusterIpObjects(endpoints: string[]): KubeObject[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'cluster-ip', namespace: 'matrix' },
      spec: {
        type: 'ClusterIP',
        clusterIP: '10.96.33.216',
        clusterIPs: ['10.96.33.216'],
        ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }],
      },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'cluster-ip-x',
        namespace: 'matrix',
        labels: { 'kubernetes.io/service-name': 'cluster-ip' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      endpoints: endpoints.map((ip) => ({
        addresses: [ip],
        conditions: { ready: true, serving: true, terminating: false },
      })),
    },
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-a' },
      status: { addresses: [{ type: 'InternalIP', address: '192.0.2.21' }] },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-proxy', namespace: 'kube-system' },
      data: { 'config.conf': 'mode: nftables\nclusterCIDR: 10.244.0.0/16\n' },
    },
  ];
}

/** node-a's text listing with the first line that reads `line` (trimmed) replaced by `by` (one
 * line or more, or none), and the number of by's first line in it. */
export function labListing(line: string, by: string): { text: string; at: number } {
  const lines = readFileSync(`${NODE_A_TABLE}.txt`, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.trim() === line);
  if (i < 0) throw new Error(`not in the listing: ${line}`);
  lines.splice(i, 1, ...(by === '' ? [] : by.split('\n')));
  return { text: lines.join('\n'), at: i + 1 };
}
