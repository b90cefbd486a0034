// kdebug's API client against the fake API server: raw JSON kept exactly, paging, every error in
// a person's words, a deadline on every request, Pods, access reviews and namespace labels.
// IP conventions: see objects.ts (Pods 10.244.0.0/16, Services 10.96.0.0/12, nodes 192.0.2.10/11).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeApi } from '../../src/cluster/kube-api.js';
import { KubeApiError, rbacAttributes } from '../../src/cluster/kube/errors.js';
import type { KubeObject } from '../../src/core/model.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { webCluster } from './objects.js';

const served = () => {
  const { relevant, irrelevant } = webCluster();
  return [...relevant, ...irrelevant];
};
const find = (objects: KubeObject[], kind: string, ns: string | undefined, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata?.namespace === ns && o.metadata?.name === name);

async function rejection(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof KubeApiError, String(e));
    return e;
  }
  assert.fail('expected a KubeApiError');
}

describe('KubeApi reads', () => {
  let fake: FakeApi;
  let api: KubeApi;
  const objects = served();
  before(async () => {
    fake = await startFakeApi({ objects });
    api = await KubeApi.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'team-a' }),
      env: {},
      pageSize: 2,
    });
  });
  after(() => fake.close());

  it('takes the default namespace from the context', () => {
    assert.equal(api.namespace, 'team-a');
  });

  it('keeps an object exactly as the API returned it: unknown fields, timestamps as strings', async () => {
    const svc = await api.get('/api/v1/namespaces/default/services/web');
    const spec = svc['spec'] as Record<string, unknown>;
    assert.deepEqual(spec['futureField'], { keep: true });
    assert.equal(spec['trafficDistribution'], 'PreferClose');
    assert.equal(svc.metadata?.['creationTimestamp'], '2024-05-01T10:00:00Z');
    assert.deepEqual(svc, find(objects, 'Service', 'default', 'web'));
  });

  it('lists every page (limit/continue) and fills in kind and apiVersion on items', async () => {
    const before = fake.requests.length;
    const { items, resourceVersion } = await api.list('/api/v1/pods');
    const pages = fake.requests.slice(before);
    assert.deepEqual(
      pages.map((r) => r.query.get('limit')),
      ['2', '2', '2', '2'],
    );
    assert.equal(pages[0]!.query.get('continue'), null);
    assert.ok(pages.slice(1).every((r) => r.query.get('continue')));
    assert.match(resourceVersion, /^\d+$/);
    assert.equal(items.length, 7);
    for (const item of items)
      assert.deepEqual(
        item,
        find(objects, 'Pod', item.metadata?.namespace, item.metadata?.name ?? ''),
      );
  });

  it("leaves out of a list what kdebug never reads: who wrote which field, a Node's images", async () => {
    const node = find(objects, 'Node', undefined, 'node-a')!;
    const images = [{ names: ['registry.example/app@sha256:0123', 'registry.example/app:1.0'] }];
    const heavy = {
      ...node,
      metadata: { ...node.metadata, managedFields: [{ manager: 'kubelet' }] },
      status: { ...(node['status'] as object), images },
    };
    const pod = find(objects, 'Pod', 'default', 'web-1')!;
    const withImages = { ...pod, status: { ...(pod['status'] as object), images } };
    const other = await startFakeApi({ objects: [heavy, withImages] });
    try {
      const o = await KubeApi.connect({ kubeconfig: other.kubeconfig(), env: {} });
      const [listed] = (await o.list('/api/v1/nodes')).items;
      assert.deepEqual(listed, { apiVersion: 'v1', ...node });
      // another kind's field of that name is its own: kept
      const [p] = (await o.list('/api/v1/pods')).items;
      assert.deepEqual((p!['status'] as { images?: unknown }).images, images);
      o.close();
    } finally {
      await other.close();
    }
  });

  it('lists again in one page when a continue token expired (410), as client-go does', async () => {
    const expiring = await startFakeApi({ objects, expireContinue: true });
    try {
      const paged = await KubeApi.connect({
        kubeconfig: expiring.kubeconfig({ namespace: 'team-a' }),
        env: {},
        pageSize: 2,
      });
      const { items } = await paged.list('/api/v1/pods');
      paged.close();
      assert.deepEqual(
        expiring.requests.map((r) => [r.query.get('limit'), r.query.get('continue') !== null]),
        [
          ['2', false],
          ['2', true], // 410 Expired
          [null, false],
        ],
      );
      // every Pod once: the first page's were dropped, not kept twice
      assert.deepEqual(
        items.map((o) => o.metadata?.name).sort(),
        objects
          .filter((o) => o.kind === 'Pod')
          .map((o) => o.metadata?.name)
          .sort(),
      );
    } finally {
      await expiring.close();
    }
  });

  it('sends label and field selectors', async () => {
    const { items } = await api.list('/api/v1/namespaces/default/pods', {
      labelSelector: 'app in (web,old-web)',
      fieldSelector: 'spec.nodeName=node-b',
    });
    assert.deepEqual(
      items.map((p) => p.metadata?.name),
      ['old-web-0', 'web-2'],
    );
  });

  it('answers undefined for an object that does not exist', async () => {
    assert.equal(await api.getIfExists('/api/v1/namespaces/default/endpoints/nope'), undefined);
  });

  it("reads a namespace's labels", async () => {
    assert.deepEqual(await api.namespaceLabels('prod'), { 'kubernetes.io/metadata.name': 'prod' });
  });
});

