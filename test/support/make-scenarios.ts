// Writes the scenario snapshots under snapshots/ (run: npx tsx test/support/make-scenarios.ts).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCENARIOS, type Scenario } from './scenarios.js';

export const SNAPSHOTS = fileURLToPath(new URL('../../snapshots/', import.meta.url));

/** The files of a scenario directory, by relative path, exactly as written to disk. */
export function scenarioFiles(s: Scenario): Map<string, string> {
  const files = new Map<string, string>();
  const list = {
    apiVersion: 'v1',
    items: s.facts.objects,
    kind: 'List',
    metadata: { resourceVersion: '' },
  };
  files.set('objects.json', JSON.stringify(list, null, 4) + '\n');
  files.set('meta.json', JSON.stringify(s.facts.meta, null, 2) + '\n');
  files.set('README.md', s.readme);
  for (const [node, outputs] of Object.entries(s.facts.nodes))
    for (const [stem, text] of Object.entries(outputs))
      files.set(`nodes/${node}/${stem}.txt`, text);
  return files;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const make of SCENARIOS) {
    const s = make();
    const dir = join(SNAPSHOTS, s.name);
    rmSync(dir, { recursive: true, force: true });
    for (const [path, text] of scenarioFiles(s)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    console.log(`wrote ${dir}`);
  }
}
