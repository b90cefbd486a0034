// List-then-watch against the fake API server: events, resume after a dropped stream, relist
// after 410 Expired, backoff with jitter when the server keeps closing streams (client-node's
// informer re-watches in a tight loop), a stop on RBAC refusal, and the idle watchdog.
// IP conventions: see objects.ts (Pods 10.244.0.0/16, nodes 192.0.2.10/11).
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { KubeApi } from '../../../src/cluster/kube-api.js';
import {
  backoffDelay,
  watchList,
  type WatchEventType,
  type WatchHandle,
} from '../../../src/cluster/kube/watch.js';
import type { KubeObject } from '../../../src/core/model.js';
import { startFakeApi, type FakeApiOptions, type FakeApi } from '../../support/fake-api/server.js';
import { aPod } from '../objects.js';

const PODS = '/api/v1/namespaces/default/pods';

async function until(what: string, cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Recorder {
  syncs: string[][];
  events: string[];
  errors: string[];
}

const fakes: FakeApi[] = [];
const handles: WatchHandle[] = [];
afterEach(() => handles.splice(0).forEach((h) => h.stop()));
after(() => Promise.all(fakes.map((f) => f.close())));

async function setup(
  options: FakeApiOptions = {},
  labelSelector?: string,
  extra: Parameters<typeof watchList>[2] = {},
) {
  const fake = await startFakeApi({
    objects: [aPod('web-1'), aPod('web-2'), aPod('batch', 'default', { labels: { app: 'batch' } })],
    ...options,
  });
  fakes.push(fake);
  const api = await KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {} });
  const rec: Recorder = { syncs: [], events: [], errors: [] };
  const handle = watchList(
    api,
    PODS,
    { labelSelector, backoff: { initialMs: 20, maxMs: 200 }, ...extra },
    {
      onSync: (items) => rec.syncs.push(items.map((i) => i.metadata?.name ?? '')),
      onEvent: (type: WatchEventType, o: KubeObject) =>
        rec.events.push(`${type} ${o.metadata?.name}`),
      onError: (e, retrying) => rec.errors.push(`${retrying ? 'retry' : 'stop'}: ${e.message}`),
    },
  );
  handles.push(handle);
  const watchRequests = () =>
    fake.requests.filter((r) => r.path === PODS && r.query.get('watch') === 'true');
  await until('the first watch', () => fake.openWatches() > 0 || watchRequests().length > 0);
  return { fake, rec, handle, watchRequests };
}

