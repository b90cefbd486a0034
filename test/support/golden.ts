// Goldens: a whole output compared with its file under test/golden/. KDEBUG_UPDATE_GOLDEN=1
// rewrites the file, and prints what changed (diff -u), so no golden is accepted unread.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const UPDATE = process.env['KDEBUG_UPDATE_GOLDEN'] === '1';

export function golden(path: string, actual: string): void {
  if (!UPDATE) {
    assert.ok(existsSync(path), `${path} is missing (KDEBUG_UPDATE_GOLDEN=1 writes it)`);
    assert.equal(
      actual,
      readFileSync(path, 'utf8'),
      `${path} differs (KDEBUG_UPDATE_GOLDEN=1 rewrites it)`,
    );
    return;
  }
  const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (before === actual) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, actual);
  if (before === undefined) {
    process.stderr.write(`golden: wrote ${path} (new)\n`);
    return;
  }
  const diff = spawnSync('diff', ['-u', '--label', `${path} (was)`, '--label', path, '-', path], {
    input: before,
    encoding: 'utf8',
  });
  process.stderr.write(`golden: rewrote ${path}:\n${diff.stdout || '(diff not available)\n'}`);
}
