// nftables drift's evidence shows the line it quotes, as IPVS's and Cilium's does: "FILE:LINE:
// TEXT", the rule as nft lists it, not the chain's name alone (issue 35, "Evidence shows its
// line"). A snapshot of node-a's lab table (support/nft-lab.ts) as nft lists it, and
// matrix/cluster-ip with one of its two endpoints gone: the Service chain's DNAT still sends half
// of its connections to 10.244.2.2.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';
import { clusterIpObjects, NODE_A_TABLE } from '../support/nft-lab.js';

const SOURCE = 'nodes/node-a/nft-ip-kube-proxy-text.txt';
const CHAIN = 'service-FN4G4LLS-matrix/cluster-ip/tcp/http';

describe('nftables drift quotes the line of the rule it found', () => {
  let dir = '';
  // the Service chain's DNAT, and its line, as the listing holds it
  let rule = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kdebug-nft-lines-'));
    cpSync(`${NODE_A_TABLE}.txt`, join(dir, SOURCE));
    writeFileSync(join(dir, 'nodes/node-a/proxy-mode.txt'), 'nftables');
    writeFileSync(
      join(dir, 'objects.json'),
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: clusterIpObjects(['10.244.1.4']) }),
    );
    const lines = readFileSync(join(dir, SOURCE), 'utf8').split('\n');
    const chain = lines.findIndex((l) => l.trim() === `chain ${CHAIN} {`);
    assert.ok(chain >= 0, `the fixture has ${CHAIN}`);
    rule = `${SOURCE}:${chain + 2}: ${lines[chain + 1]!.trim()}`;
    assert.match(
      rule,
      /:\d+: meta l4proto tcp dnat ip to numgen random mod 2 map \{ .*10\.244\.2\.2/,
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('drift -o json: the stale endpoint\'s actual is that rule, "FILE:LINE: TEXT"', () => {
    const r = kdebug(['drift', '--snapshot', dir, '--node', 'node-a', '-o', 'json']);
    assert.equal(r.code, 1, r.stderr);
    const doc = JSON.parse(r.stdout) as { findings: { id: string; actual: string[] }[] };
    assert.deepEqual(
      doc.findings.map((f) => [f.id, f.actual]),
      [['endpoint-stale', [rule]]],
    );
  });

  it('drift text: the rule under "on the node:"', () => {
    const r = kdebug(['drift', '--snapshot', dir, '--node', 'node-a'], {
      env: { COLUMNS: '400' },
    });
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stdout.split('\n');
    const on = lines.findIndex((l) => l.trim() === 'on the node:');
    assert.equal(lines[on + 1]!.trim(), rule);
  });

  it("svc: the Rules step's finding shows the rule as observed evidence, with its line", () => {
    const r = kdebug(['svc', 'cluster-ip', '-n', 'matrix', '--snapshot', dir, '-o', 'json']);
    const doc = JSON.parse(r.stdout) as {
      steps: {
        findings: {
          id: string;
          evidence: { kind: string; text: string; source?: string; line?: number }[];
        }[];
      }[];
    };
    const stale = doc.steps.flatMap((s) => s.findings).find((f) => f.id === 'endpoint-stale');
    assert.ok(stale, r.stdout);
    const seen = stale.evidence.filter((e) => e.kind === 'observed');
    assert.deepEqual(
      seen.map((e) => e.text.replace(/^actual: +/, '')),
      [rule],
    );
  });
});
