// Text a Windows shell or editor wrote: UTF-16 with its byte order mark (PowerShell 5's `>` and
// Out-File), or UTF-8 with one (Notepad). Each is decoded by its mark and said so, for a pasted
// file and a snapshot's files alike; bytes without a mark are UTF-8.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { inputBytes, inputText } from '../../src/core/facts/input-text.js';
import { kdebug } from '../support/cli.js';

const SEED_NAT = 'test/fixtures/seed-nat-S.txt';
const DEMO = 'snapshots/nginx-svc';

/** The text in `encoding` after its byte order mark, lines ended as PowerShell ends them. */
function marked(text: string, encoding: 'UTF-16LE' | 'UTF-16BE' | 'UTF-8'): Buffer {
  const crlf = text.replace(/\n/g, '\r\n');
  if (encoding === 'UTF-8')
    return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
  const le = Buffer.from(`\ufeff${crlf}`, 'utf16le');
  return encoding === 'UTF-16LE' ? le : le.swap16();
}

describe('input bytes as text', () => {
  const text = '*nat\n-A KUBE-SERVICES -j KUBE-NODEPORTS\nCOMMIT\n';
  const cases: [string, Buffer, string | undefined][] = [
    ['UTF-8 without a mark', Buffer.from(text), undefined],
    ['UTF-8 with a mark', marked(text, 'UTF-8'), 'UTF-8'],
    ['UTF-16LE', marked(text, 'UTF-16LE'), 'UTF-16LE'],
    ['UTF-16BE', marked(text, 'UTF-16BE'), 'UTF-16BE'],
  ];
  for (const [name, bytes, encoding] of cases)
    it(`${name}: the text without its mark, the encoding said`, () => {
      assert.equal(inputText(bytes).replace(/\r\n/g, '\n'), text);
      assert.equal(inputBytes(bytes).marked, encoding);
    });
});

describe('kdebug rules --file and --snapshot of text a Windows tool wrote', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-encodings-'));
  const seed = readFileSync(SEED_NAT, 'utf8');
  const plain = kdebug(['rules', '--file', SEED_NAT, '-o', 'json']).stdout;
  for (const encoding of ['UTF-16LE', 'UTF-16BE', 'UTF-8'] as const)
    it(`${encoding} with its byte order mark: read as the same dump, the decoding said`, () => {
      const file = join(dir, `${encoding}.txt`);
      writeFileSync(file, marked(seed, encoding));
      const r = kdebug(['rules', '--file', file, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        encoding === 'UTF-8' ? /UTF-8 byte order mark/ : new RegExp(`${encoding} text`),
      );
      assert.doesNotMatch(r.stderr, /binary file/);
      const doc = JSON.parse(r.stdout);
      assert.deepEqual(doc.services, JSON.parse(plain).services);
      assert.deepEqual(doc.warnings ?? [], JSON.parse(plain).warnings ?? []);
    });

  it('a snapshot whose objects.json and node output PowerShell wrote: read as the plain one', () => {
    const snap = join(dir, 'snap');
    cpSync(DEMO, snap, { recursive: true });
    const dump = 'nodes/vm-12-11-centos/iptables-save.txt';
    for (const f of ['objects.json', dump])
      writeFileSync(join(snap, f), marked(readFileSync(join(DEMO, f), 'utf8'), 'UTF-16LE'));
    const args = (s: string) => [
      'rules',
      '--snapshot',
      s,
      '--node',
      'vm-12-11-centos',
      '-o',
      'json',
    ];
    const r = kdebug(args(snap));
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).services, JSON.parse(kdebug(args(DEMO)).stdout).services);
    rmSync(dir, { recursive: true, force: true });
  });
});
