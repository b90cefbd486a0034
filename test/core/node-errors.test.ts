// The node commands that failed, nodes that failed the same way said once: the fold a live run
// makes as each node is done, the readers the steps ask (a node's own words back), an older
// capture's one-entry-per-node list read the same way, and what a lost read on many nodes says.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Facts } from '../../src/core/model.js';
import {
  NODE,
  NodeErrorFold,
  nodeErrorsOf,
  rulesReadError,
  type NodeFailure,
} from '../../src/core/nodes/errors.js';
import { notRead } from '../../src/core/not-read.js';

/** What the kube-proxy channel says on a node whose kubelet the API server cannot reach. */
function unreachable(i: number, lost = false): NodeFailure[] {
  const why = `exec kube-system/kube-proxy-${(i * 7919).toString(36)}: the API server could not connect to the node's kubelet at 198.51.${i >> 8}.${i & 255}:10250: connect: connection refused`;
  return [
    {
      command: 'iptables-nft-nat-S_KUBE-POSTROUTING',
      typed: ['iptables-nft', '-t', 'nat', '-S', 'KUBE-POSTROUTING'],
      exitCode: null,
      error: why,
      ...(lost ? { lost } : {}),
    },
    {
      command: 'ip-addr',
      typed: ['ip', '-br', 'addr'],
      exitCode: null,
      error: `cannot run ip -br addr on node node-${i}: kube-proxy Pod: ${why}`,
      ...(lost ? { lost } : {}),
    },
  ];
}

const withGroups = (fold: NodeErrorFold): Facts => ({
  objects: [],
  nodes: {},
  meta: { nodeErrorGroups: JSON.parse(JSON.stringify(fold.groups())) },
});

