// Every JSON document kdebug prints for the bundled snapshots and dumps is valid against the
// schema it names; and what a schema allows, some output shows (no property left unexercised).
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { bundledOutputs, type Output } from '../support/outputs.js';
import { assertMatchesSchema, schemas } from '../support/schema.js';

describe('the published JSON schemas', () => {
  let outputs: Output[];
  before(async () => {
    outputs = await bundledOutputs();
  });

  it('every output of every bundled snapshot and dump matches its schema', () => {
    assert.ok(outputs.length > 200, `only ${outputs.length} outputs`);
    for (const o of outputs) assertMatchesSchema(o.doc, o.command);
    const named = new Set(outputs.map((o) => (o.doc as { $schema: string }).$schema));
    for (const name of ['report', 'rules', 'rules-search', 'drift', 'trace', 'expect'])
      assert.ok(
        [...named].some((id) => id.includes(`/${name}.v`)),
        `no ${name} output`,
      );
  });

  it('refuses a document with a field added, dropped or of another type, or no $schema', () => {
    const svc = outputs.find((o) => o.command.startsWith('svc default/nginx-svc'));
    const doc = svc!.doc as Record<string, unknown>;
    const without = (key: string) =>
      Object.fromEntries(Object.entries(doc).filter(([k]) => k !== key));
    const bad = [
      { ...doc, extra: 1 },
      { ...doc, partial: 'no' },
      without('steps'),
      without('$schema'),
      { ...doc, $schema: 'kdebug/schema/report.v99.json' },
    ];
    assertMatchesSchema(doc);
    for (const b of bad) assert.throws(() => assertMatchesSchema(b), assert.AssertionError);
  });

  it('ships a schema for each output, and nothing else in schema/', () => {
    assert.deepEqual([...schemas().keys()].map((f) => f.replace(/[.]v[0-9]+[.]json$/, '')).sort(), [
      'drift',
      'expect',
      'report',
      'rules',
      'rules-search',
      'trace',
      'version',
    ]);
  });
});
