// Names a snapshot or the command line holds reach the terminal escaped: the `svc` heading (its
// namespace from meta.json, its name from the argument) and `expect -o text`'s rule lines, whose
// comments name the Service and its ports.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug, ROOT } from '../support/cli.js';

// nothing a terminal obeys: C0 but newline, DEL, C1, BIDI controls
// eslint-disable-next-line no-control-regex
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;
const PAYLOAD = '\x1b]0;owned\x07\x1b[2J\x9b31m\u202e';

const dir = mkdtempSync(join(tmpdir(), 'kdebug-hostile-names-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const snap = join(dir, 'snap');
cpSync(join(ROOT, 'snapshots/nginx-svc'), snap, { recursive: true });
const objects = JSON.parse(readFileSync(join(snap, 'objects.json'), 'utf8')) as {
  items: { kind: string; metadata: { name: string }; spec: { ports?: { name?: string }[] } }[];
};
for (const o of objects.items.filter((x) => x.kind === 'Service')) {
  o.metadata.name += PAYLOAD;
  for (const p of o.spec.ports ?? []) if (p.name) p.name += PAYLOAD;
}
writeFileSync(join(snap, 'objects.json'), JSON.stringify(objects));
const meta = JSON.parse(readFileSync(join(snap, 'meta.json'), 'utf8')) as Record<string, string>;
writeFileSync(join(snap, 'meta.json'), JSON.stringify({ ...meta, namespace: `default${PAYLOAD}` }));

const rawLine = (out: string) => out.split('\n').find((l) => RAW.test(l));

describe('hostile names in text output', () => {
  it('svc: the heading shows the namespace escaped', () => {
    const r = kdebug(['svc', 'nginx-svc', '--snapshot', snap]);
    const heading = r.stdout.split('\n')[0]!;
    assert.match(heading, /^kdebug svc default\\x1b\]0;owned\\x07/);
    assert.equal(rawLine(r.stdout), undefined);
  });

  it('svc: a name holding control characters is refused, escaped, before any read', () => {
    const r = kdebug(['svc', `nginx-svc${PAYLOAD}`, '--snapshot', snap]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /is not a Service name/);
    assert.equal(rawLine(r.stderr), undefined);
  });

  it('expect -o text: rule lines name the Service and port escaped', () => {
    const r = kdebug(['expect', '--snapshot', snap, '--node', 'vm-12-7-centos', '-o', 'text']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /--comment "default\/nginx-svc\\x1b\]0;owned\\x07\\x1b\[2J\\x9b31m\\u202e:http\\x1b/,
    );
    assert.equal(rawLine(r.stdout), undefined);
  });
});
