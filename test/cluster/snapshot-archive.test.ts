// Snapshot archives against the real GNU tar: what kdebug packs, tar lists and unpacks to the same
// snapshot; what tar packs (gnu, ustar and pax formats, long names) kdebug reads; a hostile archive
// (a path out of it, a link, cut short, not gzip, a bomb) is refused with the file named or
// skipped, never followed. And writing is whole or nothing: a failed or interrupted write leaves
// neither the snapshot nor its temporary sibling.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { ArchiveError, tarGz, untarGz } from '../../src/cluster/snapshot/archive.js';
import {
  readSnapshot,
  SnapshotError,
  writeSnapshot,
  writeSnapshotArchive,
} from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { skipWithout } from '../support/skip.js';

const DEMO = 'snapshots/nginx-svc';
const tar = (args: string[], cwd: string) => {
  const r = spawnSync('tar', args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};
/** Facts as plain data (node outputs read), to compare two snapshots. */
const plain = (f: Facts) => JSON.parse(JSON.stringify(f)) as Facts;
const LONG_NODE = `ip-10-0-12-7.${'x'.repeat(120)}.compute.internal`;

describe(
  'snapshot archives (.tar.gz) with the real tar',
  skipWithout(spawnSync('tar', ['--version']).status === 0 ? '' : 'tar'),
  () => {
    let tmp: string;
    let demo: Facts;
    before(async () => {
      tmp = mkdtempSync(join(tmpdir(), 'kdebug-archive-'));
      demo = plain(await readSnapshot(DEMO));
      // a node name long enough to need a PAX header
      demo.nodes[LONG_NODE] = { 'ip-addr': '1: lo: <LOOPBACK,UP>\n' };
    });
    after(() => rmSync(tmp, { recursive: true, force: true }));

    it('what kdebug packs, tar lists and unpacks into the same snapshot', async () => {
      const file = join(tmp, 'nginx.tar.gz');
      await writeSnapshotArchive(file, demo);
      const listed = tar(['tzf', file], tmp).trim().split('\n');
      assert.ok(listed.includes('nginx/objects.json'), listed.join('\n'));
      assert.ok(listed.includes(`nginx/nodes/${LONG_NODE}/ip-addr.txt`), 'the long name, whole');
      tar(['xzf', file], tmp);
      assert.deepEqual(plain(await readSnapshot(join(tmp, 'nginx'))), demo);
      assert.deepEqual(plain(await readSnapshot(file)), demo);
    });

    for (const format of ['gnu', 'ustar', 'pax'])
      it(`reads what tar --format=${format} packs`, async () => {
        const dir = join(tmp, `src-${format}`);
        // ustar holds at most 255 bytes of path: the long node name is for the other two
        const { [LONG_NODE]: _long, ...short } = demo.nodes;
        await writeSnapshot(dir, format === 'ustar' ? { ...demo, nodes: short } : demo);
        const file = join(tmp, `${format}.tgz`);
        tar([`--format=${format}`, '-czf', file, '-C', tmp, `src-${format}`], tmp);
        assert.deepEqual(plain(await readSnapshot(file)), plain(await readSnapshot(dir)));
      });

    it('skips a link, never follows it; refuses a path out of the archive, naming it', async () => {
      const dir = join(tmp, 'hostile');
      await writeSnapshot(dir, { ...demo, nodes: {} });
      mkdirSync(join(dir, 'nodes', 'node-a'), { recursive: true });
      symlinkSync('/etc/passwd', join(dir, 'nodes', 'node-a', 'iptables-save.txt'));
      const linked = join(tmp, 'link.tar.gz');
      tar(['-czf', linked, '-C', tmp, 'hostile'], tmp);
      assert.deepEqual(Object.keys((await readSnapshot(linked)).nodes), []);
      const out = join(tmp, 'out.tar.gz');
      tar(['-czf', out, '-C', dir, '-P', '--transform', 's,^,../,', 'objects.json'], tmp);
      await assert.rejects(readSnapshot(out), (e: Error) => {
        assert.ok(e instanceof SnapshotError);
        assert.equal(e.message, `${out}: entry "../objects.json" points outside the archive`);
        return true;
      });
    });

    it("refuses what is not a whole gzip'd tar, with the file", async () => {
      const bad = (name: string, bytes: Buffer) => {
        const f = join(tmp, name);
        writeFileSync(f, bytes);
        return f;
      };
      const whole = tarGz([{ path: 's/objects.json', data: Buffer.from('[]') }]);
      const cases: [string, Buffer, RegExp][] = [
        ['plain.tar.gz', Buffer.from('objects.json\n'), /: not gzip data \(/],
        [
          'junk.tar.gz',
          gzipSync(Buffer.alloc(1024, 7)),
          /: not a tar archive \(bad header at byte 0\)$/,
        ],
        [
          'empty.tar.gz',
          tarGz([]),
          /objects\.json: missing: a snapshot needs at least objects\.json/,
        ],
      ];
      for (const [name, bytes, message] of cases)
        await assert.rejects(readSnapshot(bad(name, bytes)), message, name);
      assert.deepEqual((await readSnapshot(bad('ok.tar.gz', whole))).objects, []);
      await assert.rejects(
        readSnapshot(join(tmp, 'none.tar.gz')),
        /none\.tar\.gz: no such snapshot archive$/,
      );
    });

    it('stops an archive that expands beyond the bound, at the header, before inflating it', async () => {
      const bomb = tarGz([{ path: 's/big.bin', data: Buffer.alloc(4 * 1024 * 1024) }]);
      await assert.rejects(untarGz(bomb, 'bomb.tar.gz', { max: 1024 * 1024 }), (e: Error) => {
        assert.ok(e instanceof ArchiveError);
        assert.equal(e.message, 'bomb.tar.gz: expands beyond 1 MiB, not read');
        return true;
      });
    });

    it('an entry cut short is said, not read as a shorter file', async () => {
      const gz = tarGz([{ path: 's/objects.json', data: Buffer.alloc(5000, 32) }]);
      const tarBytes = spawnSync('gzip', ['-dc'], { input: gz }).stdout;
      const cut = gzipSync(tarBytes.subarray(0, 2048));
      await assert.rejects(
        untarGz(cut, 'cut.tar.gz'),
        /^ArchiveError: cut\.tar\.gz: cut short \(an entry runs past the end\)$/,
      );
    });
  },
);

describe('writing a snapshot is whole or nothing', () => {
  let tmp: string;
  before(() => (tmp = mkdtempSync(join(tmpdir(), 'kdebug-atomic-'))));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const leftovers = () => readdirSync(tmp).filter((n) => n.includes('.partial-'));

  it('a write that fails midway leaves neither the directory nor its temporary sibling', async () => {
    const dir = join(tmp, 'failed');
    const failing = Object.defineProperty({}, 'iptables-save', {
      enumerable: true,
      get: () => {
        throw new Error('no space left on device');
      },
    }) as Record<string, string>;
    const facts: Facts = {
      objects: [],
      meta: {},
      nodes: { 'node-a': { 'ip-addr': 'written first' }, 'node-b': failing },
    };
    await assert.rejects(writeSnapshot(dir, facts), /no space left on device/);
    assert.deepEqual([existsSync(dir), leftovers()], [false, []]);
  });

  it('an interruption mid-write (Ctrl-C runs the release) leaves nothing, and nothing is written after it', async () => {
    const dir = join(tmp, 'interrupted');
    const outputs: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) outputs[`probe-${i}`] = 'x\n';
    const release = new Set<() => Promise<void>>();
    const writing = writeSnapshot(
      dir,
      { objects: [], meta: {}, nodes: { 'node-a': outputs } },
      { release },
    ).then(
      () => 'written',
      (e: Error) => e.message,
    );
    while (leftovers().length === 0) await new Promise((r) => setImmediate(r));
    assert.equal(release.size, 1);
    await Promise.all([...release].map((f) => f()));
    assert.match(await writing, /interrupted$/);
    assert.deepEqual([existsSync(dir), leftovers(), release.size], [false, [], 0]);
  });

  it('a whole write lands under its name, into an empty directory too', async () => {
    const dir = join(tmp, 'empty');
    mkdirSync(dir);
    await writeSnapshot(dir, { objects: [], meta: { a: 1 }, nodes: { n: { s: 'out' } } });
    assert.deepEqual(plain(await readSnapshot(dir)), {
      objects: [],
      meta: { a: 1 },
      nodes: { n: { s: 'out' } },
    });
    assert.deepEqual(leftovers(), []);
  });
});
