// Faults in the middle of a live run, against the fake API server serving the demo cluster and
// answering each debug Pod's commands with what the demo's nodes printed: the API server goes
// away after the Service was read, a node's exec stream drops mid-dump, a node command hangs, a
// debug Pod is deleted by someone else while in use. Each time the built CLI gives a complete
// report marked partial (JSON `partial`, `notRead` with what and why; text says it), exits 1 or
// 2 (2 when nothing failed: kdebug could not see everything), and leaves no debug Pod behind.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandStem, type NodeCommand } from '../../src/cluster/cluster.js';
import { diagnosisCommands } from '../../src/cluster/collect.js';
import { nodeArgv } from '../../src/cluster/nodes/commands.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts, Report } from '../../src/core/model.js';
import { kdebugAsync } from '../support/cli.js';
import type { ExecHandler, ExecOutput, ExecRequest } from '../support/fake-api/exec.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import { startFakeApi, type FakeApi, type FakeApiOptions } from '../support/fake-api/server.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { allModes } from '../support/modes.js';

const DEMO = 'snapshots/nginx-svc';
const TARGET = { namespace: 'default', service: 'nginx-svc' };
const NODE = 'vm-12-7-centos';
type Json = Report & { partial: boolean };

describe('faults in the middle of a live run (built CLI, fake API server)', () => {
  let served: Facts;
  const stems = new Map<string, string>();
  const fakes: FakeApi[] = [];
  before(async () => {
    served = JSON.parse(JSON.stringify(await readSnapshot(DEMO))) as Facts;
    const commands: NodeCommand[] = [
      ...diagnosisCommands(served, TARGET, false, new Analysis(served, { code: allModes })),
      // svc reads one Service's chains by name where a backend holds kube-proxy's chains alone:
      // the demo recorded whole dumps only, so those reads fail and the whole dumps are read
      ...diagnosisCommands(served, TARGET, true, new Analysis(served, { code: allModes })),
      { kind: 'iptables-save', backend: 'legacy' },
      { kind: 'iptables-save', backend: 'nft' },
    ];
    for (const c of commands)
      stems.set(JSON.stringify(nodeArgv(c, { kind: 'debug-pod' })), commandStem(c));
  });
  after(() => Promise.all(fakes.map((f) => f.close())));

  /** What the demo's node printed for this command, or "not recorded" (exit 1: a plain failure). */
  const replay = (req: ExecRequest): ExecOutput & { stem: string; node: string } => {
    const stem = stems.get(JSON.stringify(req.command)) ?? '?';
    const node = String((req.pod['spec'] as { nodeName?: string }).nodeName);
    const out = served.nodes[node]?.[stem];
    return out === undefined
      ? { stem, node, stderr: 'not recorded\n', exitCode: 1 }
      : { stem, node, stdout: out, exitCode: 0 };
  };

  const debugPods = (fake: FakeApi) =>
    fake.store
      .list(typeOfKind('Pod')!)
      .filter((p) => p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'kdebug')
      .map((p) => p.metadata?.name);

  async function run(
    options: FakeApiOptions,
    exec: (req: ExecRequest, fake: FakeApi) => ReturnType<ExecHandler>,
    extra: string[] = [],
  ) {
    const holder: { fake?: FakeApi } = {};
    const fake = await startFakeApi({
      objects: served.objects,
      exec: (req) => exec(req, holder.fake!),
      ...options,
    });
    holder.fake = fake;
    fakes.push(fake);
    const args = ['svc', 'nginx-svc', '--via', 'pod', '--yes', '--kubeconfig'];
    const kubeconfig = fake.kubeconfig({ namespace: 'default' });
    const json = await kdebugAsync([...args, kubeconfig, '-o', 'json', ...extra]);
    const text = await kdebugAsync([...args, kubeconfig, '-o', 'text', ...extra]);
    return { fake, json, doc: JSON.parse(json.stdout) as Json, text };
  }

  it('without a fault: the whole demo passes, nothing lost (the baseline)', async () => {
    const { fake, json, doc } = await run({}, replay);
    assert.deepEqual([json.code, doc.status, doc.partial, doc.notRead], [0, 'pass', false, []]);
    assert.deepEqual(debugPods(fake), []);
  });

  /** A partial report: what was lost is listed, the text says so, exit 1 or 2, no Pod left. */
  function partial(r: Awaited<ReturnType<typeof run>>, lost: RegExp[], code: 1 | 2): void {
    const { fake, json, doc, text } = r;
    const steps = doc.steps.map(
      (s) => `${s.id}:${s.status} ${s.findings.map((f) => `${f.id}:${f.status}`).join(' ')}`,
    );
    assert.equal(json.code, code, `${json.stderr}\n${steps.join('\n')}`);
    assert.equal(doc.partial, true);
    assert.equal(doc.steps.length, 10, 'a complete report');
    const said = doc.notRead.map((n) => `${n.what}: ${n.why}`);
    for (const l of lost)
      assert.ok(
        said.some((s) => l.test(s)),
        `${l} not in notRead:\n${said.join('\n')}`,
      );
    assert.equal(text.code, code);
    assert.match(
      text.stdout.replace(/\s+/g, ' '),
      /Partial: the run lost (one read|\d+ reads), so the steps hold for what was read only: /,
    );
    assert.deepEqual(debugPods(fake), []);
  }

  it('the API server goes away after the Service was read: the rest is listed as lost, why said', async () => {
    let serviceRead = false;
    const r = await run(
      {
        drop: (q) => {
          if (q.path === '/api/v1/namespaces/default/services/nginx-svc') {
            serviceRead = true;
            return false;
          }
          // the reads the Service's answer fans out to may be sent beside the Service read: the
          // two the assertions name are lost whichever arrives first
          return serviceRead || /\/(endpointslices|nodes)\b/.test(q.path);
        },
      },
      replay,
    );
    partial(
      r,
      [
        /^Nodes: cannot reach the API server at https:\/\/127\.0\.0\.1:\d+ \(context "fake"\): connection reset by the server \(ECONNRESET\)$/,
        /^EndpointSlices of default\/nginx-svc: cannot reach the API server/,
      ],
      2,
    );
    // every step that needed what was lost is not observed, none passes on it
    for (const id of ['endpoints', 'kube-proxy', 'rules', 'hairpin'])
      assert.equal(r.doc.steps.find((s) => s.id === id)!.status, 'skip', id);
  });

  it("a node's exec stream drops mid-dump: that node's rules are lost, the half dump is not read as rules", async () => {
    const r = await run({}, (req) => {
      const out = replay(req);
      if (out.node === NODE && out.stem === 'iptables-save')
        return { stdout: String(out.stdout).slice(0, 2000), drop: true, exitCode: 0 };
      return out;
    });
    partial(
      r,
      [
        new RegExp(`^iptables-save on node ${NODE}: .*exec stream closed without an exit status`),
        // the Pod's stream broke: what that node had still to run is lost with it
        new RegExp(`^ip-addr on node ${NODE}: `),
      ],
      2,
    );
    // the loss is the run's, not the node's: its rules are not observed, no warning about them
    const rules = r.doc.steps.find((s) => s.id === 'rules')!;
    assert.ok(
      rules.findings.some(
        (f) => f.id === 'rules-not-observed' && f.node === NODE && f.status === 'skip',
      ),
      JSON.stringify(rules.findings.map((f) => [f.id, f.node, f.status])),
    );
  });

  it('a node command hangs: it is stopped at --node-timeout and listed as lost', async () => {
    const r = await run(
      {},
      (req) => {
        const out = replay(req);
        return out.node === NODE && out.stem === 'ip-addr' ? new Promise(() => undefined) : out;
      },
      ['--node-timeout', '2'],
    );
    partial(r, [new RegExp(`^ip-addr on node ${NODE}: .*did not finish within 2s`)], 2);
  });

  it('a debug Pod is deleted by someone else while kdebug uses it: its commands are lost, said as such', async () => {
    const r = await run({}, (req, fake) => {
      const out = replay(req);
      if (out.node === NODE && out.stem === 'proxy-mode') {
        fake.store.remove(typeOfKind('Pod')!, req.namespace, req.pod.metadata!.name!);
        return { stdout: '', drop: true, exitCode: 0 };
      }
      return out;
    });
    partial(r, [/on node vm-12-7-centos: .*was deleted by someone else while kdebug used it/], 2);
  });

  it('snapshot save with a stream dropped mid-dump: a whole snapshot that records the loss, exit 2, and replays as partial', async () => {
    const fake = await startFakeApi({
      objects: served.objects,
      exec: (req) => {
        const out = replay(req);
        return out.node === NODE && out.stem === 'iptables-save'
          ? { stdout: String(out.stdout).slice(0, 2000), drop: true, exitCode: 0 }
          : out;
      },
    });
    fakes.push(fake);
    const tmp = mkdtempSync(join(tmpdir(), 'kdebug-faults-'));
    try {
      const dir = join(tmp, 'snap');
      const kubeconfig = fake.kubeconfig({ namespace: 'default' });
      const saved = await kdebugAsync([
        'snapshot',
        'save',
        dir,
        '--service',
        'nginx-svc',
        '--via',
        'pod',
        '--yes',
        '--kubeconfig',
        kubeconfig,
      ]);
      assert.equal(saved.code, 2, saved.stderr);
      assert.match(
        saved.stderr,
        new RegExp(
          `^kdebug: lost: iptables-save on node ${NODE}: .*exec stream closed without an exit status$`,
          'm',
        ),
      );
      assert.match(
        saved.stderr,
        /^kdebug: the snapshot is partial: \d+ reads were lost \(listed in meta\.json\); replaying it says so$/m,
      );
      assert.deepEqual(readdirSync(tmp), ['snap'], 'no temporary left');
      // the half dump was not kept as if it were the node's rules
      assert.equal(existsSync(join(dir, 'nodes', NODE, 'iptables-save.txt')), false);
      const replayed = await kdebugAsync(['svc', 'nginx-svc', '--snapshot', dir, '-o', 'json']);
      const doc = JSON.parse(replayed.stdout) as Json;
      assert.deepEqual([replayed.code, doc.partial], [2, true]);
      assert.ok(doc.notRead.some((n) => n.what === `iptables-save on node ${NODE}`));
      assert.deepEqual(debugPods(fake), []);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a node that answers in shell changes nothing: no command runs, only the fixed ones are sent, the report is inert', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'kdebug-hostile-node-'));
    const marker = join(tmp, 'pwned');
    const shell = `$(touch ${marker}) \`touch ${marker}\` ; touch ${marker} && echo; ${'\x1b]0;owned\x07'}\nroot@node:~# touch ${marker}\n`;
    const sent: string[][] = [];
    try {
      const r = await run({}, (req) => {
        sent.push(req.command);
        const out = replay(req);
        // the real output, with shell around every line (comments of rules included)
        return {
          ...out,
          stdout: String(out.stdout ?? '')
            .split('\n')
            .map((l) =>
              l.startsWith('-A ')
                ? `${l} -m comment --comment "${shell.replace(/"/g, '')}"`
                : `${shell}${l}`,
            )
            .join('\n'),
        };
      });
      assert.equal(existsSync(marker), false, 'nothing the node said was run');
      const fixed = new Set(stems.keys());
      assert.deepEqual(
        sent.map((a) => JSON.stringify(a)).filter((a) => !fixed.has(a)),
        [],
        'every command sent is on the closed list, unchanged',
      );
      // eslint-disable-next-line no-control-regex
      const raw = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;
      assert.ok(!raw.test(r.text.stdout.replace(/\n/g, '')), 'text is inert');
      assert.ok(!raw.test(r.json.stdout.replace(/\n/g, '')), 'JSON is inert');
      assert.deepEqual(debugPods(r.fake), []);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