describe('watchList', () => {
  it('lists, then turns changes into events, selections included', async () => {
    const { fake, rec } = await setup({}, 'app=web');
    assert.deepEqual(rec.syncs, [['web-1', 'web-2']]);
    fake.store.put(aPod('web-3'));
    const moved = aPod('web-1');
    moved.metadata!.labels = { app: 'retired' };
    fake.store.put(moved);
    fake.store.put(aPod('other', 'default', { labels: { app: 'batch' } }));
    fake.store.remove(fake.store.typeOf(aPod('x')), 'default', 'web-2');
    await until('3 events', () => rec.events.length >= 3);
    await new Promise((r) => setTimeout(r, 50));
    // web-1 left the selection: a watch with a label selector sees that as DELETED
    assert.deepEqual(rec.events, ['ADDED web-3', 'DELETED web-1', 'DELETED web-2']);
  });

  it('resumes from the last resourceVersion after a dropped stream: no relist, no duplicates', async () => {
    const { fake, rec, watchRequests } = await setup();
    fake.store.put(aPod('web-3'));
    await until('ADDED web-3', () => rec.events.length === 1);
    const rv = fake.store.rv;
    fake.dropWatches();
    fake.store.put(aPod('web-4'));
    await until('ADDED web-4', () => rec.events.length === 2);
    assert.deepEqual(rec.events, ['ADDED web-3', 'ADDED web-4']);
    assert.equal(rec.syncs.length, 1);
    assert.equal(watchRequests().at(-1)!.query.get('resourceVersion'), String(rv));
    assert.deepEqual(rec.errors, []);
  });

  for (const expiredWatch of ['event', 'http'] as const) {
    it(`relists after 410 Expired (${expiredWatch === 'event' ? 'an ERROR event' : 'an HTTP 410'})`, async () => {
      const { fake, rec } = await setup({ expiredWatch });
      fake.dropWatches();
      fake.store.put(aPod('web-5'));
      fake.store.compact();
      await until('a second list', () => rec.syncs.length === 2);
      assert.deepEqual(rec.syncs[1], ['batch', 'web-1', 'web-2', 'web-5']);
      assert.deepEqual(rec.errors, []);
    });
  }

  it('backs off when the server closes every stream at once, instead of a tight loop', async () => {
    const { rec, watchRequests, handle } = await setup({ closeWatches: true }, undefined, {
      backoff: { initialMs: 40, maxMs: 320, factor: 2, jitter: 0.5 },
      random: () => 0,
    });
    await new Promise((r) => setTimeout(r, 1300));
    handle.stop();
    const at = watchRequests().map((r) => r.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // 40, 80, 160, 320, 320 ms between attempts: a handful of streams in 1.3 s (client-node: hundreds)
    assert.ok(at.length >= 5 && at.length <= 7, `${at.length} watch requests`);
    [40, 80, 160, 320, 320].slice(0, gaps.length).forEach((want, i) => {
      assert.ok(
        gaps[i]! >= want - 2 && gaps[i]! < want + 150,
        `gap ${i}: ${gaps[i]} ms, want ${want}`,
      );
    });
    assert.equal(rec.syncs.length, 1);
  });

  it('spaces attempts by the backoff it computes', () => {
    const b = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.5 };
    const table: [number, number, number][] = [
      // attempt, random, delay
      [0, 0, 500],
      [0, 1, 250],
      [1, 0, 1000],
      [3, 0.5, 3000],
      [6, 0, 30_000],
      [20, 1, 15_000],
    ];
    for (const [attempt, r, want] of table)
      assert.equal(
        backoffDelay(b, attempt, () => r),
        want,
        `attempt ${attempt}`,
      );
  });

  it('stops, with the refusal, when RBAC forbids the watch', async () => {
    const fake = await startFakeApi({
      objects: [aPod('web-1')],
      rbac: { deny: [{ verbs: ['watch'], resources: ['pods'] }] },
    });
    fakes.push(fake);
    const api = await KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {} });
    const errors: string[] = [];
    const h = watchList(
      api,
      PODS,
      {},
      {
        onEvent: () => undefined,
        onError: (e, retrying) => errors.push(`${retrying}: ${e.message}`),
      },
    );
    await assert.rejects(h.done, /cannot watch pods in namespace default/);
    assert.deepEqual(errors, [
      'false: access denied by RBAC: user "admin" cannot watch pods in namespace default (context "fake")',
    ]);
  });

  it('reconnects a stream that goes silent, and bookmarks count as life', async () => {
    // silent for 150 ms: reconnect (at about 0, 170, 360, 590, 820 ms)
    const quiet = await setup({}, undefined, { idleTimeoutMs: 150 });
    await new Promise((r) => setTimeout(r, 900));
    assert.ok(quiet.watchRequests().length >= 3, `${quiet.watchRequests().length} watch requests`);
    const chatty = await setup({ bookmarkEveryMs: 30 }, undefined, { idleTimeoutMs: 300 });
    await new Promise((r) => setTimeout(r, 900));
    assert.equal(chatty.watchRequests().length, 1);
    assert.deepEqual([quiet.rec.syncs.length, chatty.rec.syncs.length], [1, 1]);
  });

  it('stop() ends the stream and settles', async () => {
    const { fake, handle } = await setup();
    handle.stop();
    await handle.done;
    await until('the server to see the stream close', () => fake.openWatches() === 0);
  });
});
