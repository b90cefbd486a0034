// The package as a user gets it: `npm pack`, then installed from that tarball into an empty
// prefix (a fresh npm cache: only the registry for its one dependency, ssh2), and run with npx.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const run = (cmd: string, args: string[], cwd?: string) => {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false' },
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? r.error?.message ?? '' };
};

describe('the npm package, from its own tarball', () => {
  let dir: string;
  let tgz: string;
  let files: string[];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kdebug-pack-'));
    // the bundle npm test just built: a prepare run now would rebuild dist under the other tests
    const packed = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir]);
    assert.equal(packed.code, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    tgz = join(dir, info!.filename);
    files = info!.files.map((f) => f.path);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('holds only what runs: the bundle, the snapshots, the JSON schemas, README, LICENSE, package.json; no source, tests or maps', () => {
    const tops = [...new Set(files.map((f) => f.split('/')[0]))].sort();
    assert.deepEqual(tops, [
      'LICENSE',
      'README.md',
      'bin',
      'dist',
      'package.json',
      'schema',
      'snapshots',
    ]);
    // each output's $schema names a file of the package
    assert.ok(files.includes('schema/report.v2.json'), files.join('\n'));
    assert.ok(
      !files.some((f) => f.endsWith('.map') || f.endsWith('.ts') || f.includes('bench')),
      files.join('\n'),
    );
  });

  it('installs into an empty prefix and runs: demo, --version, and as the kubectl plugin', () => {
    const prefix = join(dir, 'prefix');
    const cache = join(dir, 'cache');
    const installed = run('npm', [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--cache',
      cache,
      '--no-audit',
      '--no-fund',
      tgz,
    ]);
    assert.equal(installed.code, 0, installed.stderr);
    // one runtime dependency, ssh2 (native addons): the rest is in the bundle, not installed
    const deps = readdirSync(join(prefix, 'lib/node_modules/kdebug/node_modules'));
    assert.ok(deps.includes('ssh2'), deps.join(' '));
    for (const bundled of [
      '@kubernetes',
      'ink',
      'react',
      'commander',
      'fuse.js',
      'js-yaml',
      '@modelcontextprotocol',
      'zod',
    ])
      assert.ok(!deps.includes(bundled), `${bundled} installed: ${deps.join(' ')}`);
    const bin = (name: string) => join(prefix, 'bin', name);
    const demo = run(bin('kdebug'), ['demo', '-o', 'text']);
    assert.equal(demo.code, 0, demo.stderr);
    assert.match(demo.stdout, /^kdebug svc default\/nginx-svc\n/);
    // the bundled scenarios, listed and run by name, from where npm put them
    assert.match(run(bin('kdebug'), ['demo', '--list']).stdout, /^selector-typo +\S/m);
    const scenario = run(bin('kdebug'), ['demo', 'selector-typo', '-o', 'text']);
    assert.equal(scenario.code, 1, scenario.stderr);
    assert.match(scenario.stdout, /scenario selector-typo/);
    assert.match(
      run(bin('kdebug'), ['--version']).stdout,
      /^kdebug \d+\.\d+\.\d+ \(commit [0-9a-f]{12}(-dirty)?\)\n$/,
    );
    const plugin = run(bin('kubectl-kdebug'), ['--help']);
    assert.equal(plugin.code, 0, plugin.stderr);
    assert.match(plugin.stdout, /Why can't I reach my Service\?/);
  });

  it('runs with npx from the tarball, nothing installed', () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const r = run(
      'npx',
      [
        '--yes',
        '--cache',
        join(dir, 'npx-cache'),
        '--package',
        tgz,
        'kdebug',
        'demo',
        '-o',
        'text',
      ],
      empty,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^kdebug svc default\/nginx-svc\n/);
  });
});
