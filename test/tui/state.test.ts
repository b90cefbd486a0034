import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeyAction } from '../../src/tui/keymap.js';
import { cursorOf, initialState, reduce, type State, type View } from '../../src/tui/state.js';

const view = (v: Partial<View> = {}): View => ({ lists: [10, 5], page: 4, ...v });
const press = (s: State, action: KeyAction, v?: Partial<View>) =>
  reduce(s, { type: 'key', action, view: view(v) });
const keys = (s: State, ...actions: KeyAction[]) => actions.reduce((x, a) => press(x, a), s);

describe('moving the cursor', () => {
  const cases: [string, KeyAction[], number][] = [
    // what, keys on the Diagnosis steps (10 steps, page 4), cursor
    ['down', ['down'], 1],
    ['down twice then up', ['down', 'down', 'up'], 1],
    ['up at the top stays', ['up'], 0],
    ['page down', ['pageDown'], 4],
    ['page down twice then page up', ['pageDown', 'pageDown', 'pageUp'], 4],
    ['bottom', ['bottom'], 9],
    ['bottom then down stays', ['bottom', 'down'], 9],
    ['bottom then top', ['bottom', 'top'], 0],
  ];
  for (const [what, actions, cursor] of cases) {
    it(what, () =>
      assert.equal(cursorOf(keys(initialState('diag'), ...actions), 'diag', 0), cursor),
    );
  }

  it('moves only the focused pane', () => {
    const s = keys(initialState('diag'), 'nextPane', 'down', 'down');
    assert.deepEqual([cursorOf(s, 'diag', 0), cursorOf(s, 'diag', 1)], [0, 2]);
  });

  it('shows a new step from its first finding', () => {
    let s = keys(initialState('diag'), 'nextPane', 'down', 'down', 'back');
    s = press(s, 'down');
    assert.deepEqual([cursorOf(s, 'diag', 0), cursorOf(s, 'diag', 1)], [1, 0]);
  });

  it('does nothing in an empty list', () => {
    assert.equal(cursorOf(press(initialState('diag'), 'down', { lists: [0] }), 'diag', 0), 0);
  });
});

describe('following the first failing step', () => {
  it('selects it as reports arrive', () => {
    let s = reduce(initialState('diag'), { type: 'report', firstProblem: -1 });
    assert.equal(cursorOf(s, 'diag', 0), 0);
    s = reduce(s, { type: 'report', firstProblem: 6 });
    assert.equal(cursorOf(s, 'diag', 0), 6);
  });

  it('stops once the user picks a step', () => {
    let s = press(initialState('diag'), 'down');
    s = reduce(s, { type: 'report', firstProblem: 6 });
    assert.equal(cursorOf(s, 'diag', 0), 1);
  });
});

describe('panes, screens and back', () => {
  it('tab cycles the panes', () => {
    const seen: number[] = [];
    let s = initialState('trace');
    for (let i = 0; i < 3; i++) {
      s = press(s, 'nextPane', { lists: [3, 3, 3] });
      seen.push(s.pane.trace);
    }
    assert.deepEqual(seen, [1, 2, 0]);
  });

  it('enter on a step focuses its findings; esc comes back', () => {
    const s = press(initialState('diag'), 'drill');
    assert.equal(s.pane.diag, 1);
    assert.equal(press(s, 'back').pane.diag, 0);
  });

  it('esc returns to the previous screen', () => {
    let s = reduce(initialState('diag'), { type: 'screen', screen: 'rules' });
    s = reduce(s, { type: 'screen', screen: 'drift' });
    assert.equal(s.screen, 'drift');
    s = press(s, 'back');
    assert.equal(s.screen, 'rules');
    s = press(s, 'back', { lists: [3] });
    assert.equal(s.screen, 'diag');
    assert.equal(press(s, 'back').screen, 'diag');
  });

  it('switching to the screen shown keeps the way back short', () => {
    const s = reduce(initialState('rules'), { type: 'screen', screen: 'rules' });
    assert.deepEqual(s.back, []);
  });
});

