// The debug Pod against the fake API server: its shape, the checks before creating one (RBAC,
// Pod Security, consent) with their exact words, its life cycle (deleted on close, while being
// created, when it cannot start, when the API fails in the middle), its owner's lease, and
// `kdebug cleanup`, which spares the Pods of live runs.
// IP conventions: the lab's (test/support/lab/lab.ts): nodes 192.0.2.11-13, Pods 10.244.0.0/16.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { KubeApi } from '../../src/cluster/kube-api.js';
import {
  DEBUG_POD_SELECTOR,
  debugPodManifest,
  DebugPods,
  debugPodsLeft,
  deleteDebugPods,
  OWNER,
  type DebugPodOptions,
} from '../../src/cluster/node-pod.js';
import type { KubeObject } from '../../src/core/model.js';
import type { ExecHandler } from '../support/fake-api/exec.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import { startFakeApi, type FakeApi, type FakeApiOptions } from '../support/fake-api/server.js';
import { TOPOLOGY } from '../support/lab/lab.js';
import { labObjects } from '../support/lab/objects.js';

const POD = typeOfKind('Pod')!;
const OBJECTS = labObjects(TOPOLOGY);
const podsIn = (fake: FakeApi, ns = 'default') =>
  fake.store
    .list(POD, ns)
    .filter((p) => p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'kdebug');
const creates = (fake: FakeApi) =>
  fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods')).length;

const echo: ExecHandler = (req) => ({ stdout: `${req.command.join(' ')}\n`, exitCode: 0 });

/** A fake API server and a KubeApi for one test; closed by the suite's afterEach. */
async function serve(
  o: FakeApiOptions = {},
  user = 'admin',
): Promise<{ fake: FakeApi; api: KubeApi }> {
  const fake = await startFakeApi({
    objects: OBJECTS,
    exec: echo,
    tokens: { 'admin-token': 'admin', 'dev-token': 'dev' },
    ...o,
  });
  const api = await KubeApi.connect({
    kubeconfig: fake.kubeconfig({ user, namespace: 'default' }),
    env: {},
    timeoutMs: 5000,
  });
  opened.push({ fake, api });
  return { fake, api };
}
const opened: { fake: FakeApi; api: KubeApi }[] = [];

const pods = (api: KubeApi, o: DebugPodOptions = {}) =>
  new DebugPods(api, { yes: true, timeoutMs: 3000, ...o });

