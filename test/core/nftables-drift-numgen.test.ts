// A Service chain's `numgen random mod N` vmap given an extra entry, made here in the real 1.33
// recording (test/fixtures/releases/33/nftables): the shares drift compares are those the walk
// gives. An extra entry to one of its own endpoint chains makes the split uneven; one to another
// Service port's UDP endpoint chain is a share that leaves the TCP Service chain untranslated and
// is rejected by cluster-ips-check, as kdebug's walk of the table says: drift and trace agree.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { percent } from '../../src/core/model.js';
import { nftStems } from '../../src/core/facts/facts.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { FIXTURES } from '../versions/record.js';
import { allModes } from '../support/modes.js';

const NODE = 'node-a';
const PORT = 'matrix/cluster-ip:http';
type Vmap = {
  key: { numgen?: { mod: number } };
  data: { set: [number, { goto: { target: string } }][] };
};
type Listing = {
  nftables: Record<string, { chain?: string; name?: string; expr?: { vmap?: Vmap }[] }>[];
};

/** The recording with matrix/cluster-ip's numgen map given a third entry to `target` (its
 * listing's chain names: the first endpoint chain of the map, or another's). */
async function extraEntry(target: (json: Listing, first: string) => string) {
  const facts = await readSnapshot(join(FIXTURES, '33', 'nftables'));
  const stem = nftStems('IPv4').json;
  const json = JSON.parse(facts.nodes[NODE]![stem]!) as Listing;
  const vmap = json.nftables
    .map((o) => o['rule'])
    .filter((r) => r?.chain?.startsWith('service-') && r.chain.includes('/cluster-ip/'))
    .flatMap((r) => r!.expr ?? [])
    .map((e) => e.vmap)
    .find((v) => v?.key.numgen)!;
  vmap.key.numgen!.mod = 3;
  vmap.data.set.push([2, { goto: { target: target(json, vmap.data.set[0]![1].goto.target) } }]);
  facts.nodes[NODE]![stem] = JSON.stringify(json);
  const analysis = new Analysis(facts, { code: allModes });
  const svc = analysis.view.services.find(
    (s) => s.namespace === 'matrix' && s.name === 'cluster-ip',
  )!;
  const walk = analysis.node(NODE).trace({
    src: '10.244.1.5',
    dst: svc.clusterIP!,
    dport: 80,
    protocol: 'tcp',
    fromHost: false,
  }).outcomes;
  const drift = analysis
    .node(NODE)
    .drift()
    .findings.map((f) => ({ said: `${severityOf(f)} ${f.id} ${f.service}`, f }));
  return { drift, walk };
}

describe('nftables numgen map with an extra entry: shares as the walk gives them', () => {
  it('to its own first endpoint: weights-uneven with 66.7% / 33.3%, the walk splits the same', async () => {
    const { drift, walk } = await extraEntry((_, first) => first);
    assert.deepEqual(
      drift.map((x) => x.said),
      [`warning weights-uneven ${PORT}`],
    );
    // the walk's outcomes are its branches: summed by where each is DNATed
    const byDestination = new Map<string, number>();
    for (const o of walk)
      byDestination.set(o.dnat!, (byDestination.get(o.dnat!) ?? 0) + o.probability);
    const shares = [...byDestination.values()].map(percent).sort();
    assert.deepEqual(shares, ['33.3%', '66.7%']);
    assert.match(drift[0]!.f.title, /^shares 66\.7% \/ 33\.3%, not 50% each$/);
  });

  it("to another Service's UDP endpoint chain: 33.3% falls through and is rejected, as the walk says", async () => {
    const { drift, walk } = await extraEntry((json) =>
      json.nftables
        .map((o) => o['chain']?.name)
        .find((n) => n?.startsWith('endpoint-') && n.includes('/kube-dns/udp/'))!,
    );
    assert.deepEqual(
      drift.map((x) => x.said),
      [`error service-chain-falls-through ${PORT}`],
    );
    assert.match(drift[0]!.f.title, /^33\.3% of new connections leave service-\S+ untranslated$/);
    assert.match(drift[0]!.f.explanation, /rejected by cluster-ips-check/);
    assert.doesNotMatch(drift[0]!.f.explanation, /gone/);
    const rejected = walk.filter((o) => o.verdict === 'REJECT');
    assert.deepEqual(
      rejected.map((o) => percent(o.probability)),
      ['33.3%'],
    );
  });
});
