// The debug Pod against the fake API server: its shape (an image pinned by digest), the checks
// before creating one (RBAC, kdebug's namespace made or refused, Pod Security, consent) with their
// exact words, its life cycle (deleted on close, while being created, when it cannot start, when
// the API fails in the middle), its owner's lease, and `kdebug cleanup`, which spares the Pods of
// live runs and never touches a Pod that only carries kdebug's label. Hostile cases (a same-named
// Pod swapped in) are in debug-pod-hostile.test.ts.
// IP conventions: the lab's (test/support/lab/lab.ts): nodes 192.0.2.11-13, Pods 10.244.0.0/16.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { DEFAULT_DEBUG_IMAGE } from '../../src/cluster/debug-image.js';
import { KubeApi } from '../../src/cluster/kube-api.js';
import {
  DebugPods,
  type DebugPodConsent,
  type DebugPodOptions,
} from '../../src/cluster/nodes/debug-pod.js';
import { debugPodsLeft, deleteDebugPods } from '../../src/cluster/nodes/debug-pod/cleanup.js';
import {
  DEBUG_POD_SELECTOR,
  debugPodManifest,
  notKdebugs,
  OWNER,
} from '../../src/cluster/nodes/debug-pod/manifest.js';
import type { KubeObject } from '../../src/core/model.js';
import type { ExecHandler } from '../support/fake-api/exec.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import { startFakeApi, type FakeApi, type FakeApiOptions } from '../support/fake-api/server.js';
import { TOPOLOGY } from '../support/lab/lab.js';
import { labObjects } from '../support/lab/objects.js';

const POD = typeOfKind('Pod')!;
const NAMESPACE = typeOfKind('Namespace')!;
const OBJECTS = labObjects(TOPOLOGY);
const podsIn = (fake: FakeApi, ns = 'kdebug') =>
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

/** What the debug Pods told on stderr under --yes, per test. */
let told: string[] = [];
const pods = (api: KubeApi, o: DebugPodOptions = {}) =>
  new DebugPods(api, { yes: true, timeoutMs: 3000, tell: (l) => told.push(l), ...o });