describe("KubeApi errors in a person's words", () => {
  let fake: FakeApi;
  before(async () => {
    fake = await startFakeApi({
      objects: served(),
      rbac: {
        deny: [
          {
            verbs: ['list'],
            resources: ['endpointslices.discovery.k8s.io'],
            namespaces: ['default'],
          },
          { verbs: ['list'], resources: ['nodes'] },
          { verbs: ['get'], resources: ['configmaps'], namespaces: ['kube-system'] },
          { verbs: ['create'], resources: ['pods'], namespaces: ['locked'] },
        ],
      },
      admitPod: (pod) =>
        (pod['spec'] as { hostNetwork?: boolean }).hostNetwork
          ? 'violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'
          : undefined,
    });
  });
  after(() => fake.close());
  const connect = () => KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {} });

  const cases: [string, (api: KubeApi) => Promise<unknown>, string, string][] = [
    [
      'RBAC refusing a namespaced list',
      (a) => a.list('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices'),
      'forbidden',
      'access denied by RBAC: user "admin" cannot list endpointslices.discovery.k8s.io in namespace default (context "fake")',
    ],
    [
      'RBAC refusing a cluster-scoped list',
      (a) => a.list('/api/v1/nodes'),
      'forbidden',
      'access denied by RBAC: user "admin" cannot list nodes at the cluster scope (context "fake")',
    ],
    [
      'RBAC refusing a get',
      (a) => a.get('/api/v1/namespaces/kube-system/configmaps/kube-proxy'),
      'forbidden',
      'access denied by RBAC: user "admin" cannot get configmaps in namespace kube-system (context "fake")',
    ],
    [
      'RBAC refusing a Pod create',
      (a) =>
        a.createPod('locked', {
          metadata: { name: 'x' },
          spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] },
        }),
      'forbidden',
      'access denied by RBAC: user "admin" cannot create pods in namespace locked (context "fake")',
    ],
    [
      'Pod Security refusing a Pod',
      (a) =>
        a.createPod('default', {
          metadata: { name: 'x' },
          spec: { hostNetwork: true, containers: [{ name: 'c', image: 'busybox:1.36' }] },
        }),
      'forbidden',
      'Pod Security admission refused the Pod in namespace default: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)',
    ],
    [
      'a missing object',
      (a) => a.get('/api/v1/namespaces/default/services/nope'),
      'not-found',
      'services "nope" not found in namespace default',
    ],
    [
      'an unsupported field selector',
      (a) => a.list('/api/v1/namespaces/default/configmaps', { fieldSelector: 'data.x=y' }),
      'bad-request',
      'the API server refused GET /api/v1/namespaces/default/configmaps: field label not supported: data.x',
    ],
  ];
  for (const [name, call, reason, message] of cases) {
    it(name, async () => {
      const e = await rejection(call(await connect()));
      assert.deepEqual([e.reason, e.message], [reason, message]);
    });
  }

  it('a server nobody listens on: the address and the cause', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const api = await KubeApi.connect({
      kubeconfig: fake.kubeconfig({ server: `https://127.0.0.1:${port}` }),
      env: {},
    });
    const e = await rejection(api.list('/api/v1/nodes'));
    assert.deepEqual(
      [e.reason, e.message],
      [
        'unreachable',
        `cannot reach the API server at https://127.0.0.1:${port} (context "fake"): connection refused (ECONNREFUSED)`,
      ],
    );
  });

  it('knows the verb, resource and namespace of each request', () => {
    const table: [string, string, boolean, ReturnType<typeof rbacAttributes>][] = [
      [
        'GET',
        '/api/v1/namespaces/default/services/web',
        false,
        { verb: 'get', resource: 'services', namespace: 'default', name: 'web' },
      ],
      [
        'GET',
        '/apis/discovery.k8s.io/v1/endpointslices',
        false,
        {
          verb: 'list',
          resource: 'endpointslices.discovery.k8s.io',
          namespace: undefined,
          name: undefined,
        },
      ],
      [
        'GET',
        '/api/v1/namespaces/default/pods',
        true,
        { verb: 'watch', resource: 'pods', namespace: 'default', name: undefined },
      ],
      [
        'POST',
        '/api/v1/namespaces/debug/pods/p/exec',
        false,
        { verb: 'create', resource: 'pods/exec', namespace: 'debug', name: 'p' },
      ],
      [
        'DELETE',
        '/api/v1/namespaces/debug/pods/p',
        false,
        { verb: 'delete', resource: 'pods', namespace: 'debug', name: 'p' },
      ],
      [
        'GET',
        '/api/v1/namespaces/prod',
        false,
        { verb: 'get', resource: 'namespaces', namespace: undefined, name: 'prod' },
      ],
      ['GET', '/healthz', false, undefined],
    ];
    for (const [method, path, watch, want] of table)
      assert.deepEqual(rbacAttributes({ method, path, watch }), want, `${method} ${path}`);
  });
});

