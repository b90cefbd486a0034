// A Service port whose map element alone is gone (deleted by hand, f24 of the r145 review): the
// finding expects only what the table lacks, quotes what it still holds, and says what those
// remaining lines do with a connection (cluster-ips-check rejects it while the IP is in
// cluster-ips; without that element nothing translates it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView, serviceCIDRs } from '../../src/core/kube/objects.js';
import { nftablesDrift } from '../../src/core/dataplane/nftables/drift.js';
import { expectedNftScript } from '../../src/core/dataplane/nftables/expected/expected.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { NODE, objects } from '../support/nft-overall.js';

const view = clusterView(objects);
const exp = expectedRules(view, NODE);
const script = expectedNftScript(exp, serviceCIDRs(view));
const SOURCE = 'nodes/test-node/nft-ip-kube-proxy.txt';

/** The findings on the script without the lines `drop` matches. */
function findings(drop: RegExp) {
  const table = parseNftScript(script.filter((l) => !drop.test(l)).join('\n')).tables[0]!;
  return nftablesDrift({
    node: NODE,
    source: SOURCE,
    expected: exp,
    serviceCIDRs: serviceCIDRs(view),
    table,
    trees: buildNftServiceTrees(table, { loadBalancerIPs: new Set(['1.2.3.4', '5.6.7.8']) }),
    scoped: false,
  }).findings;
}

describe('nftables drift: a Service port without its map element', () => {
  const element = script.find((l) => /service-ips \{ 172\.30\.0\.41 \. tcp \. 80 /.test(l))!;
  const cluster = script.find((l) => /cluster-ips \{ 172\.30\.0\.41 \}/.test(l))!;
  const chain = /goto (service-\S+)/.exec(element)![1]!;
  const n = script.filter((l) => l.startsWith(`add rule ip kube-proxy ${chain} `)).length;
  const held = `${SOURCE}: chain ${chain} (${n} rule${n === 1 ? '' : 's'})`;

  it('expects only the service-ips element, and says cluster-ips-check rejects the connection', () => {
    const [f, ...rest] = findings(/service-ips \{ 172\.30\.0\.41 /);
    assert.deepEqual([f?.id, rest.length], ['service-rules-missing', 0]);
    assert.deepEqual(f!.drift.expected, [element]);
    // each line the node holds, with its line in the script read
    const kept = script.filter((l) => !/service-ips \{ 172\.30\.0\.41 /.test(l));
    const at = (start: string) => `${SOURCE}:${kept.findIndex((l) => l.startsWith(start)) + 1}`;
    assert.deepEqual(f!.drift.actual, [
      `${at(cluster)}: cluster-ips 172.30.0.41`,
      `${at('add rule ip kube-proxy filter-forward ct state new jump cluster-ips-check')}: ct state new jump cluster-ips-check`,
      `${at('add rule ip kube-proxy cluster-ips-check ip daddr @cluster-ips reject')}: ip daddr @cluster-ips reject`,
      held,
    ]);
    assert.match(
      f!.explanation,
      /from test-node are rejected: 172\.30\.0\.41 is still in cluster-ips/,
    );
    assert.doesNotMatch(f!.explanation, /not translated/);
  });

  it('without the cluster-ips element too, expects both and says the connection is not translated', () => {
    const [f, ...rest] = findings(/(service|cluster)-ips \{ 172\.30\.0\.41 /);
    assert.deepEqual([f?.id, rest.length], ['service-rules-missing', 0]);
    assert.deepEqual(f!.drift.expected, [cluster, element]);
    assert.deepEqual(f!.drift.actual, [held]);
    assert.match(f!.explanation, /from test-node are not translated\./);
  });
});
