// The built `kdebug trace` on a Cilium node says how the datapath picks the backend among several
// (random or maglev) and where that was read (issue 34, r153-2: it said "1 of 2" only). The
// fixture is the bundled snapshots/cilium-stale-backend, whose agent's status says "Backend
// Selection: Random", and a copy whose status says Maglev.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const STATUS = 'nodes/vm-12-7-centos/cilium-status.txt';
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const args = (dir: string) => [
  'trace',
  '--snapshot',
  dir,
  '--node',
  'vm-12-7-centos',
  '--src',
  '10.244.0.3',
  '--dst',
  '10.1.190.219:8080',
];

interface Walk {
  selection?: { algorithm: string; source: string };
  outcomes: { rules: { effect: string }[] }[];
}

describe('trace on a Cilium node says the backend selection and its source', () => {
  it("random, from the agent's status, in text and JSON", () => {
    const dir = 'snapshots/cilium-stale-backend';
    assert.match(readFileSync(join(dir, STATUS), 'utf8'), /Backend Selection:\s+Random/);
    // its words, however the text wraps them
    const text = kdebug(args(dir)).stdout.replace(/\s+/g, ' ');
    assert.match(
      text,
      /backend selection: random \(bpf-lb-algorithm, from the "Backend Selection" line of agent kube-system\/cilium-5xq2d's status\)/,
    );
    const w = JSON.parse(kdebug([...args(dir), '-o', 'json']).stdout) as Walk;
    assert.equal(w.selection?.algorithm, 'random');
    assert.match(w.selection!.source, /"Backend Selection" line/);
    for (const o of w.outcomes) assert.match(o.rules.at(-1)!.effect, /by random selection$/);
  });

  it('maglev where the status says Maglev', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-selection-'));
    dirs.push(dir);
    cpSync('snapshots/cilium-stale-backend', dir, { recursive: true });
    const status = readFileSync(join(dir, STATUS), 'utf8');
    writeFileSync(join(dir, STATUS), status.replace(/(Backend Selection:\s+)Random/, '$1Maglev'));
    const w = JSON.parse(kdebug([...args(dir), '-o', 'json']).stdout) as Walk;
    assert.equal(w.selection?.algorithm, 'maglev');
    for (const o of w.outcomes) assert.match(o.rules.at(-1)!.effect, /by maglev selection$/);
  });
});
