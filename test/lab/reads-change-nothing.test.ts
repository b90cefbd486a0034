// kdebug changes nothing on a node: after a whole `kdebug svc` through each transport (exec in the
// kube-proxy Pod, a debug Pod, SSH as root and as a sudoer), every lab node's iptables tables
// (both backends, both families), nft ruleset, kernel lists of legacy tables, /proc/net and net
// sysctls, and the host's loaded modules, are byte for byte what they were (traffic aside: see
// test/support/lab/node-state.ts). The nodes cover each case of the legacy read: node-a has
// kube-proxy's chains in both backends (legacy's nat table exists and is read), node-b has no
// legacy table at all (and must still have none: `iptables-legacy-save -t nat` would make one),
// node-c keeps its rules in legacy only.
// IP conventions: test/support/lab/lab.ts (nodes 192.0.2.11-13, Services 10.96.0.0/16).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { relayApi, type ApiRelay } from '../support/lab/api-relay.js';
import { labSuite, requireLab } from '../support/lab/harness.js';
import { labExec } from '../support/lab/lab-exec.js';
import { LAB_USERS, Lab, type Exec } from '../support/lab/lab.js';
import { hostModules, legacyTables, nodeState } from '../support/lab/node-state.js';
import { labObjects } from '../support/lab/objects.js';
import { expectedLabRules } from '../support/lab/rules.js';

const PREFIX = 'kdt-reads';

interface Finding {
  id: string;
  status: string;
  node?: string;
  evidence: unknown[];
}

/** The kube-proxy step's findings, each as "id:status node" with its evidence as text. */
function kubeProxyFindings(stdout: string): { ids: string[]; evidence: string[] } {
  const steps = (JSON.parse(stdout) as { steps: { id: string; findings: Finding[] }[] }).steps;
  const findings = steps.find((s) => s.id === 'kube-proxy')!.findings;
  const text = (e: unknown) => (e as { text: string }).text;
  return {
    ids: findings.map((f) => `${f.id}:${f.status}${f.node ? ` ${f.node}` : ''}`),
    evidence: findings.flatMap((f) => f.evidence.map(text)),
  };
}

describe('reading changes nothing on a node', labSuite(), () => {
  let lab: Lab;
  let fake: FakeApi;
  let relay: ApiRelay;
  let home: string;
  const state = (): Record<string, string> => ({
    ...Object.fromEntries(lab.nodes.map((n) => [n.name, nodeState(lab, n.name)])),
    'host modules': hostModules(),
  });

  /** The built CLI: in the host namespace (exec transports), or the workstation's (SSH). */
  const kdebug = (where: 'host' | 'ws', args: string[]): Promise<Exec> => {
    if (where === 'ws') return lab.execAsync('ws', [process.execPath, 'bin/kdebug.js', ...args]);
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['bin/kdebug.js', ...args], {
        cwd: ROOT,
        env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', HOME: home },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  };

  before(async () => {
    requireLab();
    if (!existsSync(join(ROOT, 'dist/cli.js')))
      spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
    home = mkdtempSync(join(tmpdir(), 'kdebug-reads-'));
    lab = await Lab.up(PREFIX);
    // a stale legacy copy of node-a's chains: both backends hold kube-proxy's chains there
    lab.loadIptables('node-a', 'legacy', expectedLabRules(lab.topology, 'node-a'));
    fake = await startFakeApi({ objects: labObjects(lab.topology), exec: labExec(lab) });
    relay = await relayApi(lab, fake.port);
  });
  after(async () => {
    await relay?.close();
    await fake?.close();
    await Lab.down(PREFIX);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('starts with a legacy nat table on node-a and node-c and none on node-b', () => {
    assert.deepEqual(
      lab.nodes.map((n) => `${n.name}: ${legacyTables(lab, n.name).sort().join(' ') || 'none'}`),
      ['node-a: filter nat', 'node-b: none', 'node-c: filter nat'],
    );
  });

  it('records what a read by table name creates (the read kdebug no longer makes)', () => {
    spawnSync('ip', ['netns', 'add', lab.ns('control')]); // removed with the lab's namespaces
    const before = nodeState(lab, 'control');
    lab.exec('control', ['iptables-legacy-save', '-t', 'nat']);
    const after = nodeState(lab, 'control');
    assert.notEqual(after, before);
    assert.deepEqual(legacyTables(lab, 'control'), ['nat']);
  });

  const kubeconfig = (server?: string) =>
    fake.kubeconfig({ namespace: 'default', ...(server ? { server } : {}) });
  const ssh = (...extra: string[]) => [
    '--via',
    'ssh',
    '--ssh-config',
    lab.files.sshConfig,
    '--ssh-address-type',
    'Hostname',
    ...extra,
  ];
  const RUNS: { name: string; where: 'host' | 'ws'; args: () => string[] }[] = [
    { name: '--via kube-proxy', where: 'host', args: () => ['--via', 'kube-proxy'] },
    { name: '--via pod --yes', where: 'host', args: () => ['--via', 'pod', '--yes'] },
    {
      name: '--via ssh as root',
      where: 'ws',
      args: () => [...ssh(), '--kubeconfig', kubeconfig(relay.server)],
    },
    {
      name: `--via ssh as ${LAB_USERS.sudoer} (sudo -n)`,
      where: 'ws',
      args: () => [
        ...ssh('--ssh-user', LAB_USERS.sudoer),
        '--kubeconfig',
        kubeconfig(relay.server),
      ],
    },
  ];

  for (const run of RUNS)
    it(`${run.name}: every node's tables, lists and sysctls, and the host's modules, as before`, async () => {
      assert.deepEqual(legacyTables(lab, 'node-b'), [], 'node-b has no legacy table to begin with');
      const before = state();
      const args = ['svc', 'nginx-svc', '-o', 'json', ...run.args()];
      const r = await kdebug(
        run.where,
        run.where === 'host' ? [...args, '--kubeconfig', kubeconfig()] : args,
      );
      assert.notEqual(r.code, 2, r.stderr);
      const now = state();
      for (const node of Object.keys(before)) assert.equal(now[node], before[node], node);
      assert.deepEqual(legacyTables(lab, 'node-b'), []);
      // and not by reading less: legacy's nat table was read where it exists, and node-b's
      // absence (the kernel lists no legacy table there) reads as no legacy chain
      const kp = kubeProxyFindings(r.stdout);
      assert.ok(kp.ids.includes('iptables-backends-both:warn node-a'), kp.ids.join(', '));
      // by the nft backend's probe and its whole dump (a table this small), or, for a sudoer
      // allowed only the save binaries, by the nat dump it falls back to
      assert.ok(
        kp.evidence.some((e) =>
          /^node-b: kube-proxy's chains in nft only \(ip_tables_names, iptables-nft-(?:save, iptables-nft-nat-S_KUBE-POSTROUTING|save-nat)\)$/.test(
            e,
          ),
        ),
        kp.evidence.join('\n'),
      );
    });
});
