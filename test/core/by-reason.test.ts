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
});
