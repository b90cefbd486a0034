// byReason: the same failure on many nodes said once, each node's own name as "the node".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { byReason } from '../../src/core/nodes/access.js';

describe('byReason', () => {
  it('says a node named in quotes "the node", never node "the node"', () => {
    const [g] = byReason([
      {
        node: 'vm-12-11-centos',
        reason:
          'no IPv4 rules recorded for node "vm-12-11-centos" (no nodes/vm-12-11-centos/iptables-save.txt)',
      },
    ]);
    assert.equal(
      g!.reason,
      'no IPv4 rules recorded for the node (no nodes/vm-12-11-centos/iptables-save.txt)',
    );
    const [q] = byReason([{ node: 'node-a', reason: "read 'node-a' failed" }]);
    assert.equal(q!.reason, 'read the node failed');
    const [bare] = byReason([{ node: 'node-a', reason: 'node node-a: timed out' }]);
    assert.equal(bare!.reason, 'the node: timed out');
  });

  it("keeps a name that holds the node's whole (a Pod, a host, a path), and a name ending a sentence is the node", () => {
    const [g] = byReason([
      {
        node: 'node-a',
        reason:
          'exec kube-system/kube-proxy-node-a on node-a.example.com (nodes/node-a/x.txt, node-a_1, xnode-a): node-a. "node-a"s',
      },
    ]);
    assert.equal(
      g!.reason,
      'exec kube-system/kube-proxy-node-a on node-a.example.com (nodes/node-a/x.txt, node-a_1, xnode-a): the node. "the node"s',
    );
    // a name with the characters of a pattern is a name: a.b does not stand for axb
    assert.equal(byReason([{ node: 'a.b', reason: 'axb and a.b' }])[0]!.reason, 'axb and the node');
  });

  it('groups 5,000 nodes, each named in its own words, in bounded time: no expression per node', () => {
    const items = Array.from({ length: 5000 }, (_, i) => ({
      node: `worker-${i}.zone-${i % 7}`,
      reason: `cannot run iptables-save on node worker-${i}.zone-${i % 7}: exec kube-system/kube-proxy-${i.toString(36)}: the API server could not connect to the node's kubelet at 10.${i >> 8}.${i & 255}.1:10250: i/o timeout`,
    }));
    const before = process.cpuUsage();
    const groups = byReason(items);
    const used = process.cpuUsage(before);
    assert.deepEqual(
      groups.map((g) => [g.nodes.length, g.reason]),
      [
        [
          5000,
          "cannot run iptables-save on the node: exec kube-system/kube-proxy-…: the API server could not connect to the node's kubelet at 10.…:10250: i/o timeout",
        ],
      ],
    );
    // CPU time, not wall time: a generous bound that a loaded machine still meets
    const ms = (used.user + used.system) / 1000;
    assert.ok(ms < 1000, `${ms} ms of CPU for 5,000 nodes`);
  });
});
