// A debug Pod whose create the API server carried out but whose answer never came back (the
// connection reset, or no answer before the deadline): kdebug holds no name or UID for it, yet it
// must not outlive the run. The real KubeApi talks HTTPS to the fake API server, which stores the
// Pod and then loses the answer (FakeApiOptions.lose): the fault is in the transport, where a
// real API server's would be, and its store answers the run label's list as kube-apiserver does.
// The lab's real kube-apiserver would need minutes and the shared lab lock for the same socket
// fault. IP conventions: the lab's (test/support/lab/lab.ts): nodes 192.0.2.11-13.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, afterEach, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { KubeApi } from '../../src/cluster/kube-api.js';
import { KubeApiError } from '../../src/cluster/kube/errors.js';
import { DebugPods } from '../../src/cluster/nodes/debug-pod.js';
import {
  debugPodsLeft,
  deleteDebugPods,
  deleteUnanswered,
} from '../../src/cluster/nodes/debug-pod/cleanup.js';
import {
  debugPodManifest,
  OWNER,
  RUN_LABEL,
  runSelector,
  type RunOwner,
} from '../../src/cluster/nodes/debug-pod/manifest.js';
import type { KubeObject } from '../../src/core/model.js';
import { hermetic, ROOT } from '../support/cli.js';
import type { ExecHandler } from '../support/fake-api/exec.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import {
  startFakeApi,
  type FakeApiOptions,
  type RequestRecord,
} from '../support/fake-api/server.js';
import { TOPOLOGY } from '../support/lab/lab.js';
import { labObjects } from '../support/lab/objects.js';

const POD = typeOfKind('Pod')!;
const OBJECTS = labObjects(TOPOLOGY);
const RUN: RunOwner = { id: 'lostcreate01', owner: 'test pid 1 started x' };
const ONE_LINE = /^cannot create a debug Pod on node-a: [^\n]+$/;

const isCreate = (r: RequestRecord) => r.method === 'POST' && r.path.endsWith('/pods');
const isRunList = (r: RequestRecord) =>
  r.method === 'GET' && r.query.get('labelSelector') === runSelector(RUN);
const echo: ExecHandler = () => ({ stdout: '1: lo\n', exitCode: 0 });

