// The package as a user's npm installs it (its tarball, without dev dependencies or install
// scripts: the bundle, the snapshots and ssh2 with its pure-JS fallback), for the release
// archives and the single executable. `build`: pack with the prepare script (a fresh bundle).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export function must(cmd, args, o = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...o });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status})`);
  return r.stdout;
}

/** Installs the packed package under `work` and returns its directory. */
export function installedPackage(work, { build = false } = {}) {
  const pack = [
    'pack',
    '--json',
    ...(build ? [] : ['--ignore-scripts']),
    '--pack-destination',
    work,
  ];
  const [packed] = JSON.parse(must('npm', pack));
  const prefix = join(work, 'prefix');
  must('npm', [
    'install',
    '-g',
    '--prefix',
    prefix,
    '--omit=dev',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    join(work, packed.filename),
  ]);
  return join(prefix, 'lib/node_modules/kdebug');
}