describe('KubeApi deadlines', () => {
  let fake: FakeApi;
  before(async () => {
    fake = await startFakeApi({ objects: served(), stall: (r) => r.path.endsWith('/nodes') });
  });
  after(() => fake.close());

  const within = async (p: Promise<unknown>): Promise<[KubeApiError, number]> => {
    const t = Date.now();
    const e = await rejection(p);
    return [e, Date.now() - t];
  };

  it('gives up on a server that accepts the request and never answers', async () => {
    const api = await KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {}, timeoutMs: 300 });
    const [e, took] = await within(api.list('/api/v1/nodes'));
    assert.deepEqual(
      [e.reason, e.message],
      [
        'timeout',
        `the API server at ${fake.url} did not answer GET /api/v1/nodes within 0.3s (context "fake")`,
      ],
    );
    assert.ok(took >= 290 && took < 3000, `took ${took} ms`);
  });

  it('gives up on a server that never completes the TLS handshake', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const server = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const api = await KubeApi.connect({
        kubeconfig: fake.kubeconfig({ server }),
        env: {},
        timeoutMs: 300,
      });
      const [e, took] = await within(api.get('/api/v1/namespaces/default/services/web'));
      assert.equal(e.reason, 'timeout');
      assert.ok(took < 3000, `took ${took} ms`);
    } finally {
      sockets.forEach((s) => s.destroy());
      silent.close();
    }
  });

  it('counts a credential plugin that hangs against the deadline', async () => {
    const file = fake.kubeconfig({ auth: 'exec', userEntry: 'slow-plugin' });
    const script = join(fake.dir, 'hang.cjs');
    writeFileSync(
      script,
      `require('node:fs').writeFileSync(${JSON.stringify(join(fake.dir, 'hang.pid'))}, String(process.pid)); setTimeout(() => {}, 60000);`,
    );
    writeFileSync(file, readFileSync(file, 'utf8').replace(/exec-plugin-\d+\.cjs/, 'hang.cjs'));
    const api = await KubeApi.connect({ kubeconfig: file, env: {}, timeoutMs: 1500 });
    const [e, took] = await within(api.get('/api/v1/namespaces/default/services/web'));
    assert.equal(e.reason, 'timeout');
    assert.ok(took < 4000, `took ${took} ms`);
    // a plugin left running would keep kdebug from exiting
    const pid = Number(readFileSync(join(fake.dir, 'hang.pid'), 'utf8'));
    const gone = () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'ESRCH';
      }
    };
    for (let i = 0; i < 100 && !gone(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(gone(), `credential plugin ${pid} still running`);
  });

  it('close() ends requests still waiting', async () => {
    const api = await KubeApi.connect({
      kubeconfig: fake.kubeconfig(),
      env: {},
      timeoutMs: 30_000,
    });
    const pending = api.list('/api/v1/nodes');
    await new Promise((r) => setTimeout(r, 50));
    const t = Date.now();
    api.close();
    const e = await rejection(pending);
    assert.equal(e.reason, 'closed');
    assert.ok(Date.now() - t < 2000);
  });
});

