// The krew manifest and the release archive it points to: rendered by `npm run release:archives`,
// checked by krew's own validator, installed by krew itself from the archive, and run as
// `kubectl-kdebug` from krew's bin directory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { buildKrewTools } from '../support/krew/build.js';
import { skipWithout } from '../support/skip.js';

const run = (cmd: string, args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    input: '',
    timeout: 180_000,
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? r.error?.message ?? '' };
};

describe('the krew plugin', skipWithout(goUnavailable() ?? ''), () => {
  let dir: string;
  let tools: string;
  const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kdebug-krew-'));
    tools = buildKrewTools();
    const r = run(process.execPath, [
      'scripts/release-archives.js',
      '--no-build',
      '--out',
      join(dir, 'release'),
    ]);
    assert.equal(r.code, 0, r.stderr);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const release = (f: string) => join(dir, 'release', f);

  it('the release archive and its sha256, named in the rendered manifest', () => {
    const archive = `kdebug-v${version}.tar.gz`;
    const sha = createHash('sha256')
      .update(readFileSync(release(archive)))
      .digest('hex');
    assert.equal(readFileSync(release('SHA256SUMS'), 'utf8'), `${sha}  ${archive}\n`);
    const manifest = readFileSync(release('kdebug.yaml'), 'utf8');
    assert.match(manifest, new RegExp(`sha256: '${sha}'\\n`));
    assert.match(manifest, new RegExp(`version: v${version.replace(/\./g, '\\.')}\\n`));
    assert.doesNotMatch(manifest, /\{\{/);
  });

  it("passes krew's manifest validator", () => {
    const r = run(join(tools, 'validate-krew-manifest'), [
      '-manifest',
      release('kdebug.yaml'),
      '-skip-install',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /structural validation OK/);
  });

  it('installs with krew from the archive and runs as kubectl-kdebug', () => {
    const root = join(dir, 'krew-root');
    const archive = release(`kdebug-v${version}.tar.gz`);
    const r = run(
      join(tools, 'krew'),
      ['install', `--manifest=${release('kdebug.yaml')}`, `--archive=${archive}`],
      { KREW_ROOT: root },
    );
    assert.equal(r.code, 0, r.stderr);
    const bin = join(root, 'bin', 'kubectl-kdebug');
    const demo = run(bin, ['demo', '-o', 'text']);
    assert.equal(demo.code, 0, demo.stderr);
    assert.match(demo.stdout, /^kdebug svc default\/nginx-svc\n/);
    assert.match(
      run(bin, ['--version']).stdout,
      new RegExp(`^kdebug ${version.replace(/\./g, '\\.')} \\(commit `),
    );
  });
});
