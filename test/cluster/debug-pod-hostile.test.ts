// The debug Pod against someone who can make and delete Pods in its namespace: a Pod of the same
// name swapped in is never exec'd, renewed or deleted (kdebug holds the UID the API gave it at
// create), the node's reads are said lost with why, and `kdebug cleanup --all --yes` leaves a
// workload that merely carries kdebug's label. The fake API server answers the UID preconditions
// as kube-apiserver does (rest.BeforeDelete's 409; a patch naming another metadata.uid is 422).
// IP conventions: the lab's (test/support/lab/lab.ts): nodes 192.0.2.11-13, Pods 10.244.0.0/16.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { KubeApi } from '../../src/cluster/kube-api.js';
import { KubeApiError } from '../../src/cluster/kube/errors.js';
import { DebugPods, type DebugPodOptions } from '../../src/cluster/nodes/debug-pod.js';
import { debugPodsLeft, deleteDebugPods } from '../../src/cluster/nodes/debug-pod/cleanup.js';
import { debugPodManifest } from '../../src/cluster/nodes/debug-pod/manifest.js';
import { NodeAccessTransport } from '../../src/cluster/nodes/transport.js';
import type { KubeObject } from '../../src/core/model.js';
import { kdebugAsync } from '../support/cli.js';
import type { ExecHandler } from '../support/fake-api/exec.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { TOPOLOGY } from '../support/lab/lab.js';
import { labObjects } from '../support/lab/objects.js';

const POD = typeOfKind('Pod')!;
const OBJECTS = labObjects(TOPOLOGY);
const IP_ADDR = { kind: 'ip-addr' } as const;
const SWAPPED =
  /^debug Pod kdebug\/kdebug-node-a-\w{5} on node-a was replaced by another Pod of the same name while kdebug used it$/;

/** The one debug Pod in kdebug's namespace. */
const debugPod = (fake: FakeApi) =>
  fake.store.list(POD, 'kdebug').find((p) => p.metadata?.name?.startsWith('kdebug-'))!;

/** Deletes the debug Pod and makes another of the same name and shape: a new UID, an old name. */
function swap(fake: FakeApi): { name: string; uid: string } {
  const mine = debugPod(fake);
  const name = mine.metadata!.name!;
  fake.store.remove(POD, 'kdebug', name);
  const { uid: _old, resourceVersion: _rv, ...meta } = mine.metadata!;
  const impostor = fake.store.put({ ...mine, metadata: meta });
  return { name, uid: String(impostor.metadata!['uid']) };
}

