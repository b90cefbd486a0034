// A Service without endpoints whose no-endpoint-services element was deleted from a real 1.31
// table (test/fixtures/releases/31/nftables): drift quotes as missing only the line the table
// lacks, and says what the table does with the connection as kdebug's own walk of it does:
// refused by cluster-ips-check while its cluster IP is in cluster-ips and that chain is hooked,
// let through untranslated where it is not (r147 item 3).
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
const CLUSTER_IP = '10.96.164.55'; // matrix/no-endpoints
type Listing = { nftables: Record<string, { name?: string; elem?: unknown[] } | undefined>[] };

/** The recording with node-a's table changed by `edit` (nft's JSON listing). */
async function edited(edit: (json: Listing) => void): Promise<Facts> {
  const facts = await readSnapshot(DIR);
  const stem = nftStems('IPv4').json;
  const json = JSON.parse(facts.nodes['node-a']![stem]!) as Listing;
  edit(json);
  facts.nodes['node-a']![stem] = JSON.stringify(json);
  return facts;
}

/** Drops the elements of set or map `name` that mention `text`. */
const dropElements = (json: Listing, name: string, text: string) => {
  const x = json.nftables.map((o) => o['map'] ?? o['set']).find((s) => s?.name === name)!;
  const before = x.elem!.length;
  x.elem = x.elem!.filter((e) => !JSON.stringify(e).includes(text));
  assert.ok(x.elem.length < before, `${name} held ${text}`);
};

const rejectMissing = (a: Analysis) => {
  const found = a
    .node('node-a')
    .drift()
    .findings.filter((f) => f.id === 'no-endpoints-reject-missing');
  assert.equal(found.length, 1, found.map((f) => f.title).join('; '));
  return found[0]!;
};

const walked = (a: Analysis) =>
  a.node('node-a').trace({
    src: '10.244.1.5',
    dst: CLUSTER_IP,
    dport: 80,
    protocol: 'tcp',
    fromHost: false,
  }).outcomes;

describe('no-endpoints-reject-missing in nftables mode: what is missing, and what the table does', () => {
  it('cluster-ips still holds the IP: refused by cluster-ips-check, as the walk says; only the element quoted', async () => {
    const a = new Analysis(
      await edited((j) => dropElements(j, 'no-endpoint-services', 'matrix/no-endpoints:http')),
      { code: allModes },
    );
    const f = rejectMissing(a);
    // what kube-proxy writes that the table lacks: the element alone, not the cluster-ips and
    // no-endpoint-nodeports elements the node still holds
    assert.deepEqual(
      f.drift.expected.map((l) => l.split(' {')[0]),
      ['add element ip kube-proxy no-endpoint-services'],
    );
    assert.doesNotMatch(f.explanation, /hang|time out/);
    assert.match(f.explanation, /still refused, by cluster-ips-check/);
    assert.ok(f.drift.actual.some((l) => l.endsWith(`: cluster-ips ${CLUSTER_IP}`)));
    assert.ok(f.drift.actual.some((l) => l.endsWith('jump cluster-ips-check')));
    assert.ok(f.drift.actual.some((l) => l.endsWith('ip daddr @cluster-ips reject')));
    assert.ok(!f.evidence.some((e) => /none of these/.test(e.text)), 'no "none of these"');
    // kdebug's own walk of the table agrees
    const outcomes = walked(a);
    assert.deepEqual(
      outcomes.map((o) => o.verdict),
      ['REJECT'],
    );
    assert.ok(outcomes[0]!.rules.some((r) => r.chain === 'cluster-ips-check'));
  });

  it('the IP gone from cluster-ips too: not refused, let through untranslated, as the walk says', async () => {
    const a = new Analysis(
      await edited((j) => {
        dropElements(j, 'no-endpoint-services', 'matrix/no-endpoints:http');
        dropElements(j, 'cluster-ips', CLUSTER_IP);
      }),
      { code: allModes },
    );
    const f = rejectMissing(a);
    assert.match(f.explanation, /pass the table untranslated instead of being refused/);
    // both missing lines, and nothing the node holds is said missing
    assert.deepEqual(
      f.drift.expected.map((l) => l.split(' {')[0]),
      ['add element ip kube-proxy cluster-ips', 'add element ip kube-proxy no-endpoint-services'],
    );
    assert.ok(walked(a).every((o) => o.verdict === 'ACCEPT' && !o.dnat));
  });
});
