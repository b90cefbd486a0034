// `npm run bench`: bundles the bench with esbuild (so it measures the code as the CLI ships it,
// one module, constants inlined) and runs it. Arguments pass through, e.g. `-- --services 1000`.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';

// the whole-process measurements run the CLI as built from this tree
const cli = spawnSync(process.execPath, ['scripts/build.js'], { stdio: 'inherit' });
if (cli.status !== 0) process.exit(cli.status ?? 1);
await build({
  entryPoints: ['test/bench/bench.ts'],
  outfile: 'dist/bench/bench.js',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
const r = spawnSync(
  process.execPath,
  ['--expose-gc', 'dist/bench/bench.js', ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
