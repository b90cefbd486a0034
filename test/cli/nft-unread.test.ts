// The built `kdebug rules` and `kdebug drift` on a snapshot whose node recorded an nft listing
// with a line kdebug cannot read (the lab's node-a, a map element edited): the line is said the
// same way whether the listing is pasted (--file) or the node's (--node), and drift says no drift
// of what was read only.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';
import { clusterIpObjects, labListing } from '../support/nft-lab.js';

const ELEMENT = '10.96.33.216 . tcp . 80 : goto service-FN4G4LLS-matrix/cluster-ip/tcp/http,';
const { text, at } = labListing(
  ELEMENT,
  `\t\t\t     ${ELEMENT.replace(' : ', ' quota 5 mbytes : ')}`,
);
const dir = mkdtempSync(join(tmpdir(), 'kdebug-nft-unread-'));
mkdirSync(join(dir, 'nodes/node-a'), { recursive: true });
writeFileSync(join(dir, 'nodes/node-a/nft-ip-kube-proxy-text.txt'), text);
const items = clusterIpObjects(['10.244.1.4', '10.244.2.2']);
writeFileSync(join(dir, 'objects.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
const pasted = join(dir, 'pasted.txt');
writeFileSync(pasted, text);
after(() => rmSync(dir, { recursive: true, force: true }));

const WIDE = { env: { COLUMNS: '300' } };
const warnings = (out: string) => out.split('\n').filter((l) => l.startsWith('warning:'));
type Doc = { warnings: { line: number | null; kind: string; message: string }[] };
const unread = (out: string) =>
  (JSON.parse(out) as Doc).warnings.filter((w) => w.kind === 'unread');

describe('an nft listing with a line not read, on a node', () => {
  it('rules --node says the line as rules --file does, each at its own FILE:LINE, as text and JSON', () => {
    const node = kdebug(['rules', '--snapshot', dir, '--node', 'node-a'], WIDE);
    const file = kdebug(['rules', '--file', pasted], WIDE);
    assert.equal(node.code, 0, node.stderr);
    const recorded = join(dir, 'nodes/node-a/nft-ip-kube-proxy-text.txt');
    const said = `:${at}: not read (in map service-ips): "10.96.33.216 . tcp . 80 quota`;
    assert.equal(warnings(node.stdout).length, 1);
    assert.ok(warnings(node.stdout)[0]!.startsWith(`warning: ${recorded}${said}`));
    assert.deepEqual(
      warnings(file.stdout),
      warnings(node.stdout).map((w) => w.replace(recorded, pasted)),
    );
    const json = kdebug(['rules', '--snapshot', dir, '--node', 'node-a', '-o', 'json']);
    assert.deepEqual(
      unread(json.stdout),
      unread(kdebug(['rules', '--file', pasted, '-o', 'json']).stdout),
    );
    assert.deepEqual(
      unread(json.stdout).map((w) => w.line),
      [at],
    );
  });

  it('drift says no drift in what was read, and the line in a note (text and JSON)', () => {
    const r = kdebug(['drift', '--snapshot', dir, '--node', 'node-a'], WIDE);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}no drift in what was read: the notes below say what was not$/m);
    assert.doesNotMatch(r.stdout, /every Service port routes as kube-proxy would/);
    assert.match(r.stdout, /^ {2}note table-not-captured$/m);
    assert.ok(
      r.stdout.includes(`nodes/node-a/nft-ip-kube-proxy-text.txt:${at} (in map service-ips)`),
    );
    const json = kdebug(['drift', '--snapshot', dir, '--node', 'node-a', '-o', 'json']);
    const doc = JSON.parse(json.stdout) as { findings: unknown[]; notes: { actual: string[] }[] };
    assert.deepEqual(doc.findings, []);
    assert.deepEqual(
      doc.notes.map((n) => n.actual.map((l) => l.split(': ')[0])),
      [[`nodes/node-a/nft-ip-kube-proxy-text.txt:${at}`]],
    );
  });
});
