// The svc scenario snapshots (selector-typo, coredns-down, dual-stack-ipv6-rules-missing, …) are
// exactly what test/support/svc-scenarios.ts makes from the demo: regenerating them changes
// nothing, so a scenario's probes and rules are the generator's documented fault, not leftovers.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SVC_SCENARIOS, writeScenarios } from '../support/svc-scenarios.js';

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name],
  );

describe('svc scenario snapshots', () => {
  let made = '';
  before(async () => {
    made = mkdtempSync(join(tmpdir(), 'kdebug-svc-scenarios-'));
    await writeScenarios(made, () => {});
  });
  after(() => rmSync(made, { recursive: true, force: true }));

  for (const { name } of SVC_SCENARIOS)
    it(`${name}: the committed files are what the generator makes`, () => {
      const committed = join('snapshots', name);
      const files = walk(join(made, name)).sort();
      assert.deepEqual(walk(committed).sort(), files);
      for (const f of files)
        assert.equal(
          readFileSync(join(committed, f), 'utf8'),
          readFileSync(join(made, name, f), 'utf8'),
          `${name}/${f}`,
        );
    });
});
