// The TUI shows computed evidence as such ("expected:"), as text does and as JSON's
// evidence[].kind says: on the bundled IPVS snapshot, a real server drift expects and the node
// lacks is never shown like a line read on the node.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import { diagModel } from '../../src/tui/screens/Diagnosis.js';
import { initialState, reduce } from '../../src/tui/state.js';
import { allModes } from '../support/modes.js';

const facts = await readSnapshot(
  new URL('../../snapshots/ipvs-stale-real-server', import.meta.url).pathname,
);
const report = diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });

describe('the TUI Diagnosis pane: computed evidence says it is computed', () => {
  it("endpoint-missing's expected real server is 'expected:', the node's line as read", () => {
    const rules = report.steps.findIndex((s) => s.id === 'rules');
    const missing = report.steps[rules]!.findings.find((f) => f.id === 'endpoint-missing')!;
    const computed = missing.evidence.filter((e) => e.kind === 'computed');
    const observed = missing.evidence.filter((e) => e.kind === 'observed');
    assert.ok(computed.length > 0 && observed.length > 0);
    const s = reduce(initialState('diag'), { type: 'report', firstProblem: rules });
    const pane = diagModel(s, report, 200, 400)
      .lines.map((l) => l.text)
      .join('\n');
    for (const e of computed) {
      assert.ok(pane.includes(`expected: ${e.text}`), `${e.text} in:\n${pane}`);
      // never the bare line, as an answer read on the node would show
      assert.doesNotMatch(
        pane,
        new RegExp(`^\\s*${e.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
      );
    }
    for (const e of observed) {
      const shown = pane.split('\n').find((l) => l.includes(e.text));
      assert.ok(shown, e.text);
      assert.doesNotMatch(shown, /expected:/);
    }
  });
});
