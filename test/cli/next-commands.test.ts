// Every "next" command a snapshot report prints runs as printed: kdebug's own read the snapshot.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';
import { SCENARIOS, scenarioReport } from '../snapshots/svc-scenarios.test.js';

describe('next commands run as printed', () => {
  it('each kdebug command of every scenario report runs from the snapshot (exit 0 or 1)', async () => {
    let ran = 0;
    for (const s of SCENARIOS) {
      const report = await scenarioReport(s);
      for (const f of report.steps.flatMap((step) => step.findings)) {
        const m = /^kdebug ([^;()]+)$/.exec(f.next?.trim() ?? '');
        if (!m || /--via /.test(f.next!)) continue; // live suggestions need a cluster
        const r = kdebug([...m[1]!.trim().split(/\s+/), '-o', 'text']);
        assert.ok(
          r.code === 0 || r.code === 1,
          `${s.dir} [${f.id}]: ${f.next} -> ${r.code}: ${r.stderr}`,
        );
        ran++;
      }
    }
    assert.ok(ran >= 4, `ran ${ran}`);
  });
});
