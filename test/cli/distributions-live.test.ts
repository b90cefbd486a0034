// The k3s- and EKS-shaped scenarios (test/fixtures/distributions/) served live by the fake API
// server: kdebug reads each node the way that distribution allows (issue 38). k3s has no
// kube-proxy Pod to exec in: --via auto falls through to a debug Pod, which reads the rules and
// kube-proxy's /metrics on the node's 10249. EKS's kube-proxy image has no shell: --via
// kube-proxy execs each read bare in its Pods, never a shell. The exec handler answers from the
// fixture's recorded outputs by the command asked, and refuses what the image would not have.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { kdebugAsync } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import type { ExecOutput, ExecRequest } from '../support/fake-api/exec.js';

interface Finding {
  id: string;
  status: string;
  title: string;
  evidence: { kind: string; text: string; source?: string }[];
}
interface Report {
  status: string;
  steps: { id: string; status: string; findings: Finding[] }[];
}

const SHELL = /^(\/(usr\/)?bin\/)?(sh|bash|ash|dash|busybox)$/;
const nodeOf = (req: ExecRequest) => (req.pod['spec'] as { nodeName?: string }).nodeName ?? '';

/** The recorded output of a read, by its binary and arguments (wherever it runs), or undefined. */
function recorded(facts: Facts, node: string, argv: string[]): string | undefined {
  const outputs = facts.nodes[node] ?? {};
  const words = argv.join(' ');
  if (/(^|\/)iptables-nft-save -t nat$/.test(words)) return outputs['iptables-nft-save-nat'];
  if (/(^|\/)iptables-save$/.test(words)) return outputs['iptables-save'];
  if (/(^| )cat \/proc\/net\/ip_tables_names$/.test(words)) return outputs['ip_tables_names'];
  // the probe script's HTTP read: its URL is the last argument
  const url = argv.at(-1) ?? '';
  if (argv.includes('-c') && url.endsWith(':10249/proxyMode')) return outputs['proxy-mode'];
  if (argv.includes('-c') && url.endsWith(':10249/metrics')) return outputs['proxy-metrics'];
  return undefined;
}

const findings = (r: Report) => r.steps.flatMap((s) => s.findings);
const found = (r: Report, id: string) =>
  findings(r).find((f) => f.id === id) ?? assert.fail(`no ${id} finding`);

describe('k3s live: no kube-proxy Pod, the nodes read through a debug Pod', () => {
  let facts: Facts;
  let fake: FakeApi;
  const execs: { pod: string; argv: string[] }[] = [];
  before(async () => {
    facts = await readSnapshot('test/fixtures/distributions/k3s');
    fake = await startFakeApi({
      objects: facts.objects,
      exec: (req): ExecOutput => {
        execs.push({ pod: req.pod.metadata?.name ?? '', argv: req.command });
        const out = recorded(facts, nodeOf(req), req.command);
        return out === undefined
          ? { stderr: 'not recorded', exitCode: 1 }
          : { stdout: out, exitCode: 0 };
      },
    });
  });
  after(() => fake.close());

  it('svc --via auto: kube-proxy embedded in k3s, its version from /metrics read on the node', async () => {
    const r = await kdebugAsync([
      'svc',
      'cluster-ip',
      '-n',
      'matrix',
      '--kubeconfig',
      fake.kubeconfig({ namespace: 'default' }),
      '--via',
      'auto',
      '--yes',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    // no kube-proxy Pod: every read ran in kdebug's debug Pods
    assert.ok(execs.length > 0);
    assert.ok(
      execs.every((e) => !e.pod.startsWith('kube-proxy-')),
      execs.map((e) => e.pod).join(' '),
    );
    assert.equal(found(report, 'kube-proxy-embedded').status, 'pass');
    assert.deepEqual(
      found(report, 'kube-proxy-embedded').evidence.map((e) => [e.kind, e.text]),
      ['node-a', 'node-b'].map((n) => [
        'observed',
        `kube-proxy v1.33.13 on ${n}, from its /metrics`,
      ]),
    );
    assert.ok(!findings(report).some((f) => f.id === 'kube-proxy-not-running'));
    assert.equal(found(report, 'rules-match').status, 'pass');
  });
});

describe('EKS live: reads exec bare in the kube-proxy Pods, whose image has no shell', () => {
  let facts: Facts;
  let fake: FakeApi;
  const execs: { pod: string; argv: string[] }[] = [];
  before(async () => {
    facts = await readSnapshot('test/fixtures/distributions/eks');
    fake = await startFakeApi({
      objects: facts.objects,
      exec: (req): ExecOutput => {
        execs.push({ pod: req.pod.metadata?.name ?? '', argv: req.command });
        // the image has no shell: a shell asked for is not found, as the runtime answers
        if (SHELL.test(req.command[0] ?? ''))
          return {
            stderr: `exec: "${req.command[0]}": executable file not found in $PATH`,
            exitCode: 127,
          };
        const out = recorded(facts, nodeOf(req), req.command);
        return out === undefined
          ? { stderr: 'not recorded', exitCode: 1 }
          : { stdout: out, exitCode: 0 };
      },
    });
  });
  after(() => fake.close());

  it('svc --via kube-proxy: the rules read with no shell, the version from the image tag', async () => {
    const r = await kdebugAsync([
      'svc',
      'cluster-ip',
      '-n',
      'matrix',
      '--kubeconfig',
      fake.kubeconfig({ namespace: 'default' }),
      '--via',
      'kube-proxy',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.ok(execs.length > 0);
    for (const e of execs) {
      assert.match(e.pod, /^kube-proxy-/);
      assert.doesNotMatch(e.argv[0]!, SHELL, e.argv.join(' '));
    }
    assert.ok(execs.some((e) => e.argv.join(' ') === 'iptables-save'));
    assert.equal(found(report, 'kube-proxy-running').status, 'pass');
    assert.match(
      found(report, 'kube-proxy-version').evidence[0]!.text,
      /^kube-proxy v1\.33\.13 on ip-192-0-2-21\.us-west-2\.compute\.internal, from the image 602401143452\.dkr\.ecr\.us-west-2\.amazonaws\.com\/eks\/kube-proxy:v1\.33\.13-eksbuild\.2 of Pod kube-proxy-95zgc$/,
    );
    assert.equal(found(report, 'rules-match').status, 'pass');
  });
});
