// `snapshot save`: Facts from the (fake) cluster written as a snapshot directory that reads back
// unchanged, refusing bad input with one line. The CLI end to end is in snapshot-save-cli.test.ts.
// IP conventions: see objects.ts (Pods 10.244.0.0/16, Services 10.96.0.0/12, nodes 192.0.2.10/11).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandStem, type NodeCommand } from '../../src/cluster/cluster.js';
import type { NodeTransport } from '../../src/cluster/kube-cluster.js';
import { saveSnapshot, SnapshotSaveError } from '../../src/cluster/snapshot/save.js';
import { readSnapshot, writeSnapshot } from '../../src/cluster/snapshot/read.js';
import type { KubeObject } from '../../src/core/model.js';
import { readErrorsOf } from '../../src/core/facts/not-read.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { aNode, webCluster } from './objects.js';

const key = (o: { kind?: string; metadata?: { namespace?: string; name?: string } }) =>
  `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

/** Every file under a directory, relative path -> content. */
function files(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = join(prefix, e.name);
    if (e.isDirectory()) Object.assign(out, files(dir, rel));
    else out[rel] = readFileSync(join(dir, rel), 'utf8');
  }
  return out;
}

/** Node command output as a node would print it. */
const transport: NodeTransport = {
  run: async (node, c) => ({
    stdout: `# ${commandStem(c)} on ${node}\n*nat\nCOMMIT\n`,
    stderr: '',
    exitCode: 0,
    via: 'test',
  }),
};
const COMMANDS: NodeCommand[] = [
  { kind: 'iptables-save', backend: 'auto' },
  { kind: 'proxy-mode' },
];

