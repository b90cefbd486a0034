// The findings pane of a step starts at its first failing finding, else its first warning.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concluded } from '../../src/core/diagnose.js';
import type { FindingId } from '../../src/core/findings/finding-ids.js';
import type { Finding, Report, Status } from '../../src/core/model.js';
import { diagModel, diagView } from '../../src/tui/screens/Diagnosis.js';
import { initialState, reduce, type State } from '../../src/tui/state.js';

const f = (id: FindingId, status: Status): Finding => ({
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
  [
    f('service-found', 'pass'),
    f('target-port-ok', 'pass'),
    f('selector-matches-no-pods', 'fail'),
    f('no-ready-endpoints', 'warn'),
  ],
  [f('endpoints-ready', 'pass'), f('no-ready-endpoints', 'warn')],
  [f('endpoints-ready', 'pass')],
]);
const key = (s: State, action: 'down' | 'drill' | 'up') =>
  reduce(s, { type: 'key', action, view: diagView(diagModel(s, R, 120, 30)) });

describe('the findings pane of a step', () => {
  it('starts at the failing finding, then moves from there', () => {
    let s = key(initialState('diag'), 'drill');
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'selector-matches-no-pods');
    s = key(s, 'down');
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'no-ready-endpoints');
  });

  it('starts at a warning where nothing fails, and at the top where all passed', () => {
    let s = key(initialState('diag'), 'down'); // step 2
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'no-ready-endpoints');
    s = key(s, 'down'); // step 3
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'endpoints-ready');
    s = key(s, 'up'); // back to step 2: its problem again, not where the cursor was
    assert.equal(diagModel(s, R, 120, 30).finding?.id, 'no-ready-endpoints');
  });
});
