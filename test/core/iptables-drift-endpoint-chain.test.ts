// One endpoint (KUBE-SEP) chain deleted from a real kube-proxy dump (test/fixtures/releases/30
// and 36, iptables), the KUBE-SVC jump to it kept: one root, one finding, jump-target-missing for
// the Service port, quoting the jump and the chain's lines kube-proxy writes; not also
// service-chain-missing (it is no Service chain) nor endpoint-missing (its chain is jumped to).
// A ready endpoint the dump lacks altogether is still endpoint-missing (r147 item 4).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import type { Facts } from '../../src/core/model.js';
import { allModes } from '../support/modes.js';
import { FIXTURES } from '../versions/record.js';

const ENDPOINT = '10.244.2.2:80';
const JUMP = new RegExp(`"matrix/cluster-ip:http -> ${ENDPOINT}" -j (KUBE-SEP-\\w+)$`, 'm');

/** node-a's dump of `release` without the chain of matrix/cluster-ip:http's ENDPOINT: its
 * declaration and rules go, the Service chain's jump to it stays. */
async function chainDeleted(release: string): Promise<{ facts: Facts; chain: string }> {
  const facts = await readSnapshot(join(FIXTURES, release, 'iptables'));
  const dump = facts.nodes['node-a']!['iptables-save']!;
  const chain = JUMP.exec(dump)![1]!;
  const lines = dump.split('\n');
  const kept = lines.filter((l) => l !== `:${chain} - [0:0]` && !l.startsWith(`-A ${chain} `));
  assert.equal(kept.length, lines.length - 3, 'the declaration and two rules');
  facts.nodes['node-a']!['iptables-save'] = kept.join('\n');
  return { facts, chain };
}

const said = (facts: Facts) =>
  new Analysis(facts, { code: allModes }).node('node-a').drift().findings;

describe('an iptables endpoint chain deleted: one root, one finding', () => {
  for (const release of ['30', '36'])
    it(`v1.${release}: jump-target-missing alone, with the jump and the chain's lines`, async () => {
      const { facts, chain } = await chainDeleted(release);
      const found = said(facts);
      assert.deepEqual(
        found.map((f) => `${f.id} ${f.service}`),
        ['jump-target-missing matrix/cluster-ip:http'],
      );
      const f = found[0]!;
      assert.equal(f.drift.endpoint, ENDPOINT);
      assert.match(f.explanation, new RegExp(`${chain}, the chain of endpoint ${ENDPOINT}`));
      assert.deepEqual(
        f.drift.actual.map((l) => JUMP.exec(l)?.[1]),
        [chain],
        'the jump rule alone',
      );
      assert.equal(f.drift.expected.length, 2, 'the hairpin mark and the DNAT');
      assert.ok(
        f.drift.expected.every((l) => l.startsWith(`-t nat -A ${chain} `)),
        f.drift.expected.join(' | '),
      );
      assert.match(f.drift.expected[1]!, new RegExp(`DNAT --to-destination ${ENDPOINT}$`));
    });

  it('the chain of an endpoint kube-proxy no longer writes: the same one finding, no endpoint named', async () => {
    const { facts, chain } = await chainDeleted('36');
    const slice = facts.objects.find(
      (o) =>
        o.kind === 'EndpointSlice' &&
        o.metadata?.labels?.['kubernetes.io/service-name'] === 'cluster-ip',
    )!;
    const endpoints = slice['endpoints'] as { addresses: string[] }[];
    slice['endpoints'] = endpoints.filter((e) => `${e.addresses[0]}:80` !== ENDPOINT);
    assert.equal((slice['endpoints'] as unknown[]).length, endpoints.length - 1);
    const found = said(facts).filter((f) => f.service === 'matrix/cluster-ip:http');
    assert.deepEqual(
      found.map((f) => f.id),
      ['jump-target-missing'],
    );
    const f = found[0]!;
    assert.equal(f.drift.endpoint, undefined);
    assert.match(f.explanation, new RegExp(`${chain}, a chain kube-proxy would not jump to`));
    assert.ok(
      f.drift.expected.every((l) => !l.includes(chain)),
      'the Service chain as kube-proxy writes it, without the jump',
    );
  });

  it('a ready endpoint the dump lacks altogether is still endpoint-missing', async () => {
    const facts = await readSnapshot(join(FIXTURES, '36', 'iptables'));
    const slice = facts.objects.find(
      (o) =>
        o.kind === 'EndpointSlice' &&
        o.metadata?.labels?.['kubernetes.io/service-name'] === 'cluster-ip',
    )!;
    const endpoints = slice['endpoints'] as { addresses: string[] }[];
    endpoints.push({ ...structuredClone(endpoints[0]!), addresses: ['10.244.2.9'] });
    const found = said(facts).filter((f) => f.service === 'matrix/cluster-ip:http');
    assert.deepEqual(
      found.map((f) => `${f.id} ${f.title}`),
      ['endpoint-missing endpoint 10.244.2.9:80 missing'],
    );
  });
});