describe('the Rules screen', () => {
  const rules = () => initialState('rules');
  const onRow = (key: string, open: boolean | undefined, parent?: number) =>
    view({ lists: [8], row: { key, open, parent } });

  it('enter opens a closed Service and closes an open one', () => {
    let s = press(rules(), 'drill', onRow('svc:a', false));
    assert.equal(s.open['svc:a'], true);
    s = press(s, 'drill', onRow('svc:a', true));
    assert.equal(s.open['svc:a'], false);
  });

  it('enter on a leaf shows its raw rules; r hides them', () => {
    const s = press(rules(), 'drill', onRow('ep:a', undefined));
    assert.equal(s.raw, true);
    assert.equal(press(s, 'raw').raw, false);
  });

  it('left on a leaf goes to its parent row; right opens', () => {
    let s = press(rules(), 'down', { lists: [8] });
    s = press(s, 'collapse', onRow('ep:a', undefined, 0));
    assert.equal(cursorOf(s, 'rules', 0), 0);
    assert.equal(press(s, 'expand', onRow('svc:a', false)).open['svc:a'], true);
  });

  it('n and p switch nodes, round the ring', () => {
    const v = { lists: [8], nodes: 3 };
    assert.equal(press(rules(), 'nextNode', v).node.rules, 1);
    assert.equal(press(rules(), 'prevNode', v).node.rules, 2);
    assert.equal(press(rules(), 'nextNode', { lists: [8], nodes: 1 }).node.rules, 0);
  });

  it('esc closes the raw pane before going back', () => {
    let s = reduce(initialState('diag'), { type: 'screen', screen: 'rules' });
    s = press(s, 'raw');
    s = press(s, 'back');
    assert.deepEqual([s.screen, s.raw], ['rules', false]);
    assert.equal(press(s, 'back').screen, 'diag');
  });

  it('a jump opens the rows, moves there and keeps the way back', () => {
    const s = reduce(initialState('diag'), {
      type: 'jumpRules',
      node: 1,
      open: ['svc:x', 'chain:x:KUBE-SVC-X'],
      row: 7,
    });
    assert.equal(s.screen, 'rules');
    assert.equal(s.node.rules, 1);
    assert.equal(cursorOf(s, 'rules', 0), 7);
    assert.deepEqual(s.open, { 'svc:x': true, 'chain:x:KUBE-SVC-X': true });
    assert.deepEqual(s.back, ['diag']);
  });

  it('a jump to a chain outside every tree shows it raw', () => {
    const s = reduce(initialState('rules'), {
      type: 'jumpRules',
      node: 0,
      open: [],
      row: 0,
      rawChain: { table: 'filter', chain: 'KUBE-FORWARD' },
    });
    assert.deepEqual([s.raw, s.rawChain?.chain], [true, 'KUBE-FORWARD']);
  });
});

describe('search and the command line', () => {
  it('typing builds the query; backspace erases; esc closes', () => {
    let s = press(initialState('diag'), 'search');
    assert.equal(s.modal, 'search');
    for (const c of 'ngix') s = reduce(s, { type: 'type', text: c });
    s = press(s, 'erase');
    s = reduce(s, { type: 'type', text: 'nx' });
    assert.equal(s.query, 'nginx');
    assert.equal(press(s, 'cancel').modal, 'none');
  });

  it('/ starts a fresh query; ↑ on it brings the last one back', () => {
    let s = press(initialState('rules'), 'search');
    for (const c of 'old-web') s = reduce(s, { type: 'type', text: c });
    s = press(press(s, 'cancel'), 'search');
    assert.equal(s.query, '', 'typing again does not append to the last query');
    for (const c of 'web') s = reduce(s, { type: 'type', text: c });
    assert.equal(s.query, 'web');
    s = press(press(press(s, 'cancel'), 'search'), 'up', { hits: 0 });
    assert.equal(s.query, 'web');
    // once there is a query, ↑ moves through its results again
    s = press(press(s, 'down', { hits: 3 }), 'up', { hits: 3 });
    assert.deepEqual([s.query, s.cursor['search']], ['web', 0]);
  });

  it('moves through the results, within them', () => {
    let s = press(initialState('rules'), 'search');
    s = press(s, 'down', { hits: 2 });
    s = press(s, 'down', { hits: 2 });
    assert.equal(s.cursor['search'], 1);
    s = reduce(s, { type: 'type', text: 'x' });
    assert.equal(s.cursor['search'], 0, 'a new query starts at its best hit');
  });

  it('types the command line and switches screen', () => {
    let s = press(initialState('diag'), 'command');
    for (const c of 'drift') s = reduce(s, { type: 'type', text: c });
    assert.equal(s.commandLine, 'drift');
    s = reduce(s, { type: 'screen', screen: 'drift' });
    assert.deepEqual([s.screen, s.modal], ['drift', 'none']);
  });

  it('help scrolls and closes', () => {
    let s = press(initialState('diag'), 'help');
    s = press(s, 'down', { lists: [5] });
    s = press(s, 'down', { lists: [5] });
    assert.equal(s.cursor['help'], 2);
    // every key the help lists for moving works in the help itself
    const view = { lists: [30], page: 10 };
    assert.equal(press(s, 'pageDown', view).cursor['help'], 12);
    assert.equal(press(s, 'bottom', view).cursor['help'], 29);
    assert.equal(press(press(s, 'bottom', view), 'top', view).cursor['help'], 0);
    assert.equal(press(press(s, 'bottom', view), 'pageUp', view).cursor['help'], 19);
    assert.equal(press(s, 'cancel').modal, 'none');
  });

  it('keys meant for screens do nothing in the search box', () => {
    const s = press(initialState('diag'), 'search');
    assert.equal(press(s, 'nextNode').modal, 'search');
  });
});
