// `rules`, `expect`, `drift` and `trace` without --snapshot read the live cluster: the built CLI
// against the fake API server, whose kube-proxy Pods answer `iptables-save` with the demo's dumps.
// IP conventions: the demo snapshot's (the demo cluster): nodes 10.0.12.7 and 10.0.12.11,
// Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16, nginx-svc 10.1.190.219:8080.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { kdebug as kdebugSync, kdebugAsync } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';

const kdebug = (args: string[]) => kdebugAsync(args);

describe('rules, expect, drift and trace on the live cluster', () => {
  let demo: Facts;
  let fake: FakeApi;
  let kubeconfig: string;
  const execs: string[] = [];
  before(async () => {
    demo = await readSnapshot('snapshots/nginx-svc');
    fake = await startFakeApi({
      objects: demo.objects,
      exec: (req) => {
        const node = (req.pod['spec'] as { nodeName?: string }).nodeName ?? '';
        execs.push(`${req.pod.metadata?.name} ${req.command.join(' ')}`);
        // the kube-proxy image's iptables-save wrapper picks the backend kube-proxy uses
        if (req.command.join(' ') === 'iptables-save')
          return { stdout: demo.nodes[node]?.['iptables-save'] ?? '', exitCode: 0 };
        return { stdout: '', exitCode: 0 };
      },
    });
    kubeconfig = fake.kubeconfig({ namespace: 'default' });
  });
  after(() => fake.close());

  const live = (...args: string[]) => [...args, '--kubeconfig', kubeconfig, '--via', 'kube-proxy'];

  it('rules --node reads that node now, by exec in its kube-proxy Pod', async () => {
    const r = await kdebug(live('rules', '--node', 'vm-12-11-centos', '-o', 'json'));
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    const svc = doc.services.find((s: { name: string }) => s.name === 'default/nginx-svc:http');
    assert.deepEqual(
      svc.endpoints.map((e: { address: string; probability: number }) => [
        e.address,
        e.probability,
      ]),
      [
        ['10.244.0.3:80', 0.5],
        ['10.244.1.7:80', 0.5],
      ],
    );
    // the text is the same as from the snapshot it came from
    const offline = kdebugSync([
      'rules',
      '--snapshot',
      'snapshots/nginx-svc',
      '--node',
      'vm-12-11-centos',
    ]);
    const text = await kdebug(live('rules', '--node', 'vm-12-11-centos'));
    assert.equal(text.stdout, offline.stdout);
    assert.match(r.stderr, /vm-12-11-centos/);
    assert.ok(
      execs.some((e) => /^kube-proxy-\S+ iptables-save$/.test(e)),
      execs.join('\n'),
    );
  });

  it('drift --all-nodes checks every node, and says the same as on the snapshot', async () => {
    const r = await kdebug(live('drift', '--all-nodes', '-o', 'json'));
    const offline = kdebugSync([
      'drift',
      '--snapshot',
      'snapshots/nginx-svc',
      '--all-nodes',
      '-o',
      'json',
    ]);
    assert.equal(r.code, offline.code, r.stderr);
    const ids = (out: string) =>
      JSON.parse(out).findings.map(
        (f: { id: string; node: string; service: string }) => `${f.node} ${f.service} ${f.id}`,
      );
    assert.deepEqual(ids(r.stdout), ids(offline.stdout));
    assert.equal(JSON.parse(r.stdout).nodes.length, 2);
  });

  it('trace walks a packet through the node read now', async () => {
    const r = await kdebug(
      live(
        'trace',
        '--node',
        'vm-12-7-centos',
        '--src',
        '10.244.0.3',
        '--dst',
        '10.1.190.219:8080',
        '-o',
        'json',
      ),
    );
    assert.equal(r.code, 0, r.stderr);
    const outcomes = JSON.parse(r.stdout).outcomes.map(
      (o: { destination: string; masquerade: boolean; probability: number }) => [
        o.destination,
        o.masquerade,
        o.probability,
      ],
    );
    assert.deepEqual(outcomes.sort(), [
      ['10.244.0.3:80', true, 0.5],
      ['10.244.1.7:80', false, 0.5],
    ]);
  });

  it('expect needs only the objects: no node is touched', async () => {
    const before = execs.length;
    const r = await kdebug(['expect', '--node', 'vm-12-7-centos', '--kubeconfig', kubeconfig]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /-A KUBE-SERVICES -d 10\.1\.190\.219\/32 -p tcp -m comment --comment "default\/nginx-svc:http cluster IP"/,
    );
    assert.equal(execs.length, before);
  });

  const failures: [string, () => string[], RegExp][] = [
    [
      'two nodes and none picked',
      () => live('rules'),
      /context fake: pick a node with --node \(nodes: vm-12-11-centos, vm-12-7-centos\)/,
    ],
    [
      'a node the cluster does not have',
      () => live('drift', '--node', 'vm-1'),
      /context fake: no node "vm-1" \(nodes: vm-12-11-centos, vm-12-7-centos\)/,
    ],
    [
      '--ssh without a snapshot',
      () => live('drift', '--ssh', 'root@192.0.2.10'),
      /--ssh takes the objects from a snapshot/,
    ],
  ];
  for (const [what, args, message] of failures) {
    it(`exits 2 with one line for ${what}`, async () => {
      const r = await kdebug(args());
      assert.equal(r.code, 2, r.stdout);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    });
  }
});
