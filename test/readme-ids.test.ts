// The README's list of finding ids is the list of ids the code can emit, and nothing else.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { STEPS } from '../src/core/diagnose.js';
import { SEVERITY } from '../src/core/dataplane/drift.js';
import { ANY_STEP_IDS, STEP_FINDING_IDS } from '../src/core/findings/finding-ids.js';

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });

/** Every id a finding is made with in core: finding('id', ...) and { id: 'id', ... } literals,
 * and the not-observed id each mode's StateTraits carries. */
function emitted(): Set<string> {
  const steps = new Set<string>(STEPS.map((s) => s.id));
  const ids = new Set<string>(Object.keys(SEVERITY));
  for (const f of files('src/core')) {
    const s = readFileSync(f, 'utf8');
    for (const m of s.matchAll(
      /finding\(\s*'([a-z0-9-]+)'|\b(?:id|notObserved): '([a-z0-9-]+)'/g,
    )) {
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

describe('finding ids: one typed list (src/core/findings/finding-ids.ts), the README and the schema checked against it', () => {
  const readme = readFileSync('README.md', 'utf8');
  const drift = new Set(Object.keys(SEVERITY));
  const all = [
    ...new Set([...Object.values(STEP_FINDING_IDS).flat(), ...drift, ...ANY_STEP_IDS]),
  ].sort();

  it("each step's row of the README's table lists exactly that step's ids", () => {
    const table = readme.slice(
      readme.indexOf('| # | step |'),
      readme.indexOf('Any step can also say'),
    );
    const titles = new Map(STEPS.map((s) => [s.title, s.id]));
    const rows = table.split('\n').filter((l) => /^\| \d+ \|/.test(l));
    assert.equal(rows.length, Object.keys(STEP_FINDING_IDS).length);
    for (const row of rows) {
      const [, , title, cell] = row.split('|').map((x) => x.trim());
      const step = titles.get(title!) as keyof typeof STEP_FINDING_IDS;
      const listed = new Set(
        [...cell!.matchAll(/`([a-z0-9]+(?:-[a-z0-9]+)+)`/g)]
          .map((m) => m[1]!)
          .filter((id) => !drift.has(id)),
      );
      assert.deepEqual([...listed].sort(), [...STEP_FINDING_IDS[step]].sort(), title);
    }
  });

  it('the README says the ids any step can carry', () => {
    const any = readme.slice(readme.indexOf('Any step can also say'));
    for (const id of ANY_STEP_IDS) assert.ok(any.includes(`\`${id}\``), id);
  });

  it("the report schema names every id (the finding's id examples), and no other", () => {
    const schema = JSON.parse(readFileSync('schema/report.v2.json', 'utf8')) as {
      $defs: { finding: { properties: { id: { examples: string[] } } } };
    };
    assert.deepEqual(schema.$defs.finding.properties.id.examples, all);
  });
});
