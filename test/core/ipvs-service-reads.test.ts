// What one Service's answer reads of a node's IPVS state (kdebug svc): each virtual server kube-proxy
// programs for it, by address, and each ipset entry it adds, tested; the whole listing where the
// reads would be too many, or where the node's addresses (its node ports') are not known.
// IP conventions: Services 10.96.0.0/16, the node 192.0.2.21.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  ExpectedIpvs,
  ExpectedVirtualServer,
} from '../../src/core/dataplane/ipvs/expected/expected.js';
import { MOST_READS, serviceIpvsReads } from '../../src/core/dataplane/ipvs/read/service-reads.js';

const server = (
  ip: string,
  port: number,
  kind: ExpectedVirtualServer['kind'],
): ExpectedVirtualServer => ({
  name: 'default/web:http',
  kind,
  protocol: 'tcp',
  address: `${ip}:${port}`,
  ip,
  port,
  scheduler: 'rr',
  realServers: ['10.244.1.4:8080'],
  local: false,
});

const expected = (o: Partial<ExpectedIpvs>): ExpectedIpvs => ({
  family: 'IPv4',
  virtualServers: [
    server('10.96.0.30', 80, 'cluster-ip'),
    server('192.0.2.21', 30080, 'node-port'),
  ],
  bound: ['10.96.0.30'],
  ipsets: new Map([
    ['KUBE-CLUSTER-IP', ['10.96.0.30,tcp:80']],
    ['KUBE-NODE-PORT-TCP', ['30080']],
  ]),
  entryOwners: new Map(),
  iptables: { nat: [], filter: [] },
  release: { minor: 37 },
  endpointsFrom: { reads: 'EndpointSlices' },
  nodeIPs: ['192.0.2.21'],
  nodeIPsKnown: true,
  notes: [],
  ...o,
});

describe("one Service's IPVS reads", () => {
  it('reads each virtual server by its address and tests each ipset entry', () => {
    assert.deepEqual(serviceIpvsReads([expected({})]), {
      virtualServers: [
        { kind: 'ipvs-service', protocol: 'tcp', ip: '10.96.0.30', port: 80 },
        { kind: 'ipvs-service', protocol: 'tcp', ip: '192.0.2.21', port: 30080 },
      ],
      tests: [
        { kind: 'ipset-test', set: 'KUBE-CLUSTER-IP', entry: '10.96.0.30,tcp:80' },
        { kind: 'ipset-test', set: 'KUBE-NODE-PORT-TCP', entry: '30080' },
      ],
    });
  });

  it("reads the whole listing where the node's addresses are not known and it has node ports", () => {
    const plan = serviceIpvsReads([expected({ nodeIPsKnown: false })]);
    assert.match(
      'whole' in plan ? plan.whole : '',
      /node's addresses were not read \(ip -br addr\)/,
    );
    // without node ports, the addresses do not matter
    const clusterIp = expected({
      nodeIPsKnown: false,
      virtualServers: [server('10.96.0.30', 80, 'cluster-ip')],
    });
    assert.ok(!('whole' in serviceIpvsReads([clusterIp])));
  });

  it(`reads the whole listing past ${MOST_READS} reads`, () => {
    const many = (n: number) =>
      expected({
        virtualServers: Array.from({ length: n }, (_, i) =>
          server(`192.0.2.${i + 1}`, 30080, 'node-port'),
        ),
        ipsets: new Map(),
      });
    assert.ok(!('whole' in serviceIpvsReads([many(MOST_READS)])));
    const plan = serviceIpvsReads([many(MOST_READS + 1)]);
    assert.match(
      'whole' in plan ? plan.whole : '',
      new RegExp(`needs ${MOST_READS + 1} reads by address`),
    );
  });
});