describe('saveSnapshot', () => {
  const { relevant, irrelevant } = webCluster();
  let fake: FakeApi;
  let tmp: string;
  let kubeconfig: string;
  before(async () => {
    fake = await startFakeApi({ objects: [...relevant, ...irrelevant] });
    kubeconfig = fake.kubeconfig({ namespace: 'default' });
    tmp = mkdtempSync(join(tmpdir(), 'kdebug-save-'));
  });
  after(async () => {
    await fake.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('--no-redact: a snapshot that reads back as the Facts collected, objects exactly as served', async () => {
    const dir = join(tmp, 'web');
    const r = await saveSnapshot({
      dir,
      service: 'web',
      redact: false,
      kubeconfig,
      env: {},
      kdebugVersion: '1.2.3',
      nodeCommands: COMMANDS,
      transport: () => transport,
    });
    assert.deepEqual(
      [r.objects, r.nodes, r.readErrors, r.nodeErrors],
      [relevant.length, 2, [], []],
    );
    const facts = await readSnapshot(dir);
    const served = new Map(relevant.map((o) => [key(o), o]));
    assert.deepEqual(facts.objects.map(key).sort(), [...served.keys()].sort());
    for (const o of facts.objects) assert.deepEqual(o, served.get(key(o)), key(o));
    assert.deepEqual(facts.nodes['node-b'], {
      'iptables-save': '# iptables-save on node-b\n*nat\nCOMMIT\n',
      'proxy-mode': '# proxy-mode on node-b\n*nat\nCOMMIT\n',
    });
    const { capturedAt, ...meta } = facts.meta;
    assert.deepEqual(meta, {
      context: 'fake',
      server: fake.url,
      user: 'admin',
      namespace: 'default',
      service: 'web',
      kdebugVersion: '1.2.3',
      redaction: { redacted: false },
    });
    assert.ok(!Number.isNaN(Date.parse(String(capturedAt))));
    assert.deepEqual(facts.meta, r.meta);
  });

  it('redacts by default: the server URL becomes its hash, and meta.json lists what was taken', async () => {
    const dir = join(tmp, 'web-redacted');
    const r = await saveSnapshot({
      dir,
      service: 'web',
      kubeconfig,
      env: {},
      nodeCommands: COMMANDS,
      transport: () => transport,
    });
    const facts = await readSnapshot(dir);
    assert.match(String(facts.meta.server), /^sha256:[0-9a-f]{16}$/);
    assert.ok(!readFileSync(join(dir, 'meta.json'), 'utf8').includes(fake.url));
    assert.deepEqual(facts.meta['redaction'], r.redaction);
    assert.ok(
      r.redaction!.removed.some((x) => x.what.startsWith('meta.json server')),
      JSON.stringify(r.redaction),
    );
    assert.equal(facts.objects.length, relevant.length);
  });

  it('round-trips: writing what was read back gives the same files', async () => {
    const dir = join(tmp, 'round-1');
    await saveSnapshot({
      dir,
      service: 'web',
      namespace: 'default',
      kubeconfig,
      env: {},
      nodeCommands: COMMANDS,
      transport: () => transport,
    });
    const again = join(tmp, 'round-2');
    await writeSnapshot(again, await readSnapshot(dir));
    assert.deepEqual(files(again), files(dir));
    assert.deepEqual(Object.keys(files(dir)).sort(), [
      'meta.json',
      'nodes/node-a/iptables-save.txt',
      'nodes/node-a/proxy-mode.txt',
      'nodes/node-b/iptables-save.txt',
      'nodes/node-b/proxy-mode.txt',
      'objects.json',
    ]);
  });

  it('captures every Service of the namespace with --all, of the cluster with -A', async () => {
    const ns = await saveSnapshot({ dir: join(tmp, 'all'), all: true, kubeconfig, env: {} });
    const services = async (dir: string) =>
      (await readSnapshot(dir)).objects
        .filter((o) => o.kind === 'Service')
        .map(key)
        .sort();
    assert.equal(ns.meta.namespace, 'default');
    assert.deepEqual(await services(join(tmp, 'all')), [
      'Service default/web',
      'Service default/webapp',
      'Service kube-system/kube-dns',
    ]);
    await saveSnapshot({
      dir: join(tmp, 'all-ns'),
      all: true,
      allNamespaces: true,
      kubeconfig,
      env: {},
    });
    assert.deepEqual(await services(join(tmp, 'all-ns')), [
      'Service default/web',
      'Service default/webapp',
      'Service kube-system/kube-dns',
      'Service prod/payments',
      'Service prod/web',
    ]);
  });

  it('refuses bad input with one line, before touching the cluster', async () => {
    const full = join(tmp, 'full');
    mkdirSync(full);
    writeFileSync(join(full, 'objects.json'), '{}');
    writeFileSync(join(tmp, 'a-file'), '');
    const table: [Partial<Parameters<typeof saveSnapshot>[0]>, string][] = [
      [{ service: 'web', all: true }, 'choose one: --service NAME or --all'],
      [{}, 'say what to capture: --service NAME, or --all for every Service'],
      [{ service: 'web', allNamespaces: true }, '-A/--all-namespaces goes with --all'],
      [
        { all: true, allNamespaces: true, namespace: 'prod' },
        'choose one: -n NAMESPACE or -A/--all-namespaces',
      ],
      [
        { service: 'web', dir: full },
        `${full} is not empty; snapshot save writes into a new or empty directory`,
      ],
      [
        { service: 'web', dir: join(tmp, 'a-file') },
        `${join(tmp, 'a-file')} exists and is not a directory`,
      ],
    ];
    const before = fake.requests.length;
    for (const [o, message] of table) {
      await assert.rejects(
        saveSnapshot({ dir: join(tmp, 'never'), kubeconfig, env: {}, ...o }),
        (e: unknown) => {
          assert.ok(e instanceof SnapshotSaveError);
          assert.equal(e.message, message);
          return true;
        },
      );
    }
    assert.equal(fake.requests.length, before);
    assert.throws(() => readdirSync(join(tmp, 'never')), { code: 'ENOENT' });
  });

  it('a Node named ../../escaped (a hostile API server) is not read: nothing written out of the snapshot', async () => {
    const hostile = await startFakeApi({
      objects: [...relevant, aNode('../../escaped', '192.0.2.12', '10.244.3.0/24')],
    });
    const parent = join(tmp, 'hostile');
    mkdirSync(parent);
    try {
      const r = await saveSnapshot({
        dir: join(parent, 'snap'),
        all: true,
        redact: false,
        kubeconfig: hostile.kubeconfig({ namespace: 'default' }),
        env: {},
        nodeCommands: COMMANDS,
        transport: () => transport,
      });
      // the other nodes are read; that one is said not to be, and nothing ran on it
      assert.deepEqual(
        r.nodeErrors
          .filter((g) => g.nodes.includes('../../escaped'))
          .flatMap((g) => g.errors.map((e) => e.error)),
        ['not a valid node name: not read'],
      );
      // a write there would have landed in parent/escaped: only the snapshot is there
      assert.deepEqual(readdirSync(parent), ['snap']);
      assert.ok(readdirSync(join(parent, 'snap', 'nodes')).every((n) => !n.includes('escaped')));
    } finally {
      await hostile.close();
    }
  });
});

describe('saveSnapshot, redacted: a secret anywhere in the cluster, kubeconfig or capture', () => {
  /** Letters only: no encoding in a file can hide it from a search. */
  const M = 'KDEBUGMARKER';
  const [user, context] = [`${M}-user`, `${M}-ctx`];
  /** Every Pod carries the marker where people put secrets. */
  const withSecrets = (o: KubeObject): KubeObject => {
    if (o.kind !== 'Pod') return o;
    const pod = structuredClone(o) as KubeObject & { spec: { containers: object[] } };
    pod.metadata = { ...pod.metadata, annotations: { 'example.com/token': M } };
    pod.spec.containers = pod.spec.containers.map((c) => ({
      ...c,
      env: [{ name: 'DB_PASSWORD', value: M }],
      args: [`--db-url=postgres://u:${M}@db/app`, '-p', M],
      readinessProbe: {
        httpGet: { path: '/healthz', port: 8080, httpHeaders: [{ name: 'X', value: M }] },
      },
    }));
    return pod;
  };
  let fake: FakeApi;
  let tmp: string;
  before(async () => {
    fake = await startFakeApi({
      objects: webCluster().relevant.map(withSecrets),
      tokens: { [`${M}-token`]: user },
      // a refusal: its error names the user and the context
      rbac: { deny: [{ verbs: ['list'], resources: ['networkpolicies.networking.k8s.io'] }] },
    });
    tmp = mkdtempSync(join(tmpdir(), 'kdebug-save-marker-'));
  });
  after(async () => {
    await fake.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('reaches no file: the objects hold what is read, meta.json names nobody', async () => {
    const dir = join(tmp, 'web');
    // a node command that fails naming the server and the user, as a node's error can
    const failing: NodeTransport = {
      run: async (node, c) =>
        commandStem(c) === 'proxy-mode'
          ? { stdout: '', stderr: `cannot reach ${fake.url} as ${user}`, exitCode: 1, via: 'test' }
          : transport.run(node, c),
    };
    const r = await saveSnapshot({
      dir,
      service: 'web',
      kubeconfig: fake.kubeconfig({ user, context, namespace: 'default' }),
      env: {},
      nodeCommands: COMMANDS,
      transport: () => failing,
    });
    assert.equal(r.context, context);
    assert.match(r.readErrors[0]!.error, new RegExp(`user "${user}"`), 'the capture saw them');
    assert.match(r.nodeErrors[0]!.errors[0]!.error, new RegExp(fake.url));
    const host = new URL(fake.url).host;
    for (const [file, text] of Object.entries(files(dir)))
      for (const secret of [M, fake.url, host])
        assert.ok(!text.includes(secret), `${secret} in ${file}`);
    const saved = await readSnapshot(dir);
    for (const k of ['context', 'user', 'server'])
      assert.match(String(saved.meta[k]), /^sha256:[0-9a-f]{16}$/, k);
    assert.match(
      String(readErrorsOf(saved)[0]?.error),
      new RegExp(`user "${saved.meta['user']}" .*\\(context "${saved.meta.context}"\\)`),
    );
    // every Pod is there, with what the checks read of it
    const pods = (os: KubeObject[]) =>
      os
        .filter((o) => o.kind === 'Pod')
        .map(key)
        .sort();
    assert.deepEqual(pods(saved.objects), pods(webCluster().relevant));
  });
});
