// meta.json fields of the wrong type: ignored with a note, never passed on to the report, whose
// schema says string or null.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';
import { typedMeta } from '../../src/core/facts/meta.js';

describe('meta.json fields of the wrong type', () => {
  it('are ignored (the report says context null), each with a one-line note', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-meta-'));
    try {
      cpSync('snapshots/nginx-svc', dir, { recursive: true });
      writeFileSync(
        join(dir, 'meta.json'),
        JSON.stringify({ context: 42, server: null, namespace: ['x'], service: { a: 1 } }),
      );
      const r = kdebug(['svc', 'nginx-svc', '-n', 'default', '--snapshot', dir, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const doc = JSON.parse(r.stdout);
      assert.equal(doc.context, null);
      assert.match(
        r.stderr,
        /^kdebug: note: .*meta\.json: "context" is a number, not a string: ignored$/m,
      );
      assert.match(r.stderr, /"namespace" is an array, not a string: ignored$/m);
      assert.doesNotMatch(r.stderr, /"server"/); // null is no value: nothing to say
      const text = kdebug(['svc', 'nginx-svc', '-n', 'default', '--snapshot', dir, '-o', 'text']);
      assert.doesNotMatch(text.stdout, /context 42/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a string stays as it is', () => {
    assert.deepEqual(typedMeta({ context: 'prod', note: 3 }), { context: 'prod', note: 3 });
  });
});
