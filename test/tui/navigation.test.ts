// Where keys lead, without Ink: the effects navigate() gives for a key in a state, over the
// analyses of recorded snapshots (the stale-endpoint cluster: node vm-12-11-centos still sends
// half of nginx-svc to 10.244.1.9, a Pod that is gone).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { analyze } from '../../src/tui/data.js';
import type { KeyAction } from '../../src/tui/keymap.js';
import { models, navigate, type Effect, type Screen } from '../../src/tui/navigation.js';
import { initialState, reduce, type State } from '../../src/tui/state.js';
import { allModes } from '../support/modes.js';

const TARGET = { namespace: 'default', service: 'nginx-svc' };
const snapshot = async (name: string): Promise<Screen> => ({
  data: analyze(
    { facts: await readSnapshot(`snapshots/${name}`), code: allModes },
    { target: TARGET },
  ),
  width: 100,
  bodyHeight: 30,
});
const keys = (sc: Screen, s: State, ...actions: KeyAction[]): State => {
  for (const a of actions)
    for (const e of navigate(s, a, models(s, sc), sc))
      if (e.do === 'dispatch') s = reduce(s, e.action);
  return s;
};
const effects = (sc: Screen, s: State, a: KeyAction): Effect[] => navigate(s, a, models(s, sc), sc);

describe('navigate', () => {
  it('Enter on a drift finding opens the Drift screen at it, on its node', async () => {
    const sc = await snapshot('stale-endpoint');
    const rules = sc.data.report!.steps.findIndex((st) => st.id === 'rules');
    let s = reduce(initialState('diag'), { type: 'report', firstProblem: rules });
    s = keys(sc, s, 'drill'); // into the Rules step's findings
    for (let i = 0; i < 10 && models(s, sc).diag!.finding!.id !== 'endpoint-stale'; i++)
      s = keys(sc, s, 'down');
    const f = models(s, sc).diag!.finding!;
    assert.equal(f.id, 'endpoint-stale');
    const [e] = effects(sc, s, 'drill');
    assert.equal(e?.do === 'dispatch' && e.action.type, 'jumpDrift');
    s = keys(sc, s, 'drill');
    assert.equal(s.screen, 'drift');
    assert.equal(sc.data.nodes[s.node.drift]?.name, f.node);
  });

  it('Enter on a finding without drift opens the Rules screen at the Service', async () => {
    const sc = await snapshot('nginx-svc');
    let s = keys(sc, initialState('diag'), 'drill');
    s = keys(sc, s, 'drill');
    assert.equal(s.screen, 'rules');
    const rules = models(s, sc).rules!;
    assert.equal(rules.rows[rules.cursor]?.tree.name, 'default/nginx-svc:http');
  });

  const table: {
    name: string;
    state: (s: State) => State;
    key: KeyAction;
    want: Effect['do'][];
  }[] = [
    { name: 'q quits', state: (s) => s, key: 'quit', want: ['quit'] },
    { name: 'ctrl-r reads again', state: (s) => s, key: 'recollect', want: ['recollect'] },
    {
      name: 'a question takes y as yes',
      state: (s) => reduce(s, { type: 'ask', asked: { lines: ['create a debug Pod?'] } }),
      key: 'accept',
      want: ['answer'],
    },
    {
      name: 'a question ignores moves',
      state: (s) => reduce(s, { type: 'ask', asked: { lines: ['create a debug Pod?'] } }),
      key: 'down',
      want: [],
    },
    {
      name: 'an unknown ":" command is said and closed',
      state: (s) => ({ ...s, modal: 'command', commandLine: 'nope' }),
      key: 'accept',
      want: ['dispatch', 'dispatch'],
    },
    {
      name: '":q" quits',
      state: (s) => ({ ...s, modal: 'command', commandLine: 'q' }),
      key: 'accept',
      want: ['quit'],
    },
  ];
  for (const c of table)
    it(c.name, async () => {
      const sc = await snapshot('nginx-svc');
      const got = effects(sc, c.state(initialState('diag')), c.key);
      assert.deepEqual(
        got.map((e) => e.do),
        c.want,
      );
      const answer = got.find((e) => e.do === 'answer');
      if (answer) assert.deepEqual(answer, { do: 'answer', yes: true });
    });

  it('":rules" switches screen', async () => {
    const sc = await snapshot('nginx-svc');
    const s = keys(
      sc,
      { ...initialState('diag'), modal: 'command', commandLine: 'rules' },
      'accept',
    );
    assert.equal(s.screen, 'rules');
  });
});