describe('KubeApi Pods and access reviews', () => {
  let fake: FakeApi;
  let api: KubeApi;
  before(async () => {
    fake = await startFakeApi({
      objects: served(),
      rbac: { deny: [{ verbs: ['create'], resources: ['pods/exec'], namespaces: ['prod'] }] },
    });
    api = await KubeApi.connect({ kubeconfig: fake.kubeconfig(), env: {} });
  });
  after(() => fake.close());

  it('creates a Pod from generateName, sees it Running, and deletes it once', async () => {
    const pod = await api.createPod('default', {
      metadata: {
        generateName: 'kdebug-node-a-',
        labels: { 'app.kubernetes.io/managed-by': 'kdebug' },
      },
      spec: {
        nodeName: 'node-a',
        hostNetwork: true,
        restartPolicy: 'Never',
        containers: [{ name: 'debugger', image: 'busybox:1.36', command: ['sleep', '600'] }],
      },
    });
    const name = pod.metadata!.name!;
    assert.match(name, /^kdebug-node-a-[a-z0-9]{5}$/);
    assert.equal((pod['status'] as { phase: string }).phase, 'Pending');
    let running: KubeObject | undefined;
    for (
      let i = 0;
      i < 50 && (running?.['status'] as { phase?: string } | undefined)?.phase !== 'Running';
      i++
    ) {
      await new Promise((r) => setTimeout(r, 20));
      running = await api.getPod('default', name);
    }
    assert.equal((running!['status'] as { podIP: string }).podIP, '192.0.2.10');
    assert.equal(await api.deletePod('default', name, { gracePeriodSeconds: 0 }), true);
    assert.equal(await api.deletePod('default', name), false);
    assert.equal(await api.getPod('default', name), undefined);
  });

  it('asks the API server what the user may do (SelfSubjectAccessReview)', async () => {
    const table: [Parameters<KubeApi['canI']>[0], boolean][] = [
      [{ verb: 'create', resource: 'pods', subresource: 'exec', namespace: 'prod' }, false],
      [{ verb: 'create', resource: 'pods', subresource: 'exec', namespace: 'default' }, true],
      [
        { verb: 'list', resource: 'endpointslices', group: 'discovery.k8s.io', namespace: 'prod' },
        true,
      ],
    ];
    for (const [check, allowed] of table)
      assert.equal((await api.canI(check)).allowed, allowed, JSON.stringify(check));
  });
});
