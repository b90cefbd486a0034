// kube-proxy where it is not a plain DaemonSet Pod, end to end through the CLI on two scenario
// snapshots (test/fixtures/distributions/, README.md there names each file's source; issue 38):
// k3s runs kube-proxy inside its own process (no kube-proxy Pod, its /metrics on the node's
// 10249, its version the kubelet's "+k3s1"); EKS runs it as a DaemonSet whose image has no shell,
// read through its Pods. Each: kdebug says which kind it found and the version with its source,
// expect is the rules that kube-proxy wrote and drift finds nothing.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnosisCommands, nodeBasics } from '../../src/cluster/collect/node-plan.js';
import { nodeArgv, UnsupportedCommandError } from '../../src/cluster/nodes/commands.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { diagnose } from '../../src/core/diagnose.js';
import { redactFacts } from '../../src/core/redact/redact.js';
import type { NodeCommand } from '../../src/cluster/cluster.js';
import { kdebug, ROOT } from '../support/cli.js';
import { differences } from '../support/cluster/truth.js';
import { allModes } from '../support/modes.js';

const K3S = join(ROOT, 'test/fixtures/distributions/k3s');
const EKS = join(ROOT, 'test/fixtures/distributions/eks');
const EKS_NODES = readdirSync(join(EKS, 'nodes'));
const TARGET = { namespace: 'matrix', service: 'cluster-ip' };
const EKS_IMAGE = '602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.33.13-eksbuild.2';

