// The Rules step on a node in nftables mode: the Service's tree read from the table the real
// kube-proxy v1.37.2 wrote in the lab (test/fixtures/nft, node-a), its endpoints compared with the
// EndpointSlice's. The objects are built to match it: matrix/cluster-ip is 10.96.33.216:80 ->
// 10.244.1.4:80 (node-a) and 10.244.2.2:80 (node-b); the Pod CIDR is 10.244.0.0/16.
import { evidenceText } from '../../../src/core/findings/evidence.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { hairpinCheck } from '../../../src/core/checks/hairpin.js';
import { reachabilityCheck } from '../../../src/core/checks/reachability/reachability.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { expectedRules, expectedSave } from '../../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView, serviceCIDRs } from '../../../src/core/kube/objects.js';
import { expectedNftScript } from '../../../src/core/dataplane/nftables/expected/expected.js';
import { trafficPolicyCheck } from '../../../src/core/checks/traffic-policy/traffic-policy.js';
import { NODE, objects as overall } from '../../support/nft-overall.js';
import type { KubeObject } from '../../../src/core/model.js';
import {
  aNode,
  aService,
  anEndpointSlice,
  facts,
  ids,
  run,
  type EndpointSpec,
} from './builders.js';

const TABLE = readFileSync(
  new URL('../../fixtures/nft/kube-proxy-1.37-node-a.json', import.meta.url),
  'utf8',
);
const TARGET = { namespace: 'matrix', service: 'cluster-ip' };
const config: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'kube-proxy', namespace: 'kube-system' },
  data: { 'config.conf': 'mode: nftables\nclusterCIDR: 10.244.0.0/16\n' },
};
const objects = (endpoints: EndpointSpec[]) => [
  aService({
    name: 'cluster-ip',
    namespace: 'matrix',
    spec: {
      clusterIP: '10.96.33.216',
      clusterIPs: ['10.96.33.216'],
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }],
    },
  }),
  anEndpointSlice({ service: 'cluster-ip', namespace: 'matrix', port: 80, endpoints }),
  // the lab's nodes, as the table was written there: node-a answers node ports on 192.0.2.21
  aNode('node-a', '192.0.2.21', '10.244.1.0/24'),
  aNode('node-b', '192.0.2.22', '10.244.2.0/24'),
  config,
];
const both: EndpointSpec[] = [
  { ip: '10.244.1.4', node: 'node-a' },
  { ip: '10.244.2.2', node: 'node-b' },
];
const step = (endpoints: EndpointSpec[], nodes = { 'node-a': { 'nft-ip-kube-proxy': TABLE } }) =>
  run(rulesCheck, facts(objects(endpoints), nodes), {}, TARGET);

