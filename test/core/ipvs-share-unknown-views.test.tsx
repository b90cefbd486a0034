// An IPVS real server whose share the listing cannot fix (here a scheduler that picks by
// connections) shows "?" in the Rules screen and in svc's evidence, never a percentage; rr's shares
// still show.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { analyze } from '../../src/tui/data.js';
import { Rules, rulesModel } from '../../src/tui/screens/Rules.js';
import { initialState } from '../../src/tui/state.js';
import { frame, renderPlain } from '../tui/harness.js';
import { kdebug } from '../support/cli.js';
import { allModes } from '../support/modes.js';

const SNAPSHOT = new URL('../../snapshots/ipvs-stale-real-server', import.meta.url).pathname;
const NODE = 'vm-12-7-centos';
const VS = '10.1.190.219:8080';

/** The Rules screen's rows of the node's real servers of VS, its virtual server given `scheduler`. */
async function realServerRows(scheduler: string): Promise<string[]> {
  const facts = await readSnapshot(SNAPSHOT);
  const node = facts.nodes[NODE]!;
  node['ipvsadm-save'] = node['ipvsadm-save']!.replace(
    `-A -t ${VS} -s rr`,
    `-A -t ${VS} -s ${scheduler}`,
  );
  const nodes = analyze({ facts, code: allModes }).nodes.filter((n) => n.name === NODE);
  const state = initialState('rules');
  const open = Object.fromEntries(
    rulesModel(state, nodes, undefined, 160, 60).rows.map((r) => [r.key, true]),
  );
  const opened = { ...state, open };
  const r = renderPlain(
    <Rules model={rulesModel(opened, nodes, undefined, 160, 60)} state={opened} />,
  );
  const f = frame(r);
  r.unmount();
  return f.split('\n').filter((l) => /10\.244\.(0\.3|1\.8):80\b/.test(l));
}

describe('an IPVS share not known, in the Rules screen', () => {
  it('lc: each real server "?", no percentage', async () => {
    const rows = await realServerRows('lc');
    assert.equal(rows.length, 2, rows.join('\n'));
    for (const row of rows) {
      assert.match(row, /\?\s+10\.244/, row);
      assert.doesNotMatch(row, /%/, row);
    }
  });

  it('rr: 50% each', async () => {
    const rows = await realServerRows('rr');
    assert.equal(rows.length, 2, rows.join('\n'));
    for (const row of rows) assert.match(row, /50(\.0)?%\s+10\.244/, row);
  });
});

describe("an IPVS share not known, in svc's evidence", () => {
  it('lc: "? -> real server", no percentage', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-lc-'));
    try {
      cpSync(SNAPSHOT, dir, { recursive: true });
      const file = join(dir, 'nodes', NODE, 'ipvsadm-save.txt');
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace(`-A -t ${VS} -s rr`, `-A -t ${VS} -s lc`),
      );
      const r = kdebug(['svc', 'default/nginx-svc', '--snapshot', dir, '-v']);
      const rows = r.stdout
        .split('\n')
        .filter((l) => /-> 10\.244\.(0\.3|1\.8):80 \(TCP 10\.1\.190\.219:8080\)/.test(l));
      assert.ok(rows.length > 0, r.stdout);
      for (const row of rows) assert.match(row, /^\s+\? -> /, row);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
