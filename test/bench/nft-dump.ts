// A kube-proxy nftables table (the shape 1.33+ writes, as the lab's v1.37.2 does) for N Services
// x M endpoints, as `nft -j list table ip kube-proxy` prints it: a service-ips element and a
// service- chain with an inlined numgen DNAT map per Service port. And the whole table a modelled
// release writes for cluster-dump.ts's cluster on node-a, as the script it gives `nft -f`.
// IP conventions: those of cluster-dump.ts (Pod CIDR 10.128.0.0/9, Service CIDR 172.30.0.0/16).
import { createHash } from 'node:crypto';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { expectedNftScript } from '../../src/core/dataplane/nftables/expected/expected.js';
import { watchedServiceCIDRs, type Release } from '../../src/core/dataplane/kube-proxy/releases.js';
import { clusterView, serviceCIDRs } from '../../src/core/kube/objects.js';
import { clusterObjects, NODE, type DumpShape } from './cluster-dump.js';

/** kube-proxy's table on node-a as `release` writes it in nftables mode (the lab's recordings
 * prove `kdebug expect` writes what each release writes). */
export function nftClusterScript(shape: DumpShape, release: Release): string {
  const view = clusterView(clusterObjects(shape));
  const exp = expectedRules(view, NODE, { release });
  return expectedNftScript(exp, watchedServiceCIDRs(release, serviceCIDRs(view))).join('\n');
}

const base32 = (b: Buffer) => {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of b) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += A[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
};
const hash8 = (s: string) => base32(createHash('sha256').update(s).digest()).slice(0, 8);

export function nftListing(shape: { services: number; endpoints: number }): string {
  const t = { family: 'ip', table: 'kube-proxy' };
  const items: object[] = [
    { metainfo: { version: '1.0.6', json_schema_version: 1 } },
    { table: { family: 'ip', name: 'kube-proxy', handle: 1 } },
  ];
  const vips: string[] = [];
  const elems: object[] = [];
  for (let s = 0; s < shape.services; s++) {
    const vip = `172.30.${Math.floor(s / 256)}.${s % 256}`;
    const suffix = `ns${s % 100}/svc-${s}/tcp/http`;
    const chain = `service-${hash8(suffix)}-${suffix}`;
    vips.push(vip);
    elems.push([{ concat: [vip, 'tcp', 80] }, { goto: { target: chain } }]);
    items.push({ chain: { ...t, name: chain } });
    const set = Array.from({ length: shape.endpoints }, (_, e) => {
      const n = s * shape.endpoints + e;
      return [e, { concat: [`10.${128 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`, 8080] }];
    });
    items.push({
      rule: {
        ...t,
        chain,
        expr: [
          { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } },
          {
            dnat: {
              family: 'ip',
              addr: {
                map: {
                  key: { numgen: { mode: 'random', mod: shape.endpoints, offset: 0 } },
                  data: { set },
                },
              },
            },
          },
        ],
      },
    });
  }
  items.push({ set: { ...t, name: 'cluster-ips', type: 'ipv4_addr', elem: vips } });
  items.push({
    map: {
      ...t,
      name: 'service-ips',
      type: ['ipv4_addr', 'inet_proto', 'inet_service'],
      map: 'verdict',
      elem: elems,
    },
  });
  return JSON.stringify({ nftables: items });
}
