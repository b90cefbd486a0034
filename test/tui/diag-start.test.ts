// The findings pane of a step starts at its first failing finding, else its first warning.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concluded } from '../../src/core/diagnose.js';
import type { Finding, Report, Status } from '../../src/core/model.js';
import { diagModel, diagView } from '../../src/tui/screens/Diagnosis.js';
import { initialState, reduce, type State } from '../../src/tui/state.js';

const f = (id: string, status: Status): Finding => ({
  id,
  status,
  title: id,
  explanation: '',
  evidence: [],
});
const report = (findings: Finding[][]): Report =>
  concluded({
    schemaVersion: 1,
    target: { namespace: 'default', service: 'web' },
    steps: findings.map((fs, i) => ({
      id: `s${i}`,
      title: `step ${i}`,
      status: fs[0]?.status ?? 'skip',
      findings: fs,
    })),
  });
const R = report([
  [f('ok-1', 'pass'), f('ok-2', 'pass'), f('bad', 'fail'), f('meh', 'warn')],
  [f('ok', 'pass'), f('meh', 'warn')],
  [f('ok', 'pass')],
]);
const key = (s: State, action: 'down' | 'drill' | 'up') =>
  reduce(s, { type: 'key', action, view: diagView(diagModel(s, R, 120, 30)) });

describe('the findings pane of a step', () => {
  it('starts at the failing finding, then moves from there', () => {
    let s = key(initialState('diag'), 'drill');
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'bad');
    s = key(s, 'down');
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'meh');
  });

  it('starts at a warning where nothing fails, and at the top where all passed', () => {
    let s = key(initialState('diag'), 'down'); // step 2
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'meh');
    s = key(s, 'down'); // step 3
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'ok');
    s = key(s, 'up'); // back to step 2: its problem again, not where the cursor was
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'meh');
  });
});