describe('node errors: nodes that failed the same way', () => {
  const fold = new NodeErrorFold();
  for (let i = 0; i < 3000; i++) fold.add(`node-${i}`, unreachable(i));
  const groups = fold.groups();

  it('3,000 nodes unreachable the same way are one group: each failure once, every name', () => {
    assert.equal(groups.length, 1);
    const [g] = groups;
    assert.equal(g!.nodes.length, 3000);
    assert.deepEqual(
      g!.nodes.slice(0, 4),
      ['node-0', 'node-1', 'node-10', 'node-100'],
      'sorted by name',
    );
    assert.deepEqual(new Set(g!.nodes).size, 3000);
    // the words that differ from node to node kept to where they part; the node's name a mark
    assert.deepEqual(
      g!.errors.map((e) => e.error),
      [
        "exec kube-system/kube-proxy-…: the API server could not connect to the node's kubelet at 198.51.…:10250: connect: connection refused",
        `cannot run ip -br addr on node ${NODE}: kube-proxy Pod: exec kube-system/kube-proxy-…: the API server could not connect to the node's kubelet at 198.51.…:10250: connect: connection refused`,
      ],
    );
    assert.deepEqual(g!.errors[1]!.typed, ['ip', '-br', 'addr']);
    // names and the failures once: tens of KB, where one entry per node and command was MBs
    assert.ok(JSON.stringify(groups).length < 40_000, `${JSON.stringify(groups).length} bytes`);
  });

  it("gives each node's failures back in its own name, and counts every failed command", () => {
    const errors = nodeErrorsOf(withGroups(fold));
    assert.equal(errors.count, 6000);
    assert.equal(errors.nodes().length, 3000);
    const on = errors.on('node-17');
    assert.deepEqual(
      on.map((e) => [e.node, e.command]),
      [
        ['node-17', 'iptables-nft-nat-S_KUBE-POSTROUTING'],
        ['node-17', 'ip-addr'],
      ],
    );
    assert.match(on[1]!.error, /^cannot run ip -br addr on node node-17: kube-proxy Pod: exec /);
    assert.match(rulesReadError(withGroups(fold), 'node-2999')!, /^exec kube-system\/kube-proxy-…/);
    assert.equal(rulesReadError(withGroups(fold), 'node-a'), undefined);
  });

  it('up to three nodes that failed the same way keep their own words, each its own group', () => {
    const few = new NodeErrorFold();
    for (const i of [3, 1, 2]) few.add(`node-${i}`, unreachable(i));
    const g = few.groups();
    assert.deepEqual(
      g.map((x) => x.nodes),
      [['node-1'], ['node-2'], ['node-3']],
    );
    const back = nodeErrorsOf(withGroups(few)).on('node-3');
    assert.deepEqual(
      back.map((e) => e.error),
      unreachable(3).map((e) => e.error),
    );
  });

  it('nodes that failed otherwise are groups of their own; a node read twice has both', () => {
    const f = new NodeErrorFold();
    for (let i = 0; i < 10; i++) f.add(`node-${i}`, unreachable(i));
    // another command failed on node-0 in a later read (more commands for an early node)
    f.add('node-0', [{ command: 'conntrack-stats', exitCode: 1, error: 'conntrack: not found' }]);
    // node-a said something else: not among the ten
    f.add('node-a', [{ command: 'ip-addr', exitCode: 1, error: 'ip: not found' }]);
    const g = f.groups();
    assert.deepEqual(
      g.map((x) => x.nodes.length),
      [10, 1, 1],
    );
    const errors = nodeErrorsOf(withGroups(f));
    assert.deepEqual(
      errors.on('node-0').map((e) => e.command),
      ['iptables-nft-nat-S_KUBE-POSTROUTING', 'ip-addr', 'conntrack-stats'],
    );
    assert.equal(errors.count, 22);
  });

  it('a name inside another (kube-proxy-NODE, NODE.example) is no mark: it is part of a word', () => {
    const f = new NodeErrorFold();
    f.add('a', [{ command: 'ip-addr', exitCode: null, error: 'a: no kube-proxy-a on a.example' }]);
    const [g] = f.groups();
    assert.equal(g!.errors[0]!.error, `${NODE}: no kube-proxy-a on a.example`);
    assert.equal(nodeErrorsOf(withGroups(f)).on('a')[0]!.error, 'a: no kube-proxy-a on a.example');
  });

  it("reads an older capture's one entry per node and command the same way", () => {
    const old: Facts = {
      objects: [],
      nodes: {},
      meta: {
        nodeErrors: [
          { node: 'node-b', command: 'iptables-save', exitCode: null, error: 'refused' },
          { node: 'node-b', command: 'ip-addr', exitCode: 1, error: 'ip: not found' },
          // input: an entry without its words is no error kdebug can show
          { node: 'node-c', command: 7, error: 'x' },
          'not an error',
        ],
        nodeErrorGroups: [
          { nodes: [], errors: [] },
          { nodes: ['node-x'], errors: 'no' },
        ],
      },
    };
    const errors = nodeErrorsOf(old);
    assert.equal(errors.count, 2);
    assert.deepEqual(errors.nodes(), ['node-b']);
    assert.equal(rulesReadError(old, 'node-b'), 'refused');
    assert.deepEqual(
      errors.all().map((e) => `${e.node} ${e.command}`),
      ['node-b iptables-save', 'node-b ip-addr'],
    );
  });

  it('a read lost the same way on many nodes is one line of what was not read, not one a node', () => {
    const f = new NodeErrorFold();
    for (let i = 0; i < 3000; i++) f.add(`node-${i}`, unreachable(i, true));
    const lost = notRead(withGroups(f));
    assert.deepEqual(
      lost.map((n) => n.what),
      [
        'iptables-nft-nat-S_KUBE-POSTROUTING on 3000 nodes (node-0, node-1, node-10 and 2997 more)',
        'ip-addr on 3000 nodes (node-0, node-1, node-10 and 2997 more)',
      ],
    );
    assert.match(lost[1]!.why, /^cannot run ip -br addr on the node: kube-proxy Pod: exec /);
    // one node: its own words, as before
    const one = new NodeErrorFold();
    one.add('node-9', unreachable(9, true));
    assert.deepEqual(notRead(withGroups(one))[1], {
      what: 'ip-addr on node node-9',
      why: unreachable(9)[1]!.error,
    });
  });
});