describe('a debug Pod swapped for another of the same name', () => {
  let fake: FakeApi;
  let api: KubeApi;
  /** The UIDs of the Pods exec'd into, in order. */
  let execd: string[] = [];
  const exec: ExecHandler = (req) => {
    execd.push(String(req.pod.metadata?.['uid']));
    return { stdout: '1: lo\n', exitCode: 0 };
  };
  /** Debug Pods over the fake API, or over `over`: the API with some of its calls changed. */
  const pods = (o: DebugPodOptions = {}, over: KubeApi = api) =>
    new DebugPods(over, { yes: true, timeoutMs: 3000, tell: () => undefined, ...o });

  before(async () => {
    fake = await startFakeApi({ objects: OBJECTS, exec });
    api = await KubeApi.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      timeoutMs: 5000,
    });
  });
  afterEach(() => {
    execd = [];
    for (const p of fake.store.list(POD, 'kdebug'))
      fake.store.remove(POD, 'kdebug', p.metadata!.name!);
  });
  after(async () => {
    api.close();
    await fake.close();
  });

  it("is not exec'd between two commands: the node's reads are lost, with why, and the impostor stays", async () => {
    // no renewal in this test: the check before each exec must catch it on its own
    const t = NodeAccessTransport.create(api, {
      via: 'pod',
      timeoutMs: 3000,
      pod: { yes: true, tell: () => undefined, renewEveryMs: 3_600_000 },
    });
    const first = await t.run('node-a', IP_ADDR);
    assert.deepEqual([first.exitCode, first.stdout], [0, '1: lo\n']);
    const mine = String(debugPod(fake).metadata!['uid']);
    const impostor = swap(fake);
    const second = await t.run('node-a', IP_ADDR);
    assert.deepEqual([second.exitCode, second.lost], [null, true]);
    assert.match(second.error!, SWAPPED);
    // the channel is done with that node: a third read does not go back to the name
    const third = await t.run('node-a', IP_ADDR);
    assert.equal(third.exitCode, null);
    assert.deepEqual(execd, [mine], 'only the Pod kdebug made was ever exec’d');
    await t.close();
    assert.equal(
      debugPod(fake).metadata!['uid'],
      impostor.uid,
      'close() did not delete the Pod kdebug did not make',
    );
  });

  it('renews one lease patch at a time: an API server slower than the renewal period gets no pile-up', async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    // the patch answers after three renewal periods
    const slow = Object.create(api) as KubeApi;
    slow.patchPod = async (...args: Parameters<KubeApi['patchPod']>) => {
      calls++;
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 120));
      inFlight--;
      return api.patchPod(...args);
    };
    const p = pods({ renewEveryMs: 40 }, slow);
    await p.open('node-a');
    await new Promise((r) => setTimeout(r, 400));
    await p.close();
    assert.ok(calls >= 2, `renewed ${calls} times`);
    assert.equal(most, 1, 'at most one renewal on its way');
  });

  it('renews nothing once close() began, even where the first create was still on its way', async () => {
    let patches = 0;
    let inCreate!: () => void;
    let release!: () => void;
    const creating = new Promise<void>((r) => (inCreate = r));
    const answered = new Promise<void>((r) => (release = r));
    const gated = Object.create(api) as KubeApi;
    gated.createPod = async (...args: Parameters<KubeApi['createPod']>) => {
      const pod = await api.createPod(...args);
      inCreate();
      await answered; // the Pod exists; its answer arrives after close() began
      return pod;
    };
    gated.patchPod = async (...args: Parameters<KubeApi['patchPod']>) => {
      patches++;
      return api.patchPod(...args);
    };
    // a slow delete: five renewal periods in which a renewer left running would patch the Pod
    gated.deletePod = async (...args: Parameters<KubeApi['deletePod']>) => {
      await new Promise((r) => setTimeout(r, 100));
      return api.deletePod(...args);
    };
    const p = pods({ renewEveryMs: 20 }, gated);
    const opening = p.open('node-a').catch(() => undefined);
    await creating;
    const closing = p.close();
    release();
    await Promise.all([opening, closing]);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(patches, 0, 'no lease renewed for a run that is ending');
    assert.deepEqual(p.pods, []);
  });

  it('is found by the lease renewal, whose patch names the UID, and is then neither renewed nor exec’d', async () => {
    const p = pods({ renewEveryMs: 40 });
    const runner = await p.open('node-a');
    const impostor = swap(fake);
    const before = debugPod(fake).metadata!.annotations!['kdebug.io/lease-renewed'];
    const patches = () =>
      fake.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/${impostor.name}`));
    const tried = patches().length;
    // a renewal every 40 ms: wait for one to have found the swap (longer on a loaded machine)
    for (let waited = 0; waited < 3000 && (patches().length <= tried || p.pods.length > 0);)
      await new Promise((r) => setTimeout(r, 25)).then(() => (waited += 25));
    assert.ok(patches().length > tried, 'a renewal was tried after the swap');
    assert.equal(
      debugPod(fake).metadata!.annotations!['kdebug.io/lease-renewed'],
      before,
      "the impostor's lease was not renewed",
    );
    assert.deepEqual(p.pods, [], 'the run let go of the name');
    const after = patches().length;
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(patches().length, after, 'no renewal once it is known');
    const r = await runner.run(IP_ADDR);
    assert.match(r.error!, SWAPPED);
    assert.deepEqual(execd, []);
    await p.close();
    assert.equal(debugPod(fake).metadata!['uid'], impostor.uid);
  });

  it('is not deleted by close() even when nothing noticed the swap: the delete carries the UID', async () => {
    const p = pods({ renewEveryMs: 3_600_000 });
    await p.open('node-a');
    const impostor = swap(fake);
    await p.close();
    assert.equal(debugPod(fake).metadata!['uid'], impostor.uid);
    assert.deepEqual(p.pods, []);
  });

  it('is not deleted by kdebug cleanup when it was swapped between the look and the delete', async () => {
    const p = pods({ renewEveryMs: 3_600_000, lifetimeSeconds: 900 });
    await p.open('node-a');
    const listed = await debugPodsLeft(api, { namespace: 'kdebug' });
    const impostor = swap(fake);
    assert.deepEqual(await deleteDebugPods(api, listed.pods), []);
    assert.equal(debugPod(fake).metadata!['uid'], impostor.uid);
    await p.close();
  });
});

describe("the fake API server keeps kube-apiserver's UID preconditions", () => {
  let fake: FakeApi;
  let api: KubeApi;
  let uid: string;
  const NAME = 'kdebug-node-a-u1d2x';
  before(async () => {
    fake = await startFakeApi({ objects: OBJECTS });
    api = await KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {} });
    const made = await api.createPod('default', {
      ...debugPodManifest('node-a', { image: 'i', lifetimeSeconds: 60 }),
      metadata: { name: NAME },
    });
    uid = String(made.metadata!['uid']);
  });
  after(async () => {
    api.close();
    await fake.close();
  });
  const other = '00000000-0000-4000-8000-000000000000';

  it('DELETE with another uid in its preconditions: 409 Conflict, and the Pod stays', async () => {
    const e = await api
      .request('DELETE', `/api/v1/namespaces/default/pods/${NAME}`, {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: other } },
      })
      .catch((x: unknown) => x);
    assert.ok(e instanceof KubeApiError);
    assert.deepEqual(
      [e.code, e.reason, e.message],
      [
        409,
        'conflict',
        `Operation cannot be fulfilled on Pod "${NAME}": the UID in the precondition (${other}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
      ],
    );
    assert.ok(fake.store.get(POD, 'default', NAME));
    // KubeApi.deletePod reads that refusal as "that Pod is already gone"
    assert.equal(await api.deletePod('default', NAME, { uid: other }), false);
    assert.ok(fake.store.get(POD, 'default', NAME));
  });

  it('a merge patch naming another metadata.uid: 422 Invalid (uid is immutable), and nothing changes', async () => {
    const e = await api
      .patchPod('default', NAME, { metadata: { uid: other, annotations: { a: 'b' } } })
      .catch((x: unknown) => x);
    assert.ok(e instanceof KubeApiError);
    assert.equal(e.code, 422);
    assert.match(
      e.message,
      new RegExp(
        `Pod "${NAME}" is invalid: metadata\\.uid: Invalid value: "${other}": field is immutable$`,
      ),
    );
    assert.equal(fake.store.get(POD, 'default', NAME)!.metadata!.annotations?.['a'], undefined);
    // the same patch with the Pod's own uid goes through
    await api.patchPod('default', NAME, { metadata: { uid, annotations: { a: 'b' } } });
    assert.equal(fake.store.get(POD, 'default', NAME)!.metadata!.annotations?.['a'], 'b');
  });
});

