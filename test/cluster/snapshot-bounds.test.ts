// What a snapshot takes to open is bounded by what it holds, not only by its size caps: an
// archive whose files are over 100 times its size is refused at the header, before a byte is
// held (300 MiB of one Pod repeated packs in under 2 MB), and an objects.json of more JSON values
// than MAX_JSON_VALUES is refused before it is parsed (16 million empty arrays in 48 MB would take
// ~320 MB of heap). Each is shown with the built CLI in a child whose V8 heap is capped: one line
// naming the file and the limit, exit 2, quickly. A snapshot shaped like the bench's 5,000-node
// cluster (snapshot save's own archive) still opens.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { keptBound, MAX_RATIO, untarGz } from '../../src/cluster/snapshot/archive.js';
import {
  jsonValues,
  MAX_JSON_VALUES,
  MAX_OBJECT_MEMBERS,
  objectWiderThan,
} from '../../src/cluster/snapshot/json-values.js';
import { readSnapshot, writeSnapshotArchive } from '../../src/cluster/snapshot/read.js';
import type { KubeObject } from '../../src/core/model.js';
import { hermetic, ROOT } from '../support/cli.js';
import { servedKubeProxyPod } from './kube-proxy-pod.js';
import { aNode, anEndpointSlice, aService, webCluster } from './objects.js';

const MiB = 1024 * 1024;
const tmp = mkdtempSync(join(tmpdir(), 'kdebug-bounds-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A ustar header for a regular file of `size` bytes. */
function header(name: string, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100);
  h.write('0000644\0', 100);
  h.write(size.toString(8).padStart(11, '0') + '\0', 124, 'latin1');
  h.write('00000000000\0', 136);
  h.write('0', 156);
  h.write('ustar\0' + '00', 257, 'latin1');
  h.write(' '.repeat(8), 148);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}
const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);

/** The built CLI opening `snapshot` in a child with a V8 heap of `heapMiB`. */
function openInSmallHeap(snapshot: string, heapMiB: number) {
  const t = performance.now();
  const r = spawnSync(
    process.execPath,
    [`--max-old-space-size=${heapMiB}`, 'bin/kdebug.js', 'svc', 'web', '--snapshot', snapshot],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env['PATH'] ?? '', HOME: hermetic()['HOME'], NO_COLOR: '1' },
    },
  );
  return { code: r.status, stderr: r.stderr, ms: performance.now() - t };
}

describe('jsonValues', () => {
  it('counts members, elements and containers, not what strings hold', () => {
    const count = (s: string) => jsonValues(Buffer.from(s));
    assert.equal(count('[]'), 1);
    assert.equal(count('[1,2,3]'), 3);
    assert.equal(count('{"a":{"b":[1,{}]}}'), 7);
    // structure inside strings, escaped quotes and a trailing backslash are text
    assert.equal(count('["a,b:{[", "\\"x,y\\"", "c\\\\"]'), 3);
    assert.equal(count('{"é,ü":"😀[]"}'), 2);
    assert.equal(count('"unterminated, [ {'), 0);
  });

  it('stops counting past the bound', () => {
    const many = Buffer.from(`[${'0,'.repeat(1000)}0]`);
    assert.equal(jsonValues(many), 1001);
    assert.equal(jsonValues(many, 10), 11);
  });
});

describe('objectWiderThan', () => {
  it('counts the members of each object at its own level, not its arrays nor strings', () => {
    const wider = (s: string, most: number) => objectWiderThan(Buffer.from(s), most);
    assert.equal(wider('{"a":1,"b":{"c":1,"d":2},"e":[{"f":1}]}', 3), false);
    assert.equal(wider('{"a":1,"b":{"c":1,"d":2},"e":[{"f":1}],"g":0}', 3), true);
    assert.equal(wider('[{"a":1},{"b":1},{"c":1},{"d":1}]', 1), false);
    assert.equal(wider('{"x":"a:b:c:d:\\":e"}', 1), false);
  });
});

