// The node commands that failed, nodes that failed the same way said once: the fold a live run
// makes as each node is done, the readers the steps ask (a node's own words back), an older
// capture's one-entry-per-node list read the same way, and what a lost read on many nodes says.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Facts } from '../../src/core/model.js';
import type { NodeError } from '../../src/core/nodes/access.js';
import { commandStem } from '../../src/core/nodes/commands.js';
import {
  FLAT,
  NODE,
  NodeErrorFold,
  nodeErrorsOf,
  rulesReadError,
  type NodeFailure,
} from '../../src/core/nodes/errors.js';
import {
  GROUPED,
  nodeErrorsMeta,
  notRead,
  readErrorsOf,
  type ReadError,
} from '../../src/core/facts/not-read.js';

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

  it('folds 5,000 more nodes, each its own name, in bounded time: no expression per node', () => {
    const more = new NodeErrorFold();
    const before = process.cpuUsage();
    for (let i = 0; i < 5000; i++) {
      const name = `worker-${i}.zone-${i % 7}`;
      more.add(
        name,
        unreachable(i).map((f) => ({ ...f, error: f.error.replace(`node-${i}`, name) })),
      );
    }
    const [g, ...rest] = more.groups();
    const used = process.cpuUsage(before);
    assert.equal(rest.length, 0);
    assert.equal(g!.nodes.length, 5000);
    assert.match(g!.errors[1]!.error, /^cannot run ip -br addr on node \{node\}: kube-proxy Pod/);
    // CPU time, not wall time: a generous bound that a loaded machine still meets
    const ms = (used.user + used.system) / 1000;
    assert.ok(ms < 1000, `${ms} ms of CPU for 5,000 nodes`);
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
    assert.match(rulesReadError(errors, 'node-2999')!, /^exec kube-system\/kube-proxy-…/);
    assert.equal(rulesReadError(errors, 'node-a'), undefined);
  });

  it('up to three nodes that failed the same way keep their own words, each its own group', () => {
    const few = new NodeErrorFold();
    for (const i of [3, 1, 2]) few.add(`node-${i}`, unreachable(i));
    const g = few.groups();
    assert.deepEqual(
      g.map((x) => x.nodes),
      [['node-1'], ['node-2'], ['node-3']],
    );
    // as written: the node's own name, never the mark a script would have to fill in
    assert.deepEqual(
      g[2]!.errors.map((e) => e.error),
      unreachable(3).map((e) => e.error),
    );
    assert.ok(!JSON.stringify(g).includes(NODE));
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
    // past three nodes, a group: node a's name inside kube-proxy-a and a.example stays a word
    const said = (n: string) => `${n}: no kube-proxy-a on a.example`;
    const f = new NodeErrorFold();
    for (const n of ['a', 'b', 'c', 'd'])
      f.add(n, [{ command: 'ip-addr', exitCode: null, error: said(n) }]);
    const [g] = f.groups();
    assert.equal(g!.nodes.length, 4);
    assert.equal(g!.errors[0]!.error, `${NODE}: no kube-proxy-a on a.example`);
    assert.equal(nodeErrorsOf(withGroups(f)).on('a')[0]!.error, said('a'));
    // one node: its own words, no mark at all
    const one = new NodeErrorFold();
    one.add('a', [{ command: 'ip-addr', exitCode: null, error: said('a') }]);
    assert.equal(one.groups()[0]!.errors[0]!.error, said('a'));
    assert.equal(nodeErrorsOf(withGroups(one)).on('a')[0]!.error, said('a'));
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
    assert.equal(rulesReadError(errors, 'node-b'), 'refused');
    assert.deepEqual(
      errors.all().map((e) => `${e.node} ${e.command}`),
      ['node-b iptables-save', 'node-b ip-addr'],
    );
  });

  it('a failure is a rules read by the command it records, not by how its stem is spelled', () => {
    const failure = (node: string, read: NodeFailure['read'] & object, error: string) => ({
      node,
      command: commandStem(read),
      read,
      exitCode: 1,
      error,
    });
    const errors = nodeErrorsOf({
      objects: [],
      nodes: {},
      meta: {
        nodeErrors: [
          // IPv6 first: the node's IPv4 rules read is what the step asks for
          failure('node-a', { kind: 'ip6tables-save', backend: 'auto' }, 'v6 refused'),
          failure('node-a', { kind: 'iptables-save', backend: 'nft', table: 'nat' }, 'nat refused'),
          failure(
            'node-b',
            { kind: 'iptables-chain', tool: 'ip6tables', backend: 'nft', chain: 'KUBE-SVC-X' },
            'v6 chain refused',
          ),
          failure(
            'node-c',
            { kind: 'iptables-chain', tool: 'iptables', backend: 'legacy', chain: 'KUBE-SVC-X' },
            'chain refused',
          ),
          // input: a recorded command that is not the one its stem names is no failure kdebug places
          { ...failure('node-d', { kind: 'ip-addr' }, 'x'), command: 'iptables-save' },
          { ...failure('node-d', { kind: 'ip-addr' }, 'y'), read: { kind: 'ipset-test' } },
        ],
      },
    });
    assert.equal(rulesReadError(errors, 'node-a'), 'nat refused');
    assert.equal(rulesReadError(errors, 'node-b'), undefined);
    assert.equal(rulesReadError(errors, 'node-c'), 'chain refused');
    assert.deepEqual(errors.on('node-d'), []);
    // an older capture's entry, without its command: the stem names the same reads
    const old = (command: string) =>
      rulesReadError(
        nodeErrorsOf({
          objects: [],
          nodes: {},
          meta: { nodeErrors: [{ node: 'n', command, exitCode: 1, error: command }] },
        }),
        'n',
      );
    assert.equal(old('iptables-legacy-save-nat'), 'iptables-legacy-save-nat');
    assert.equal(old('iptables-filter-S_KUBE-FORWARD'), 'iptables-filter-S_KUBE-FORWARD');
    assert.equal(old('ip6tables-save'), undefined);
    assert.equal(old('iptables-nat-S_'), undefined);
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

/** How kdebug before the groups (d6d622e, src/core/nodes/access.ts and not-read.ts) read a
 * capture's failed node commands and what it lost: only meta.nodeErrors, and meta.readErrors. */
const older = {
  nodeErrorsOf(facts: Facts): NodeError[] {
    const v = facts.meta['nodeErrors'];
    return Array.isArray(v) ? (v as unknown[]).filter(older.isNodeError) : [];
  },
  isNodeError(v: unknown): v is NodeError {
    if (v === null || typeof v !== 'object') return false;
    const e = v as Record<string, unknown>;
    return (
      typeof e['node'] === 'string' &&
      typeof e['command'] === 'string' &&
      typeof e['error'] === 'string' &&
      (e['typed'] === undefined ||
        (Array.isArray(e['typed']) && e['typed'].every((w) => typeof w === 'string')))
    );
  },
  notRead(facts: Facts): { what: string; why: string }[] {
    const v = facts.meta['readErrors'];
    const readErrors = Array.isArray(v) ? (v as ReadError[]) : [];
    return [
      ...readErrors
        .filter((e) => e.reason !== undefined && !['forbidden', 'not-found'].includes(e.reason))
        .map((e) => ({ what: e.what, why: e.error })),
      ...older
        .nodeErrorsOf(facts)
        .filter((e) => e.lost)
        .map((e) => ({ what: `${e.command} on node ${e.node}`, why: e.error })),
    ];
  },
};

/** A capture's meta.json as written and read back. */
const written = (fold: NodeErrorFold, readErrors?: ReadError[]): Facts => ({
  objects: [],
  nodes: {},
  meta: JSON.parse(
    JSON.stringify({ ...(readErrors ? { readErrors } : {}), ...nodeErrorsMeta(fold, readErrors) }),
  ),
});

describe('node errors in meta.json: older kdebug and scripts read them', () => {
  const refused: ReadError = {
    what: 'Pods in kube-system',
    error: 'forbidden',
    reason: 'forbidden',
  };

  it(`up to ${FLAT} failed nodes: one entry per node and command, in its own words`, () => {
    const fold = new NodeErrorFold();
    for (let i = 0; i < FLAT; i++) fold.add(`node-${i}`, unreachable(i, i === 7));
    const facts = written(fold, [refused]);
    assert.equal(facts.meta['nodeErrorGroups'], undefined);
    assert.deepEqual(facts.meta['readErrors'], [refused], 'no marker');
    assert.ok(!JSON.stringify(facts.meta).includes(NODE));
    // the older reader: every node's failures, exactly as the node said them
    const old = older.nodeErrorsOf(facts);
    assert.equal(old.length, 2 * FLAT);
    for (let i = 0; i < FLAT; i++)
      assert.deepEqual(
        old.filter((e) => e.node === `node-${i}`).map(({ node: _, ...f }) => f),
        unreachable(i, i === 7),
      );
    assert.deepEqual(
      older.notRead(facts).map((n) => n.what),
      ['iptables-nft-nat-S_KUBE-POSTROUTING on node node-7', 'ip-addr on node node-7'],
    );
    // this one reads them the same
    const now = nodeErrorsOf(facts);
    assert.equal(now.count, 2 * FLAT);
    assert.deepEqual(
      now.on('node-7'),
      old.filter((e) => e.node === 'node-7'),
    );
    assert.deepEqual(notRead(facts), older.notRead(facts));
  });

  it('read back, nodes whose flat entries failed alike are one group again: one line lost, not one a node', () => {
    const fold = new NodeErrorFold();
    for (let i = 0; i < 40; i++) fold.add(`node-${i}`, unreachable(i, true));
    const facts = written(fold, []);
    assert.ok(Array.isArray(facts.meta['nodeErrors']), 'written flat');
    const lost = notRead(facts);
    assert.equal(lost.length, 2, lost.map((n) => n.what).join('\n'));
    assert.match(lost[0]!.what, /on 40 nodes/);
    assert.equal(nodeErrorsOf(facts).count, 80);
  });

  it('a node done twice has both its reads in the flat list', () => {
    const fold = new NodeErrorFold();
    fold.add('node-0', unreachable(0));
    fold.add('node-0', [
      { command: 'conntrack-stats', exitCode: 1, error: 'conntrack: not found' },
    ]);
    const old = older.nodeErrorsOf(written(fold));
    assert.deepEqual(
      old.map((e) => e.command),
      ['iptables-nft-nat-S_KUBE-POSTROUTING', 'ip-addr', 'conntrack-stats'],
    );
  });

  it(`past ${FLAT}: the groups, and a lost read an older kdebug says (its report partial)`, () => {
    const fold = new NodeErrorFold();
    for (let i = 0; i <= FLAT; i++) fold.add(`node-${i}`, unreachable(i));
    const facts = written(fold, [refused]);
    assert.equal(facts.meta['nodeErrors'], undefined);
    assert.equal((facts.meta['nodeErrorGroups'] as unknown[]).length, 1);
    // the older reader sees no failed command, but a read it lost: never a whole capture
    assert.deepEqual(older.nodeErrorsOf(facts), []);
    const lost = older.notRead(facts);
    assert.equal(lost.length, 1);
    assert.equal(lost[0]!.what, `the failed commands of ${FLAT + 1} nodes (meta.nodeErrorGroups)`);
    // this one reads the groups and drops the marker: nothing was lost
    assert.deepEqual(readErrorsOf(facts), [refused]);
    assert.deepEqual(notRead(facts), []);
    assert.equal(nodeErrorsOf(facts).count, 2 * (FLAT + 1));
    assert.deepEqual(
      nodeErrorsOf(facts)
        .on('node-3')
        .map((e) => e.command),
      ['iptables-nft-nat-S_KUBE-POSTROUTING', 'ip-addr'],
    );
    // a marker with no groups beside it (a meta.json cut by hand) still says something was lost
    const cut: Facts = { ...facts, meta: { readErrors: facts.meta['readErrors'] } };
    assert.equal(readErrorsOf(cut).filter((e) => e.reason === GROUPED).length, 1);
  });

  it('reads a meta holding both forms, each node once per entry', () => {
    const many = new NodeErrorFold();
    for (let i = 0; i <= FLAT; i++) many.add(`node-${i}`, unreachable(i));
    const few = new NodeErrorFold();
    few.add('node-a', [{ command: 'ip-addr', exitCode: 1, error: 'ip: not found' }]);
    const facts: Facts = {
      objects: [],
      nodes: {},
      meta: { ...written(many).meta, ...written(few).meta },
    };
    const errors = nodeErrorsOf(facts);
    assert.equal(errors.count, 2 * (FLAT + 1) + 1);
    assert.deepEqual(errors.on('node-a'), [
      { node: 'node-a', command: 'ip-addr', exitCode: 1, error: 'ip: not found' },
    ]);
    assert.deepEqual(notRead(facts), []);
  });

  it('none failed: neither key', () => {
    assert.deepEqual(nodeErrorsMeta(new NodeErrorFold()), {});
  });
});