const work = mkdtempSync(join(tmpdir(), 'kdebug-distributions-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Finding {
  id: string;
  status: string;
  title: string;
  explanation: string;
  evidence: { kind: string; text: string; source?: string }[];
}
interface Report {
  status: string;
  steps: { id: string; status: string; findings: Finding[] }[];
}

function svcJson(dir: string): Report {
  const r = kdebug(['svc', '--snapshot', dir, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Report;
}

const findings = (report: Report) => report.steps.flatMap((s) => s.findings);
const found = (report: Report, id: string) =>
  findings(report).find((f) => f.id === id) ?? assert.fail(`no ${id} finding`);

/** expect of each node, as the CLI writes it, compared with the rules that node recorded. */
function expectIsRecorded(dir: string): void {
  for (const node of readdirSync(join(dir, 'nodes'))) {
    const r = kdebug(['expect', '--snapshot', dir, '--node', node]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# kdebug expect: the rules kube-proxy v1\.33 writes in iptables mode/);
    const saved = readFileSync(join(dir, 'nodes', node, 'iptables-save.txt'), 'utf8');
    assert.deepEqual(differences(r.stdout, saved), [], `${node}: expect`);
  }
}

/** drift on every node: compared as kube-proxy v1.33 writes, nothing found. */
function driftIsClean(dir: string): void {
  const r = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const nodes = (
    JSON.parse(r.stdout) as {
      nodes: { node: string; drift: boolean; counts: { error: number; warning: number } }[];
    }
  ).nodes;
  assert.equal(nodes.length, readdirSync(join(dir, 'nodes')).length);
  for (const n of nodes) {
    assert.equal(n.drift, false, n.node);
    assert.deepEqual([n.counts.error, n.counts.warning], [0, 0], n.node);
  }
}

describe('k3s: kube-proxy inside the k3s process', () => {
  it('svc names kube-proxy embedded in k3s, with its version from its /metrics, never "not running"', () => {
    const report = svcJson(K3S);
    assert.equal(report.status, 'pass');
    const embedded = found(report, 'kube-proxy-embedded');
    assert.equal(embedded.status, 'pass');
    assert.equal(embedded.title, 'kube-proxy runs inside k3s on 2 nodes, not as a Pod');
    assert.deepEqual(
      embedded.evidence.map((e) => [e.kind, e.text, e.source]),
      ['node-a', 'node-b'].map((n) => [
        'observed',
        `kube-proxy v1.33.13 on ${n}, from its /metrics`,
        `nodes/${n}/proxy-metrics.txt`,
      ]),
    );
    const ids = findings(report).map((f) => f.id);
    assert.ok(!ids.includes('kube-proxy-not-running'), ids.join(' '));
    assert.ok(!ids.includes('kube-proxy-outside-pod'), ids.join(' '));
    // the Rules step compared the Service's rules as that release writes them
    assert.equal(report.steps.find((s) => s.id === 'rules')?.status, 'pass');
    assert.equal(found(report, 'rules-match').status, 'pass');
  });

  it('the text says the same, and kube-proxy not running nowhere', () => {
    const r = kdebug(['svc', '--snapshot', K3S], { env: { COLUMNS: '2000' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /kube-proxy runs inside k3s on 2 nodes, not as a Pod/);
    assert.doesNotMatch(r.stdout, /kube-proxy not running|no kube-proxy Pod on/);
  });

  it('with no /metrics read, the version is the kubelet version "+k3s1", its source named', () => {
    const dir = join(work, 'k3s-no-metrics');
    cpSync(K3S, dir, { recursive: true });
    for (const n of ['node-a', 'node-b']) rmSync(join(dir, 'nodes', n, 'proxy-metrics.txt'));
    const embedded = found(svcJson(dir), 'kube-proxy-embedded');
    assert.deepEqual(
      embedded.evidence.map((e) => [e.kind, e.text]),
      ['node-a', 'node-b'].map((n) => [
        'read',
        `kube-proxy v1.33.13 on ${n}, from the kubelet version v1.33.13+k3s1 of Node ${n} (k3s runs kube-proxy inside its own process)`,
      ]),
    );
    // the release read is the one the rules are compared as
    expectIsRecorded(dir);
  });

  it("no kube-proxy configuration in the API: the masquerade note says k3s's flags are where it is", () => {
    const masq = found(svcJson(K3S), 'masquerade-differs');
    assert.equal(masq.status, 'pass');
    assert.match(
      masq.explanation,
      /k3s runs kube-proxy inside its own process: its flags come from k3s's configuration on the node/,
    );
    assert.doesNotMatch(masq.explanation, /EKS's kube-proxy-config/);
    // and what to do points at k3s's configuration, never at ConfigMaps kube-system does not hold
    const drift = JSON.parse(
      kdebug(['drift', '--snapshot', K3S, '--node', 'node-a', '-o', 'json']).stdout,
    );
    const note = drift.notes.find((f: { id: string }) => f.id === 'masquerade-differs');
    assert.match(note.advice, /^k3s gives kube-proxy its flags from its own configuration/);
    assert.equal(note.next, null);
  });

  it('expect is the rules kube-proxy v1.33.13 wrote; drift finds nothing', () => {
    expectIsRecorded(K3S);
    driftIsClean(K3S);
  });
});

describe("EKS: kube-proxy's DaemonSet of an image with no shell", () => {
  it("svc: kube-proxy's Pods running, the version from the image tag v1.33.13-eksbuild.2, its source named", () => {
    const report = svcJson(EKS);
    assert.equal(report.status, 'pass');
    assert.equal(found(report, 'kube-proxy-running').status, 'pass');
    const version = found(report, 'kube-proxy-version');
    assert.equal(version.title, 'kube-proxy v1.33.13 on 2 nodes');
    const pods = { [EKS_NODES[0]!]: 'kube-proxy-95zgc', [EKS_NODES[1]!]: 'kube-proxy-t9j8h' };
    assert.deepEqual(
      version.evidence.map((e) => [e.kind, e.text]),
      EKS_NODES.map((n) => [
        'read',
        `kube-proxy v1.33.13 on ${n}, from the image ${EKS_IMAGE} of Pod ${pods[n]}`,
      ]),
    );
    assert.ok(!findings(report).some((f) => f.id === 'kube-proxy-embedded'));
  });

  it('expect reads EKS\'s kube-proxy-config (clusterCIDR ""), is the rules that release wrote; drift finds nothing', () => {
    const r = kdebug(['expect', '--snapshot', EKS, '--node', EKS_NODES[0]!], {
      env: { COLUMNS: '2000' },
    });
    assert.match(
      r.stdout,
      /^# note: kube-proxy has no clusterCIDR: no masquerade rule for cluster IP traffic$/m,
    );
    expectIsRecorded(EKS);
    driftIsClean(EKS);
  });

  it('the reads planned through the kube-proxy Pod need no shell in its image', async () => {
    const facts = await readSnapshot(EKS);
    const analysis = new Analysis(facts, { code: allModes });
    const plans: NodeCommand[][] = [
      nodeBasics(facts),
      nodeBasics(facts, { byService: true }),
      diagnosisCommands(facts, TARGET, false, analysis),
      diagnosisCommands(facts, TARGET, true, analysis),
    ];
    const shells = /^(\/(usr\/)?bin\/)?(sh|bash|ash|dash|busybox)$/;
    const ran = new Set<string>();
    for (const c of plans.flat()) {
      let argv: string[];
      try {
        argv = nodeArgv(c, { kind: 'kube-proxy-pod' });
      } catch (e) {
        // refused there (probes, HTTP reads): they go through a debug Pod or SSH, never a shell
        assert.ok(e instanceof UnsupportedCommandError, String(e));
        continue;
      }
      assert.doesNotMatch(argv[0]!, shells, `${c.kind}: ${argv.join(' ')}`);
      ran.add(argv[0]!);
    }
    // the rules are read there, each tool exec'd bare
    assert.ok(ran.has('iptables-save'), [...ran].join(' '));
    assert.ok(ran.has('iptables-nft-save'), [...ran].join(' '));
  });
});

describe('redacted as snapshot save redacts, each scenario reads the same', () => {
  for (const dir of [K3S, EKS])
    it(dir.split('/').pop()!, async () => {
      const facts = await readSnapshot(dir);
      /** Each node's kube-proxy kind, version and configuration, and the diagnosis. */
      const read = (f: typeof facts) => {
        const analysis = new Analysis(f, { code: allModes });
        return {
          nodes: readdirSync(join(dir, 'nodes')).map((n) => {
            const s = analysis.state(n);
            return [n, s.embeddedIn, s.version?.value.text, s.version?.source, s.config.value];
          }),
          steps: diagnose(f, TARGET, { code: allModes }).steps,
        };
      };
      const original = read(facts);
      assert.ok(original.nodes.every(([, , version]) => version === 'v1.33.13'));
      assert.deepEqual(read(redactFacts(facts).facts), original);
    });
});
