// A pass needs observed evidence: that is a property of how findings are made, not of each check.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { finding } from '../../../src/core/checks/check.js';

describe('finding()', () => {
  const cases: { what: string; evidence?: string[]; info?: boolean; status: string }[] = [
    {
      what: 'a pass with observed evidence stays a pass',
      evidence: ['node-a: TCP connect 10.1.0.1:80: connected'],
      status: 'pass',
    },
    { what: 'a pass without evidence is not one', evidence: [], status: 'skip' },
    {
      what: 'a pass whose evidence is only what was not observed is not one',
      evidence: ['node-a: TCP connect 10.1.0.1:80: not observed: no nc'],
      status: 'skip',
    },
    { what: 'an explanation (info) needs no evidence', evidence: [], info: true, status: 'pass' },
  ];
  for (const c of cases)
    it(c.what, () => {
      const f = finding('clusterip-reachable', 'pass', 'ClusterIP answers', {
        explanation: '',
        evidence: c.evidence,
        info: c.info,
      });
      assert.equal(f.status, c.status);
      if (c.status === 'skip')
        assert.equal(f.title, 'ClusterIP answers (not observed: no evidence recorded)');
    });

  it('leaves fails and warnings as they are: they carry their own evidence', () => {
    assert.equal(finding('x', 'fail', 't', { explanation: '' }).status, 'fail');
  });
});
