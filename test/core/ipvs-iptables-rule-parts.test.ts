// The iptables rules kube-proxy writes in IPVS mode carry their target as kdebug computed it, and
// drift picks a missing rule's finding by that target, never by matching the text it rendered:
// each target equals what iptables' own reading of the text gives, and a dump saved with
// counters (iptables-save -c) misses only the rule taken out of it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipvsIptablesDrift } from '../../src/core/dataplane/ipvs/drift/iptables-rules.js';
import { expectedIpvs, ipvsIptablesSave } from '../../src/core/dataplane/ipvs/expected/expected.js';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables, parseRuleLine } from '../../src/core/dataplane/iptables/read/parse.js';
import type { DriftId, DriftSaid } from '../../src/core/dataplane/drift.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from '../support/builders.js';

const NODE = 'node-a';
const view = clusterView([
  aNode(NODE, '192.0.2.11', '10.244.0.0/24'),
  aKubeProxyConfig('mode: ipvs\nclusterCIDR: 10.244.0.0/16\n'),
  aService('shop/web', {
    type: 'LoadBalancer',
    clusterIP: '10.96.0.50',
    ports: [['http', 80, 'TCP', 30080]],
    externalIPs: ['198.51.100.7'],
    loadBalancerIPs: ['203.0.113.9'],
    sourceRanges: ['198.51.100.0/24'],
  }),
  anEndpointSlice('shop/web', ['10.244.1.6'], [['http', 80]]),
]);
const exp = expectedIpvs(expectedRules(view, NODE, { randomFully: true }));

/** The findings of the node's dump `save` against what kube-proxy writes. */
function findings(save: string): { id: DriftId; said: DriftSaid }[] {
  const found: { id: DriftId; said: DriftSaid }[] = [];
  ipvsIptablesDrift(
    exp.iptables,
    { ruleset: parseIptables(save), source: 'iptables-save.txt' },
    NODE,
    (id, said) => found.push({ id, said }),
  );
  return found;
}

describe("IPVS mode's iptables rules", () => {
  it('carry the target iptables reads from their text', () => {
    const rules = [...exp.iptables.nat, ...exp.iptables.filter];
    assert.ok(rules.length > 20);
    for (const r of rules) assert.equal(r.target, parseRuleLine(r.text).target?.name, r.text);
  });

  it('are all found in a dump of them saved with counters', () => {
    const save = ipvsIptablesSave(exp)
      .map((l) => (l.startsWith('-A ') ? `[3:180] ${l}` : l))
      .join('\n');
    assert.deepEqual(findings(save), []);
  });

  for (const [chain, target, id] of [
    ['KUBE-POSTROUTING', 'MASQUERADE', 'masquerade-missing'],
    ['KUBE-SERVICES', 'KUBE-MARK-MASQ', 'masquerade-missing'],
    ['INPUT', 'KUBE-PROXY-FIREWALL', 'firewall-missing'],
    ['KUBE-IPVS-FILTER', 'REJECT', 'firewall-missing'],
    ['PREROUTING', 'KUBE-SERVICES', 'entry-jump-missing'],
  ] as const)
    it(`say a missing ${chain} rule to ${target} as ${id}`, () => {
      const gone = [...exp.iptables.nat, ...exp.iptables.filter].find(
        (r) => r.chain === chain && r.target === target,
      )!;
      assert.ok(gone, `${chain} -j ${target} is expected`);
      const save = ipvsIptablesSave(exp)
        .filter((l) => l !== gone.text)
        .join('\n');
      const f = findings(save);
      assert.deepEqual(
        f.map((x) => x.id),
        [id],
      );
      assert.ok(f[0]!.said.expected?.some((l) => l.endsWith(gone.text)));
    });
});
