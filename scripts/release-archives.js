// `npm run release:archives`: the release archive kdebug's krew manifest points to, made from
// the npm package itself (its tarball installed without dev dependencies or install scripts:
// the bundle, the snapshots and ssh2), with its sha256 and the manifest filled in, in release/.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const must = (cmd, args, cwd) => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status})`);
  return r.stdout;
};
const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
// --out DIR (default release/); --no-build packs the bundle already built (the tests use it)
const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
const out = process.argv.includes('--out') ? arg('--out') : 'release';
const pack = [
  'pack',
  '--json',
  ...(process.argv.includes('--no-build') ? ['--ignore-scripts'] : []),
];
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'kdebug-release-'));
try {
  const [packed] = JSON.parse(must('npm', [...pack, '--pack-destination', work]));
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
  // the archive holds one directory, kdebug/, as the manifest's `files` expects
  renameSync(join(prefix, 'lib/node_modules/kdebug'), join(work, 'kdebug'));
  const archive = `kdebug-v${version}.tar.gz`;
  must('tar', ['-czf', resolve(out, archive), '--owner=0', '--group=0', 'kdebug'], work);
  const sha256 = createHash('sha256')
    .update(readFileSync(join(out, archive)))
    .digest('hex');
  writeFileSync(join(out, 'SHA256SUMS'), `${sha256}  ${archive}\n`);
  const manifest = readFileSync('plugins/kdebug.yaml', 'utf8')
    .replaceAll('{{VERSION}}', version)
    .replaceAll('{{SHA256}}', sha256);
  writeFileSync(join(out, 'kdebug.yaml'), manifest);
  console.log(`${out}/${archive}  sha256 ${sha256}\n${out}/kdebug.yaml`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