describe('the debug Pod', () => {
  afterEach(async () => {
    told = [];
    for (const { fake, api } of opened.splice(0)) {
      api.close();
      await fake.close();
    }
  });

  it('is shaped like kubectl debug --profile=sysadmin, and dies by itself', () => {
    const p = debugPodManifest('node-a', {
      image: DEFAULT_DEBUG_IMAGE,
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
        c!['image'],
        c!['imagePullPolicy'],
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
        // the tag for people, the digest for the kubelet: a pushed tag cannot change what runs
        'nicolaka/netshoot:v0.13@sha256:a20c2531bf35436ed3766cd6cfe89d352b050ccc4d7005ce6400adf97503da1b',
        'IfNotPresent',
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
    // a tag given with --image: the API server's default pull policy, as kubectl debug leaves it
    const tagged = debugPodManifest('node-a', { image: 'tools:1', lifetimeSeconds: 1 });
    const [t] = (tagged['spec'] as { containers: Record<string, unknown>[] }).containers;
    assert.deepEqual([t!['image'], 'imagePullPolicy' in t!], ['tools:1', false]);
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
    assert.match(a.via, /^debug Pod kdebug\/kdebug-node-a-[a-z0-9]{5}$/);
    assert.notEqual(a.via, b.via);
    assert.deepEqual(seen, [
      `${a.via.split('/')[1]} debugger timeout 30 chroot /host /usr/sbin/iptables-save -t nat`,
    ]);
    await p.close();
    assert.deepEqual(podsIn(fake), []);
  });

  it('is deleted as soon as the run is done with its node: no more Pods alive than nodes in hand', async () => {
    const { fake, api } = await serve({ exec: () => ({ stdout: '', exitCode: 0 }) });
    const p = pods(api);
    await p.open('node-a');
    await p.open('node-b');
    await p.done('node-a');
    const nodeOf = (x: KubeObject) => (x['spec'] as { nodeName?: string }).nodeName;
    assert.deepEqual(podsIn(fake).map(nodeOf), ['node-b']);
    await p.done('node-a'); // twice: nothing more to do
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
      /^access denied by RBAC: user "dev" cannot create pods in namespace kdebug\. A debug Pod needs create, get, patch and delete on pods and get and create on pods\/exec there \(kdebug rbac --via pod prints the Role\): ask for them, pick another namespace with --debug-namespace, or use --via kube-proxy or --via ssh$/,
    ],
    [
      'RBAC: exec refused (1.35+ authorizes it as create too)',
      { rbac: { deny: [{ users: ['dev'], verbs: ['create'], resources: ['pods/exec'] }] } },
      'dev',
      {},
      /^access denied by RBAC: user "dev" cannot create pods\/exec in namespace kdebug\./,
    ],
    [
      "kdebug's namespace is absent and the user may not create namespaces",
      { rbac: { deny: [{ users: ['dev'], verbs: ['create'], resources: ['namespaces'] }] } },
      'dev',
      {},
      /^namespace kdebug does not exist and user "dev" may not create namespaces\. Ask someone who may to create it for kdebug's debug Pods: kubectl create namespace kdebug && kubectl label namespace kdebug pod-security\.kubernetes\.io\/enforce=privileged app\.kubernetes\.io\/managed-by=kdebug \(kdebug rbac --via pod prints it with the Role\), or use --debug-namespace, --via kube-proxy or --via ssh$/,
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
      assert.equal(fake.store.get(NAMESPACE, undefined, 'kdebug'), undefined, 'nor a namespace');
      await p.close();
    });

  it('asks once for every node, says where and what (the namespace it makes, the tag), and makes the namespace only after the yes', async () => {
    const asked: unknown[] = [];
    const { fake, api } = await serve();
    const p = pods(api, {
      yes: false,
      image: 'registry.example/tools:1',
      confirm: async (q) => {
        asked.push(q);
        assert.equal(fake.store.get(NAMESPACE, undefined, 'kdebug'), undefined, 'not before');
        return true;
      },
    });
    await Promise.all([p.open('node-a'), p.open('node-b'), p.open('node-c')]);
    assert.deepEqual(asked, [
      {
        namespace: 'kdebug',
        image: 'registry.example/tools:1',
        lifetimeSeconds: 900,
        createNamespace: true,
        warnings: [
          'image registry.example/tools:1 has no digest: whoever can push that tag decides what runs privileged on the nodes; pin it with --image registry.example/tools:1@sha256:<digest>',
        ],
      },
    ]);
    assert.deepEqual(fake.store.get(NAMESPACE, undefined, 'kdebug')?.metadata?.labels, {
      'pod-security.kubernetes.io/enforce': 'privileged',
      'app.kubernetes.io/managed-by': 'kdebug',
      'kubernetes.io/metadata.name': 'kdebug',
    });
    assert.equal(podsIn(fake).length, 3);
    await p.close();
    assert.equal(podsIn(fake).length, 0);
    assert.ok(
      fake.store.get(NAMESPACE, undefined, 'kdebug'),
      'the namespace stays for the next run',
    );
    assert.deepEqual(told, [], 'a person was asked: nothing told on stderr');
  });

  it('under --yes, makes the namespace and says so on stderr; the next run finds it and asks nothing about it', async () => {
    const { fake, api } = await serve();
    const first = pods(api);
    await first.open('node-a');
    await first.close();
    assert.deepEqual(told, [
      'created namespace kdebug (Pod Security "privileged") for debug Pods; kdebug leaves it for the next run (kubectl delete namespace kdebug removes it)',
    ]);
    const asked: unknown[] = [];
    const second = pods(api, { yes: false, confirm: async (q) => (asked.push(q), true) });
    await second.open('node-a');
    await second.close();
    assert.deepEqual(asked, [
      {
        namespace: 'kdebug',
        image: DEFAULT_DEBUG_IMAGE,
        lifetimeSeconds: 900,
        createNamespace: false,
        warnings: [],
      },
    ]);
    const made = fake.requests.filter(
      (r) => r.method === 'POST' && r.path === '/api/v1/namespaces',
    );
    assert.equal(made.length, 1);
  });

  const risk =
    'anyone who can exec there gets root on the node for up to 900 s while the debug Pod lives';
  const shared: [string, string | undefined, (fake: FakeApi) => void, string[]][] = [
    ["kdebug's own namespace, empty", undefined, () => undefined, []],
    [
      'a namespace that runs workloads',
      'default',
      () => undefined,
      [`namespace default holds other Pods: ${risk}`],
    ],
    [
      'another namespace, empty',
      'tools',
      (fake) => fake.store.put({ kind: 'Namespace', metadata: { name: 'tools' } }),
      [`namespace tools is not kdebug's own (kdebug): ${risk}`],
    ],
    [
      "kdebug's own namespace, with someone's Pod in it",
      undefined,
      (fake) => {
        fake.store.put({ kind: 'Namespace', metadata: { name: 'kdebug' } });
        fake.store.put({
          kind: 'Pod',
          metadata: { name: 'shell', namespace: 'kdebug' },
          spec: { containers: [{ name: 'sh', image: 'busybox' }] },
        });
      },
      [`namespace kdebug holds other Pods: ${risk}`],
    ],
  ];
  for (const [name, namespace, setup, warnings] of shared)
    it(`warns in the question, and on stderr under --yes, when others use the namespace: ${name}`, async () => {
      const { fake, api } = await serve();
      setup(fake);
      const asked: DebugPodConsent[] = [];
      const p = pods(api, { namespace, yes: false, confirm: async (q) => (asked.push(q), true) });
      await p.open('node-a');
      await p.close();
      assert.deepEqual(asked[0]?.warnings, warnings);
      const yes = pods(api, { namespace });
      await yes.open('node-a');
      await yes.close();
      assert.deepEqual(
        told.filter((l) => l.startsWith('warning: ')),
        warnings.map((w) => `warning: ${w}`),
      );
    });

  it('stops after the API refuses one (Pod Security from the cluster default), and says how to fix it', async () => {
    const { fake, api } = await serve({
      admitPod: () =>
        'violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "host-root"), privileged (container "debugger" must not set securityContext.privileged=true)',
    });
    const p = pods(api);
    await assert.rejects(
      p.open('node-a'),
      /^NodeUnavailable: Pod Security admission refused the Pod in namespace kdebug: violates PodSecurity "baseline:latest": .*\. Use --debug-namespace with a namespace labelled pod-security\.kubernetes\.io\/enforce=privileged, or --via kube-proxy or --via ssh$/,
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
      /^NodeUnavailable: debug Pod kdebug\/kdebug-node-a-\w{5} on node-a did not start: ImagePullBackOff \(Back-off pulling image "nicolaka\/netshoot:v0\.13"\); give an image node node-a can pull with --image$/,
    );
    assert.deepEqual(podsIn(fake), []);
  });

  it('is deleted when it does not run in time, with what it waits on', async () => {
    const { fake, api } = await serve({ startPodsAfterMs: false });
    // the kubelet took it (startTime) and is pulling its image
    fake.store.subscribe((e) => {
      if (e.type !== 'ADDED' || e.resourceType !== POD || !e.object.metadata?.['generateName'])
        return;
      const waiting = { waiting: { reason: 'ContainerCreating' } };
      setTimeout(() =>
        fake.store.put({
          ...e.object,
          status: {
            phase: 'Pending',
            startTime: '2026-12-06T10:00:00Z',
            containerStatuses: [
              { name: 'debugger', ready: false, restartCount: 0, state: waiting },
            ],
          },
        }),
      );
    });
    const p = pods(api, { timeoutMs: 600, kubeletAckMs: 100 });
    await assert.rejects(
      p.open('node-a'),
      /did not start: still Pending \(ContainerCreating\) after 1s$/,
    );
    assert.deepEqual(podsIn(fake), []);
  });

  it('is deleted as soon as no kubelet has taken it, not at the deadline, and says so', async () => {
    // a Node that exists in the API only: nothing ever writes the Pod's status
    const { fake, api } = await serve({ startPodsAfterMs: false });
    const p = pods(api, { timeoutMs: 60_000, kubeletAckMs: 500 });
    const t = performance.now();
    await assert.rejects(
      p.open('node-a'),
      /^NodeUnavailable: debug Pod kdebug\/kdebug-node-a-\w{5} on node-a did not start: no kubelet took it within 1s \(no status\.startTime: is the node's kubelet running\?\)$/,
    );
    assert.ok(performance.now() - t < 5000, `${Math.round(performance.now() - t)} ms`);
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
    told = [];
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
    const renewals = () => fake.requests.filter((r) => r.method === 'PATCH').length;
    const renewedNow = () => podsIn(fake)[0]!.metadata!.annotations![OWNER.renewed]!;
    // renewed, however slow a loaded machine is (every 40 ms when it is not)
    const done = () => renewedNow() > first && renewals() >= 2;
    for (const until = Date.now() + 10_000; !done() && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(renewedNow() > first, `${renewedNow()} after ${first}`);
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
    fake.store.remove(POD, 'kdebug', made!.metadata!.name!);
    await new Promise((r) => setTimeout(r, 150));
    const r = await runner.run({ kind: 'ip-addr' });
    assert.equal(r.exitCode, null);
    assert.match(
      r.error!,
      /^debug Pod kdebug\/kdebug-node-a-\w{5} on node-a was deleted by someone else while kdebug used it$/,
    );
    assert.deepEqual(p.pods, []);
    await p.close();
  });

  it('finds a Pod deleted mid-command by the broken stream, not only by the renewal', async () => {
    const served: { fake?: FakeApi } = {};
    const { fake, api } = await serve({
      exec: () => {
        const pod = podsIn(served.fake!)[0]!;
        served.fake!.store.remove(POD, 'kdebug', pod.metadata!.name!);
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
  /** A debug Pod as kdebug made it, renewed that long ago. */
  const leftover = (
    name: string,
    namespace: string,
    phase: string,
    renewedSecondsAgo = 30,
    drop: (keyof typeof OWNER)[] = [],
  ): KubeObject => {
    const p = debugPodManifest('node-a', {
      image: 'i',
      lifetimeSeconds: 900,
      run: { id: name, owner: `host-${name} pid 1 started x` },
      now: ago(renewedSecondsAgo),
    });
    const annotations = { ...p.metadata!.annotations! };
    for (const k of drop) delete annotations[OWNER[k]];
    return {
      ...p,
      metadata: { ...p.metadata, name, namespace, annotations },
      status: { phase, reason: phase === 'Failed' ? 'DeadlineExceeded' : undefined },
    };
  };
  /** A workload someone labelled as kdebug's: a ReplicaSet's Pod. */
  const PAYMENTS: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'payments-api-7d9f8-x2x4z',
      namespace: 'prod',
      labels: { app: 'payments-api', 'app.kubernetes.io/managed-by': 'kdebug' },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'payments-api-7d9f8', controller: true },
      ],
    },
    spec: {
      nodeName: 'node-b',
      containers: [{ name: 'api', image: 'registry.example/payments:4.2', command: ['/api'] }],
    },
    status: { phase: 'Running' },
  };
  before(async () => {
    fake = await startFakeApi({
      objects: OBJECTS,
      tokens: { 'admin-token': 'admin', 'dev-token': 'dev' },
      rbac: {
        allow: [
          { users: ['admin'], verbs: ['*'], resources: ['*'] },
          { users: ['dev'], verbs: ['*'], resources: ['pods'], namespaces: ['kdebug'] },
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
    fake.store.put(leftover('kdebug-node-a-n0l5e', 'kdebug', 'Running', 10, ['renewed']));
    // an older kdebug's: no run annotation, so nothing says it is kdebug's
    fake.store.put(leftover('kdebug-node-a-old99', 'default', 'Running', 10, ['run']));
    fake.store.put(PAYMENTS);
  };
  const connect = (user: string) =>
    KubeApi.connect({ kubeconfig: fake.kubeconfig({ user, namespace: 'default' }), env: {} });

  it("finds every Pod with kdebug's label, says which runs are alive and why the rest are left, and sets apart those not of kdebug's shape", async () => {
    reset();
    const api = await connect('admin');
    const r = await debugPodsLeft(api, { now: NOW });
    api.close();
    assert.equal(r.scope, 'all namespaces');
    assert.deepEqual(
      r.pods.map((d) => `${d.namespace}/${d.name} ${d.phase} live=${d.live}: ${d.why}; ${d.owner}`),
      [
        'default/kdebug-node-a-b2c4d Failed live=false: it ended (Failed); host-kdebug-node-a-b2c4d pid 1 started x',
        'kdebug/kdebug-node-a-n0l5e Running live=false: it has no lease; host-kdebug-node-a-n0l5e pid 1 started x',
        'tools/kdebug-node-b-x7z9q Running live=false: its run stopped renewing it 200s ago (lease 60s); host-kdebug-node-b-x7z9q pid 1 started x',
        'tools/kdebug-node-c-live1 Running live=true: its run renewed it 10s ago; host-kdebug-node-c-live1 pid 1 started x',
      ],
    );
    assert.deepEqual(
      r.notKdebugs.map((d) => `${d.namespace}/${d.name}: ${d.why}`),
      [
        'default/kdebug-node-a-old99: no kdebug.io/run annotation',
        'prod/payments-api-7d9f8-x2x4z: owned by ReplicaSet payments-api-7d9f8, its name does not start with kdebug-, its container is not debugger, its container does not run sleep N, no kdebug.io/run annotation',
      ],
    );
    assert.ok(fake.requests.some((q) => q.query.get('labelSelector') === DEBUG_POD_SELECTOR));
  });

  const mutations: [string, (p: KubeObject) => KubeObject, string | undefined][] = [
    ['as kdebug made it', (p) => p, undefined],
    [
      'an owner',
      (p) => ({ ...p, metadata: { ...p.metadata, ownerReferences: [{ kind: 'Job', name: 'j' }] } }),
      'owned by Job j',
    ],
    [
      'another name',
      (p) => ({ ...p, metadata: { ...p.metadata, name: 'debugger-node-a' } }),
      'its name does not start with kdebug-',
    ],
    [
      'two containers',
      (p) => withContainers(p, (c) => [c, { ...c, name: 'sidecar' }]),
      '2 containers, not one',
    ],
    [
      'another container',
      (p) => withContainers(p, (c) => [{ ...c, name: 'app' }]),
      'its container is not debugger',
    ],
    [
      'another command',
      (p) => withContainers(p, (c) => [{ ...c, command: ['sh', '-c', 'sleep 900'] }]),
      'its container does not run sleep N',
    ],
    [
      'no run annotation',
      (p) => ({ ...p, metadata: { ...p.metadata, annotations: {} } }),
      'no kdebug.io/run annotation',
    ],
  ];
  for (const [name, change, why] of mutations)
    it(`kdebug's shape: ${name}`, () => {
      assert.equal(notKdebugs(change(leftover('kdebug-node-a-x', 'd', 'Running'))), why);
    });

  it('a deadline that passed ends the lease too', async () => {
    reset();
    const api = await connect('admin');
    const r = await debugPodsLeft(api, { now: new Date(NOW.getTime() + 900_000) });
    api.close();
    const live = r.pods.find((p) => p.name === 'kdebug-node-c-live1')!;
    assert.deepEqual([live.live, live.why], [false, 'its deadline passed']);
  });

  it('deletes what it is given, by UID, and nothing else', async () => {
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
      ['kdebug-node-a-b2c4d', 'kdebug-node-a-n0l5e', 'kdebug-node-b-x7z9q'],
    );
    assert.equal(fake.store.list(POD).length, before - 3);
    for (const [ns, name] of [
      ['tools', 'kdebug-node-c-live1'],
      ['default', 'kdebug-node-a-old99'],
      ['prod', 'payments-api-7d9f8-x2x4z'],
    ])
      assert.ok(fake.store.get(POD, ns, name!), `${ns}/${name} is still there`);
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

  it("falls back to kdebug's namespace when it may not list Pods everywhere, and says so", async () => {
    reset();
    const api = await connect('dev');
    const r = await debugPodsLeft(api, { now: NOW });
    api.close();
    assert.deepEqual(
      [r.scope, r.pods.map((d) => d.name)],
      ['namespace kdebug', ['kdebug-node-a-n0l5e']],
    );
    assert.match(
      r.note!,
      /^cannot list Pods in all namespaces \(access denied by RBAC: user "dev" cannot list pods at the cluster scope .*\); looked in kdebug only, kdebug's namespace for debug Pods \(use -n for another\)$/,
    );
  });
});

/** The Pod with its one container's list changed. */
function withContainers(
  p: KubeObject,
  f: (c: Record<string, unknown>) => Record<string, unknown>[],
): KubeObject {
  const spec = p['spec'] as { containers: Record<string, unknown>[] };
  return { ...p, spec: { ...spec, containers: f(spec.containers[0]!) } };
}
