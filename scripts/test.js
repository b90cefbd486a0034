// Runs every test file under test/ with node's own runner (Node 20 has no --test globs).
// Arguments narrow the run: `npm test -- parser trace` runs files whose path contains a word.
// With CI=true a skipped test fails the run: CI must have every tool the tests need.
// `--cluster` runs the suites against the lab cluster (*.cluster.test.ts) instead, one at a time.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// the repository's root, from this script: the run does not depend on the cwd it is started in
const root = fileURLToPath(new URL('..', import.meta.url));
const walk = (dir) =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? walk(join(dir, e.name))
      : /\.test\.tsx?$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
const cluster = process.argv.includes('--cluster');
const words = process.argv.slice(2).filter((a) => a !== '--cluster');
const files = walk('test')
  .filter((f) => f.endsWith('.cluster.test.ts') === cluster)
  .filter((f) => words.length === 0 || words.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  console.error(
    `no test files match ${words.join(' ')}: give words of test file paths, e.g. npm test -- iptables trace`,
  );
  process.exit(1);
}
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${cluster ? 1 : 3}`,
    '--test-reporter=spec',
    ...files,
  ],
  { cwd: root, stdio: ['inherit', 'pipe', 'inherit'] },
);
// a signal to this script ends the run, test files and all, so no lab they made outlives it:
// node's runner ends its files on SIGINT and SIGTERM, but dies alone on SIGHUP
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.on(signal, () => child.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal));
let tail = ''; // the runner's closing lines: the summary counts
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString()).slice(-4096);
});
child.on('close', (code) => {
  const skipped = Number(/ℹ skipped (\d+)/.exec(tail)?.[1] ?? 0);
  if (code === 0 && skipped > 0 && process.env.CI === 'true') {
    console.error(`CI: ${skipped} test(s) skipped; in CI a skip is a failure (see "# SKIP" above)`);
    process.exit(1);
  }
  process.exit(code ?? 1);
});
