import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diagnose } from '../../src/core/diagnose.js';
import { reportJson } from '../../src/output/json.js';
import { aService, facts, healthy, listedWhole, TARGET } from '../core/checks/builders.js';
import { allModes } from '../support/modes.js';

describe('JSON output', () => {
  it('is the Report with schemaVersion and every finding field', () => {
    const doc = JSON.parse(reportJson(diagnose(facts(healthy()), TARGET, { code: allModes })));
    assert.equal(doc.schemaVersion, 2);
    assert.deepEqual(doc.target, TARGET);
    assert.equal(doc.steps.length, 10);
    for (const step of doc.steps) {
      assert.deepEqual(
        Object.keys(step).filter((k) => k !== 'partial'),
        ['id', 'title', 'status', 'findings'],
      );
      for (const finding of step.findings) {
        assert.deepEqual(Object.keys(finding).slice(0, 6), [
          'id',
          'status',
          'title',
          'explanation',
          'evidence',
          'next',
        ]);
        assert.ok(finding.next === null || typeof finding.next === 'string');
        assert.ok(finding.advice === null || typeof finding.advice === 'string');
        // each evidence item says where it came from
        for (const e of finding.evidence as { kind: string; text: string }[]) {
          assert.ok(['observed', 'read', 'computed', 'not-observed'].includes(e.kind), e.kind);
          assert.equal(typeof e.text, 'string');
        }
      }
    }
  });

  it('carries the failing finding of a missing Service', () => {
    const doc = JSON.parse(
      reportJson(
        diagnose(listedWhole(facts([aService({ name: 'wbe' })])), TARGET, { code: allModes }),
      ),
    );
    assert.equal(doc.status, 'fail');
    assert.equal(doc.service, null);
    assert.deepEqual(
      {
        id: doc.steps[0].findings[0].id,
        status: doc.steps[0].findings[0].status,
        next: doc.steps[0].findings[0].next,
      },
      { id: 'service-not-found', status: 'fail', next: 'kdebug svc wbe -n default' },
    );
  });
});
