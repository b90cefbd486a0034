// A Rules finding that speaks for several nodes ("the same on N nodes") carries a Next for all of
// them: kube-proxy's own commands cover every Pod, and a command that runs on one node says so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { shellLine } from '../../../src/core/findings/next-command.js';
import type { KubeObject } from '../../../src/core/model.js';
import { anEndpointSlice, dumpFor, facts, healthy, replace, run } from './builders.js';

const NODES = ['node-a', 'node-b'];

/** The healthy cluster whose slice lost web-2 after both nodes' rules were written. */
function staleOnBoth(): { objects: KubeObject[]; nodes: Record<string, Record<string, string>> } {
  const written = healthy();
  const objects = replace(
    written,
    'EndpointSlice',
    'web-abcde',
    anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', node: 'node-a', pod: 'web-1' }] }),
  ).filter((o) => o.metadata?.name !== 'web-2');
  const nodes = Object.fromEntries(NODES.map((n) => [n, { 'iptables-save': dumpFor(written, n) }]));
  return { objects, nodes };
}

describe('a Rules finding for several nodes: its Next covers them all', () => {
  it("kube-proxy not synced on both nodes: every kube-proxy Pod's log, not node-a's Pod's alone", () => {
    const { objects, nodes } = staleOnBoth();
    const found = run(rulesCheck, facts(objects, nodes));
    const stale = found.find((f) => f.id === 'endpoint-stale');
    assert.ok(stale, found.map((f) => f.title).join('\n'));
    assert.deepEqual(stale.nodes, NODES);
    assert.equal(
      shellLine(stale.next!),
      'kubectl -n kube-system logs -l k8s-app=kube-proxy --prefix --tail=20',
    );
    // the same condition on one node keeps that node's own Pod
    const one = run(rulesCheck, facts(objects, { 'node-b': nodes['node-b']! })).find(
      (f) => f.id === 'endpoint-stale',
    );
    assert.equal(shellLine(one!.next!), 'kubectl -n kube-system logs kube-proxy-1x9z');
  });

  it('kube-proxy in sync by its /metrics on both nodes: a rolling restart, not one Pod deleted', () => {
    const { objects, nodes } = staleOnBoth();
    const metrics =
      'kubeproxy_sync_proxy_rules_last_timestamp_seconds 1700000100\nkubeproxy_sync_proxy_rules_last_queued_timestamp_seconds 1700000000\n';
    for (const n of NODES) nodes[n]!['proxy-metrics'] = metrics;
    const stale = run(rulesCheck, facts(objects, nodes)).find((f) => f.id === 'endpoint-stale');
    assert.deepEqual(stale?.nodes, NODES);
    assert.equal(
      shellLine(stale.next!),
      'kubectl -n kube-system rollout restart daemonset kube-proxy',
    );
  });

  it("a command run on the first node is said to be that node's, one of the nodes", () => {
    // both nodes in nftables mode, their table not read: the command that saves it runs on one
    const nodes = Object.fromEntries(NODES.map((n) => [n, { 'proxy-mode': 'nftables' }]));
    const [f, ...rest] = run(rulesCheck, facts(healthy(), nodes));
    assert.equal(rest.length, 0);
    assert.deepEqual(f?.nodes, NODES);
    assert.equal(f.next?.node, 'node-a');
    assert.equal(f.advice, "The command below is node-a's; run it for each of the 2 nodes.");
    // alone, the node's own command needs no such word
    const one = run(rulesCheck, facts(healthy(), { 'node-b': nodes['node-b']! }));
    assert.equal(one[0]?.next?.node, 'node-b');
    assert.equal(one[0]?.advice, undefined);
  });
});