describe('the Rules step in nftables mode', () => {
  const cases: { what: string; endpoints: EndpointSpec[]; want: string[] }[] = [
    {
      what: 'the table is what kube-proxy should write: passed',
      endpoints: both,
      want: ['rules-match:pass'],
    },
    {
      what: 'an endpoint gone from the slice but still in the table: stale',
      endpoints: [both[0]!],
      want: ['endpoint-stale:fail'],
    },
    {
      what: 'a new ready endpoint the table does not have: missing',
      endpoints: [...both, { ip: '10.244.1.9', node: 'node-a' }],
      // it runs on node-a: its hairpin-connections element is missing there too
      want: ['endpoint-missing:warn', 'masquerade-missing:warn'],
    },
  ];
  for (const c of cases)
    it(c.what, () => {
      const found = step(c.endpoints).filter((f) => f.node === 'node-a');
      assert.deepEqual(ids(found), c.want);
    });

  it('names the endpoints in the pass, and the stale one in its finding', () => {
    assert.match(step(both)[0]!.title, /^node-a: 80\/TCP -> 2 endpoints in nftables, as expected$/);
    assert.match(step([both[0]!])[0]!.title, /DNAT to 10\.244\.2\.2:80, no longer an endpoint/);
  });

  // matrix/no-endpoints in the lab: 10.96.255.229:80, node port 32574, selecting no Pod
  const noEndpoints = facts(
    [
      aService({
        name: 'no-endpoints',
        namespace: 'matrix',
        spec: {
          type: 'NodePort',
          clusterIP: '10.96.255.229',
          clusterIPs: ['10.96.255.229'],
          ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80, nodePort: 32574 }],
        },
      }),
      anEndpointSlice({ service: 'no-endpoints', namespace: 'matrix', port: 80, endpoints: [] }),
      ...objects(both).slice(2),
    ],
    { 'node-a': { 'nft-ip-kube-proxy': TABLE } },
  );
  const NO_ENDPOINTS = { namespace: 'matrix', service: 'no-endpoints' };

  it('a port without endpoints: passed on the no-endpoint elements that reject it, its proof', () => {
    const found = run(rulesCheck, noEndpoints, {}, NO_ENDPOINTS).filter((f) => f.node === 'node-a');
    assert.deepEqual(
      found.map((f) => `${f.id}:${f.status} ${f.title}`),
      ['rules-match:pass node-a: 80/TCP -> REJECT (no endpoints) in nftables, as expected'],
    );
    assert.deepEqual(found[0]!.evidence.map(evidenceText), [
      'nodes/node-a/nft-ip-kube-proxy.txt: no-endpoint-services 10.96.255.229 . tcp . 80 : reject',
      'nodes/node-a/nft-ip-kube-proxy.txt: no-endpoint-nodeports tcp . 32574 : reject',
    ]);
  });

  it('explains ping to a ClusterIP without endpoints: its port is rejected too, never DNATed', () => {
    const ping = run(reachabilityCheck, noEndpoints, {}, NO_ENDPOINTS).find(
      (f) => f.id === 'ping-clusterip-explained',
    );
    assert.ok(ping);
    // the walk through the table is what the words must agree with
    assert.ok(
      ping.evidence
        .map(evidenceText)
        .includes('walked: on node-a, tcp 192.0.2.21 -> 10.96.255.229:80: REJECT'),
    );
    assert.match(ping.explanation, /curl 10\.96\.255\.229:80 is rejected right now too/);
    assert.doesNotMatch(ping.explanation, /curl \S+ is DNATed/);
  });

  it('a node in nftables mode whose table was not read: not observed, with how to read it', () => {
    const found = step(both, {
      'node-a': { 'nft-ip-kube-proxy': TABLE },
      'node-b': { 'ip-addr': '' },
    } as never);
    const b = found.filter((f) => f.node === 'node-b');
    assert.deepEqual(ids(b), ['rules-nftables-not-observed:skip']);
    assert.deepEqual(b[0]!.next?.argv, ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy']);
    assert.equal(b[0]!.next?.saveTo, 'nodes/node-b/nft-ip-kube-proxy.txt');
  });

  it('explains ping to the ClusterIP with what the table says: a cluster IP, one way in, the rest rejected', () => {
    const found = run(
      reachabilityCheck,
      facts(objects(both), { 'node-a': { 'nft-ip-kube-proxy': TABLE } }),
      {},
      TARGET,
    );
    const ping = found.find((f) => f.id === 'ping-clusterip-explained');
    assert.ok(ping, JSON.stringify(found.map((f) => f.id)));
    assert.match(ping.title, /in nftables mode other ports are rejected at once/);
    assert.deepEqual(ping.evidence.map(evidenceText).slice(-6), [
      "kube-proxy's nftables table on node-a:",
      'nodes/node-a/nft-ip-kube-proxy.txt: set cluster-ips holds 10.96.33.216',
      'nodes/node-a/nft-ip-kube-proxy.txt: map service-ips: 10.96.33.216 . tcp . 80 : goto service-FN4G4LLS-matrix/cluster-ip/tcp/http (the only way in for 10.96.33.216)',
      'nodes/node-a/nft-ip-kube-proxy.txt: chain cluster-ips-check: ip daddr @cluster-ips reject ("Reject traffic to invalid ports of ClusterIPs")',
      // proved by walking both packets through that table (from node-a, off the Pod CIDR)
      'walked: on node-a, icmp 192.0.2.21 -> 10.96.33.216: REJECT',
      'walked: on node-a, tcp 192.0.2.21 -> 10.96.33.216:80: 50% DNAT to 10.244.1.4:80, masqueraded; 50% DNAT to 10.244.2.2:80, masqueraded',
    ]);
  });

  it('a cluster with a node in each mode: each node compared in its own mode', () => {
    // node-b's kube-proxy runs in iptables mode: its dump is the rules kube-proxy writes there
    const view = clusterView(objects(both));
    const dump = expectedSave(expectedRules(view, 'node-b'), { header: false });
    const nodes = {
      'node-a': { 'nft-ip-kube-proxy': TABLE, 'proxy-mode': 'nftables' },
      'node-b': { 'iptables-save': dump, 'proxy-mode': 'iptables' },
    };
    const found = run(rulesCheck, facts(objects(both), nodes), {}, TARGET);
    assert.deepEqual(
      found.map((f) => `${f.id}:${f.status} ${f.title}`),
      [
        'rules-match:pass 1 node: 80/TCP -> 2 endpoints, as expected',
        'rules-match:pass node-a: 80/TCP -> 2 endpoints in nftables, as expected',
      ],
    );
    // the iptables one is node-b's, read from its iptables-save
    assert.match(found[0]!.explanation, /^On node-b the rules for matrix\/cluster-ip are/);
    assert.ok(
      found[0]!.evidence
        .map(evidenceText)
        .some((e) => e.startsWith('nodes/node-b/iptables-save.txt')),
    );
  });

  it('hairpin: the endpoint on node-a is in its hairpin-connections set; one that is not, fails there', () => {
    const nodes = { 'node-a': { 'nft-ip-kube-proxy': TABLE } };
    const ok = run(hairpinCheck, facts(objects(both), nodes), {}, TARGET);
    // node-b's endpoint: nothing was read on node-b, so its hairpin is said not checked
    assert.deepEqual(ids(ok), ['hairpin-masquerade-present:pass', 'hairpin-not-observed:skip']);
    assert.equal(
      ok[0]!.title,
      '1 of 2 endpoints: a Pod reaching itself through the Service is masqueraded',
    );
    assert.deepEqual(ok[0]!.evidence.map(evidenceText), [
      'nodes/node-a/nft-ip-kube-proxy.txt: set hairpin-connections holds 10.244.1.4 . 10.244.1.4 . tcp . 80',
    ]);
    assert.deepEqual(ok[1]!.evidence.map(evidenceText), [
      'not observed: 10.244.2.2:80 on node-b: its IPv4 rules were not read',
    ]);
    // 10.244.2.2 is node-b's Pod: said to run on node-a, node-a's set does not hold it
    const moved = both.map((e) => ({ ...e, node: 'node-a' }));
    const bad = run(hairpinCheck, facts(objects(moved), nodes), {}, TARGET);
    assert.deepEqual(ids(bad), ['hairpin-masquerade-missing:fail']);
    assert.match(
      bad[0]!.title,
      /10\.244\.2\.2:80 cannot reach itself through the Service: node-a's nftables table does not masquerade it/,
    );
  });

  it('traffic policy: a node without a local endpoint drops through its no-endpoint elements', () => {
    // kube-proxy's TestOverallNFTablesRules objects: ns2/svc2 (externalTrafficPolicy Local) has
    // its one endpoint on other-node, so test-node's table drops its external traffic
    const view = clusterView(overall);
    const table = expectedNftScript(expectedRules(view, NODE), serviceCIDRs(view)).join('\n');
    const found = run(
      trafficPolicyCheck,
      facts(overall, { [NODE]: { 'nft-ip-kube-proxy': table, 'proxy-mode': 'nftables' } }),
      {},
      { namespace: 'ns2', service: 'svc2' },
    );
    const drop = found.find((f) => f.id === 'no-local-endpoint' && f.node === NODE);
    assert.ok(drop, JSON.stringify(found.map((f) => `${f.id} ${f.node}`)));
    assert.deepEqual(
      drop.evidence.map(evidenceText).filter((e) => e.startsWith('nodes/')),
      [
        'nodes/test-node/nft-ip-kube-proxy.txt: no-endpoint-services 192.168.99.22 . tcp . 80 : drop',
        'nodes/test-node/nft-ip-kube-proxy.txt: no-endpoint-services 1.2.3.4 . tcp . 80 : drop',
        'nodes/test-node/nft-ip-kube-proxy.txt: no-endpoint-nodeports tcp . 3001 : drop',
      ],
    );
  });
});