describe('kdebug cleanup --all --yes and a workload carrying kdebug’s label', () => {
  let fake: FakeApi;
  /** A ReplicaSet's Pod someone labelled app.kubernetes.io/managed-by=kdebug. */
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
  /** A debug Pod of a live kdebug run: --all --yes takes it. */
  const live = (): KubeObject => ({
    ...debugPodManifest('node-a', { image: 'i', lifetimeSeconds: 900 }),
    metadata: {
      ...debugPodManifest('node-a', { image: 'i', lifetimeSeconds: 900 }).metadata,
      name: 'kdebug-node-a-l1ve2',
      namespace: 'kdebug',
      // as the API server gives every Pod: kdebug deletes none without one
      uid: 'c0ffee00-l1ve2',
    },
    status: { phase: 'Running' },
  });
  before(async () => {
    fake = await startFakeApi({ objects: [...OBJECTS, PAYMENTS, live()] });
  });
  after(() => fake.close());

  it('deletes the debug Pod, lists the workload as not kdebug’s, and leaves it on the server', async () => {
    const r = await kdebugAsync(['cleanup', '--all', '--yes'], {
      KUBECONFIG: fake.kubeconfig(),
    });
    assert.deepEqual([r.code, r.stderr], [0, '']);
    assert.deepEqual(r.stdout.split('\n'), [
      r.stdout.split('\n')[0]!, // the deleted debug Pod, its lease age varies
      "Pod prod/payments-api-7d9f8-x2x4z: not kdebug's (owned by ReplicaSet payments-api-7d9f8, its name does not start with kdebug-, its container is not debugger, its container does not run sleep N, no kdebug.io/run annotation), left alone",
      '',
    ]);
    assert.match(r.stdout, /^deleted Pod kdebug\/kdebug-node-a-l1ve2 \(node node-a, Running\): /);
    assert.ok(fake.store.get(POD, 'prod', 'payments-api-7d9f8-x2x4z'), 'still on the server');
    assert.equal(fake.store.get(POD, 'kdebug', 'kdebug-node-a-l1ve2'), undefined);
    const deletes = fake.requests.filter((q) => q.method === 'DELETE').map((q) => q.path);
    assert.deepEqual(deletes, ['/api/v1/namespaces/kdebug/pods/kdebug-node-a-l1ve2']);
  });
});
