// Issue 31's leftovers, end to end on copies of bundled snapshots changed by hand: each case runs
// the built CLI and asserts the step's mark, its line, the evidence kind behind it and the exit.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug, ROOT, type CliResult } from '../support/cli.js';
import { clusterIpObjects, labListing, NODE_A_TABLE } from '../support/nft-lab.js';

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

describe('a node whose dump is cut short: the step line says why it was not compared', () => {
  it('says the reason on the line, and --verbose, JSON and the evidence kind carry the reader’s detail', () =>
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
        // the reason itself, where the dump was cut, not only a pointer to it
        const cutAt =
          /vm-12-11-centos: rules not compared: the dump looks cut short after line (\d+)/;
        const said = cutAt.exec(rules.line);
        assert.ok(said, rules.line);
        const verbose = kdebug(['svc', '--snapshot', dir, '--no-color', '--verbose'], {
          env: WIDE,
        });
        assert.match(verbose.stdout, new RegExp(`${cutAt.source}\n`));
        assert.doesNotMatch(verbose.stdout, /rules not compared[^\n]*\(--verbose/);
        const reason = new RegExp(
          `the dump looks cut short after line ${said[1]}: table nat has no COMMIT`,
        );
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

// before: the walk DNATed the packet by node port 30080 and said nothing of the API having taken
// that port away (exit 0): the node's rules walked as if they were the Service's
describe('trace by a node port the API removed but the node still holds: the API beside the node', () => {
  const trace = (dir: string, node: string, dst: string, ...more: string[]) =>
    kdebug(
      ['trace', '--snapshot', dir, '--node', node, '--src', '198.51.100.99', '--dst', dst, ...more],
      {
        env: WIDE,
      },
    );
  const flat = (r: CliResult) => r.stdout.replace(/\s+/g, ' ');

  it('iptables: a NodePort Service made ClusterIP in the API, kube-proxy not synced', () =>
    withCopy(
      'nodeport-local-no-endpoint',
      (dir) =>
        rewrite(dir, 'objects.json', (t) => {
          const list = JSON.parse(t) as {
            items: { kind: string; metadata: { name: string }; spec: Record<string, unknown> }[];
          };
          const svc = list.items.find(
            (o) => o.kind === 'Service' && o.metadata.name === 'nginx-svc',
          )!;
          svc.spec['type'] = 'ClusterIP';
          delete svc.spec['externalTrafficPolicy'];
          for (const p of svc.spec['ports'] as { nodePort?: number }[]) delete p.nodePort;
          return JSON.stringify(list);
        }),
      (dir) => {
        const r = trace(dir, 'vm-12-7-centos', '10.0.12.7:30080', '--no-color');
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          flat(r),
          /The node's rules are stale for this port: on node vm-12-7-centos, node port 30080\/tcp leads to default\/nginx-svc:http, but in the API default\/nginx-svc:http has no node port \(Service type ClusterIP\)\. kube-proxy has not applied that change there \(drift: entry-stale\)/,
        );
        assert.match(flat(r), /next: kdebug drift --node vm-12-7-centos --snapshot /);
        // the walk itself is still shown as the node's rules do it
        assert.match(flat(r), /100% DNAT to 10\.244\.0\.3:80/);
        const json = trace(dir, 'vm-12-7-centos', '10.0.12.7:30080', '-o', 'json');
        assert.equal(json.code, 1);
        assert.deepEqual((JSON.parse(json.stdout) as { notInApi: unknown }).notInApi, [
          {
            entry: 'node port 30080/tcp',
            servicePort: 'default/nginx-svc:http',
            api: 'default/nginx-svc:http has no node port (Service type ClusterIP)',
          },
        ]);
        // the bundled snapshot, whose API still has the node port: nothing said, exit 0
        const base = join(ROOT, 'snapshots', 'nodeport-local-no-endpoint');
        const ok = trace(base, 'vm-12-7-centos', '10.0.12.7:30080', '--no-color');
        assert.equal(ok.code, 0, ok.stderr);
        assert.doesNotMatch(ok.stdout, /stale for this port/);
      },
    ));

  it("nftables: service-nodeports' element for a node port the API moved to another", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-leftover-'));
    try {
      // node-a's table as the real kube-proxy v1.37.2 wrote it: tcp . 32548 goes to
      // matrix/node-port:http; the API has moved that Service port to node port 30555
      mkdirSync(join(dir, 'nodes/node-a'), { recursive: true });
      writeFileSync(join(dir, 'nodes/node-a/proxy-mode.txt'), 'nftables');
      writeFileSync(
        join(dir, 'nodes/node-a/nft-ip-kube-proxy-text.txt'),
        readFileSync(join(ROOT, NODE_A_TABLE + '.txt'), 'utf8'),
      );
      const [svc, slice, ...rest] = clusterIpObjects(['10.244.1.4', '10.244.2.2']);
      const moved = {
        ...svc!,
        metadata: { name: 'node-port', namespace: 'matrix' },
        spec: {
          type: 'NodePort',
          clusterIP: '10.96.242.192',
          clusterIPs: ['10.96.242.192'],
          ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80, nodePort: 30555 }],
        },
      };
      const endpoints = {
        ...slice!,
        metadata: {
          name: 'node-port-x',
          namespace: 'matrix',
          labels: { 'kubernetes.io/service-name': 'node-port' },
        },
      };
      writeFileSync(
        join(dir, 'objects.json'),
        JSON.stringify({ kind: 'List', items: [moved, endpoints, ...rest] }),
      );
      const r = trace(dir, 'node-a', '192.0.2.21:32548', '--no-color');
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        flat(r),
        /on node node-a, node port 32548\/tcp leads to matrix\/node-port:http, but in the API matrix\/node-port:http has node port 30555\./,
      );
      assert.match(flat(r), /next: kdebug drift --node node-a --snapshot /);
      // the API's own node port is not said stale
      const own = trace(dir, 'node-a', '192.0.2.21:31768', '--no-color');
      assert.doesNotMatch(own.stdout, /stale for this port/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
