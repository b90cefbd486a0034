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

  it('the release archives and their sha256 sums, named in the rendered manifest', () => {
    const manifest = readFileSync(release('kdebug.yaml'), 'utf8');
    const sums = readFileSync(release('SHA256SUMS'), 'utf8');
    for (const archive of [`kdebug-v${version}.tar.gz`, `kdebug-v${version}-linux-amd64.tar.gz`]) {
      const sha = createHash('sha256')
        .update(readFileSync(release(archive)))
        .digest('hex');
      assert.ok(sums.includes(`${sha}  ${archive}\n`), sums);
      assert.match(
        manifest,
        new RegExp(`uri: \\S+/v${version}/${archive}\\n +sha256: '${sha}'\\n`),
      );
    }
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

  /** krew installs the archive its platform picks for os/arch, and kubectl-kdebug runs. */
  const installs = (
    os: string,
    arch: string,
    archive: string,
    path = process.env['PATH'] ?? '',
  ) => {
    const root = join(dir, `krew-${os}-${arch}`);
    const env = { KREW_ROOT: root, KREW_OS: os, KREW_ARCH: arch };
    const r = run(
      join(tools, 'krew'),
      ['install', `--manifest=${release('kdebug.yaml')}`, `--archive=${release(archive)}`],
      env,
    );
    assert.equal(r.code, 0, r.stderr);
    const bin = join(root, 'bin', 'kubectl-kdebug');
    const demo = run(bin, ['demo', '-o', 'text'], {
      PATH: path,
      XDG_CACHE_HOME: join(root, 'cache'),
    });
    assert.equal(demo.code, 0, demo.stderr);
    assert.match(demo.stdout, /^kdebug svc default\/nginx-svc\n/);
    // the bundled scenarios, listed and run by name, from the plugin krew installed
    const cached = { PATH: path, XDG_CACHE_HOME: join(root, 'cache') };
    assert.match(run(bin, ['demo', '--list'], cached).stdout, /^selector-typo +\S/m);
    const scenario = run(bin, ['demo', 'selector-typo', '-o', 'text'], cached);
    assert.equal(scenario.code, 1, scenario.stderr);
    assert.match(scenario.stdout, /scenario selector-typo/);
    assert.match(
      run(bin, ['--version'], { PATH: path, XDG_CACHE_HOME: join(root, 'cache') }).stdout,
      new RegExp(`^kdebug ${version.replace(/\./g, '\\.')} \\(commit `),
    );
  };

  it('linux/amd64: krew installs the single executable, which runs with no Node.js on the PATH', () => {
    installs('linux', 'amd64', `kdebug-v${version}-linux-amd64.tar.gz`, '');
  });

  it('elsewhere (linux/arm64 here): krew installs the package, which runs on the Node.js of the PATH', () => {
    installs('linux', 'arm64', `kdebug-v${version}.tar.gz`);
  });
});