describe('the debug Pod', () => {
  afterEach(async () => {
    for (const { fake, api } of opened.splice(0)) {
      api.close();
      await fake.close();
    }
  });

  it('is shaped like kubectl debug --profile=sysadmin, and dies by itself', () => {
    const p = debugPodManifest('node-a', {
      image: 'nicolaka/netshoot:v0.13',
      lifetimeSeconds: 900,
    });
    const spec = p['spec'] as Record<string, unknown>;
    const [c] = spec['containers'] as Record<string, unknown>[];
    assert.deepEqual(
      [
        p.metadata?.['generateName'],
        p.metadata?.labels?.['app.kubernetes.io/managed-by'],
        spec['nodeName'],
        spec['hostNetwork'],
        spec['hostPID'],
        spec['dnsPolicy'],
        spec['restartPolicy'],
        spec['tolerations'],
        spec['activeDeadlineSeconds'],
        c!['command'],
        c!['securityContext'],
        c!['volumeMounts'],
        spec['volumes'],
      ],
      [
        'kdebug-node-a-',
        'kdebug',
        'node-a',
        true,
        true,
        'ClusterFirstWithHostNet',
        'Never',
        [{ operator: 'Exists' }],
        900,
        ['sleep', '900'],
        { privileged: true },
        [{ name: 'host-root', mountPath: '/host', readOnly: true }],
        [{ name: 'host-root', hostPath: { path: '/' } }],
      ],
    );
    const long = debugPodManifest(`ip-10-0-12-7.${'x'.repeat(60)}.internal`, {
      image: 'i',
      lifetimeSeconds: 1,
    });
    assert.match(String(long.metadata?.['generateName']), /^kdebug-ip-10-0-12-7\.x+-$/);
    assert.ok(String(long.metadata?.['generateName']).length <= 53);
  });

  it('is created on first use, runs commands there, and is deleted on close', async () => {
    const seen: string[] = [];
    const { fake, api } = await serve({
      exec: (req) => {
        seen.push(`${req.pod.metadata?.name} ${req.container} ${req.command.join(' ')}`);
        return { stdout: 'iptables\n', exitCode: 0 };
      },
    });
    const p = pods(api);
    const a = await p.open('node-a');
    const b = await p.open('node-b');
    assert.equal(podsIn(fake).length, 2);
    const r = await a.run({ kind: 'iptables-save', backend: 'auto', table: 'nat' });
    assert.deepEqual([r.stdout, r.exitCode, r.via], ['iptables\n', 0, a.via]);
    assert.match(a.via, /^debug Pod default\/kdebug-node-a-[a-z0-9]{5}$/);
    assert.notEqual(a.via, b.via);
    assert.deepEqual(seen, [
      `${a.via.split('/')[1]} debugger timeout 30 chroot /host /usr/sbin/iptables-save -t nat`,
    ]);
    await p.close();
    assert.deepEqual(podsIn(fake), []);
  });

  it('says which binary the node lacks', async () => {
    const { api } = await serve({ exec: () => ({ stderr: 'chroot: failed', exitCode: 127 }) });
    const p = pods(api);
    const r = await (await p.open('node-a')).run({ kind: 'iptables-save', backend: 'legacy' });
    assert.equal(r.error, '/usr/sbin/iptables-legacy-save is not installed on node node-a');
    await p.close();
  });

  const refusals: [string, FakeApiOptions, string, DebugPodOptions, RegExp][] = [
    [
      'RBAC: cannot create Pods in the namespace',
      { rbac: { deny: [{ users: ['dev'], verbs: ['create'], resources: ['pods'] }] } },
      'dev',
      {},
      /^access denied by RBAC: user "dev" cannot create pods in namespace default\. A debug Pod needs create, get, patch and delete on pods and get and create on pods\/exec there \(kdebug rbac --via pod prints the Role\): ask for them, pick another namespace with --debug-namespace, or use --via kube-proxy or --via ssh$/,
    ],
    [
      'RBAC: exec refused (1.35+ authorizes it as create too)',
      { rbac: { deny: [{ users: ['dev'], verbs: ['create'], resources: ['pods/exec'] }] } },
      'dev',
      {},
      /^access denied by RBAC: user "dev" cannot create pods\/exec in namespace default\./,
    ],
    [
      'Pod Security baseline on the namespace',
      {},
      'admin',
      { namespace: 'apps' },
      /^namespace apps enforces Pod Security "baseline" \(label pod-security\.kubernetes\.io\/enforce=baseline\), which refuses a privileged Pod with the node's network, PIDs and files\. Use --debug-namespace with a namespace labelled pod-security\.kubernetes\.io\/enforce=privileged, or allow it here: kubectl label namespace apps pod-security\.kubernetes\.io\/enforce=privileged --overwrite \(or use --via kube-proxy or --via ssh\)$/,
    ],
    [
      'Pod Security restricted on the namespace',
      {},
      'admin',
      { namespace: 'locked' },
      /^namespace locked enforces Pod Security "restricted"/,
    ],
    [
      'a namespace that does not exist',
      {},
      'admin',
      { namespace: 'nowhere' },
      /^namespace nowhere does not exist \(see --debug-namespace\)$/,
    ],
    [
      'no --yes and nobody to ask',
      {},
      'admin',
      { yes: false },
      /^kdebug creates a privileged debug Pod only with your consent: add --yes$/,
    ],
    [
      'the person says no',
      {},
      'admin',
      { yes: false, confirm: async () => false },
      /^you declined to create debug Pods$/,
    ],
  ];
  for (const [name, options, user, o, message] of refusals)
    it(`is refused before trying: ${name}`, async () => {
      const { fake, api } = await serve(options, user);
      for (const [ns, level] of [
        ['apps', 'baseline'],
        ['locked', 'restricted'],
      ])
        fake.store.put({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns, labels: { 'pod-security.kubernetes.io/enforce': level! } },
        });
      const p = pods(api, o);
      await assert.rejects(p.open('node-a'), (e: Error) => {
        assert.equal(e.name, 'NodeUnavailable');
        assert.match(e.message, message);
        return true;
      });
      await assert.rejects(p.open('node-b'), { message });
      assert.equal(creates(fake), 0, 'no Pod was even tried');
      await p.close();
    });

  it('asks once for every node, and says where and what', async () => {
    const asked: unknown[] = [];
    const { fake, api } = await serve();
    const p = pods(api, {
      yes: false,
      image: 'registry.example/tools:1',
      confirm: async (q) => (asked.push(q), true),
    });
    await Promise.all([p.open('node-a'), p.open('node-b'), p.open('node-c')]);
    assert.deepEqual(asked, [
      { namespace: 'default', image: 'registry.example/tools:1', lifetimeSeconds: 900 },
    ]);
    assert.equal(podsIn(fake).length, 3);
    await p.close();
    assert.equal(podsIn(fake).length, 0);
  });

  it('stops after the API refuses one (Pod Security from the cluster default), and says how to fix it', async () => {
    const { fake, api } = await serve({
      admitPod: () =>
        'violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "host-root"), privileged (container "debugger" must not set securityContext.privileged=true)',
    });
    const p = pods(api);
    await assert.rejects(
      p.open('node-a'),
      /^NodeUnavailable: Pod Security admission refused the Pod in namespace default: violates PodSecurity "baseline:latest": .*\. Use --debug-namespace with a namespace labelled pod-security\.kubernetes\.io\/enforce=privileged, or --via kube-proxy or --via ssh$/,
    );
    await assert.rejects(p.open('node-b'), /Pod Security admission refused/);
    assert.equal(creates(fake), 1);
  });

  it('is deleted when it cannot start (an image the node cannot pull), with what to do', async () => {
    const { fake, api } = await serve({ startPodsAfterMs: false });
    fake.store.subscribe((e) => {
      if (e.type !== 'ADDED' || e.resourceType !== POD || !e.object.metadata?.['generateName'])
        return;
      setTimeout(() =>
        fake.store.put({
          ...e.object,
          status: {
            phase: 'Pending',
            containerStatuses: [
              {
                name: 'debugger',
                ready: false,
                restartCount: 0,
                state: {
                  waiting: {
                    reason: 'ImagePullBackOff',
                    message: 'Back-off pulling image "nicolaka/netshoot:v0.13"',
                  },
                },
              },
            ],
          },
        }),
      );
    });
    const p = pods(api);
    await assert.rejects(
      p.open('node-a'),
      /^NodeUnavailable: debug Pod default\/kdebug-node-a-\w{5} on node-a did not start: ImagePullBackOff \(Back-off pulling image "nicolaka\/netshoot:v0\.13"\); give an image node node-a can pull with --image$/,
    );
    assert.deepEqual(podsIn(fake), []);
  });

  it('is deleted when it does not run in time', async () => {
    const { fake, api } = await serve({ startPodsAfterMs: false });
    const p = pods(api, { timeoutMs: 600 });
    await assert.rejects(p.open('node-a'), /did not start: still Pending after 1s$/);
    assert.deepEqual(podsIn(fake), []);
  });

  it('is deleted when the API fails in the middle (reading it back times out)', async () => {
    const { fake, api } = await serve({
      stall: (r) => r.method === 'GET' && /\/pods\/kdebug-node-a-/.test(r.path),
    });
    const p = pods(api, { timeoutMs: 1000 });
    await assert.rejects(
      p.open('node-a'),
      /did not start: .*did not answer|did not start: .*within/,
    );
    assert.deepEqual(podsIn(fake), []);
    await p.close();
  });

  it('is deleted when close() comes while it is being created', async () => {
    const { fake, api } = await serve({ delayMs: 300 });
    const p = pods(api);
    const opening = p.open('node-a');
    while (creates(fake) === 0) await new Promise((r) => setTimeout(r, 10));
    await p.close(); // the create is on its way: its answer is still 300 ms off
    assert.deepEqual(podsIn(fake), []);
    await assert.rejects(opening, /kdebug is ending/);
    assert.deepEqual(podsIn(fake), []);
    assert.equal(creates(fake), 1);
  });

  it('survives a caller that throws in the middle: close() in its finally removes the Pods', async () => {
    const { fake, api } = await serve();
    const p = pods(api);
    await assert.rejects(async () => {
      try {
        await p.open('node-a');
        await p.open('node-b');
        throw new Error('something else broke');
      } finally {
        await p.close();
      }
    }, /something else broke/);
    assert.deepEqual(podsIn(fake), []);
  });
});

