// A JSON change that is not a compatible addition moves schemaVersion: each shipped schema is
// compared with the copy recorded when its schemaVersion was first released (test/schema/
// recorded/), and each output's schemaVersion in the code is the newest schema shipped for it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPORT_SCHEMA_VERSION } from '../../src/core/diagnose.js';
import { VERSION_SCHEMA_VERSION } from '../../src/commands/version.js';
import { DRIFT_SCHEMA_VERSION } from '../../src/output/drift.js';
import { RULES_SCHEMA_VERSION, RULES_SEARCH_SCHEMA_VERSION } from '../../src/output/rules.js';
import { TRACE_SCHEMA_VERSION } from '../../src/output/trace.js';
import { schemaId } from '../../src/output/schema-id.js';
import { EXPECT_SCHEMA_VERSION } from '../../src/output/expect.js';
import { schemas } from '../support/schema.js';
import { incompatibilities } from './compatible.js';

const RECORDED = new URL('./recorded/', import.meta.url);
const recorded = (file: string) => JSON.parse(readFileSync(new URL(file, RECORDED), 'utf8'));

const CURRENT = {
  report: REPORT_SCHEMA_VERSION,
  rules: RULES_SCHEMA_VERSION,
  'rules-search': RULES_SEARCH_SCHEMA_VERSION,
  expect: EXPECT_SCHEMA_VERSION,
  drift: DRIFT_SCHEMA_VERSION,
  trace: TRACE_SCHEMA_VERSION,
  version: VERSION_SCHEMA_VERSION,
};

describe('schemaVersion', () => {
  it('each output names the newest schema shipped for it, whose $id and schemaVersion agree', () => {
    const shipped = schemas();
    for (const [name, version] of Object.entries(CURRENT)) {
      const file = `${name}.v${version}.json`;
      const s = shipped.get(file);
      assert.ok(s, `schema/${file} is missing: the code prints ${name} schemaVersion ${version}`);
      assert.equal(s['$id'], schemaId(name as keyof typeof CURRENT, version));
      const props = s['properties'] as Record<string, { const?: unknown }>;
      assert.equal(props['schemaVersion']?.const, version, file);
      assert.equal(props['$schema']?.const, s['$id'], file);
      assert.ok(
        !shipped.has(`${name}.v${version + 1}.json`),
        `schema/${name}.v${version + 1}.json is newer than the code`,
      );
    }
  });

  it('every shipped schema only adds to the copy recorded for its schemaVersion', () => {
    for (const [file, now] of schemas()) {
      assert.ok(
        existsSync(join(RECORDED.pathname, file)),
        `test/schema/recorded/${file} is missing: copy schema/${file} there when its schemaVersion is released`,
      );
      const found = incompatibilities(recorded(file), now);
      assert.deepEqual(
        found,
        [],
        `schema/${file} changed incompatibly since its schemaVersion was released: move schemaVersion (a new schema/NAME.vN.json) or make the change an addition`,
      );
    }
  });

  it('tells an addition from a change: new properties pass; removals, new types and values fail', () => {
    const was = recorded('report.v2.json');
    const copy = () => structuredClone(was);
    const added = copy();
    added.properties.verdict = { type: 'string' };
    added.$defs.finding.properties.hint = { type: 'string' };
    assert.deepEqual(incompatibilities(was, added), []);
    const removed = copy();
    delete removed.properties.partial;
    assert.deepEqual(incompatibilities(was, removed), ['$.partial: removed']);
    const optional = copy();
    optional.$defs.finding.required = optional.$defs.finding.required.filter(
      (k: string) => k !== 'next',
    );
    assert.deepEqual(incompatibilities(was, optional), [
      '#/$defs/finding.next: no longer always present',
    ]);
    const demanded = copy();
    demanded.properties.verdict = { type: 'string' };
    demanded.required = [...was.required, 'verdict'];
    assert.deepEqual(incompatibilities(was, demanded), ['$.verdict: new and required']);
    const retyped = copy();
    retyped.properties.partial = { type: 'string' };
    assert.equal(incompatibilities(was, retyped).length, 1);
    const widened = copy();
    widened.$defs.evidence.properties.kind.enum.push('guessed');
    assert.deepEqual(incompatibilities(was, widened), [
      '#/$defs/evidence.kind: enum gained ["guessed"]',
    ]);
    const nullable = copy();
    nullable.properties.target = { anyOf: [was.properties.target, { type: 'null' }] };
    assert.equal(incompatibilities(was, nullable).length > 0, true);
  });
});
