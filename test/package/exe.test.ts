// The single executable (`npm run build:exe`): runs with no Node.js on the PATH, writes its files
// once into the cache and reuses them, and says the version and commit it was built from.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { skipWithout } from '../support/skip.js';

const why =
  process.platform === 'linux' && process.arch === 'x64' ? '' : 'the executable is linux-x64';

describe('the single executable', skipWithout(why), () => {
  let dir: string;
  let exe: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kdebug-exe-'));
    const built = spawnSync(process.execPath, ['scripts/build-exe.js', '--out', dir], {
      encoding: 'utf8',
    });
    assert.equal(built.status, 0, built.stderr);
    exe = join(dir, 'kdebug-linux-x64');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  // no PATH at all: no node to fall back on
  const run = (args: string[]) => {
    const r = spawnSync(exe, args, {
      encoding: 'utf8',
      env: { XDG_CACHE_HOME: join(dir, 'cache'), PATH: '' },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('runs the demo with no Node.js on the PATH, and again from what the first run wrote', () => {
    for (let i = 0; i < 2; i++) {
      const r = run(['demo', '-o', 'text']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^kdebug svc default\/nginx-svc\n/);
    }
    const written = readdirSync(join(dir, 'cache', 'kdebug'));
    assert.equal(written.length, 1, written.join(' '));
    assert.ok(existsSync(join(dir, 'cache', 'kdebug', written[0]!, '.complete')));
  });

  it('says its version and commit', () => {
    assert.match(
      run(['--version']).stdout,
      /^kdebug \d+\.\d+\.\d+ \(commit [0-9a-f]{12}(-dirty)?\)\n$/,
    );
  });
});