describe("the debug Pod's owner and lease", () => {
  afterEach(async () => {
    for (const { fake, api } of opened.splice(0)) {
      api.close();
      await fake.close();
    }
  });
  const run = { id: 'a1b2c3d4e5f60718', owner: 'laptop pid 4242 started 2026-12-01T10:00:00.000Z' };

  it('names its run, and the run renews the lease while it lives, and stops when closed', async () => {
    const { fake, api } = await serve();
    const p = pods(api, { run, renewEveryMs: 40 });
    await p.open('node-a');
    const [made] = podsIn(fake);
    const a = made!.metadata!.annotations!;
    assert.deepEqual([a[OWNER.run], a[OWNER.owner], a[OWNER.lease]], [run.id, run.owner, '60']);
    const deadlineIn = Date.parse(a[OWNER.deadline]!) - Date.now();
    assert.ok(deadlineIn > 895_000 && deadlineIn <= 900_000, `deadline in ${deadlineIn} ms`);
    const first = a[OWNER.renewed]!;
    await new Promise((r) => setTimeout(r, 150));
    const renewed = podsIn(fake)[0]!.metadata!.annotations![OWNER.renewed]!;
    assert.ok(renewed > first, `${renewed} after ${first}`);
    const renewals = () => fake.requests.filter((r) => r.method === 'PATCH').length;
    assert.ok(renewals() >= 2, `${renewals()} renewals`);
    await p.close();
    const closed = renewals();
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(renewals(), closed, 'no renewal after close');
  });

  it('says a Pod someone else deleted while it was used was deleted, and close() does not fail', async () => {
    const { fake, api } = await serve();
    const p = pods(api, { renewEveryMs: 40 });
    const runner = await p.open('node-a');
    assert.equal((await runner.run({ kind: 'ip-addr' })).exitCode, 0);
    const [made] = podsIn(fake);
    fake.store.remove(POD, 'default', made!.metadata!.name!);
    await new Promise((r) => setTimeout(r, 150));
    const r = await runner.run({ kind: 'ip-addr' });
    assert.equal(r.exitCode, null);
    assert.match(
      r.error!,
      /^debug Pod default\/kdebug-node-a-\w{5} on node-a was deleted by someone else while kdebug used it$/,
    );
    assert.deepEqual(p.pods, []);
    await p.close();
  });

  it('finds a Pod deleted mid-command by the broken stream, not only by the renewal', async () => {
    const served: { fake?: FakeApi } = {};
    const { fake, api } = await serve({
      exec: () => {
        const pod = podsIn(served.fake!)[0]!;
        served.fake!.store.remove(POD, 'default', pod.metadata!.name!);
        return { stdout: 'half a dump\n', drop: true, exitCode: 0 };
      },
    });
    served.fake = fake;
    const p = pods(api);
    const runner = await p.open('node-a');
    const r = await runner.run({ kind: 'iptables-save', backend: 'auto' });
    assert.equal(r.exitCode, null);
    assert.match(r.error!, /was deleted by someone else while kdebug used it$/);
    await p.close();
  });
});

