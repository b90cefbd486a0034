// Hostile snapshots, each built here in a temporary directory: links to a marker file outside
// the snapshot, to /dev/zero and /dev/null, FIFOs, a device, files over their cap, node folders
// named __proto__ or constructor, tar headers with a negative or huge size, gzip bombs, and node
// names that climb out of the directory being written. Each is read as Facts or refused with one
// line naming the file, quickly and in bounded memory; the marker is never read, nothing is
// written outside. The built CLI is run where a hang or a signal is the point, and a seeded fuzz
// mutates a real archive and a real snapshot directory.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tarGz, untarGz } from '../../src/cluster/snapshot/archive.js';
import { parseDumpsAside } from '../../src/cluster/dump-parse.js';
import type { WorkerAnswer } from '../../src/cluster/parse-worker.js';
import {
  readSnapshot,
  SnapshotError,
  writeSnapshot,
  writeSnapshotArchive,
} from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { hermetic, ROOT } from '../support/cli.js';

const MiB = 1024 * 1024;
const DEMO = 'snapshots/nginx-svc';
const MARKER = `MARKER-${process.pid}-never-read`;
const tmp = mkdtempSync(join(tmpdir(), 'kdebug-hostile-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Outside every snapshot: a secret, and a folder shaped like a node's. */
const OUTSIDE = join(tmp, 'outside');
const SECRET = join(OUTSIDE, 'credentials');
mkdirSync(join(OUTSIDE, 'node-x'), { recursive: true });
writeFileSync(SECRET, `${MARKER}\n`);
writeFileSync(join(OUTSIDE, 'node-x', 'iptables-save.txt'), `${MARKER}\n`);

const mkfifo = (path: string) => {
  const r = spawnSync('mkfifo', [path]);
  assert.equal(r.status, 0, `mkfifo ${path}: ${r.stderr}`);
};

let made = 0;
/** A fresh snapshot directory: objects.json, meta.json and one node output. */
function aSnapshot(): string {
  const dir = join(tmp, `snap-${made++}`);
  mkdirSync(join(dir, 'nodes', 'node-a'), { recursive: true });
  writeFileSync(join(dir, 'objects.json'), '[]');
  writeFileSync(join(dir, 'meta.json'), '{}');
  writeFileSync(join(dir, 'nodes', 'node-a', 'ip-addr.txt'), '1: lo\n');
  return dir;
}

/** The Facts as text: every node output with them. */
const readAll = (f: Facts) => JSON.stringify(f);

/** Reads `path` as a snapshot: its Facts as text, or the SnapshotError's one line. Anything else
 * (another error, a message on two lines, the marker, 5 s of CPU, or four times that waiting: a
 * hang) fails the test. CPU time, so that other work on a loaded machine does not count. */
async function outcome(path: string, limitMs = 5000): Promise<string> {
  const t = performance.now();
  const cpu = process.cpuUsage();
  let out: string;
  try {
    out = readAll(await readSnapshot(path));
  } catch (e) {
    assert.ok(e instanceof SnapshotError, `not a SnapshotError: ${(e as Error)?.stack}`);
    assert.ok(!e.message.includes('\n'), `two lines: ${JSON.stringify(e.message)}`);
    out = e.message;
  }
  const ms = performance.now() - t;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  assert.ok(cpuMs < limitMs, `${path}: ${Math.round(cpuMs)} ms of CPU`);
  assert.ok(ms < 4 * limitMs, `${path}: ${Math.round(ms)} ms`);
  assert.ok(!out.includes(MARKER), `${path}: the marker was read: ${out.slice(0, 300)}`);
  return out;
}

const nodeOutput = (dir: string) => join(dir, 'nodes', 'node-a', 'iptables-save.txt');
const replace = (path: string, make: (p: string) => void) => (rmSync(path), make(path));
const link = (target: string) => (p: string) => symlinkSync(target, p);
const LINK_FILE = 'a symbolic link; a snapshot holds regular files only';
const LINK_DIR = 'a symbolic link; a snapshot holds directories and regular files only';

describe('hostile snapshot directories: regular files inside the root, or refused in one line', () => {
  const cases: [string, (dir: string) => void, string][] = [
    // what was hostile, how it is built, the end of the message after the snapshot's path
    [
      'a node output linked to a secret',
      (d) => symlinkSync(SECRET, nodeOutput(d)),
      `/nodes/node-a/iptables-save.txt: ${LINK_FILE}`,
    ],
    [
      'a node output linked to /dev/zero',
      (d) => symlinkSync('/dev/zero', nodeOutput(d)),
      `/nodes/node-a/iptables-save.txt: ${LINK_FILE}`,
    ],
    [
      'a node output linked to /dev/null',
      (d) => symlinkSync('/dev/null', nodeOutput(d)),
      `/nodes/node-a/iptables-save.txt: ${LINK_FILE}`,
    ],
    [
      'a node output that is a FIFO',
      (d) => mkfifo(nodeOutput(d)),
      '/nodes/node-a/iptables-save.txt: a FIFO; a snapshot holds regular files only',
    ],
    [
      'a node output that is a directory',
      (d) => mkdirSync(nodeOutput(d)),
      '/nodes/node-a/iptables-save.txt: a directory; a snapshot holds regular files only',
    ],
    [
      'objects.json linked to a secret',
      (d) => replace(join(d, 'objects.json'), link(SECRET)),
      `/objects.json: ${LINK_FILE}`,
    ],
    [
      'objects.json that is a FIFO',
      (d) => replace(join(d, 'objects.json'), mkfifo),
      '/objects.json: a FIFO; a snapshot holds regular files only',
    ],
    [
      'meta.json linked to /dev/zero',
      (d) => replace(join(d, 'meta.json'), link('/dev/zero')),
      `/meta.json: ${LINK_FILE}`,
    ],
    [
      'meta.json that is a FIFO',
      (d) => replace(join(d, 'meta.json'), mkfifo),
      '/meta.json: a FIFO; a snapshot holds regular files only',
    ],
    [
      'nodes/ linked to a folder outside',
      (d) => (
        rmSync(join(d, 'nodes'), { recursive: true }),
        symlinkSync(OUTSIDE, join(d, 'nodes'))
      ),
      `/nodes: ${LINK_DIR}`,
    ],
    [
      'nodes/<node> linked to a folder outside',
      (d) => symlinkSync(join(OUTSIDE, 'node-x'), join(d, 'nodes', 'node-x')),
      `/nodes/node-x: ${LINK_DIR}`,
    ],
    [
      'nodes/ that is a FIFO',
      (d) => (rmSync(join(d, 'nodes'), { recursive: true }), mkfifo(join(d, 'nodes'))),
      '/nodes: a FIFO; a snapshot holds directories and regular files only',
    ],
    [
      'objects.json over 500 MiB (sparse: a 600 MB objects.json was "missing")',
      (d) => truncateSync(join(d, 'objects.json'), 600e6),
      '/objects.json: over 500 MiB, not read',
    ],
    [
      'meta.json over 64 MiB',
      (d) => truncateSync(join(d, 'meta.json'), 64 * MiB + 1),
      '/meta.json: over 64 MiB, not read',
    ],
    [
      'a node folder named __proto__',
      (d) => mkdirSync(join(d, 'nodes', '__proto__')),
      '/nodes: "__proto__" is not a Kubernetes node name (a DNS-1123 subdomain); not read',
    ],
    [
      'a node folder named hasOwnProperty',
      (d) => mkdirSync(join(d, 'nodes', 'hasOwnProperty')),
      '/nodes: "hasOwnProperty" is not a Kubernetes node name (a DNS-1123 subdomain); not read',
    ],
    [
      'a node folder whose name breaks the line',
      (d) => mkdirSync(join(d, 'nodes', 'a\nkdebug: all good')),
      '/nodes: "a\\nkdebug: all good" is not a Kubernetes node name (a DNS-1123 subdomain); not read',
    ],
    [
      'a node output named __proto__.txt',
      (d) => writeFileSync(join(d, 'nodes', 'node-a', '__proto__.txt'), 'x'),
      `/nodes/node-a: "__proto__.txt" is not a node command's file name (letters, digits and ._:-); not read`,
    ],
    [
      'meta.json that is not an object',
      (d) => writeFileSync(join(d, 'meta.json'), '"x"'),
      '/meta.json: expected a JSON object',
    ],
    [
      'objects.json whose List holds a null',
      (d) => writeFileSync(join(d, 'objects.json'), '{"kind":"List","items":[null]}'),
      '/objects.json: expected a Kubernetes List, an object or an array of objects',
    ],
  ];
  for (const [name, make, message] of cases)
    it(name, async () => {
      const dir = aSnapshot();
      make(dir);
      assert.equal(await outcome(dir), `${dir}${message}`);
    });

  it('a node output over 511 MiB (the most snapshot save writes of one) is that command not read, the rest read', async () => {
    const dir = aSnapshot();
    writeFileSync(nodeOutput(dir), '');
    truncateSync(nodeOutput(dir), 512 * MiB);
    const facts = await readSnapshot(dir);
    assert.deepEqual(facts.nodes['node-a'], { 'ip-addr': '1: lo\n' });
    assert.deepEqual(facts.meta['nodeErrors'], [
      {
        node: 'node-a',
        command: 'iptables-save',
        exitCode: null,
        error: `${dir}/nodes/node-a/iptables-save.txt: over 511 MiB, not read`,
      },
    ]);
  });

  it('a character device (made with mknod where this user may)', async (t) => {
    const dir = aSnapshot();
    const made = spawnSync('mknod', [nodeOutput(dir), 'c', '1', '3']);
    if (made.status !== 0) return t.skip('mknod needs root here');
    assert.equal(
      await outcome(dir),
      `${nodeOutput(dir)}: a character device; a snapshot holds regular files only`,
    );
  });

  it('hidden names and files beside the node folders are skipped, never opened', async () => {
    const dir = aSnapshot();
    symlinkSync(SECRET, join(dir, 'nodes', '.DS_Store'));
    mkfifo(join(dir, 'nodes', 'node-a', '._iptables-save.txt'));
    writeFileSync(join(dir, 'nodes', 'README'), 'notes');
    symlinkSync(SECRET, join(dir, 'nodes', 'node-a', 'notes.md'));
    assert.deepEqual(JSON.parse(await outcome(dir)).nodes, { 'node-a': { 'ip-addr': '1: lo\n' } });
  });

  it('a node named constructor is a node like any other; nothing is inherited', async () => {
    const dir = aSnapshot();
    mkdirSync(join(dir, 'nodes', 'constructor'));
    writeFileSync(join(dir, 'nodes', 'constructor', 'iptables-save.txt'), '*nat\nCOMMIT\n');
    const facts = await readSnapshot(dir);
    assert.deepEqual(Object.keys(facts.nodes), ['constructor', 'node-a']);
    assert.equal(facts.nodes['constructor']!['iptables-save'], '*nat\nCOMMIT\n');
    assert.equal(facts.nodes['toString'], undefined);
    assert.equal(facts.nodes['node-a']!['iptables-save'], undefined);
  });

  it('node outputs are read with the snapshot, as plain text: a link or FIFO swapped in afterwards is never read', async () => {
    const dir = aSnapshot();
    writeFileSync(nodeOutput(dir), '*nat\nCOMMIT\n');
    writeFileSync(join(dir, 'nodes', 'node-a', 'proxy-mode.txt'), 'iptables');
    const facts = await readSnapshot(dir);
    replace(nodeOutput(dir), link(SECRET));
    replace(join(dir, 'nodes', 'node-a', 'proxy-mode.txt'), mkfifo);
    const outputs = facts.nodes['node-a']!;
    for (const stem of ['iptables-save', 'proxy-mode'])
      assert.equal(typeof Object.getOwnPropertyDescriptor(outputs, stem)?.value, 'string', stem);
    assert.equal(outputs['iptables-save'], '*nat\nCOMMIT\n');
    assert.equal(outputs['proxy-mode'], 'iptables');
  });

  it('objects only (TAB completion): no node output is read', async () => {
    const dir = aSnapshot();
    mkfifo(nodeOutput(dir));
    assert.deepEqual(Object.keys((await readSnapshot(dir, true)).nodes), []);
  });

  it('the parse worker reads through the same checks: a link is never parsed', async (t) => {
    const worker = new URL('dist/parse-worker.js', `file://${ROOT}/`);
    if (!existsSync(worker)) return t.skip('dist/parse-worker.js is built by npm test');
    const dir = aSnapshot();
    symlinkSync(join(OUTSIDE, 'node-x', 'iptables-save.txt'), nodeOutput(dir));
    assert.equal((await parseDumpsAside(dir, worker, 0)).size, 0, 'not listed');
    const answer = await new Promise<WorkerAnswer>((done) => {
      const w = new Worker(worker, {
        workerData: { path: nodeOutput(dir), file: 'nodes/node-a/iptables-save.txt' },
      });
      w.once('message', (a: WorkerAnswer) => (done(a), void w.terminate()));
    });
    assert.deepEqual(answer, { failed: `${nodeOutput(dir)}: ${LINK_FILE}` });
  });
});

/** A ustar header with its checksum, and raw overrides of its fields as latin1 bytes. */
function header(
  name: string,
  size: number,
  o: { type?: string; size?: string | Buffer; checksum?: string } = {},
) {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100);
  h.write('0000644\0', 100);
  h.write(size.toString(8).padStart(11, '0') + '\0', 124, 'latin1');
  if (typeof o.size === 'string') h.write(o.size, 124, 12, 'latin1');
  else if (o.size) o.size.copy(h, 124);
  h.write('00000000000\0', 136);
  h.write(o.type ?? '0', 156);
  h.write('ustar\0' + '00', 257, 'latin1');
  return o.checksum ? (h.write(o.checksum, 148, 'latin1'), h) : sealed(h);
}

/** The header with its checksum written. */
function sealed(h: Buffer): Buffer {
  h.write(' '.repeat(8), 148);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}
const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);
/** A tar entry whose data is given: header, data, padding. */
const entry = (name: string, data: Buffer) => [header(name, data.length), data, pad(data.length)];
const OBJECTS = entry('s/objects.json', Buffer.from('[]'));
const END = Buffer.alloc(1024);
/** A PAX record giving the next entry a size of 10 GB. */
const PAX_SIZE = Buffer.from('19 size=9999999999\n');
const gz = (...blocks: Buffer[]) => gzipSync(Buffer.concat(blocks));
/** `count` copies of `block` as gzip members: a gigabyte of tar in a few KB, built at once. */
const repeated = (block: Buffer, count: number) => {
  const member = gzipSync(block, { level: 9 });
  return Buffer.concat(Array.from({ length: count }, () => member));
};

