// The built CLI end to end against the fake API server: `kdebug snapshot save` writes what the
// cluster serves, fails with exit 2 and one line when it cannot, and a saved snapshot replays:
// `kdebug rules --snapshot` prints the same as on the original snapshot.
// IP conventions: the demo snapshot's (the demo cluster): nodes 10.0.12.7 and 10.0.12.11,
// Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandStem, type NodeCommand } from '../../src/cluster/cluster.js';
import { saveSnapshot } from '../../src/cluster/snapshot/save.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { probePlan } from '../../src/core/diagnose.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { kdebugAsync, ROOT, type CliResult } from '../support/cli.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { allModes } from '../support/modes.js';

const DEMO = 'snapshots/nginx-svc';
const key = (o: KubeObject) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

type Run = CliResult;

/** The built CLI; never SSH from here: the served nodes' addresses are not the test's own. */
function kdebug(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return kdebugAsync([...args, ...(args[0] === 'snapshot' ? ['--via', 'kube-proxy'] : [])], env);
}

describe('kdebug snapshot save (built CLI)', () => {
  let served: Facts;
  let fake: FakeApi;
  let tmp: string;
  let kubeconfig: string;
  before(async () => {
    if (!existsSync(join(ROOT, 'dist/cli.js')))
      spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
    served = await readSnapshot(DEMO);
    fake = await startFakeApi({
      objects: served.objects,
      rbac: {
        deny: [
          { users: ['viewer'], verbs: ['get'], resources: ['services'], namespaces: ['default'] },
        ],
      },
      tokens: { 'admin-token': 'admin', 'viewer-token': 'viewer' },
    });
    kubeconfig = fake.kubeconfig({ namespace: 'default' });
    tmp = mkdtempSync(join(tmpdir(), 'kdebug-cli-save-'));
  });
  after(async () => {
    await fake.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('--no-redact: saves a Service and what it needs, objects identical to what the cluster served', async () => {
    const dir = join(tmp, 'nginx');
    const r = await kdebug([
      'snapshot',
      'save',
      dir,
      '--service',
      'nginx-svc',
      '--no-redact',
      '--kubeconfig',
      kubeconfig,
    ]);
    assert.deepEqual(
      [r.code, r.stdout.split('\n')[0]],
      [0, `saved 16 objects from context fake to ${dir}`],
    );
    assert.match(r.stdout, /^not redacted \(--no-redact\)/m);
    // this fake server runs no exec: the nodes are said to be out of reach, and why, in one line
    assert.deepEqual(
      r.stderr.split('\n').map((l) => l.replace(/ \(.*/, '')),
      ['kdebug: 2 nodes not reached: vm-12-11-centos, vm-12-7-centos', ''],
    );
    const saved = await readSnapshot(dir);
    const original = new Map(served.objects.map((o) => [key(o), o]));
    for (const o of saved.objects) assert.deepEqual(o, original.get(key(o)), key(o));
    const version = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    ).version;
    assert.deepEqual(
      [
        saved.meta.context,
        saved.meta.server,
        saved.meta.namespace,
        saved.meta.service,
        saved.meta.kdebugVersion,
      ],
      ['fake', fake.url, 'default', 'nginx-svc', version],
    );
  });

  it('redacts by default, says what it took, and the server URL is not in the snapshot', async () => {
    const dir = join(tmp, 'nginx-redacted');
    const r = await kdebug([
      'snapshot',
      'save',
      dir,
      '--service',
      'nginx-svc',
      '--kubeconfig',
      kubeconfig,
    ]);
    assert.equal(r.code, 0);
    assert.match(
      r.stdout,
      /^redacted: kept only the fields kdebug reads; context, user and server replaced by salted hashes \(listed in meta\.json; --no-redact keeps everything\)$/m,
    );
    const text = ['objects.json', 'meta.json']
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('');
    assert.ok(!text.includes(fake.url));
    assert.ok(!text.includes('last-applied-configuration'));
    const saved = await readSnapshot(dir);
    assert.equal(saved.objects.length, 16);
    assert.equal((saved.meta['redaction'] as { redacted: boolean }).redacted, true);
  });

  it('takes -n and --context, and KUBECONFIG like kubectl', async () => {
    const other = fake.kubeconfig({
      context: 'other',
      namespace: 'kube-system',
      file: 'other.yaml',
      setCurrent: false,
    });
    const dir = join(tmp, 'dns');
    const r = await kdebug(
      ['snapshot', 'save', dir, '--service', 'kube-dns', '--context', 'other'],
      { KUBECONFIG: `${kubeconfig}:${join(tmp, 'missing')}:${other}` },
    );
    assert.equal(r.code, 0, r.stderr);
    // meta.json keeps the context as a salted hash; the person is told its name
    assert.equal((await readSnapshot(dir)).meta.namespace, 'kube-system');
    assert.match((await readSnapshot(dir)).meta.context ?? '', /^sha256:[0-9a-f]{16}$/);
    assert.match(r.stdout, / from context other to /);
    const r2 = await kdebug([
      'snapshot',
      'save',
      join(tmp, 'dns-2'),
      '-n',
      'kube-system',
      '--service',
      'kube-dns',
      '--kubeconfig',
      kubeconfig,
    ]);
    assert.equal(r2.code, 0, r2.stderr);
  });

  const failures: [string, (dir: string) => string[], Record<string, string>, RegExp][] = [
    [
      'a Service that does not exist: did you mean',
      (d) => ['snapshot', 'save', d, '--service', 'ngnix-svc', '--kubeconfig', '$KC'],
      {},
      /^kdebug: service "ngnix-svc" not found in namespace default; did you mean "nginx-svc"\?\n$/,
    ],
    [
      'RBAC refusing the Service',
      (d) => ['snapshot', 'save', d, '--service', 'nginx-svc', '--kubeconfig', '$VIEWER'],
      {},
      /^kdebug: access denied by RBAC: user "viewer" cannot get services in namespace default \(context "fake"\); kdebug rbac prints the Roles kdebug needs \(README: Permissions\)\n$/,
    ],
    [
      'no kubeconfig at all',
      (d) => ['snapshot', 'save', d, '--service', 'nginx-svc'],
      { HOME: '$EMPTY' },
      /^kdebug: no kubeconfig: .*\/\.kube\/config does not exist and neither --kubeconfig nor KUBECONFIG is set\n$/,
    ],
    [
      'an unreachable API server',
      (d) => ['snapshot', 'save', d, '--service', 'nginx-svc', '--kubeconfig', '$DOWN'],
      {},
      /^kdebug: cannot reach the API server at https:\/\/127\.0\.0\.1:1 \(context "fake"\): connection refused \(ECONNREFUSED\)\n$/,
    ],
    [
      'neither --service nor --all',
      (d) => ['snapshot', 'save', d, '--kubeconfig', '$KC'],
      {},
      /^kdebug: say what to capture: --service NAME, or --all for every Service\n$/,
    ],
  ];
  for (const [name, args, env, stderr] of failures) {
    it(`exits 2 with one line for ${name}`, async () => {
      const empty = join(tmp, 'empty-home');
      mkdirSync(empty, { recursive: true });
      const vars: Record<string, string> = {
        $KC: kubeconfig,
        $VIEWER: fake.kubeconfig({ user: 'viewer' }),
        $DOWN: fake.kubeconfig({ server: 'https://127.0.0.1:1' }),
        $EMPTY: empty,
      };
      const sub = (s: string) => vars[s] ?? s;
      const dir = join(tmp, `fail-${name.replace(/\W+/g, '-')}`);
      const r = await kdebug(
        args(dir).map(sub),
        Object.fromEntries(Object.entries(env).map(([k, v]) => [k, sub(v)])),
      );
      assert.deepEqual([r.code, r.stdout], [2, '']);
      assert.match(r.stderr, stderr);
      assert.equal(existsSync(join(dir, 'objects.json')), false);
    });
  }

  it('replays: `kdebug rules`, `svc` and `drift` on a saved snapshot print what they print on the original', async () => {
    // node commands come from a transport; this one answers with what the original nodes printed
    const replay = {
      run: async (node: string, c: NodeCommand) => {
        const out = served.nodes[node]?.[commandStem(c)];
        return out === undefined
          ? { stdout: '', stderr: 'not recorded', exitCode: 1, via: 'replay' }
          : { stdout: out, stderr: '', exitCode: 0, via: 'replay' };
      },
    };
    const nodeCommands: NodeCommand[] = [
      { kind: 'iptables-save', backend: 'auto' },
      { kind: 'proxy-mode' },
      { kind: 'ip-addr' },
      // the demo's recorded probes
      ...probePlan(served, { namespace: 'default', service: 'nginx-svc' }, { code: allModes }),
    ];
    // the same context name as the original capture, so reports that name it match
    const original = fake.kubeconfig({
      context: String(served.meta.context),
      namespace: 'default',
    });
    const dirs = {
      service: join(tmp, 'replay-service'),
      all: join(tmp, 'replay-all'),
      archive: join(tmp, 'replay-all.tar.gz'),
    };
    await saveSnapshot({
      dir: dirs.service,
      service: 'nginx-svc',
      kubeconfig: original,
      env: {},
      nodeCommands,
      transport: () => replay,
    });
    await saveSnapshot({
      dir: dirs.all,
      archive: dirs.archive,
      all: true,
      allNamespaces: true,
      kubeconfig: original,
      env: {},
      nodeCommands,
      transport: () => replay,
    });
    assert.deepEqual((await readSnapshot(dirs.all)).nodes, served.nodes);
    assert.deepEqual(
      JSON.parse(JSON.stringify(await readSnapshot(dirs.archive))),
      JSON.parse(JSON.stringify(await readSnapshot(dirs.all))),
    );
    const commands = [
      ...Object.keys(served.nodes).flatMap((node) =>
        ['text', 'json'].map((o) => ['rules', '--node', node, '-o', o]),
      ),
      ['svc', 'nginx-svc', '-o', 'json'],
      ['svc', 'nginx-svc', '-o', 'text'],
      // drift compares a node with every Service: only a capture of all of them replays it
      ['drift', '--all-nodes', '-o', 'json'],
      ['drift', '--all-nodes', '-o', 'text'],
    ];
    for (const args of commands) {
      const want = await kdebug([...args, '--snapshot', DEMO]);
      assert.equal(want.stderr, '');
      for (const dir of args[0] === 'drift' ? [dirs.all, dirs.archive] : Object.values(dirs)) {
        const got = await kdebug([...args, '--snapshot', dir]);
        // the text report names (and wraps) the snapshot path: compare with the path swapped, spacing aside
        // and a redacted capture names its context by a salted hash
        const hashed = String((await readSnapshot(dir)).meta.context);
        const norm = (r: Run, path: string) => ({
          ...r,
          stdout: r.stdout
            .replaceAll(path, DEMO)
            .replaceAll(hashed, String(served.meta.context))
            .replace(/\s+/g, ' '),
        });
        assert.deepEqual(norm(got, dir), norm(want, DEMO), `${args.join(' ')} on ${dir}`);
      }
    }
  });
});

describe('kdebug snapshot save interrupted (built CLI)', () => {
  it('Ctrl-C while a node command hangs: exit 130, the debug Pods deleted, no directory or archive, whole or partial', async () => {
    const served = await readSnapshot(DEMO);
    const fake = await startFakeApi({
      objects: served.objects,
      exec: () => new Promise(() => undefined), // every node command hangs
    });
    const tmp = mkdtempSync(join(tmpdir(), 'kdebug-cli-interrupt-'));
    try {
      const dir = join(tmp, 'snap');
      const child = spawn(
        process.execPath,
        [
          'bin/kdebug.js',
          'snapshot',
          'save',
          dir,
          '--archive',
          `${dir}.tar.gz`,
          '--service',
          'nginx-svc',
          '--via',
          'pod',
          '--yes',
          '--kubeconfig',
          fake.kubeconfig({ namespace: 'default' }),
        ],
        { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', HOME: tmp, NO_COLOR: '1' } },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      const debugPods = () =>
        fake.store
          .list(typeOfKind('Pod')!, 'kdebug')
          .filter((p) => p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'kdebug')
          .map((p) => p.metadata?.name);
      // wait until a command runs on a node (its exec is open): the capture is in the middle
      while (!fake.requests.some((r) => r.path.endsWith('/exec')))
        await new Promise((r) => setTimeout(r, 20));
      assert.ok(debugPods().length > 0, 'debug Pods made');
      child.kill('SIGINT');
      assert.equal(await exited, 130, stderr);
      assert.match(stderr, /interrupted: deleting the debug Pods kdebug created/);
      assert.deepEqual(debugPods(), []);
      assert.deepEqual(
        readdirSync(tmp).filter((n) => n.includes('snap')),
        [],
      );
    } finally {
      await fake.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
