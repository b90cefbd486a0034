// A finding's status is derived from the kinds of its evidence, and a step's mark from its
// findings: a property of how findings and steps are made, not of each check.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { finding, foldNodes } from '../../../src/core/checks/check.js';
import { kubectl } from '../../../src/core/findings/next-command.js';
import { computed, read, seen, unseen } from '../../../src/core/findings/evidence.js';
import { shownStepStatus, type Evidence, type Status } from '../../../src/core/model.js';

const SEEN = seen('node-a: TCP connect 10.1.0.1:80: connected', { node: 'node-a' });
const READ = read('EndpointSlice web-x: 10.244.0.5:8080 ready');
const WALKED = computed('on node-a, tcp -> 10.1.0.1:80: DNAT to 10.244.0.5:8080', 'walked');
const EXPECTED = computed('-A KUBE-SERVICES -d 10.1.0.1/32 ... -j KUBE-SVC-X');
const UNSEEN = unseen('node-a: TCP connect 10.1.0.1:80: no nc', 'node-a');

describe('finding(): the status follows the evidence', () => {
  const cases: [string, Status, Evidence[], Status, boolean?][] = [
    ['a pass seen on a node stays a pass', 'pass', [SEEN], 'pass'],
    ['a pass read from the API stays a pass', 'pass', [READ], 'pass'],
    ['a pass without evidence is not one', 'pass', [], 'skip'],
    ['a pass on computed evidence alone is not one', 'pass', [WALKED, EXPECTED], 'skip'],
    ['a pass on what was not observed is not one', 'pass', [UNSEEN], 'skip'],
    ['a fail on computed evidence alone is not one', 'fail', [EXPECTED], 'skip'],
    ['a warning without evidence is not one', 'warn', [], 'skip'],
    ['a fail with the rule seen stays a fail', 'fail', [EXPECTED, SEEN], 'fail'],
    [
      'an explanation on computed evidence alone explains, it does not pass',
      'pass',
      [WALKED],
      'skip',
      true,
    ],
    [
      'an explanation on observed evidence is one that passed',
      'pass',
      [SEEN, WALKED],
      'pass',
      true,
    ],
  ];
  for (const [what, asked, evidence, status, info] of cases)
    it(what, () => {
      const f = finding('clusterip-reachable', asked, 'ClusterIP answers', {
        explanation: '',
        evidence,
        info,
      });
      assert.equal(f.status, status);
      if (status !== asked)
        assert.equal(
          f.title,
          info ? 'ClusterIP answers' : 'ClusterIP answers (not observed: no evidence recorded)',
        );
    });
});

describe("finding(): a pass speaks for each node it names with that node's own evidence", () => {
  const pass = (evidence: Evidence[], nodes: string[]) =>
    finding('rules-match', 'pass', 'rules as expected', { explanation: '', evidence, nodes });
  it('every node named, each seen there: a pass', () => {
    const b = seen('node-b: -A KUBE-SVC-X ...', { node: 'node-b' });
    assert.equal(pass([SEEN, b], ['node-a', 'node-b']).status, 'pass');
  });
  it('a node named with nothing seen there: not a pass, and the title says which', () => {
    const f = pass([SEEN], ['node-a', 'node-b']);
    assert.equal(f.status, 'skip');
    assert.equal(f.title, 'rules as expected (not observed: nothing observed on node-b)');
  });
  it('a part not observed beside an observed one: not a pass, and the title says what', () => {
    const f = pass([SEEN, UNSEEN], ['node-a']);
    assert.equal(f.status, 'skip');
    assert.equal(
      f.title,
      'rules as expected (not observed: node-a: TCP connect 10.1.0.1:80: no nc)',
    );
  });
  it('a fail is not touched: one node seen failing is enough', () => {
    const f = finding('rules-match', 'fail', 'rules differ', {
      explanation: '',
      evidence: [SEEN],
      nodes: ['node-a', 'node-b'],
    });
    assert.equal(f.status, 'fail');
  });
});

describe('a step mark follows its findings', () => {
  const pass = finding('rules-match', 'pass', '1 of 2 nodes: as expected', {
    explanation: '',
    evidence: [SEEN],
  });
  const blind = finding('rules-not-observed', 'skip', 'node-b: rules not observed', {
    explanation: '',
    evidence: [unseen('nodes/node-b/iptables-save.txt: not in the facts', 'node-b')],
  });
  const unused = finding('traffic-policy-not-used', 'skip', 'headless', { explanation: '' });
  const cases: [string, Status, (typeof pass)[], string][] = [
    ['a pass alone: ✓', 'pass', [pass], 'pass'],
    ['a pass and a node not observed: partial, never a bare ✓', 'pass', [pass, blind], 'partial'],
    ['only what was not observed: ?', 'skip', [blind], 'unobserved'],
    ['a skip that is no observation (not applicable): -', 'skip', [unused], 'skip'],
  ];
  for (const [what, status, findings, shown] of cases)
    it(what, () => assert.equal(shownStepStatus({ id: 's', title: 'S', status, findings }), shown));
});

describe('foldNodes(): nodes in the same condition past a few are one finding', () => {
  const on = (node: string, status: Status) =>
    finding('kube-proxy-synced', status, `kube-proxy on ${node} is in sync`, {
      explanation: 'Its last sync includes every change it was told about.',
      evidence: [seen(`${node}: last sync 1700000000`, { node })],
      next: kubectl('kube-system', 'logs', `kube-proxy-${node}`),
      node,
    });
  const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
  const title = (n: string[]) => `in sync on ${n.length} nodes`;

  it('a few stay one a node', () => {
    const few = nodes.slice(0, 3).map((n) => on(n, 'pass'));
    assert.deepEqual(foldNodes(few, title), few);
  });

  it('more are one: every node and its evidence kept, the command for them all where given', () => {
    const all = kubectl('kube-system', 'logs', '-l', 'k8s-app=kube-proxy', '--prefix');
    const [one, ...others] = foldNodes(
      nodes.map((n) => on(n, 'pass')),
      title,
      all,
    );
    assert.equal(others.length, 0);
    assert.equal(one!.title, 'in sync on 5 nodes');
    assert.deepEqual(one!.nodes, nodes);
    assert.equal(one!.node, undefined);
    assert.deepEqual(
      one!.evidence.map((e) => e.node),
      nodes,
    );
    assert.deepEqual(one!.next, all);
  });

  it('a pass is never folded with another status', () => {
    const mixed = [...nodes.map((n) => on(n, 'pass')), ...nodes.map((n) => on(n, 'warn'))];
    assert.deepEqual(
      foldNodes(mixed, title).map((f) => [f.status, f.nodes?.length]),
      [
        ['pass', 5],
        ['warn', 5],
      ],
    );
  });
});
