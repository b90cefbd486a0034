// Issue 36: nodes the snapshot holds nothing of are one finding and one Partial entry, however
// many they are: the text stays the same length with 30 or 300 of them; JSON lists them whole.
// The demo snapshot (snapshots/nginx-svc: vm-12-7-centos and vm-12-11-centos recorded) with
// `extra` Nodes added to its objects and no nodes/<name>/ directory for them.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../src/core/model.js';
import { aNode } from '../support/builders.js';
import { kdebug } from '../support/cli.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const name = (i: number) => `w${String(i).padStart(4, '0')}`;

function demoWithNodes(extra: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-many-nodes-'));
  dirs.push(dir);
  cpSync('snapshots/nginx-svc', dir, { recursive: true });
  const file = join(dir, 'objects.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { items: KubeObject[] };
  for (let i = 0; i < extra; i++)
    list.items.push(aNode(name(i), `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`));
  writeFileSync(file, JSON.stringify(list));
  return dir;
}

const run = (dir: string, ...more: string[]) =>
  kdebug(['svc', 'nginx-svc', '--snapshot', dir, ...more]);

describe('svc on a snapshot with hundreds of nodes not recorded', () => {
  const few = run(demoWithNodes(30));
  const many = run(demoWithNodes(300));

  it('prints as many lines for 300 unrecorded nodes as for 30', () => {
    const lines = (s: string) => s.split('\n').length;
    assert.equal(lines(many.stdout), lines(few.stdout));
    assert.ok(lines(many.stdout) < 120, many.stdout);
    assert.doesNotMatch(many.stdout, /undefined/);
  });

  it('says the nodes in one Rules line and one Partial entry, naming a few', () => {
    const flat = many.stdout.replace(/\s+/g, ' ');
    assert.match(
      flat,
      /Rules .*300 nodes \(w0000, w0001, w0002 and 297 more\): rules not observed/,
    );
    assert.doesNotMatch(many.stdout, /w0003: rules not observed/);
    const partial = flat.slice(flat.indexOf('Partial:'));
    assert.match(partial, /300 nodes \(w0000, w0001, w0002 and 297 more\)/);
    assert.doesNotMatch(partial, /w0100/);
  });

  it('lists every node in JSON, with one next command', () => {
    const json = run(demoWithNodes(300), '-o', 'json');
    assert.doesNotMatch(json.stdout, /undefined/);
    const report = JSON.parse(json.stdout) as {
      steps: { findings: { id: string; nodes?: string[]; next?: string }[] }[];
      unobserved: string[];
    };
    const found = report.steps
      .flatMap((s) => s.findings)
      .filter((f) => f.id === 'rules-not-observed');
    assert.equal(found.length, 1);
    assert.deepEqual(
      found[0]!.nodes,
      Array.from({ length: 300 }, (_, i) => name(i)),
    );
    assert.match(found[0]!.next ?? '', /node\/w0000 .*> .*nodes\/w0000\/iptables-save\.txt/);
    assert.equal(report.unobserved.filter((u) => u.includes('rules not observed')).length, 1);
  });
});
