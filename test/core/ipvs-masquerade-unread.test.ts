// IPVS mode with kube-proxy's ConfigMap unreadable: the cluster IP masquerade condition is then
// read off the node's KUBE-SERVICES rule on the KUBE-CLUSTER-IP set ("! -s CIDR ... dst,dst" the
// cluster CIDR, "dst,dst" alone masqueradeAll, "src,dst" no local detector); where no one rule
// tells it, that rule is not compared, said so, and is no finding.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { allModes } from '../support/modes.js';

const NODE = 'vm-12-11-centos';
const RULE =
  /^-A KUBE-SERVICES ! -s 10\.244\.0\.0\/16 (-m comment --comment "Kubernetes service cluster ip \+ port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP) dst,dst -j KUBE-MARK-MASQ$/m;

/** The snapshot with kube-proxy's config.conf broken, its node's masquerade rule as `rule` makes it. */
async function broken(rule: (text: string) => string): Promise<Facts> {
  const facts = await readSnapshot('snapshots/ipvs-stale-real-server');
  for (const o of facts.objects) {
    const data = (o as { data?: Record<string, string> }).data;
    if (o.kind === 'ConfigMap' && data?.['config.conf'])
      data['config.conf'] = data['config.conf'].replace(/scheduler: .*/, 'scheduler: [wrr');
  }
  const outputs = facts.nodes[NODE]! as Record<string, string>;
  const key = Object.keys(outputs).find((k) => k.startsWith('iptables-save'))!;
  assert.match(outputs[key]!, RULE);
  outputs[key] = rule(outputs[key]!);
  return facts;
}

const masquerade = (facts: Facts) => {
  const d = new Analysis(facts, { code: allModes }).node(NODE).drift();
  return {
    missing: d.findings.filter((f) => f.id === 'masquerade-missing'),
    said: [...d.findings, ...(d.notes ?? []), ...(d.notRead ?? [])].filter((f) =>
      /masquerade rule not compared/.test(f.title),
    ),
  };
};

describe('IPVS mode, kube-proxy configuration unreadable: the cluster IP masquerade rule', () => {
  it('"! -s CIDR ... dst,dst" on the node: the cluster CIDR it tells, no finding', async () => {
    const m = masquerade(await broken((t) => t));
    assert.deepEqual(m.missing, []);
    assert.deepEqual(m.said, []);
  });

  for (const [form, to] of [
    ['"src,dst" (no local detector)', '$1 src,dst -j KUBE-MARK-MASQ'],
    ['"dst,dst" alone (masqueradeAll)', '$1 dst,dst -j KUBE-MARK-MASQ'],
  ] as const)
    it(`${form} on the node: what it tells, no finding`, async () => {
      const m = masquerade(await broken((t) => t.replace(RULE, `-A KUBE-SERVICES ${to}`)));
      assert.deepEqual(m.missing, []);
      assert.deepEqual(m.said, []);
    });

  it('no such rule on the node: nothing tells the condition, not compared and said so', async () => {
    const m = masquerade(await broken((t) => t.replace(RULE, '')));
    assert.deepEqual(m.missing, []);
    assert.equal(m.said.length, 1);
    assert.match(m.said[0]!.explanation, /kube-proxy's configuration was not read/);
  });
});