describe('kdebug cleanup (debugPodsLeft, deleteDebugPods)', () => {
  let fake: FakeApi;
  const NOW = new Date('2026-12-01T12:00:00Z');
  const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
  const leftover = (
    name: string,
    namespace: string,
    phase: string,
    renewedSecondsAgo?: number,
  ): KubeObject => {
    const p = debugPodManifest('node-a', {
      image: 'i',
      lifetimeSeconds: 900,
      run: { id: name, owner: `host-${name} pid 1 started x` },
      now: ago(renewedSecondsAgo ?? 30),
    });
    const annotations = { ...p.metadata!.annotations! };
    if (renewedSecondsAgo === undefined)
      for (const k of Object.values(OWNER)) delete annotations[k]; // an older kdebug's Pod
    return {
      ...p,
      metadata: { ...p.metadata, name, namespace, annotations },
      status: { phase, reason: phase === 'Failed' ? 'DeadlineExceeded' : undefined },
    };
  };
  before(async () => {
    fake = await startFakeApi({
      objects: OBJECTS,
      tokens: { 'admin-token': 'admin', 'dev-token': 'dev' },
      rbac: {
        allow: [
          { users: ['admin'], verbs: ['*'], resources: ['*'] },
          { users: ['dev'], verbs: ['*'], resources: ['pods'], namespaces: ['default'] },
        ],
      },
    });
  });
  after(() => fake.close());
  const reset = () => {
    for (const p of fake.store.list(POD))
      if (p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'kdebug')
        fake.store.remove(POD, p.metadata.namespace, p.metadata.name!);
    fake.store.put(leftover('kdebug-node-a-b2c4d', 'default', 'Failed', 5));
    fake.store.put(leftover('kdebug-node-b-x7z9q', 'tools', 'Running', 200));
    fake.store.put(leftover('kdebug-node-c-live1', 'tools', 'Running', 10));
    fake.store.put(leftover('kdebug-node-a-old99', 'default', 'Running'));
  };
  const connect = (user: string) =>
    KubeApi.connect({ kubeconfig: fake.kubeconfig({ user, namespace: 'default' }), env: {} });

  it('finds every debug Pod by its label, says which runs are alive and why the rest are left', async () => {
    reset();
    const api = await connect('admin');
    const r = await debugPodsLeft(api, { now: NOW });
    api.close();
    assert.equal(r.scope, 'all namespaces');
    assert.deepEqual(
      r.pods.map((d) => `${d.namespace}/${d.name} ${d.phase} live=${d.live}: ${d.why}; ${d.owner}`),
      [
        'default/kdebug-node-a-b2c4d Failed live=false: it ended (Failed); host-kdebug-node-a-b2c4d pid 1 started x',
        'default/kdebug-node-a-old99 Running live=false: it has no lease (made by an older kdebug); undefined',
        'tools/kdebug-node-b-x7z9q Running live=false: its run stopped renewing it 200s ago (lease 60s); host-kdebug-node-b-x7z9q pid 1 started x',
        'tools/kdebug-node-c-live1 Running live=true: its run renewed it 10s ago; host-kdebug-node-c-live1 pid 1 started x',
      ],
    );
    assert.ok(fake.requests.some((q) => q.query.get('labelSelector') === DEBUG_POD_SELECTOR));
  });

  it('a deadline that passed ends the lease too', async () => {
    reset();
    const api = await connect('admin');
    const r = await debugPodsLeft(api, { now: new Date(NOW.getTime() + 900_000) });
    api.close();
    const live = r.pods.find((p) => p.name === 'kdebug-node-c-live1')!;
    assert.deepEqual([live.live, live.why], [false, 'its deadline passed']);
  });

  it('deletes what it is given and nothing else', async () => {
    reset();
    const api = await connect('admin');
    const before = fake.store.list(POD).length;
    const r = await debugPodsLeft(api, { now: NOW });
    const deleted = await deleteDebugPods(
      api,
      r.pods.filter((p) => !p.live),
    );
    api.close();
    assert.deepEqual(
      deleted.map((d) => d.name),
      ['kdebug-node-a-b2c4d', 'kdebug-node-a-old99', 'kdebug-node-b-x7z9q'],
    );
    assert.equal(fake.store.list(POD).length, before - 3);
    assert.ok(fake.store.get(POD, 'tools', 'kdebug-node-c-live1'));
  });

  it('looks in one namespace with -n', async () => {
    reset();
    const api = await connect('admin');
    const r = await debugPodsLeft(api, { namespace: 'tools', now: NOW });
    api.close();
    assert.deepEqual(
      [r.scope, r.pods.map((d) => d.name)],
      ['namespace tools', ['kdebug-node-b-x7z9q', 'kdebug-node-c-live1']],
    );
  });

  it("falls back to the context's namespace when it may not list Pods everywhere, and says so", async () => {
    reset();
    const api = await connect('dev');
    const r = await debugPodsLeft(api, { now: NOW });
    api.close();
    assert.deepEqual(
      [r.scope, r.pods.map((d) => d.name)],
      ['namespace default', ['kdebug-node-a-b2c4d', 'kdebug-node-a-old99']],
    );
    assert.match(
      r.note!,
      /^cannot list Pods in all namespaces \(access denied by RBAC: user "dev" cannot list pods at the cluster scope .*\); looked in default only \(use -n for another\)$/,
    );
  });
});