describe('the node errors pane', () => {
  const withErrors = async (nodeErrors: unknown[]): Promise<Screen> => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.meta['nodeErrors'] = nodeErrors;
    return {
      data: analyze({ facts, code: allModes }, { target: TARGET }),
      width: 60,
      bodyHeight: 12,
    };
  };
  const long = `cannot run iptables-save on node vm-12-11-centos: ${'kube-proxy Pod: error dialing backend; '.repeat(4)}the end`;

  it('e opens every failed command whole, named as typed on the node; esc returns', async () => {
    const sc = await withErrors([
      {
        node: 'vm-12-11-centos',
        command: 'iptables-save',
        typed: ['iptables-save', '-t', 'nat'],
        exitCode: null,
        error: long,
        lost: true,
      },
      {
        node: 'vm-12-7-centos',
        command: 'tcp-connect_10.1.190.219_8080',
        typed: ['nc', '-z', '-v', '-w', '3', '10.1.190.219', '8080'],
        exitCode: 1,
        error: 'timed out',
      },
    ]);
    let s = keys(sc, initialState('diag'), 'errors');
    assert.equal(s.screen, 'errors');
    const m = models(s, sc).errors!;
    assert.equal(m.count, 2);
    const text = m.lines.map((l) => l.text);
    assert.equal(text[0], 'vm-12-11-centos: iptables-save -t nat');
    // the reason whole, every word of it, on lines within the pane
    assert.equal(text.slice(1).join(' ').replace(/\s+/g, ' ').includes(long), true);
    assert.ok(
      text.every((l) => l.length <= 56),
      text.join('\n'),
    );
    assert.ok(text.includes('  it began and did not finish: the run is partial'));
    assert.ok(text.includes('vm-12-7-centos: nc -z -v -w 3 10.1.190.219 8080'));
    // it scrolls by line, as the help does
    s = keys(sc, s, 'bottom');
    assert.equal(models(s, sc).errors!.top, m.lines.length - m.page);
    s = keys(sc, s, 'back');
    assert.equal(s.screen, 'diag');
  });

  it('a snapshot from before the typed command names the output; a malformed entry is not shown', async () => {
    const sc = await withErrors([
      {
        node: 'vm-12-11-centos',
        command: 'ipset-save',
        exitCode: 1,
        error: 'ipset: command not found',
      },
      { node: 'vm-12-7-centos', command: 7, error: 'x' },
      'not an error',
    ]);
    const m = models(keys(sc, initialState('diag'), 'errors'), sc).errors!;
    assert.equal(m.count, 1);
    assert.deepEqual(
      m.lines.map((l) => l.text),
      ['vm-12-11-centos: ipset-save', '  ipset: command not found'],
    );
  });

  it('nodes that failed the same way: named once, each failure once, counted on each node', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const nodes = Array.from({ length: 2000 }, (_, i) => `node-${i}`);
    facts.meta['nodeErrorGroups'] = [
      {
        nodes,
        errors: [
          {
            command: 'iptables-save',
            typed: ['iptables-save'],
            exitCode: null,
            error:
              'cannot run iptables-save on node {node}: kube-proxy Pod: exec kube-system/kube-proxy-…: refused',
          },
          {
            command: 'ip-addr',
            typed: ['ip', '-br', 'addr'],
            exitCode: null,
            error:
              'cannot run ip -br addr on node {node}: kube-proxy Pod: exec kube-system/kube-proxy-…: refused',
          },
        ],
      },
    ];
    const sc: Screen = {
      data: analyze({ facts, code: allModes }, { target: TARGET }),
      width: 100,
      bodyHeight: 12,
    };
    const m = models(keys(sc, initialState('diag'), 'errors'), sc).errors!;
    assert.equal(m.count, 4000);
    assert.deepEqual(
      m.lines.map((l) => l.text),
      [
        '2000 nodes, each the same: node-0, node-1, node-2 and 1997 more',
        ' ',
        'iptables-save',
        '  cannot run iptables-save on the node: kube-proxy Pod: exec kube-system/kube-proxy-…: refused',
        ' ',
        'ip -br addr',
        '  cannot run ip -br addr on the node: kube-proxy Pod: exec kube-system/kube-proxy-…: refused',
      ],
    );
  });

  it('none: said, and while the nodes are read, said as not yet', async () => {
    const sc = await snapshot('nginx-svc');
    const s = keys(sc, initialState('diag'), 'errors');
    assert.deepEqual(
      models(s, sc).errors!.lines.map((l) => l.text),
      ['no node command failed in this run'],
    );
    assert.deepEqual(
      models(s, { ...sc, reading: true }).errors!.lines.map((l) => l.text),
      ['none so far: the nodes are still being read'],
    );
  });
});
