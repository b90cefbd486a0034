// The parts of the rules kdebug expects (target, -s, -d) are what it computed, and drift picks a
// Service port's expected lines by them, never by matching the text it rendered: each part equals
// what iptables' own reading of that text gives, and an IPv6 external IP's missing rule is shown
// (a text match on "/32 " found none).
// IP conventions (kube-proxy's proxier_test.go): as drift.test.ts; IPv6 node 2001:db8::1, Pods
// fd00:10::/64, cluster IP fd00:172:30::41, external IP 2001:db8:7::7, endpoint fd00:10::5.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectedRules, expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { parseIptables, parseRuleLine } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from '../support/builders.js';

const NODE = 'test-node';

const v4: KubeObject[] = [
  aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
  aKubeProxyConfig('clusterCIDR: 10.0.0.0/8\n'),
  aService('ns1/web', { clusterIP: '172.30.0.41', externalIPs: ['198.51.100.7'] }),
  anEndpointSlice('ns1/web', ['10.180.0.1', '10.180.0.3']),
  aService('ns1/lb', {
    type: 'LoadBalancer',
    clusterIP: '172.30.0.43',
    ports: [['p80', 80, 'TCP', 3002]],
    loadBalancerIPs: ['5.6.7.8'],
    sourceRanges: ['203.0.113.0/25', '192.168.0.0/24'],
    affinity: 10800,
  }),
  anEndpointSlice('ns1/lb', ['10.180.0.5']),
  aService('ns1/local', {
    type: 'NodePort',
    clusterIP: '172.30.0.42',
    externalTrafficPolicy: 'Local',
    ports: [['p80', 80, 'TCP', 3001]],
  }),
  anEndpointSlice('ns1/local', [['10.180.0.4', { node: NODE }]]),
  aService('ns1/empty', { clusterIP: '172.30.0.44', externalIPs: ['198.51.100.8'] }),
];

const v6: KubeObject[] = [
  {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE },
    spec: { podCIDRs: ['fd00:10::/64'] },
    status: { addresses: [{ type: 'InternalIP', address: '2001:db8::1' }] },
  },
  aKubeProxyConfig('clusterCIDR: fd00:10::/64\n'),
  aService('ns1/web6', { clusterIP: 'fd00:172:30::41', externalIPs: ['2001:db8:7::7'] }),
  { ...anEndpointSlice('ns1/web6', ['fd00:10::5']), addressType: 'IPv6' },
];

describe('the parts of the expected rules', () => {
  for (const [family, objects] of [
    ['IPv4', v4],
    ['IPv6', v6],
  ] as const)
    it(`are what iptables reads from their text (${family})`, () => {
      const exp = expectedRules(clusterView(objects), NODE, { family });
      const lines = exp.servicePorts.flatMap((sp) => [...sp.nat, ...sp.filter]);
      assert.ok(lines.length > 5);
      for (const l of lines) {
        const read = parseRuleLine(l.text);
        assert.equal(l.target, read.target?.name, l.text);
        assert.deepEqual(l.destination, read.destination, l.text);
        // the Pod-traffic and masquerade rules' sources are not picked by: only positive ones
        if (read.source && !read.source.negated && !l.text.includes('pod traffic for'))
          assert.deepEqual(l.source, read.source, l.text);
        else assert.equal(l.source, undefined, l.text);
      }
    });
});

describe('drift picks expected lines by their parts', () => {
  it("shows an IPv6 external IP's missing rule as the line expected", () => {
    const view = clusterView(v6);
    const exp = expectedRules(view, NODE, { family: 'IPv6', randomFully: true });
    const rule = exp.servicePorts[0]!.nat.find((l) => l.destination?.cidr === '2001:db8:7::7/128')!;
    assert.ok(rule, 'the external IP rule is expected');
    const dump = expectedSave(exp)
      .split('\n')
      .filter((l) => l !== rule.text)
      .join('\n');
    const rs = parseIptables(dump, { file: 'ip6tables-save' });
    const d = nodeDrift({ node: NODE, source: 'test', expected: exp, actual: rs, view });
    const f = d.findings.find((x) => x.id === 'service-rules-missing');
    assert.ok(f, JSON.stringify(d.findings.map((x) => x.id)));
    assert.deepEqual(f.drift?.expected, [`-t nat ${rule.text}`]);
  });

  it('says which loadBalancerSourceRanges the node does not let in, from the expected sources', () => {
    const view = clusterView(v4);
    const exp = expectedRules(view, NODE, { randomFully: true });
    const dump = expectedSave(exp)
      .split('\n')
      .filter((l) => !(l.startsWith('-A KUBE-FW-') && l.includes('-s 203.0.113.0/25 ')))
      .join('\n');
    const d = nodeDrift({
      node: NODE,
      source: 'test',
      expected: exp,
      actual: parseIptables(dump),
      view,
    });
    const f = d.findings.find((x) => x.id === 'firewall-missing');
    assert.ok(f, JSON.stringify(d.findings.map((x) => x.id)));
    assert.match(f.explanation, /sources 203\.0\.113\.0\/25 are not let in/);
    assert.doesNotMatch(f.explanation, /192\.168\.0\.2|5\.6\.7\.8\/32 are not/);
  });
});
