// Snapshots safe to attach to a ticket: secrets out, what the diagnosis reads kept, the redaction
// listed. Addresses: Service CIDR 10.96.0.0/16, Pod CIDR 10.244.0.0/16.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { redactFacts, stableHash } from '../../src/core/redact.js';

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-0',
    namespace: 'default',
    labels: { app: 'web' },
    annotations: {
      'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"Pod"}',
      'example.com/dump': '{"password":"hunter2"}',
      'example.com/owner': 'team-a',
    },
    managedFields: [{ manager: 'kubectl' }],
  },
  spec: {
    imagePullSecrets: [{ name: 'registry-creds' }],
    containers: [
      {
        name: 'web',
        env: [
          { name: 'DB_PASSWORD', value: 'hunter2' },
          { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
        ],
        envFrom: [{ secretRef: { name: 'all-of-it' } }],
        command: ['/web', '--token=abc123', '--db-password', 'hunter2', '--port=80'],
        args: ['--listen', ':80', '--api-key=xyz'],
      },
    ],
  },
};
const kubeProxyCm: KubeObject = {
  kind: 'ConfigMap',
  metadata: { name: 'kube-proxy', namespace: 'kube-system' },
  data: { 'config.conf': 'mode: iptables\nclusterCIDR: 10.244.0.0/16\n', kubeconfig: 'x' },
};
const coredns: KubeObject = {
  kind: 'ConfigMap',
  metadata: { name: 'coredns', namespace: 'kube-system' },
  data: { Corefile: '.:53 {\n  kubernetes cluster.local\n}\n', secretzone: 'key' },
};
const appCm: KubeObject = {
  kind: 'ConfigMap',
  metadata: { name: 'app-config', namespace: 'default' },
  data: { 'settings.ini': 'password=hunter2' },
  binaryData: { blob: 'AAAA' },
};
const secret: KubeObject = {
  kind: 'Secret',
  metadata: { name: 's', namespace: 'default' },
  data: { k: 'aHVudGVyMg==' },
};
const facts: Facts = {
  objects: [pod, kubeProxyCm, coredns, appCm, secret],
  nodes: {},
  meta: {
    context: 'prod',
    server: 'https://203.0.113.10:6443',
    user: 'alice',
    readErrors: [
      {
        what: 'Nodes',
        error:
          'cannot reach the API server at https://203.0.113.10:6443 (context "prod"): connection reset by the server (ECONNRESET)',
        reason: 'unreachable',
      },
      {
        what: 'Pods',
        error: 'access denied by RBAC: user "alice" cannot list pods (context "prod")',
      },
    ],
  },
};

describe('redacting a snapshot', () => {
  const before = JSON.stringify(facts);
  const { facts: out, redaction } = redactFacts(facts);
  const text = JSON.stringify(out.objects);
  const [p, kp, dns, app, sec] = out.objects as Record<string, unknown>[];

  it('leaves no secret value anywhere in the objects', () => {
    for (const value of ['hunter2', 'abc123', 'xyz', 'all-of-it', 'registry-creds', 'aHVudGVyMg'])
      assert.ok(!text.includes(value), value);
  });

  it('keeps names, the diagnosis inputs and what is not secret', () => {
    const c = (p!['spec'] as { containers: Record<string, unknown>[] }).containers[0]!;
    assert.deepEqual(
      (c['env'] as { name: string }[]).map((e) => e.name),
      ['DB_PASSWORD', 'FROM_SECRET'],
    );
    assert.deepEqual(c['command'], [
      '/web',
      '--token=(redacted)',
      '--db-password',
      '(redacted)',
      '--port=80',
    ]);
    assert.deepEqual(c['args'], ['--listen', ':80', '--api-key=(redacted)']);
    assert.equal(c['envFrom'], undefined);
    const md = p!['metadata'] as { annotations: Record<string, string>; managedFields?: unknown };
    assert.deepEqual(md.annotations, { 'example.com/owner': 'team-a' });
    assert.equal(md.managedFields, undefined);
    assert.deepEqual(kp!['data'], kubeProxyCm['data'], "kube-proxy's configuration is kept whole");
    assert.deepEqual(dns!['data'], {
      Corefile: (coredns['data'] as Record<string, string>)['Corefile'],
      secretzone: '(redacted)',
    });
    assert.deepEqual(app!['data'], { 'settings.ini': '(redacted)' });
    assert.equal(app!['binaryData'], undefined);
    assert.equal(sec!['data'], undefined);
  });

  it('replaces the server and the user by a stable hash, and lists what it took, not the values', () => {
    assert.equal(out.meta.server, stableHash('https://203.0.113.10:6443'));
    assert.equal(
      out.meta['user'],
      redactFacts(facts).facts.meta['user'],
      'the same hash each time',
    );
    assert.notEqual(out.meta['user'], 'alice');
    assert.equal(out.meta.context, 'prod');
    // nor do the errors the capture recorded name them
    const errors = JSON.stringify(out.meta['readErrors']);
    assert.ok(!errors.includes('203.0.113.10') && !errors.includes('"alice"'), errors);
    assert.match(errors, /at sha256:[0-9a-f]{16} \(context/);
    assert.match(errors, /user \\"sha256:[0-9a-f]{16}\\" cannot list pods/);
    assert.deepEqual(out.meta['redaction'], redaction);
    const removed = Object.fromEntries(redaction.removed.map((r) => [r.what, r.count]));
    assert.equal(removed['container env values (names kept)'], 1);
    assert.equal(removed['secret-looking arguments'], 3);
    assert.equal(removed['annotations holding an object dump'], 2);
    assert.equal(removed['ConfigMap data values (keys kept)'], 2);
    assert.ok(!JSON.stringify(redaction).includes('hunter2'));
  });

  it('does not change the Facts it was given', () => assert.equal(JSON.stringify(facts), before));
});

describe('every scenario snapshot diagnoses the same once redacted', () => {
  for (const dir of readdirSync('snapshots').sort())
    it(dir, async () => {
      const f = await readSnapshot(`snapshots/${dir}`);
      const target = { namespace: f.meta.namespace ?? 'default', service: f.meta.service! };
      const { facts: r, redaction } = redactFacts(f);
      assert.ok(redaction.removed.length > 0, 'something was taken out (the server URL at least)');
      const steps = (x: Facts) => JSON.stringify(diagnose(x, target).steps);
      assert.equal(steps(r), steps(f));
    });
});
