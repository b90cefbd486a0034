// One endpoint chain deleted from a real 1.31 table (test/fixtures/releases/31/nftables): one
// root, one finding, element-chain-missing, quoting the rule that sends there and only the lines
// the table lacks; endpoint-missing, which blames a sync not yet made, is not said of that same
// endpoint (r147 item 4). A ready endpoint the table has not caught up with still is.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { FIXTURES } from '../versions/record.js';
import { allModes } from '../support/modes.js';

const DIR = join(FIXTURES, '31', 'nftables');
const CHAIN_OF = 'matrix/cluster-ip/tcp/http__10.244.2.3/80'; // the endpoint chain's name ends so
type Entry = Record<string, { name?: string; chain?: string } | undefined>;

/** node-a's table without the endpoint chain of 10.244.2.3 (its declaration and rules). */
async function chainDeleted(): Promise<Facts> {
  const facts = await readSnapshot(DIR);
  const stem = nftStems('IPv4').json;
  const json = JSON.parse(facts.nodes['node-a']![stem]!) as { nftables: Entry[] };
  const before = json.nftables.length;
  json.nftables = json.nftables.filter(
    (o) => !o['chain']?.name?.endsWith(CHAIN_OF) && !o['rule']?.chain?.endsWith(CHAIN_OF),
  );
  assert.equal(json.nftables.length, before - 3, 'the chain and its two rules');
  facts.nodes['node-a']![stem] = JSON.stringify(json);
  return facts;
}

const said = (facts: Facts) =>
  new Analysis(facts, { code: allModes }).node('node-a').drift().findings;

describe('an nftables endpoint chain deleted: one root, one finding', () => {
  it('element-chain-missing alone, with the rule that sends there and the missing lines only', async () => {
    const found = said(await chainDeleted());
    assert.deepEqual(
      found.map((f) => `${f.id} ${f.service}`),
      ['element-chain-missing matrix/cluster-ip:http'],
    );
    const f = found[0]!;
    assert.ok(f.drift.expected.length > 0);
    assert.ok(
      f.drift.expected.every((l) => l.includes(CHAIN_OF)),
      `only the chain and its rules: ${f.drift.expected.join(' | ')}`,
    );
    assert.equal(f.drift.actual.length, 1);
    assert.match(
      f.drift.actual[0]!,
      /^nodes\/node-a\/nft-ip-kube-proxy\.txt:\d+: numgen random mod 2 vmap/,
    );
  });

  it('a ready endpoint the table lacks altogether is still endpoint-missing', async () => {
    const facts = await readSnapshot(DIR);
    const slice = facts.objects.find(
      (o) =>
        o.kind === 'EndpointSlice' &&
        o.metadata?.labels?.['kubernetes.io/service-name'] === 'cluster-ip',
    )!;
    const endpoints = slice['endpoints'] as { addresses: string[] }[];
    endpoints.push({ ...structuredClone(endpoints[0]!), addresses: ['10.244.2.9'] });
    const found = said(facts).filter((f) => f.id === 'endpoint-missing');
    assert.deepEqual(
      found.map((f) => f.title),
      ['endpoint 10.244.2.9:80 missing'],
    );
  });
});
