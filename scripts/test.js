// Runs every test file under test/ with node's own runner (Node 20 has no --test globs).
// Arguments narrow the run: `npm test -- parser trace` runs files whose path contains a word.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? walk(join(dir, e.name))
      : /\.test\.tsx?$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
const words = process.argv.slice(2);
const files = walk('test')
  .filter((f) => words.length === 0 || words.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${words.join(' ')}`);
  process.exit(1);
}
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=3', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