describe('a debug Pod whose create answer is lost', () => {
  const opened: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const o of opened.splice(0)) await o.close();
  });

  async function serve(o: FakeApiOptions, timeoutMs = 5000) {
    const fake = await startFakeApi({ objects: OBJECTS, exec: echo, ...o });
    const api = await KubeApi.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      timeoutMs,
    });
    opened.push(fake, api);
    const pods = (over: KubeApi = api) =>
      new DebugPods(over, { yes: true, timeoutMs: 3000, tell: () => undefined, run: RUN });
    /** Pods on the server carrying kdebug's label, in any namespace. */
    const left = () =>
      fake.store.list(POD).filter((p) => p.metadata?.labels?.['app.kubernetes.io/managed-by']);
    return { fake, api, pods, left };
  }

  for (const lost of ['reset', 'hang'] as const)
    it(`(${lost}) is found by its run label and deleted before open() fails`, async () => {
      const { fake, pods, left } = await serve(
        { lose: (r) => (isCreate(r) ? lost : undefined) },
        1500,
      );
      const p = pods();
      await assert.rejects(p.open('node-a'), (e: Error) => {
        assert.match(e.message, ONE_LINE);
        return true;
      });
      assert.equal(fake.store.list(POD, 'kdebug').length, 0, 'the Pod the create made is gone');
      const [pod] = fake.requests.filter(isCreate);
      assert.ok(pod, 'the create reached the server');
      assert.ok(fake.requests.some(isRunList), "listed by the run's label");
      assert.deepEqual(p.pods, []);
      await p.close();
      assert.deepEqual(left(), []);
      // found once: close had nothing left to look for
      assert.equal(fake.requests.filter(isRunList).length, 1);
    });

  it('is looked for again at close when the Pod lands after the first look', async () => {
    const { fake, api, pods, left } = await serve({});
    // the client gives up at once; the API server stores the Pod a little later
    const late = Object.create(api) as KubeApi;
    let landed!: Promise<unknown>;
    late.createPod = (ns, pod) => {
      landed = new Promise((r) => setTimeout(r, 200)).then(() => api.createPod(ns, pod));
      return Promise.reject(new KubeApiError('timeout', 'the API server did not answer'));
    };
    const p = pods(late);
    await assert.rejects(p.open('node-a'), { message: ONE_LINE });
    await landed;
    assert.equal(fake.store.list(POD, 'kdebug').length, 1, 'the late Pod exists');
    assert.deepEqual(p.pods, [{ unanswered: 'node-a' }]);
    await p.close();
    assert.deepEqual(left(), []);
    assert.deepEqual(p.pods, []);
  });

  it("one DebugPods' sweep leaves another's live Pod in the same process (no run given)", async () => {
    let creates = 0;
    // the first create (b's) is answered; the second (a's) is stored and its answer lost
    const { fake, api } = await serve({
      lose: (r) => (isCreate(r) && creates++ === 1 ? 'reset' : undefined),
    });
    const own = () => new DebugPods(api, { yes: true, timeoutMs: 3000, tell: () => undefined });
    const [a, b] = [own(), own()];
    const runner = await b.open('node-a');
    await assert.rejects(a.open('node-a'), { message: ONE_LINE });
    const names = fake.store.list(POD, 'kdebug').map((p) => p.metadata?.name);
    assert.equal(names.length, 1, "only b's Pod is left: a deleted its own");
    assert.match(runner.via, new RegExp(`/${names[0]}$`));
    const r = await runner.run({ kind: 'ip-addr' });
    assert.equal(r.error, undefined, "b's Pod still serves b");
    await Promise.all([a.close(), b.close()]);
    assert.deepEqual(fake.store.list(POD, 'kdebug'), []);
  });

  it("leaves another run's Pod and a Pod that only copies the labels", async () => {
    const other = debugPodManifest('node-a', {
      image: 'i',
      lifetimeSeconds: 900,
      run: { id: 'otherrun', owner: 'elsewhere' },
    });
    const copy: KubeObject = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: {
        name: 'web-copy',
        namespace: 'kdebug',
        labels: { 'app.kubernetes.io/managed-by': 'kdebug', [RUN_LABEL]: RUN.id },
      },
      spec: { nodeName: 'node-a', containers: [{ name: 'web', image: 'nginx' }] },
    };
    const { fake, pods } = await serve({
      objects: [
        ...OBJECTS,
        {
          ...other,
          metadata: { ...other.metadata, name: 'kdebug-node-a-other', namespace: 'kdebug' },
        },
        copy,
      ],
      lose: (r) => (isCreate(r) ? 'reset' : undefined),
    });
    const p = pods();
    await assert.rejects(p.open('node-a'), { message: ONE_LINE });
    await p.close();
    const names = fake.store.list(POD, 'kdebug').map((o) => o.metadata?.name);
    assert.deepEqual(names.sort(), ['kdebug-node-a-other', 'web-copy']);
  });

  it('is said at close when the API server is gone, and kdebug cleanup removes it once its lease lapses', async () => {
    let gone = false;
    const { fake, api, pods, left } = await serve({
      lose: (r) => (isCreate(r) ? 'reset' : undefined),
      // the API server goes away with the create: nothing after it is answered
      drop: (r) => gone || ((gone = isCreate(r)) && false),
    });
    const p = pods();
    await assert.rejects(p.open('node-a'), { message: ONE_LINE });
    await assert.rejects(p.close(), (e: Error) => {
      assert.match(
        e.message,
        /^could not delete debug Pod kdebug\/\? \(node node-a, create unanswered\): [^\n]+; they stop by themselves after 900s, and kdebug cleanup removes them$/,
      );
      return true;
    });
    assert.equal(left().length, 1);
    gone = false;
    fake.requests.length = 0;
    const later = new Date(Date.now() + 120_000);
    const plan = await debugPodsLeft(api, { namespace: 'kdebug', now: later });
    assert.deepEqual(
      plan.pods.map((x) => [x.live, x.why]),
      [[false, plan.pods[0]!.why]],
    );
    assert.match(plan.pods[0]!.why, /^its run stopped renewing it \d+s ago \(lease 60s\)$/);
    await deleteDebugPods(api, plan.pods);
    assert.deepEqual(left(), []);
  });
});

