// IPVS, Cilium and nftables drift quote the node's lines as "FILE:LINE: TEXT" (issue 35); the
// Rules step (svc text and JSON) and the Drift screen show them as the difference, as iptables'
// lines are: a stale line is "+", the line it sits under plain, never a bare "actual:" (issue 32).
// The bundled demo snapshots, and node-a's nft lab table with one endpoint gone.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { analyze } from '../../src/tui/data.js';
import { driftLines } from '../../src/tui/screens/Drift.js';
import { kdebug } from '../support/cli.js';
import { allModes } from '../support/modes.js';
import { clusterIpObjects, NODE_A_TABLE } from '../support/nft-lab.js';

interface Evidence {
  kind: string;
  text: string;
  diff?: string;
}
interface Doc {
  steps: { findings: { id: string; evidence: Evidence[] }[] }[];
}

/** The line of `dir`'s `file` holding `part`, as a finding quotes it: "FILE:LINE: TEXT". */
function quoted(dir: string, file: string, part: RegExp): string {
  const lines = readFileSync(join(dir, file), 'utf8').split('\n');
  const i = lines.findIndex((l) => part.test(l));
  assert.ok(i >= 0, `${file} holds ${part}`);
  return `${file}:${i + 1}: ${lines[i]!.trim().replace(/\s+/g, ' ')}`;
}

/** The Rules step's evidence of finding `id`, from svc -o json. */
function evidenceOf(args: string[], id: string): Evidence[] {
  const r = kdebug(['svc', ...args, '-o', 'json']);
  const doc = JSON.parse(r.stdout) as Doc;
  const f = doc.steps.flatMap((s) => s.findings).find((x) => x.id === id);
  assert.ok(f, `${id} in ${r.stdout.slice(0, 400)}`);
  return f.evidence;
}

/** The Drift screen's lines of node `node` in `dir`, trimmed. */
async function screenLines(dir: string, node: string): Promise<string[]> {
  const data = analyze({ facts: await readSnapshot(dir), code: allModes });
  const drift = data.nodes.find((n) => n.name === node)!.drift();
  assert.ok('findings' in drift, JSON.stringify(drift));
  return driftLines(drift.findings, 1000).map((l) => l.text.trim());
}

const IPVS = 'snapshots/ipvs-stale-real-server';
const CILIUM = 'snapshots/cilium-stale-backend';
const NODE = 'vm-12-11-centos';

describe("drift's quoted node lines are a difference, in every mode", () => {
  it('IPVS: the stale real server is +, the virtual server a missing one sits under is plain', async () => {
    const file = `nodes/${NODE}/ipvsadm-save.txt`;
    const stale = quoted(IPVS, file, /^-a -t 10\.1\.190\.219:8080 -r 10\.244\.1\.7:80 /);
    const server = quoted(IPVS, file, /^-A -t 10\.1\.190\.219:8080 /);
    const seen = (id: string) =>
      evidenceOf(['--snapshot', IPVS], id)
        .filter((e) => e.kind === 'observed')
        .map((e) => [e.diff, e.text]);
    assert.deepEqual(seen('endpoint-stale'), [['unexpected', stale]]);
    assert.deepEqual(seen('endpoint-missing'), [['same', server]]);
    const text = kdebug(['svc', '--snapshot', IPVS, '-o', 'text'], { env: { COLUMNS: '400' } });
    const lines = text.stdout.split('\n').map((l) => l.trim());
    assert.ok(lines.includes(`+ ${stale}`), text.stdout);
    assert.ok(!lines.some((l) => l.startsWith(`actual: ${file}`)), 'no bare actual: line');
    const screen = await screenLines(IPVS, NODE);
    assert.ok(screen.includes(`+ ${stale}`), screen.join('\n'));
    assert.ok(screen.includes(server), 'the virtual server is plain, unmarked');
  });

  it("Cilium: the stale backend is +, the frontend a missing backend's sits under is plain", async () => {
    const file = `nodes/${NODE}/cilium-frontends.txt`;
    // the frontend's row, which lists the stale backend: quoted at its line, as the backend
    const row = quoted(CILIUM, file, /10\.244\.1\.7:80\/TCP/);
    const at = `${row.slice(0, row.indexOf(': '))}: 10.244.1.7:80/TCP`;
    const evidence = evidenceOf(['--snapshot', CILIUM], 'cilium-backend-stale');
    const theLine = evidence.filter((e) => e.kind === 'observed' && e.text.startsWith(`${file}:`));
    assert.deepEqual(
      theLine.map((e) => [e.diff, e.text.startsWith(at)]),
      [['unexpected', true]],
      JSON.stringify(evidence),
    );
    const missing = evidenceOf(['--snapshot', CILIUM], 'cilium-backend-missing');
    assert.deepEqual(
      missing.filter((e) => e.kind === 'observed').map((e) => e.diff),
      ['same'],
    );
    const screen = await screenLines(CILIUM, NODE);
    assert.ok(
      screen.some((l) => l.startsWith(`+ ${at}`)),
      screen.join('\n'),
    );
  });

  describe('nftables', () => {
    const SOURCE = 'nodes/node-a/nft-ip-kube-proxy-text.txt';
    const CHAIN = 'service-FN4G4LLS-matrix/cluster-ip/tcp/http';
    let dir = '';
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'kdebug-quoted-'));
      cpSync(`${NODE_A_TABLE}.txt`, join(dir, SOURCE));
      writeFileSync(join(dir, 'nodes/node-a/proxy-mode.txt'), 'nftables');
      writeFileSync(
        join(dir, 'objects.json'),
        JSON.stringify({ apiVersion: 'v1', kind: 'List', items: clusterIpObjects(['10.244.1.4']) }),
      );
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('the rule that still sends to the stale endpoint is +', async () => {
      // the Service chain's DNAT, the line after its chain's opening
      const lines = readFileSync(join(dir, SOURCE), 'utf8').split('\n');
      const chain = lines.indexOf(`\tchain ${CHAIN} {`);
      assert.ok(chain >= 0, `the fixture has ${CHAIN}`);
      const rule = `${SOURCE}:${chain + 2}: ${lines[chain + 1]!.trim()}`;
      assert.match(rule, /numgen random mod 2 map \{ .*10\.244\.2\.2/);
      const evidence = evidenceOf(
        ['cluster-ip', '-n', 'matrix', '--snapshot', dir],
        'endpoint-stale',
      );
      assert.deepEqual(
        evidence.filter((e) => e.kind === 'observed').map((e) => [e.diff, e.text]),
        [['unexpected', rule]],
      );
      const screen = await screenLines(dir, 'node-a');
      assert.ok(screen.includes(`+ ${rule}`), screen.join('\n'));
    });
  });
});
