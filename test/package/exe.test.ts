// The single executable (`npm run build:exe`): runs with no Node.js on the PATH, writes its files
// once into the cache and reuses them, and says the version and commit it was built from.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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
    // the bundled scenarios, listed and run by name, from the executable's own copy
    assert.match(run(['demo', '--list']).stdout, /^selector-typo +\S/m);
    const scenario = run(['demo', 'selector-typo', '-o', 'text']);
    assert.equal(scenario.code, 1, scenario.stderr);
    assert.match(scenario.stdout, /scenario selector-typo/);
    const written = readdirSync(join(dir, 'cache', 'kdebug'));
    assert.equal(written.length, 1, written.join(' '));
    assert.ok(existsSync(join(dir, 'cache', 'kdebug', written[0]!, '.complete')));
  });

  it('imports only a copy it can trust: planted, altered or shared copies run nothing', () => {
    const cache = join(dir, 'cache', 'kdebug');
    run(['--version']); // the copy this build writes, to learn its name
    const id = readdirSync(cache).find((d) => /^\d+\.\d+\.\d+-[0-9a-f]{12}$/.test(d))!;
    const root = join(cache, id);
    const marker = join(dir, 'PWNED');
    const plant = (complete: boolean) => {
      rmSync(root, { recursive: true, force: true });
      mkdirSync(join(root, 'dist'), { recursive: true });
      writeFileSync(
        join(root, 'dist', 'cli.js'),
        `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker)}, '');`,
      );
      if (complete) writeFileSync(join(root, '.complete'), '');
    };
    const cases: [string, () => void][] = [
      ['a copy without .complete (a run cut short, or planted)', () => plant(false)],
      ['a complete copy whose content is not what it carries', () => plant(true)],
      [
        'a group-writable copy',
        () => {
          rmSync(root, { recursive: true, force: true });
          run(['--version']);
          chmodSync(root, 0o775);
          appendFileSync(
            join(root, 'dist', 'cli.js'),
            `\n;(await import('node:fs')).writeFileSync(${JSON.stringify(marker)}, '');\n`,
          );
        },
      ],
      [
        'a cache directory others may write to',
        () => {
          rmSync(root, { recursive: true, force: true });
          chmodSync(cache, 0o777);
          plant(true);
        },
      ],
    ];
    for (const [name, make] of cases) {
      make();
      const r = run(['demo', '-o', 'text']);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.match(r.stdout, /^kdebug svc default\/nginx-svc\n/, name);
      assert.ok(!existsSync(marker), `${name}: the planted code ran`);
      chmodSync(cache, 0o700);
    }
  });

  it('says its version and commit', () => {
    assert.match(
      run(['--version']).stdout,
      /^kdebug \d+\.\d+\.\d+ \(commit [0-9a-f]{12}(-dirty)?\)\n$/,
    );
  });
});