let archives = 0;
const anArchive = (bytes: Buffer) => {
  const file = join(tmp, `a-${archives++}.tar.gz`);
  writeFileSync(file, bytes);
  return file;
};

describe('hostile archives: every header checked, every size bounded before it is inflated', () => {
  const cases: [string, Buffer, string][] = [
    // what was hostile, the archive, the message after "FILE: "
    [
      'a negative size (the cursor stepped back onto the same header, forever)',
      gz(header('s/x', 0, { size: '-0000001000\0' }), ...OBJECTS, END),
      'not a tar archive (bad header at byte 0)',
    ],
    [
      'a size that is not octal',
      gz(...OBJECTS, header('s/x', 0, { size: '0x1000\0' }), END),
      'not a tar archive (bad header at byte 1024)',
    ],
    [
      'digits after a space in a size',
      gz(header('s/x', 0, { size: '0 1000\0' }), END),
      'not a tar archive (bad header at byte 0)',
    ],
    [
      'a wrong checksum',
      gz(...OBJECTS, header('s/x', 0, { checksum: '000001\0 ' }), END),
      'not a tar archive (bad header at byte 1024)',
    ],
    [
      'a negative base-256 size',
      gz(header('s/x', 0, { size: Buffer.alloc(12, 0xff) }), END),
      'not a tar archive (bad header at byte 0)',
    ],
    [
      'a base-256 size of 16 GiB',
      gz(header('s/x', 0, { size: Buffer.from([0x80, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0]) }), END),
      'expands beyond 1 GiB, not read',
    ],
    [
      'an 8 GiB entry in a tiny archive',
      gz(...OBJECTS, header('s/big.bin', 8 * 1024 * MiB - 1), END),
      'expands beyond 1 GiB, not read',
    ],
    [
      'a 1.2 GB node output in a 1 KB archive',
      gz(...OBJECTS, header('s/nodes/a/iptables-save.txt', 1.2e9), END),
      'expands beyond 1 GiB, not read',
    ],
    [
      'a 600 MB objects.json',
      gz(header('s/objects.json', 600e6)),
      'entry "s/objects.json": over 500 MiB, not read',
    ],
    [
      'a PAX size over the bound',
      gz(
        header('s/PaxHeader', PAX_SIZE.length, { type: 'x' }),
        PAX_SIZE,
        pad(PAX_SIZE.length),
        header('s/x', 0),
        END,
      ),
      'expands beyond 1 GiB, not read',
    ],
    [
      'a GNU long name of 2 MiB',
      gz(header('././@LongLink', 2 * MiB, { type: 'L' }), Buffer.alloc(2 * MiB, 0x61), END),
      'a long-name record over 1 MiB at byte 0, not read',
    ],
    [
      'an absolute path',
      gz(...entry('/etc/objects.json', Buffer.from('[]')), END),
      'entry "/etc/objects.json" points outside the archive',
    ],
    [
      'a gzip stream cut in the middle',
      tarGz([{ path: 's/objects.json', data: Buffer.alloc(64 * 1024, 0x20) }]).subarray(0, 60),
      'cut short (unexpected end of file)',
    ],
  ];
  for (const [name, bytes, message] of cases)
    it(name, async () => {
      const file = anArchive(bytes);
      assert.equal(await outcome(file), `${file}: ${message}`);
    });

  it('a 600 MiB node output is that command not read, the rest of the archive read', async () => {
    const big = 600 * MiB;
    const file = anArchive(
      Buffer.concat([
        gz(...OBJECTS, ...entry('s/nodes/a/ip-addr.txt', Buffer.from('1: lo\n'))),
        gz(header('s/nodes/a/iptables-save.txt', big)),
        repeated(Buffer.alloc(MiB), big / MiB),
        gz(END),
      ]),
    );
    const facts = await readSnapshot(file);
    assert.deepEqual(facts.nodes['a'], { 'ip-addr': '1: lo\n' });
    assert.deepEqual(facts.meta['nodeErrors'], [
      {
        node: 'a',
        command: 'iptables-save',
        exitCode: null,
        error: `${file}: s/nodes/a/iptables-save.txt: over 511 MiB, not read`,
      },
    ]);
  });

  it('a __proto__ node is refused; Object.prototype and the other nodes are untouched', async () => {
    const file = anArchive(
      tarGz([
        { path: 's/objects.json', data: Buffer.from('[]') },
        { path: 's/nodes/__proto__/iptables-save.txt', data: Buffer.from(MARKER) },
        { path: 's/nodes/node-a/ip-addr.txt', data: Buffer.from('1: lo\n') },
      ]),
    );
    assert.equal(
      await outcome(file),
      `${file}: s/nodes: "__proto__" is not a Kubernetes node name (a DNS-1123 subdomain); not read`,
    );
    assert.equal(({} as Record<string, unknown>)['iptables-save'], undefined);
  });

  it('a node named constructor reads as a node, into a map without inherited keys', async () => {
    const facts = await readSnapshot(
      anArchive(
        tarGz([
          { path: 's/objects.json', data: Buffer.from('[]') },
          { path: 's/nodes/constructor/iptables-save.txt', data: Buffer.from('*nat\n') },
          { path: 's/nodes/node-a/ip-addr.txt', data: Buffer.from('1: lo\n') },
        ]),
      ),
    );
    assert.deepEqual(Object.keys(facts.nodes), ['constructor', 'node-a']);
    assert.equal(facts.nodes['constructor']!['iptables-save'], '*nat\n');
    assert.equal(facts.nodes['hasOwnProperty'], undefined);
  });

  it('an archive that is a FIFO or a link to /dev/zero is refused without a read', async () => {
    const fifo = join(tmp, 'fifo.tar.gz');
    mkfifo(fifo);
    assert.equal(await outcome(fifo), `${fifo}: a FIFO; a snapshot archive is a regular file`);
    const zero = join(tmp, 'zero.tar.gz');
    symlinkSync('/dev/zero', zero);
    assert.equal(
      await outcome(zero),
      `${zero}: a character device; a snapshot archive is a regular file`,
    );
  });

  it('more headers than a snapshot holds are refused, in bounded time', async () => {
    const dirs = Buffer.concat(
      Array.from({ length: 2048 }, () => header('s/d/', 0, { type: '5' })),
    );
    const file = anArchive(Buffer.concat([gz(...OBJECTS), repeated(dirs, 147), gz(END)]));
    assert.equal(await outcome(file), `${file}: more than 300000 entries, not read`);
  });

  /** The most the resident set grows while `f` runs, sampled as it runs. */
  async function rssGrowth(f: () => Promise<unknown>): Promise<number> {
    const start = process.memoryUsage.rss();
    let peak = start;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
    try {
      await f();
    } finally {
      clearInterval(sample);
    }
    return Math.max(peak, process.memoryUsage.rss()) - start;
  }

  it('a gzip bomb of zeros (3 GiB in 3 MB) ends at its first block: bounded time and memory', async () => {
    const file = anArchive(repeated(Buffer.alloc(64 * MiB), 48));
    let message = '';
    const grew = await rssGrowth(async () => (message = await outcome(file, 2000)));
    assert.match(message, /objects\.json: missing: a snapshot needs at least objects\.json/);
    assert.ok(grew < 100 * MiB, `grew ${Math.round(grew / MiB)} MiB`);
  });

  it('a bomb behind a valid header is inflated as a stream and stopped at the bound', async () => {
    // 400 MiB of zeros for a skipped entry, then a header that would pass 1 GiB
    const file = anArchive(
      Buffer.concat([
        gz(...OBJECTS, header('s/zeros.bin', 400 * MiB)),
        repeated(Buffer.alloc(MiB), 400),
        gz(header('s/more.bin', 700 * MiB)),
      ]),
    );
    let message = '';
    const grew = await rssGrowth(async () => (message = await outcome(file)));
    assert.equal(message, `${file}: expands beyond 1 GiB, not read`);
    assert.ok(grew < 150 * MiB, `grew ${Math.round(grew / MiB)} MiB for 400 MiB inflated`);
  });

  it('untarGz keeps only what it is asked for, each within its cap', async () => {
    const bytes = tarGz([
      { path: 's/objects.json', data: Buffer.from('[]') },
      { path: 's/big.bin', data: Buffer.alloc(MiB + 1) },
    ]);
    const files = await untarGz(bytes, 'x.tgz', {
      keep: (p) => (p.endsWith('.json') ? 10 : undefined),
    });
    assert.deepEqual([...files.keys()], ['s/objects.json']);
    await assert.rejects(untarGz(bytes, 'x.tgz', { keep: () => MiB }), {
      name: 'ArchiveError',
      message: 'x.tgz: entry "s/big.bin": over 1 MiB, not read',
    });
  });
});

