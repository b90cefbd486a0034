// Where keys lead, without Ink: the effects navigate() gives for a key in a state, over the
// analyses of recorded snapshots (the stale-endpoint cluster: node vm-12-11-centos still sends
// half of nginx-svc to 10.244.1.9, a Pod that is gone).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot.js';
import { analyze } from '../../src/tui/data.js';
import type { KeyAction } from '../../src/tui/keymap.js';
import { models, navigate, type Effect, type Screen } from '../../src/tui/navigation.js';
import { initialState, reduce, type State } from '../../src/tui/state.js';

const TARGET = { namespace: 'default', service: 'nginx-svc' };
const snapshot = async (name: string): Promise<Screen> => ({
  data: analyze(await readSnapshot(`snapshots/${name}`), { target: TARGET }),
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
      state: (s) => reduce(s, { type: 'ask', lines: ['create a debug Pod?'] }),
      key: 'accept',
      want: ['answer'],
    },
    {
      name: 'a question ignores moves',
      state: (s) => reduce(s, { type: 'ask', lines: ['create a debug Pod?'] }),
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
