// "Not observed" has a mark of its own, not ✓, ✗ or -: in text, in JSON and in the TUI, with
// the reason in the finding the cursor opens.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createElement } from 'react';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import { reportJson } from '../../src/output/json.js';
import { reportText } from '../../src/output/text.js';
import { Diagnosis, diagModel } from '../../src/tui/screens/Diagnosis.js';
import { initialState } from '../../src/tui/state.js';
import { frame, renderPlain } from '../tui/harness.js';
import { allModes } from '../support/modes.js';

const TARGET = { namespace: 'default', service: 'nginx-svc' };

/** The demo with nc and bash missing on every node. */
async function blind() {
  const facts = await readSnapshot('snapshots/nginx-svc');
  for (const outputs of Object.values(facts.nodes))
    for (const stem of Object.keys(outputs)) {
      if (stem.startsWith('tcp-connect_'))
        outputs[stem] =
          'neither nc nor bash on this node\nkdebug-probe tcp-connect tool=none exit=127\n';
    }
  return diagnose(facts, TARGET, { code: allModes });
}

describe('the mark of what was not observed', () => {
  it('text: the Reachability step and its finding show ?, and the summary says why', async () => {
    const r = await blind();
    const text = reportText(r, { verbose: true, width: 100 });
    assert.match(text, /^ \? {2}8 Reachability/m);
    assert.match(text, /^ {5}\? ClusterIP 10\.1\.190\.219:8080: not observed on/m);
    assert.doesNotMatch(text, /^ [✓✗-] {2}8 Reachability/m);
    // observed steps keep their marks
    assert.match(text, /^ ✓ {2}1 Service/m);
  });

  it('JSON: the finding says observed: false; observed findings carry no such field', async () => {
    const doc = JSON.parse(reportJson(await blind()));
    const reach = doc.steps.find((s: { id: string }) => s.id === 'reachability');
    const blinded = reach.findings.filter((f: { id: string }) => f.id === 'probe-not-observed');
    assert.ok(blinded.length > 0);
    for (const f of blinded) assert.equal(f.observed, false);
    const service = doc.steps.find((s: { id: string }) => s.id === 'service');
    assert.ok(service.findings.every((f: object) => !('observed' in f)));
  });

  it('TUI: ? in the steps list and on the finding, with the reason in its text', async () => {
    const r = await blind();
    const base = initialState('diag');
    const step = r.steps.findIndex((x) => x.id === 'reachability');
    const s = { ...base, cursor: { ...base.cursor, 'diag.0': step }, stepPinned: true };
    const out = frame(
      renderPlain(createElement(Diagnosis, { model: diagModel(s, r, 120, 40), state: s, tick: 0 })),
    );
    assert.match(out, /\? {1,2}8 Reachability/);
    assert.match(out, /\? ClusterIP 10\.1\.190\.219:8080: not observed on/);
    assert.match(out, /neither nc nor bash/);
  });
});
