// The published JSON schemas (schema/*.json), as a test checks an output against them: by the
// document's own `$schema`, so a document that names no schema, or one not shipped, fails too.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { fileURLToPath } from 'node:url';

// (not ROOT from cli.ts: that module checks its JSON with this one)
export const SCHEMA_DIR = fileURLToPath(new URL('../../schema', import.meta.url));

/** Every shipped schema, by file name ("report.v2.json"). */
export const schemas = (): Map<string, Record<string, unknown>> =>
  new Map(
    readdirSync(SCHEMA_DIR)
      .filter((f) => f.endsWith('.json'))
      .map((f) => [f, JSON.parse(readFileSync(join(SCHEMA_DIR, f), 'utf8'))]),
  );

let ajv: Ajv2020 | undefined;

function validator(): Ajv2020 {
  if (ajv) return ajv;
  // strict: a keyword the schema misspells is an error, not an unchecked constraint
  ajv = new Ajv2020({ strict: true, allErrors: true });
  for (const s of schemas().values()) ajv.addSchema(s);
  return ajv;
}

/** Fails unless `doc` names a shipped schema in `$schema` and is valid against it. */
export function assertMatchesSchema(doc: unknown, what = 'the output'): void {
  const id = (doc as { $schema?: unknown } | null)?.$schema;
  assert.equal(typeof id, 'string', `${what} has no $schema`);
  const validate = validator().getSchema(id as string);
  assert.ok(validate, `${what}: $schema ${String(id)} is not a file in schema/`);
  if (!validate(doc))
    assert.fail(
      `${what} does not match ${String(id)}:\n${validator().errorsText(validate.errors, { separator: '\n' })}`,
    );
}

/** A command's stdout, when it was asked for JSON and printed some, checked as above. */
export function checkJsonStdout(args: string[], stdout: string): void {
  const at = args.findIndex((a) => a === '-o' || a === '--output');
  const json =
    (at >= 0 && args[at + 1] === 'json') ||
    args.includes('-ojson') ||
    args.includes('--output=json');
  if (!json || !stdout.trimStart().startsWith('{')) return;
  assertMatchesSchema(JSON.parse(stdout), `kdebug ${args.join(' ')}`);
}
