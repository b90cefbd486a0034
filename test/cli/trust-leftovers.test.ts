// Issue 31's leftovers, end to end on copies of bundled snapshots changed by hand: each case runs
// the built CLI and asserts the step's mark, its line, the evidence kind behind it and the exit.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug, ROOT, type CliResult } from '../support/cli.js';
import { clusterIpObjects, labListing } from '../support/nft-lab.js';

const WIDE = { COLUMNS: '200' };

interface FindingJson {
  id: string;
  status: string;
  title: string;
  explanation: string;
  node?: string;
  evidence: { kind: string; text: string; node?: string }[];
}
interface ReportJson {
  steps: { id: string; status: string; findings: FindingJson[] }[];
}

/** Runs `test` on a copy of bundled snapshot `name` whose files `edit` changed. */
function withCopy(name: string, edit: (dir: string) => void, test: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-leftover-'));
  try {
    cpSync(join(ROOT, 'snapshots', name), dir, { recursive: true });
    edit(dir);
    test(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Rewrites one text file of the copy. */
function rewrite(dir: string, file: string, change: (text: string) => string): void {
  const path = join(dir, file);
  writeFileSync(path, change(readFileSync(path, 'utf8')));
}

/** The mark and the line of one step (its continuation lines joined), as text prints it. */
function stepLine(r: CliResult, title: string): { mark: string; line: string } {
  const lines = r.stdout.split('\n');
  const at = lines.findIndex((l) => new RegExp(`^ \\S +\\d+ ${title} {2,}`).test(l));
  assert.ok(at >= 0, `no ${title} step in:\n${r.stdout}${r.stderr}`);
  const m = /^ (\S) +\d+ \S+(?: \S+)*? {2,}(.*)$/.exec(lines[at]!)!;
  const more = [];
  for (let i = at + 1; i < lines.length && /^ {22}\S/.test(lines[i]!); i++)
    more.push(lines[i]!.trim());
  return { mark: m[1]!, line: [m[2]!, ...more].join(' ') };
}

const json = (r: CliResult) => JSON.parse(r.stdout) as ReportJson;
const findings = (r: CliResult, step: string, id: string) =>
  json(r)
    .steps.find((s) => s.id === step)!
    .findings.filter((f) => f.id === id);

describe("a node whose dump is cut short: the step line says why it was not compared, or where it's explained", () => {
  it('says --verbose explains, and --verbose, JSON and the evidence kind carry the reader’s reason', () =>
    withCopy(
      'nginx-svc',
      (dir) =>
        rewrite(dir, 'nodes/vm-12-11-centos/iptables-save.txt', (t) => {
          const lines = t.split('\n');
          return lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n';
        }),
      (dir) => {
        const text = kdebug(['svc', '--snapshot', dir, '--no-color'], { env: WIDE });
        assert.equal(text.code, 0, text.stderr);
        const rules = stepLine(text, 'Rules');
        assert.equal(rules.mark, '◐');
        assert.match(rules.line, /vm-12-11-centos: rules not compared \(--verbose explains\)$/);
        const verbose = kdebug(['svc', '--snapshot', dir, '--no-color', '--verbose'], {
          env: WIDE,
        });
        assert.match(verbose.stdout, /vm-12-11-centos: rules not compared\n/);
        assert.doesNotMatch(verbose.stdout, /rules not compared \(--verbose/);
        const reason = /the dump looks cut short after line \d+: table nat has no COMMIT/;
        assert.match(verbose.stdout.replace(/\n +/g, ' '), reason);
        const out = kdebug(['svc', '--snapshot', dir, '-o', 'json']);
        assert.equal(out.code, 0);
        const [skip] = findings(out, 'rules', 'rules-not-checked');
        assert.equal(skip?.status, 'skip');
        assert.match(skip.explanation, reason);
        assert.deepEqual(
          skip.evidence.map((e) => e.kind),
          ['not-observed'],
        );
      },
    ));
});

// before: "✓ 8 Reachability  ClusterIP 10.96.33.216:80 answers from node-a (on node-a for the node
// itself only: …)", a pass for Pods whose connections the node never translates
describe("an nftables node whose nat-prerouting lacks its jump to services: Reachability is Rules' symptom", () => {
  it("the node's own probe answers (observed), Pods' connections are not translated: a warning pointing at Rules", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-leftover-'));
    try {
      // node-a's table as the real kube-proxy v1.37.2 wrote it, its "jump services" deleted, and
      // the node's own TCP probe of the ClusterIP recorded as answered (nc's words)
      mkdirSync(join(dir, 'nodes/node-a'), { recursive: true });
      const node = (file: string, text: string) =>
        writeFileSync(join(dir, 'nodes/node-a', file), text);
      node('proxy-mode.txt', 'nftables');
      node('nft-ip-kube-proxy-text.txt', labListing('jump services', '').text);
      node(
        'tcp-connect_10.96.33.216_80.txt',
        'Connection to 10.96.33.216 80 port [tcp/http] succeeded!\nkdebug-probe tcp-connect tool=nc exit=0\n',
      );
      const client = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'client', namespace: 'matrix' },
        spec: { nodeName: 'node-a', containers: [{ name: 'c' }] },
        status: { phase: 'Running', podIP: '10.244.1.9', podIPs: [{ ip: '10.244.1.9' }] },
      };
      const items = [...clusterIpObjects(['10.244.1.4', '10.244.2.2']), client];
      writeFileSync(join(dir, 'objects.json'), JSON.stringify({ kind: 'List', items }));
      writeFileSync(
        join(dir, 'meta.json'),
        JSON.stringify({ namespace: 'matrix', service: 'cluster-ip' }),
      );
      const text = kdebug(['svc', '--snapshot', dir, '--no-color'], { env: WIDE });
      assert.equal(text.code, 1, text.stderr);
      assert.equal(stepLine(text, 'Rules').mark, '✗');
      const reach = stepLine(text, 'Reachability');
      assert.equal(reach.mark, '!');
      assert.equal(
        reach.line,
        "ClusterIP 10.96.33.216:80: Pods' connections on node-a are not translated (chain nat-prerouting does not jump to chain services); the node's own probe answers",
      );
      assert.match(
        text.stdout.replace(/\s+/g, ' '),
        /through the prerouting hook, where chain nat-prerouting does not jump to chain services: .* This follows from entry-jump-missing \(Rules\): fix that first\./,
      );
      const out = kdebug(['svc', '--snapshot', dir, '-o', 'json']);
      assert.equal(out.code, 1);
      assert.ok(!findings(out, 'reachability', 'clusterip-reachable').length, 'no pass for node-a');
      const [f] = findings(out, 'reachability', 'clusterip-unreachable');
      assert.equal(f?.status, 'warn');
      assert.deepEqual(
        f.evidence.map((e) => e.kind),
        ['observed', 'observed', 'computed'],
      );
      assert.equal(f.evidence[0]!.text, 'node-a: TCP connect 10.96.33.216:80: connected');
      assert.match(f.evidence[2]!.text, /^on node-a, tcp 10\.244\.1\.9 -> 10\.96\.33\.216:80: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
