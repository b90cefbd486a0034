import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hairpinCheck } from '../../../src/core/checks/hairpin.js';
import { dumpFor, dumps, facts, healthy, ids, run } from './builders.js';

describe('hairpin step', () => {
  it('passes when every endpoint is masqueraded on its own node, and says what else hairpin needs', () => {
    const [f] = run(hairpinCheck, facts(healthy(), dumps(healthy())));
    assert.equal(`${f!.id}:${f!.status}`, 'hairpin-masquerade-present:pass');
    assert.match(f!.explanation, /hairpin_mode/);
    assert.equal(f!.evidence.length, 2);
  });

  it('fails for the Pod whose KUBE-SEP chain lost its masquerade rule, on its node only', () => {
    const broken = dumpFor(healthy(), 'node-a')
      .split('\n')
      .filter((l) => !l.includes('-s 10.244.0.5/32'))
      .join('\n');
    const found = run(
      hairpinCheck,
      facts(healthy(), { ...dumps(healthy()), 'node-a': { 'iptables-save': broken } }),
    );
    assert.deepEqual(ids(found), ['hairpin-masquerade-missing:fail']);
    assert.equal(found[0]!.node, 'node-a');
    assert.match(found[0]!.title, /^web-1 cannot reach itself through the Service/);
    assert.match(found[0]!.explanation, /source and destination both 10\.244\.0\.5/);
  });

  it('is skipped without rules, pending while they are read', () => {
    assert.deepEqual(ids(run(hairpinCheck, facts(healthy()))), ['hairpin-not-checked:skip']);
    assert.deepEqual(ids(run(hairpinCheck, facts(healthy()), { collecting: { nodes: true } })), [
      'pending:pending',
    ]);
  });
});