describe('writing a snapshot: no node name or stem becomes a path outside it', () => {
  /** Every path under tmp, to see that nothing appeared. */
  const everything = (dir = tmp): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = join(dir, e.name);
      return e.isDirectory() ? [relative(tmp, p), ...everything(p)] : [relative(tmp, p)];
    });
  const cases: [string, Facts['nodes'], RegExp][] = [
    [
      'a Node named ../../escaped (from a hostile API server)',
      { '../../escaped': { 'iptables-save': MARKER } },
      /: node "\.\.\/\.\.\/escaped" is not a Kubernetes node name \(a DNS-1123 subdomain\); nothing written$/,
    ],
    [
      'an absolute node name',
      { [join(tmp, 'escaped')]: { 'iptables-save': MARKER } },
      /is not a Kubernetes node name/,
    ],
    [
      'a stem that climbs out',
      { 'node-a': { '../../../escaped': MARKER } },
      /: output "\.\.\/\.\.\/\.\.\/escaped" of node node-a is not a node command's file name/,
    ],
    [
      'a stem __proto__ (an own key, as JSON.parse makes it)',
      { 'node-a': JSON.parse(`{"__proto__": "${MARKER}"}`) as Record<string, string> },
      /output "__proto__"/,
    ],
  ];
  for (const [name, nodes, message] of cases)
    for (const write of [writeSnapshot, writeSnapshotArchive])
      it(`${write.name}: ${name}`, async () => {
        const parent = mkdtempSync(join(tmp, 'write-'));
        const target = join(parent, write === writeSnapshot ? 'snap' : 'snap.tar.gz');
        const before = everything();
        const facts: Facts = { objects: [], meta: {}, nodes };
        await assert.rejects(write(target, facts), (e: Error) => {
          assert.ok(e instanceof SnapshotError, e.stack);
          assert.ok(!e.message.includes('\n'));
          assert.match(e.message, message);
          return true;
        });
        assert.deepEqual(everything(), before, 'nothing written anywhere');
        assert.deepEqual(readdirSync(parent), [], 'no temporary sibling');
      });

  it("a large cluster's meta (5,000 nodes none of which answered) is written and read back", async () => {
    const dir = join(tmp, 'large-meta-snap');
    // each node's errors as a capture records them: a few hundred bytes a command
    const nodeErrors = Array.from({ length: 5000 * 12 }, (_, i) => ({
      node: `node-${Math.floor(i / 12)}`,
      command: `probe-${i % 12}`,
      exitCode: null,
      error: `cannot run it on node node-${Math.floor(i / 12)}: kube-proxy Pod: error dialing backend: dial tcp 198.51.100.${i % 250}:10250: connect: connection refused`,
    }));
    await writeSnapshot(dir, { objects: [], meta: { nodeErrors }, nodes: {} });
    assert.ok(statSync(join(dir, 'meta.json')).size > 10 * 1024 ** 2);
    const back = await readSnapshot(dir);
    assert.equal((back.meta['nodeErrors'] as unknown[]).length, nodeErrors.length);
  });

  it('a node named constructor is written and read back', async () => {
    const dir = join(tmp, 'constructor-snap');
    const nodes = Object.create(null) as Facts['nodes'];
    nodes['constructor'] = { 'iptables-save': '*nat\n' };
    await writeSnapshot(dir, { objects: [], meta: {}, nodes });
    assert.equal(
      readFileSync(join(dir, 'nodes', 'constructor', 'iptables-save.txt'), 'utf8'),
      '*nat\n',
    );
    assert.equal((await readSnapshot(dir)).nodes['constructor']!['iptables-save'], '*nat\n');
  });
});

