// The README's list of finding ids is the list of ids the code can emit, and nothing else.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { STEPS } from '../src/core/diagnose.js';
import { SEVERITY } from '../src/core/drift.js';

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });

/** Every id a finding is made with in core: finding('id', ...) and { id: 'id', ... } literals. */
function emitted(): Set<string> {
  const steps = new Set(STEPS.map((s) => s.id));
  const ids = new Set<string>(Object.keys(SEVERITY));
  for (const f of files('src/core')) {
    const s = readFileSync(f, 'utf8');
    for (const m of s.matchAll(/finding\(\s*'([a-z0-9-]+)'|\bid: '([a-z0-9-]+)'/g)) {
      const id = m[1] ?? m[2]!;
      if (!steps.has(id)) ids.add(id);
    }
    // finding(cond ? 'a' : 'b', ...)
    for (const m of s.matchAll(/finding\(\s*[\w.!]+ \? '([a-z0-9-]+)' : '([a-z0-9-]+)'/g))
      ids.add(m[1]!).add(m[2]!);
  }
  return ids;
}

describe('README finding ids', () => {
  const readme = readFileSync('README.md', 'utf8');
  const listed = new Set([...readme.matchAll(/`([a-z0-9]+(?:-[a-z0-9]+)*)`/g)].map((m) => m[1]!));
  const ids = emitted();

  it('lists every id the code can emit', () => {
    assert.deepEqual([...ids].filter((id) => !listed.has(id)).sort(), []);
  });

  it('lists no step id that the code does not emit', () => {
    const table = readme.slice(
      readme.indexOf('| # | step |'),
      readme.indexOf('Any step can also say'),
    );
    const inTable = [...table.matchAll(/`([a-z0-9]+(?:-[a-z0-9]+)+)`/g)].map((m) => m[1]!);
    assert.ok(inTable.length > 60, `${inTable.length} ids in the table`);
    assert.deepEqual(
      inTable.filter((id) => !ids.has(id) && id !== 'kdebug'),
      [],
    );
  });
});
