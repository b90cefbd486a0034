// A no-endpoint-services element left for a Service port that has endpoints, made here in real
// recordings (test/fixtures/releases/<minor>/nftables) as a stale sync leaves it. What it does
// depends on where the release hooks service-endpoints-check: 1.31-1.32 in filter-output at
// priority -110, before DNAT, so the node's own processes are refused; from 1.33 in chains at
// priority 0, after DNAT, where no connection to the cluster IP is left. Drift finds the element
// either way and says what it does as kdebug's walk does; the trace names the element that
// refuses; `rules` marks it. IP conventions (the lab): Service CIDR 10.96.0.0/16.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { traceAnswer } from '../../src/core/dataplane/trace/answer.js';
import { diagnose } from '../../src/core/diagnose.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { treeText } from '../../src/output/rules/tree-text.js';
import { FIXTURES } from '../versions/record.js';
import { allModes } from '../support/modes.js';

const NODE = 'node-a';
const PORT = 'matrix/cluster-ip:http';
type Listing = { nftables: Record<string, { name?: string; elem?: unknown[] } | undefined>[] };

/** The recording with node-a's no-endpoint-services rejecting matrix/cluster-ip's port. */
async function staleReject(minor: number): Promise<{ facts: Facts; ip: string }> {
  const facts = await readSnapshot(join(FIXTURES, String(minor), 'nftables'));
  const ip = clusterIP(facts);
  const stem = nftStems('IPv4').json;
  const json = JSON.parse(facts.nodes[NODE]![stem]!) as Listing;
  const map = json.nftables.map((o) => o['map']).find((m) => m?.name === 'no-endpoint-services')!;
  (map.elem ??= []).push([
    { elem: { val: { concat: [ip, 'tcp', 80] }, comment: PORT } },
    { goto: { target: 'reject-chain' } },
  ]);
  facts.nodes[NODE]![stem] = JSON.stringify(json);
  return { facts, ip };
}

const clusterIP = (facts: Facts) =>
  new Analysis(facts, { code: allModes }).view.services.find(
    (s) => s.namespace === 'matrix' && s.name === 'cluster-ip',
  )!.clusterIP!;

describe('a stale no-endpoint-services element for a Service port with endpoints', () => {
  for (const minor of [31, 33, 35, 37])
    it(`v1.${minor}: drift finds it, says what it refuses as the walk does; trace names it; rules marks it`, async () => {
      const { facts, ip } = await staleReject(minor);
      const analysis = new Analysis(facts, { code: allModes });
      const drift = analysis.node(NODE).drift().findings;
      assert.deepEqual(
        drift.map((f) => `${severityOf(f)} ${f.id} ${f.service} ${f.title}`),
        [`warning entry-stale ${PORT} no-endpoint-services still rejects ${ip}:80`],
      );
      const before = minor < 33; // filter-output at -110
      const fromHost = analysis.node(NODE).trace({
        src: '192.0.2.21',
        dst: ip,
        dport: 80,
        protocol: 'tcp',
        fromHost: true,
      });
      const answer = traceAnswer(fromHost, analysis.view, NODE);
      if (before) {
        assert.match(
          drift[0]!.explanation,
          /from processes on the node \(host-network Pods too\) are refused by filter-output/,
        );
        assert.deepEqual(
          fromHost.outcomes.map((o) => o.verdict),
          ['REJECT'],
        );
        assert.match(
          answer.unmatched ?? '',
          new RegExp(`@no-endpoint-services holds ${ip.replaceAll('.', '\\.')} \\. tcp \\. 80`),
        );
        assert.doesNotMatch(answer.unmatched ?? '', /does not jump/);
      } else {
        assert.match(drift[0]!.explanation, /so it refuses none as the table stands/);
        assert.ok(fromHost.outcomes.every((o) => o.dnat !== undefined));
      }
      const report = diagnose(facts, { namespace: 'matrix', service: 'cluster-ip' }, { analysis });
      assert.equal(report.steps.find((s) => s.id === 'rules')!.status, 'warn');
      const tree = analysis
        .node(NODE)
        .trees()!
        .services.find((t) => t.name === PORT)!;
      const reject = treeText(tree, 'dump').find((l) => l.includes('REJECT'));
      assert.match(reject ?? '', /! stale: the same address and port also lead to endpoints/);
    });

  it('the recordings as they are: no REJECT line marked', async () => {
    for (const minor of [31, 37]) {
      const facts = await readSnapshot(join(FIXTURES, String(minor), 'nftables'));
      const trees = new Analysis(facts, { code: allModes }).node(NODE).trees()!;
      assert.deepEqual(
        trees.services.flatMap((t) => treeText(t, 'dump')).filter((l) => l.includes('stale')),
        [],
      );
    }
  });
});
