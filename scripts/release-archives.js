// `npm run release:archives`: the release archives kdebug's krew manifest points to, in release/:
// the npm package itself (its tarball installed without dev dependencies or install scripts:
// the bundle, the snapshots and ssh2; it needs Node.js) and, for linux/amd64, the single
// executable; their sha256 sums, and the manifest filled in.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { installedPackage, must } from './installed-package.js';

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
// --out DIR (default release/); --no-build packs the bundle already built (the tests use it)
const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
const out = process.argv.includes('--out') ? arg('--out') : 'release';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'kdebug-release-'));
try {
  const pkg = installedPackage(work, { build: !process.argv.includes('--no-build') });
  // the archive holds one directory, kdebug/, as the manifest's `files` expects
  renameSync(pkg, join(work, 'kdebug'));
  const archive = `kdebug-v${version}.tar.gz`;
  must('tar', ['-czf', resolve(out, archive), '--owner=0', '--group=0', 'kdebug'], { cwd: work });
  // linux/amd64: the single executable, named as kubectl finds a plugin
  must(process.execPath, ['scripts/build-exe.js', '--out', work]);
  renameSync(join(work, 'kdebug-linux-x64'), join(work, 'kubectl-kdebug'));
  const exeArchive = `kdebug-v${version}-linux-amd64.tar.gz`;
  must('tar', ['-czf', resolve(out, exeArchive), '--owner=0', '--group=0', 'kubectl-kdebug'], {
    cwd: work,
  });
  const sha = (f) =>
    createHash('sha256')
      .update(readFileSync(join(out, f)))
      .digest('hex');
  const sums = { [archive]: sha(archive), [exeArchive]: sha(exeArchive) };
  writeFileSync(
    join(out, 'SHA256SUMS'),
    Object.entries(sums)
      .map(([f, s]) => `${s}  ${f}\n`)
      .join(''),
  );
  const manifest = readFileSync('plugins/kdebug.yaml', 'utf8')
    .replaceAll('{{VERSION}}', version)
    .replaceAll('{{SHA256}}', sums[archive])
    .replaceAll('{{SHA256_LINUX_AMD64}}', sums[exeArchive]);
  writeFileSync(join(out, 'kdebug.yaml'), manifest);
  console.log(
    `${Object.keys(sums)
      .map((f) => `${out}/${f}`)
      .join('\n')}\n${out}/kdebug.yaml`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