describe('a listed debug Pod without metadata.uid', () => {
  // a delete without a UID carries no precondition: it could hit a Pod made since under the name
  const pod = (name: string, uid?: string): KubeObject => {
    const m = debugPodManifest('node-a', { image: 'i', lifetimeSeconds: 900, run: RUN });
    return {
      ...m,
      metadata: { ...m.metadata, name, namespace: 'kdebug', ...(uid ? { uid } : {}) },
    };
  };
  const stub = (items: KubeObject[], deleted: string[]) =>
    ({
      list: () => Promise.resolve({ items }),
      deletePod: (_ns: string, name: string) => Promise.resolve(deleted.push(name) > 0),
    }) as unknown as KubeApi;

  it("is not deleted by a run's sweep, nor offered to kdebug cleanup", async () => {
    const items = [pod('kdebug-node-a-nouid'), pod('kdebug-node-a-uid01', 'u-1')];
    const deleted: string[] = [];
    const found = await deleteUnanswered(stub(items, deleted), 'kdebug', {
      run: RUN,
      known: new Set(),
    });
    assert.deepEqual([found, deleted], [1, ['kdebug-node-a-uid01']]);
    const plan = await debugPodsLeft(stub(items, []), { namespace: 'kdebug' });
    assert.deepEqual(
      plan.pods.map((p) => [p.name, p.uid]),
      [['kdebug-node-a-uid01', 'u-1']],
    );
    assert.deepEqual(plan.notKdebugs, [
      { namespace: 'kdebug', name: 'kdebug-node-a-nouid', why: 'it has no metadata.uid' },
    ]);
  });

  it("is not deleted by a run's sweep when its run annotation names another run", async () => {
    const other = pod('kdebug-node-a-other', 'u-2');
    other.metadata!.annotations = { ...other.metadata!.annotations, [OWNER.run]: 'otherrun' };
    const deleted: string[] = [];
    await deleteUnanswered(stub([other], deleted), 'kdebug', { run: RUN, known: new Set() });
    assert.deepEqual(deleted, []);
  });
});

describe("the run label's value", () => {
  it('is refused when it could select more than its run', () => {
    for (const id of ['', 'a,b', 'x=y', 'a b', 'A!', 'a'.repeat(64), '-a'])
      for (const make of [
        () => runSelector({ id, owner: 'o' }),
        () =>
          debugPodManifest('node-a', { image: 'i', lifetimeSeconds: 1, run: { id, owner: 'o' } }),
      ])
        assert.throws(make, { message: `invalid kdebug run id ${JSON.stringify(id)}` });
    assert.equal(
      runSelector(RUN),
      'app.kubernetes.io/managed-by=kdebug,kdebug.io/run=lostcreate01',
    );
  });
});

describe('kdebug interrupted with a create whose answer was lost (built CLI)', () => {
  it('SIGINT deletes the unanswered Pod with the known one', async () => {
    assert.ok(existsSync(`${ROOT}/dist/cli.js`), 'no build: run node scripts/build.js');
    const { objects } = await readSnapshot(`${ROOT}/snapshots/nginx-svc`);
    let execs = 0;
    let firstCreate: RequestRecord | undefined;
    let runLists = 0;
    const fake = await startFakeApi({
      objects,
      // one node's create is stored and its answer lost; the other node's Pod hangs in exec
      lose: (r) => (isCreate(r) && (firstCreate ??= r) === r ? 'reset' : undefined),
      // the run's first look for it fails too: only close can find it
      drop: (r) =>
        r.method === 'GET' && /kdebug\.io\/run=/.test(r.query.get('labelSelector') ?? '')
          ? runLists++ === 0
          : false,
      exec: () => {
        execs++;
        return new Promise(() => undefined);
      },
    });
    after(() => fake.close());
    const child = spawn(
      process.execPath,
      [
        'bin/kdebug.js',
        ...['svc', 'nginx-svc', '--via', 'pod', '--yes', '-o', 'text'],
        ...['--kubeconfig', fake.kubeconfig({ namespace: 'default' })],
      ],
      {
        cwd: ROOT,
        env: { PATH: process.env['PATH'] ?? '', HOME: hermetic()['HOME'], NO_COLOR: '1' },
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    const until = Date.now() + 20_000;
    while ((execs === 0 || runLists === 0) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(execs > 0 && runLists > 0, `the run never got there; stderr: ${stderr}`);
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /^kdebug: interrupted: deleting the debug Pods kdebug created \(2\)$/m);
    const debugPods = fake.store
      .list(POD)
      .filter((p) => p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'kdebug');
    assert.deepEqual(debugPods, []);
    assert.ok(runLists >= 2, 'close looked again');
  });
});