describe('a hostile snapshot is refused before it is held', () => {
  it('an objects.json whose one ConfigMap holds a million keys: refused before it is parsed', () => {
    const dir = join(tmp, 'wide');
    mkdirSync(dir);
    const keys = Array.from({ length: MAX_OBJECT_MEMBERS + 1 }, (_, i) => `"k${i}":0`).join(',');
    writeFileSync(
      join(dir, 'objects.json'),
      `{"kind":"List","items":[{"kind":"ConfigMap","metadata":{"name":"x"},"data":{${keys}}}]}`,
    );
    const r = openInSmallHeap(dir, 128);
    assert.equal(
      r.stderr,
      `kdebug: ${join(dir, 'objects.json')}: an object with more than 700,000 fields (the API server stores none over 3 MiB), not read\n`,
    );
    assert.equal(r.code, 2);
  });

  it('300 MiB of one Pod repeated in a small archive: refused at the header', () => {
    const pod = JSON.parse(
      readFileSync(join(ROOT, 'snapshots/nginx-svc/objects.json'), 'utf8'),
    ).items.find((o: KubeObject) => o.kind === 'Pod') as KubeObject;
    const one = Buffer.from(`${JSON.stringify(pod)},`);
    const block = Buffer.concat(Array.from({ length: Math.ceil(MiB / one.length) }, () => one));
    const head = Buffer.from('{"kind":"List","items":[');
    const tail = Buffer.from('{"kind":"Pod","metadata":{"name":"last"}}]}');
    const blocks = Math.ceil((300 * MiB) / block.length);
    const size = head.length + blocks * block.length + tail.length;
    // gzip members: the block compressed once, repeated; valid JSON all through
    const member = gzipSync(block, { level: 9 });
    const archive = Buffer.concat([
      gzipSync(Buffer.concat([header('s/objects.json', size), head])),
      ...Array.from({ length: blocks }, () => member),
      gzipSync(Buffer.concat([tail, pad(size), Buffer.alloc(1024)])),
    ]);
    const file = join(tmp, 'repeated-pods.tar.gz');
    writeFileSync(file, archive);
    assert.ok(archive.length < 5 * MiB, `${archive.length} bytes on disk`);
    const bound = keptBound(archive.length);
    assert.ok(size > bound, 'the archive holds more than the bound');
    const r = openInSmallHeap(file, 96);
    assert.equal(
      r.stderr,
      `kdebug: ${file}: entry "s/objects.json": what is read expands beyond ${bound / MiB} MiB, over ${MAX_RATIO} times the archive's size, not read\n`,
    );
    assert.equal(r.code, 2);
    assert.ok(r.ms < 10_000, `${Math.round(r.ms)} ms`);
  });

  it('an objects.json of 16 million empty arrays (48 MB, unpacked): refused before it is parsed', () => {
    const dir = join(tmp, 'dense');
    mkdirSync(dir);
    const n = MAX_JSON_VALUES / 2 + 1; // "[]," is a container and an element
    const text = Buffer.concat([
      Buffer.from('['),
      Buffer.alloc(3 * (n - 1), '[],'),
      Buffer.from('[]]'),
    ]);
    writeFileSync(join(dir, 'objects.json'), text);
    const r = openInSmallHeap(dir, 128);
    assert.equal(
      r.stderr,
      `kdebug: ${join(dir, 'objects.json')}: more than 32,000,000 JSON values (a 5,000-node snapshot holds ~3 million), not read\n`,
    );
    assert.equal(r.code, 2);
    assert.ok(r.ms < 10_000, `${Math.round(r.ms)} ms`);
  });
});

describe("a snapshot of the bench's 5,000-node cluster", () => {
  it('opens: 40 times its size on disk, 3.3 million JSON values', async () => {
    const nodes = 5000;
    const objects: KubeObject[] = [...webCluster().relevant];
    for (let i = 0; i < nodes; i++) {
      const ip = `198.51.100.${i % 250}`;
      objects.push(aNode(`node-${i}`, ip, `10.${64 + (i >> 8)}.${i & 255}.0/24`));
      objects.push(servedKubeProxyPod(i, `node-${i}`, ip));
    }
    for (let i = 0; i < 2 * nodes; i++) {
      const [name, ns] = [`svc-${i}`, `ns-${i % 100}`];
      objects.push(aService(name, ns, { clusterIP: `10.96.${(i >> 8) & 255}.${i & 255}` }));
      const ip = `10.${64 + ((i >> 8) & 15)}.${i & 255}.5`;
      objects.push(
        anEndpointSlice(name, ns, [{ ip, pod: `${name}-0`, node: `node-${i % nodes}` }]),
      );
    }
    const file = join(tmp, 'bench.tar.gz');
    await writeSnapshotArchive(file, { objects, nodes: {}, meta: {} });
    const onDisk = statSync(file).size;
    const files = await untarGz(readFileSync(file), file);
    const json = [...files].find(([p]) => p.endsWith('/objects.json'))![1];
    // the margins the bounds were chosen with
    assert.ok(json.length * 2 < keptBound(onDisk), `${json.length} bytes from ${onDisk}`);
    assert.ok(jsonValues(json) * 5 < MAX_JSON_VALUES, `${jsonValues(json)} values`);
    const facts = await readSnapshot(file);
    assert.equal(facts.objects.length, objects.length);
  });
});
