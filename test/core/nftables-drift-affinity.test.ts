// ClientIP session affinity whose "remember the client" part was removed, made here in real
// recordings (test/fixtures/releases/<minor>/<mode>): nftables endpoint chains without their
// `update @affinity-… { ip saddr }` rule, iptables KUBE-SEP DNAT rules without
// `-m recent --set`. The Service chain's lookup (`ip saddr @affinity-…`, `--rcheck`) then never
// matches and every connection is balanced afresh: affinity is gone, a behaviour (affinity-wrong),
// not a spelling difference.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { FIXTURES } from '../versions/record.js';
import { allModes } from '../support/modes.js';

const NODE = 'node-a';
const PORT = 'matrix/affinity:http';
type Listing = { nftables: Record<string, { chain?: string } | undefined>[] };

const driftOf = (facts: Facts) =>
  new Analysis(facts, { code: allModes })
    .node(NODE)
    .drift()
    .findings.map((f) => ({ said: `${severityOf(f)} ${f.id} ${f.service}`, f }));

describe('session affinity that remembers no client: affinity-wrong, never spelling', () => {
  for (const minor of [33, 37])
    it(`v1.${minor} nftables: the endpoint chains' update @affinity rules deleted`, async () => {
      const facts = await readSnapshot(join(FIXTURES, String(minor), 'nftables'));
      const stem = nftStems('IPv4').json;
      const json = JSON.parse(facts.nodes[NODE]![stem]!) as Listing;
      const before = json.nftables.length;
      json.nftables = json.nftables.filter((o) => {
        const r = o['rule'];
        return !(
          r?.chain?.startsWith('endpoint-') &&
          r.chain.includes('/affinity/') &&
          JSON.stringify(r).includes('"update"')
        );
      });
      assert.ok(json.nftables.length < before, 'the recording holds update rules');
      facts.nodes[NODE]![stem] = JSON.stringify(json);
      const found = driftOf(facts);
      assert.deepEqual(
        found.map((x) => x.said),
        [`warning affinity-wrong ${PORT}`],
      );
      assert.match(found[0]!.f.title, /^session affinity never remembers a client of /);
      assert.match(found[0]!.f.explanation, /so ClientIP affinity is gone/);
    });

  it('v1.33 iptables: -m recent --set removed from the KUBE-SEP DNAT rules', async () => {
    const facts = await readSnapshot(join(FIXTURES, '33', 'iptables'));
    const dump = facts.nodes[NODE]!['iptables-save']!;
    const edited = dump
      .split('\n')
      .map((l) =>
        l.includes(`"${PORT}"`) && l.includes('-j DNAT')
          ? l.replace(/ -m recent --set --name \S+ --mask \S+ --rsource/, '')
          : l,
      )
      .join('\n');
    assert.notEqual(edited, dump, 'the recording holds the --set rules');
    facts.nodes[NODE]!['iptables-save'] = edited;
    const found = driftOf(facts).filter((x) => x.f.service === PORT);
    assert.deepEqual(
      found.map((x) => x.said),
      [`warning affinity-wrong ${PORT}`],
    );
    assert.match(found[0]!.f.title, /^session affinity never remembers a client$/);
    assert.match(found[0]!.f.explanation, /--rcheck never matches/);
  });
});