/** Whether process `pid` has `file` open; undefined where /proc cannot tell. */
function hasOpen(pid: number, file: string): boolean | undefined {
  const fds = join('/proc', String(pid), 'fd');
  if (!existsSync(fds)) return undefined;
  const target = (fd: string) => {
    try {
      return readlinkSync(join(fds, fd));
    } catch {
      return ''; // closed meanwhile
    }
  };
  return readdirSync(fds).some((fd) => target(fd) === file);
}

interface CliRun {
  /** The exit status as a shell reports it: 128 + the signal's number where one ended it. */
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** From the signal to the exit. */
  afterSignal?: number;
}

/** The built CLI, asynchronously, killed after 20 s whatever happens. `signal` is sent once it
 * has `whenOpen` open (it is reading it), or after `afterMs` (1 s where /proc cannot tell). */
function runCli(
  args: string[],
  o: { signal?: NodeJS.Signals; whenOpen?: string; afterMs?: number } = {},
) {
  if (!existsSync(join(ROOT, 'dist', 'cli.js')))
    spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
  return new Promise<CliRun>((resolve) => {
    const t = performance.now();
    const child = spawn(process.execPath, ['bin/kdebug.js', ...args], {
      cwd: ROOT,
      env: { ...hermetic(), NO_COLOR: '1' },
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d: Buffer) => (out.stdout += d));
    child.stderr.on('data', (d: Buffer) => (out.stderr += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    let signalled: number | undefined;
    const poll = setInterval(() => {
      if (!o.signal || child.exitCode !== null) return clearInterval(poll);
      const late = performance.now() - t > (o.afterMs ?? 1000);
      const reading = o.whenOpen === undefined ? late : (hasOpen(child.pid!, o.whenOpen) ?? late);
      if (!reading) return;
      clearInterval(poll);
      signalled = performance.now();
      child.kill(o.signal);
    }, 10);
    child.on('close', (exit, signal) => {
      clearTimeout(kill);
      const now = performance.now();
      const afterSignal = signalled === undefined ? undefined : now - signalled;
      const code = signal ? 128 + constants.signals[signal] : exit;
      resolve({ code, ...out, ms: now - t, afterSignal });
    });
  });
}

describe('the CLI on hostile snapshots: one line, exit 2, and no hang', () => {
  let negative: string;
  before(() => {
    negative = anArchive(gz(header('s/x', 0, { size: '-0000001000\0' }), ...OBJECTS, END));
  });

  it('the archive whose negative size hung kdebug at 100% CPU exits at once', async () => {
    const r = await runCli(['svc', 'x', '--snapshot', negative, '-o', 'text']);
    assert.deepEqual(
      [r.code, r.stdout, r.stderr],
      [2, '', `kdebug: ${negative}: not a tar archive (bad header at byte 0)\n`],
    );
    assert.ok(r.ms < 5000, `${Math.round(r.ms)} ms`);
  });

  it('TAB completion on it (the shell hung) answers at once, with nothing', async () => {
    const r = await runCli(['__complete', 'svc', '--snapshot', negative, '']);
    assert.deepEqual([r.code, r.stdout], [0, ':4\n']);
    assert.ok(r.ms < 5000, `${Math.round(r.ms)} ms`);
  });

  for (const [name, make] of [
    ['a node output linked to a secret', (d: string) => symlinkSync(SECRET, nodeOutput(d))],
    ['a node output linked to /dev/zero', (d: string) => symlinkSync('/dev/zero', nodeOutput(d))],
    ['a node output that is a FIFO', (d: string) => mkfifo(nodeOutput(d))],
  ] as const)
    it(name, async () => {
      const dir = aSnapshot();
      make(dir);
      const r = await runCli(['svc', 'x', '--snapshot', dir, '-o', 'text']);
      assert.equal(r.code, 2);
      assert.match(
        r.stderr,
        /^kdebug: .*iptables-save\.txt: a (symbolic link|FIFO); a snapshot holds regular files only\n$/,
      );
      assert.ok(!`${r.stdout}${r.stderr}`.includes(MARKER));
      assert.ok(r.ms < 5000, `${Math.round(r.ms)} ms`);
    });

  it('Ctrl-C stops the read of a slow but valid archive at once (exit 130)', async () => {
    // 286,720 directory headers and 880 MiB of zeros: valid, under every bound, seconds to read
    const dirs = Buffer.concat(
      Array.from({ length: 2048 }, () => header('s/d/', 0, { type: '5' })),
    );
    const file = anArchive(
      Buffer.concat([
        gz(...OBJECTS),
        repeated(dirs, 140),
        gz(header('s/zeros.bin', 880 * MiB)),
        repeated(Buffer.alloc(MiB), 880),
        gz(END),
      ]),
    );
    const r = await runCli(['svc', 'x', '--snapshot', file, '-o', 'text'], {
      signal: 'SIGINT',
      whenOpen: file,
    });
    assert.ok(
      r.afterSignal !== undefined,
      `no signal sent: exit ${r.code} after ${Math.round(r.ms)} ms, ${r.stderr.slice(0, 300)}`,
    );
    assert.equal(r.code, 130, r.stderr);
    assert.ok(r.afterSignal < 1000, `${Math.round(r.afterSignal)} ms after SIGINT`);
  });

  it('Ctrl-C stops the parse of an objects.json of ConfigMaps holding 600,000 keys each (exit 130)', async () => {
    // under every bound (46 MB, 7 million values, each object under the API server's size),
    // and seconds of one synchronous JSON.parse
    const dir = aSnapshot();
    const keys = Array.from({ length: 600_000 }, (_, i) => `"k${i}":0`).join(',');
    const map = (n: number) =>
      `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x${n}","namespace":"default"},"data":{${keys}}}`;
    writeFileSync(
      join(dir, 'objects.json'),
      `{"kind":"List","items":[${[0, 1, 2, 3, 4].map(map).join(',')}]}`,
    );
    const r = await runCli(['svc', 'x', '--snapshot', dir, '-o', 'text'], {
      signal: 'SIGINT',
      afterMs: 3000, // the read is done by then, the parse takes seconds of CPU
    });
    assert.ok(
      r.afterSignal !== undefined,
      `no signal sent: exit ${r.code} after ${Math.round(r.ms)} ms`,
    );
    assert.equal(r.code, 130, r.stderr);
    assert.ok(r.afterSignal < 1000, `${Math.round(r.afterSignal)} ms after SIGINT`);
  });
});

/** A seeded generator, so a failing case replays. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('hostile snapshots, fuzzed: Facts or one SnapshotError line, fast, never the marker', () => {
  /** The demo snapshot's files, as archive entries. */
  const demo = (dir = DEMO, prefix = 'nginx-svc'): { path: string; data: Buffer }[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? demo(join(dir, e.name), `${prefix}/${e.name}`)
        : [{ path: `${prefix}/${e.name}`, data: readFileSync(join(dir, e.name)) }],
    );

  /** Both outcomes, each often enough: a fuzz that only ever refuses explores nothing. */
  const outcomes = () => {
    const counts = { facts: 0, refused: 0 };
    return {
      add: (out: string) => counts[out.startsWith('{') ? 'facts' : 'refused']++,
      check: (seeds: number) =>
        assert.ok(Math.min(counts.facts, counts.refused) > seeds / 10, JSON.stringify(counts)),
    };
  };

  it('archives: bytes of a valid archive mutated, 300 seeds', async () => {
    const seen = outcomes();
    const tar = gunzipSync(tarGz(demo()));
    // where each header is: size, name, type and checksum live there
    const headers: number[] = [];
    for (let at = 0; tar[at] !== 0;) {
      headers.push(at);
      const size = parseInt(tar.toString('latin1', at + 124, at + 136), 8);
      at += 512 + Math.ceil(size / 512) * 512;
    }
    for (let seed = 1; seed <= 300; seed++) {
      const r = prng(seed);
      const bytes = Buffer.from(tar);
      // headers most of the time: that is where sizes, names and checksums live
      for (let k = 1 + Math.floor(r() * 4); k > 0; k--) {
        const at =
          r() < 0.7
            ? headers[Math.floor(r() * headers.length)]! + Math.floor(r() * 512)
            : Math.floor(r() * bytes.length);
        bytes[at] = r() < 0.5 ? Math.floor(r() * 256) : '0-7 \0x'.charCodeAt(Math.floor(r() * 6));
      }
      // checksums made right again most of the time, so the fields behind them are reached
      if (r() < 0.7) for (const at of headers) sealed(bytes.subarray(at, at + 512));
      const cut = r() < 0.2 ? Math.floor(r() * bytes.length) : bytes.length;
      const zipped = gzipSync(bytes.subarray(0, cut));
      const flip = Math.floor(r() * zipped.length);
      if (r() < 0.15) zipped[flip] = zipped[flip]! ^ (1 << Math.floor(r() * 8));
      const file = join(tmp, `fuzz-${seed}.tar.gz`);
      writeFileSync(file, zipped);
      seen.add(
        await outcome(file, 1000).catch((e: Error) => assert.fail(`seed ${seed}: ${e.message}`)),
      );
      rmSync(file);
    }
    seen.check(300);
  });

  it('directories: files swapped for links, FIFOs, folders and bad names, 200 seeds', async () => {
    const seen = outcomes();
    const NAMES = [
      '__proto__',
      'constructor',
      'hasOwnProperty',
      'UPPER',
      'a b',
      '.hidden',
      '-x',
      'ok-name',
      'a\nb',
      'ü',
      'x'.repeat(240),
    ];
    // FIFOs made in one go, moved into place: a mkfifo process per FIFO is most of the time
    const pool = Array.from({ length: 600 }, (_, i) => join(tmp, `fifo-${i}`));
    spawnSync('mkfifo', pool);
    for (let seed = 1; seed <= 200; seed++) {
      const r = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
      const dir = join(tmp, `fuzz-dir-${seed}`);
      cpSync(DEMO, dir, { recursive: true });
      const nodes = readdirSync(join(dir, 'nodes')).map((n) => join(dir, 'nodes', n));
      const files = [
        join(dir, 'objects.json'),
        join(dir, 'meta.json'),
        join(dir, 'nodes'),
        ...nodes,
        ...nodes.flatMap((n) => readdirSync(n).map((f) => join(n, f))),
      ];
      for (let k = 1 + Math.floor(r() * 3); k > 0; k--) {
        const victim = pick(files);
        if (!existsSync(victim)) continue;
        const swap = pick(['secret', 'zero', 'outside', 'fifo', 'dir', 'empty', 'rename'] as const);
        if (swap === 'rename') {
          const renamed = join(
            victim,
            '..',
            `${pick(NAMES)}${victim.endsWith('.txt') ? '.txt' : ''}`,
          );
          if (!existsSync(renamed)) renameSync(victim, renamed);
          continue;
        }
        rmSync(victim, { recursive: true });
        if (swap === 'secret') symlinkSync(SECRET, victim);
        if (swap === 'zero') symlinkSync('/dev/zero', victim);
        if (swap === 'outside') symlinkSync(join(OUTSIDE, 'node-x'), victim);
        if (swap === 'fifo') renameSync(pool.pop()!, victim);
        if (swap === 'dir') mkdirSync(victim);
        if (swap === 'empty') writeFileSync(victim, '');
      }
      seen.add(
        await outcome(dir, 1000).catch((e: Error) => assert.fail(`seed ${seed}: ${e.message}`)),
      );
      rmSync(dir, { recursive: true });
    }
    seen.check(200);
  });
});
