// The fake API server speaks the API's wire format: checked here with plain HTTPS requests (not
// kdebug's client), so the client tests below it prove something about real servers.
// IP conventions: see objects.ts (Pods 10.244.0.0/16, Services 10.96.0.0/12, nodes 192.0.2.10/11).
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { aPod, webCluster } from './objects.js';

interface Reply {
  status: number;
  contentType: string;
  text: string;
  json: Record<string, unknown> & {
    items?: Record<string, unknown>[];
    metadata?: Record<string, unknown>;
  };
}

function call(
  fake: FakeApi,
  method: string,
  path: string,
  o: { token?: string | null; body?: unknown } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (o.token !== null) headers['Authorization'] = `Bearer ${o.token ?? 'admin-token'}`;
    if (o.body) headers['Content-Type'] = 'application/json';
    const req = request(
      `${fake.url}${path}`,
      { method, headers, ca: fake.certs.ca.cert },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            contentType: res.headers['content-type'] ?? '',
            text,
            json: JSON.parse(text),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(o.body ? JSON.stringify(o.body) : undefined);
  });
}

const names = (r: Reply) =>
  (r.json.items ?? []).map((i) => (i['metadata'] as { name: string }).name);

describe('fake API server', () => {
  let fake: FakeApi;
  before(async () => {
    const { relevant, irrelevant } = webCluster();
    fake = await startFakeApi({
      objects: [...relevant, ...irrelevant],
      rbac: {
        deny: [
          {
            users: ['admin'],
            verbs: ['list'],
            resources: ['networkpolicies.networking.k8s.io'],
            namespaces: ['default'],
          },
          { users: ['admin'], verbs: ['list'], resources: ['nodes'] },
        ],
      },
    });
  });
  after(() => fake.close());

  it('answers a list as the API does: XxxList, a resourceVersion, items without kind/apiVersion', async () => {
    const r = await call(fake, 'GET', '/api/v1/namespaces/default/services');
    assert.equal(r.status, 200);
    assert.equal(r.contentType, 'application/json');
    assert.deepEqual([r.json['kind'], r.json['apiVersion']], ['ServiceList', 'v1']);
    assert.match(String(r.json.metadata?.['resourceVersion']), /^\d+$/);
    assert.deepEqual(names(r), ['web', 'webapp']);
    for (const item of r.json.items!)
      assert.deepEqual([item['kind'], item['apiVersion']], [undefined, undefined]);
    const slices = await call(fake, 'GET', '/apis/discovery.k8s.io/v1/endpointslices');
    assert.deepEqual(
      [slices.json['kind'], slices.json['apiVersion']],
      ['EndpointSliceList', 'discovery.k8s.io/v1'],
    );
  });

  it('answers a get with kind and apiVersion first', async () => {
    const r = await call(fake, 'GET', '/api/v1/namespaces/default/services/web');
    assert.deepEqual(Object.keys(r.json).slice(0, 2), ['kind', 'apiVersion']);
    assert.equal((r.json['spec'] as Record<string, unknown>)['trafficDistribution'], 'PreferClose');
  });

  const labelCases: [string, string[]][] = [
    ['app=web', ['web-1', 'web-2']],
    ['app==web', ['web-1', 'web-2']],
    ['app!=web', ['batch-job-x', 'old-web-0']],
    ['app in (batch,old-web)', ['batch-job-x', 'old-web-0']],
    ['app notin (web,batch)', ['old-web-0']],
    ['app', ['batch-job-x', 'old-web-0', 'web-1', 'web-2']],
    ['!app', []],
    ['app=web,app!=web', []],
  ];
  for (const [selector, want] of labelCases) {
    it(`labelSelector ${selector}`, async () => {
      const r = await call(
        fake,
        'GET',
        `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(selector)}`,
      );
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(names(r), want);
    });
  }

  const fieldCases: [string, string, number, string[] | string][] = [
    ['/api/v1/namespaces/default/pods', 'spec.nodeName=node-b', 200, ['old-web-0', 'web-2']],
    ['/api/v1/namespaces/default/pods', 'status.podIP=10.244.1.5', 200, ['web-1']],
    // accepted, but not a selectable field: the real apiserver matches no Pod on it
    ['/api/v1/namespaces/default/pods', 'status.podIPs=10.244.1.5', 200, []],
    [
      '/api/v1/namespaces/default/pods',
      'metadata.name!=web-1,spec.hostNetwork=false',
      200,
      ['batch-job-x', 'old-web-0', 'web-2'],
    ],
    ['/api/v1/namespaces/default/services', 'spec.clusterIP=10.96.0.21', 200, ['webapp']],
    [
      '/api/v1/namespaces/default/configmaps',
      'data.LOG_LEVEL=debug',
      400,
      'field label not supported: data.LOG_LEVEL',
    ],
    [
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
      'addressType=IPv4',
      400,
      'field label not supported: addressType',
    ],
  ];
  for (const [path, selector, status, want] of fieldCases) {
    it(`fieldSelector ${selector} on ${path.split('/').pop()}`, async () => {
      const r = await call(fake, 'GET', `${path}?fieldSelector=${encodeURIComponent(selector)}`);
      assert.equal(r.status, status, r.text);
      if (typeof want === 'string')
        assert.deepEqual(r.json, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: want,
          reason: 'BadRequest',
          code: 400,
        });
      else assert.deepEqual(names(r), want);
    });
  }

  it('sends Status bodies with the real wording and field order', async () => {
    const cases: [string, string | null, string][] = [
      [
        '/api/v1/namespaces/default/services/nope',
        'admin-token',
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"services \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"services"},"code":404}',
      ],
      [
        '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/nope',
        'admin-token',
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"endpointslices.discovery.k8s.io \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","group":"discovery.k8s.io","kind":"endpointslices"},"code":404}',
      ],
      [
        '/api/v1/nodes',
        'wrong-token',
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}',
      ],
      [
        '/api/v1/nodes',
        null,
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}',
      ],
      [
        '/api/v1/nodes',
        'admin-token',
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"nodes is forbidden: User \\"admin\\" cannot list resource \\"nodes\\" in API group \\"\\" at the cluster scope","reason":"Forbidden","details":{"kind":"nodes"},"code":403}',
      ],
      [
        '/apis/networking.k8s.io/v1/namespaces/default/networkpolicies',
        'admin-token',
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"networkpolicies.networking.k8s.io is forbidden: User \\"admin\\" cannot list resource \\"networkpolicies\\" in API group \\"networking.k8s.io\\" in the namespace \\"default\\"","reason":"Forbidden","details":{"group":"networking.k8s.io","kind":"networkpolicies"},"code":403}',
      ],
      [
        '/api/v1/namespaces/default/widgets',
        'admin-token',
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}',
      ],
    ];
    for (const [path, token, body] of cases) {
      const r = await call(fake, 'GET', path, { token });
      assert.equal(r.text, body, path);
      assert.equal(r.contentType, 'application/json');
    }
  });

  it('pages a list with limit and continue', async () => {
    const first = await call(fake, 'GET', '/api/v1/pods?limit=3');
    assert.deepEqual(names(first), ['batch-job-x', 'old-web-0', 'web-1']);
    assert.equal(first.json.metadata?.['remainingItemCount'], 4);
    const next = await call(
      fake,
      'GET',
      `/api/v1/pods?limit=3&continue=${first.json.metadata?.['continue']}`,
    );
    assert.deepEqual(names(next), ['web-2', 'coredns-5d78c9869d-abcde', 'kube-proxy-7xk2p']);
  });

  it('creates a Pod from generateName with the server defaults, and deletes it', async () => {
    const body = {
      metadata: { generateName: 'kdebug-node-a-' },
      spec: { nodeName: 'node-a', containers: [{ name: 'debugger', image: 'busybox' }] },
    };
    const created = await call(fake, 'POST', '/api/v1/namespaces/default/pods', { body });
    assert.equal(created.status, 201, created.text);
    const meta = created.json.metadata as { name: string; uid: string; resourceVersion: string };
    assert.match(meta.name, /^kdebug-node-a-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const spec = created.json['spec'] as Record<string, unknown> & {
      containers: Record<string, unknown>[];
    };
    assert.deepEqual(
      [
        spec['dnsPolicy'],
        spec['schedulerName'],
        spec['terminationGracePeriodSeconds'],
        spec['serviceAccountName'],
      ],
      ['ClusterFirst', 'default-scheduler', 30, 'default'],
    );
    assert.deepEqual(
      [spec.containers[0]!['imagePullPolicy'], spec.containers[0]!['terminationMessagePath']],
      ['Always', '/dev/termination-log'],
    );
    assert.deepEqual(created.json['status'], { phase: 'Pending', qosClass: 'BestEffort' });
    const again = await call(fake, 'POST', '/api/v1/namespaces/default/pods', {
      body: { ...body, metadata: { name: meta.name } },
    });
    assert.equal(again.json['message'], `pods "${meta.name}" already exists`);
    const gone = await call(fake, 'DELETE', `/api/v1/namespaces/default/pods/${meta.name}`);
    assert.equal(gone.status, 200);
    assert.match(
      String((gone.json.metadata as Record<string, unknown>)['deletionTimestamp']),
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
    assert.equal(
      (await call(fake, 'GET', `/api/v1/namespaces/default/pods/${meta.name}`)).status,
      404,
    );
  });

  it('answers a SelfSubjectAccessReview from the RBAC table', async () => {
    const review = (verb: string, resource: string, group: string, namespace?: string) =>
      call(fake, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { verb, resource, group, namespace } },
        },
      });
    assert.equal(
      ((await review('list', 'nodes', '')).json['status'] as { allowed: boolean }).allowed,
      false,
    );
    assert.equal(
      ((await review('get', 'nodes', '')).json['status'] as { allowed: boolean }).allowed,
      true,
    );
    assert.equal(
      (
        (await review('list', 'networkpolicies', 'networking.k8s.io', 'default')).json[
          'status'
        ] as { allowed: boolean }
      ).allowed,
      false,
    );
    assert.equal(
      (
        (await review('list', 'networkpolicies', 'networking.k8s.io', 'prod')).json['status'] as {
          allowed: boolean;
        }
      ).allowed,
      true,
    );
  });

  it('streams a watch as newline-delimited events, held open, and ends it with 410 Expired', async () => {
    const lines: string[] = [];
    const watch = (query: string) =>
      new Promise<{ contentType: string; close: () => void; ended: Promise<void> }>(
        (resolve, reject) => {
          const req = request(
            `${fake.url}/api/v1/namespaces/default/pods?watch=true&${query}`,
            { headers: { Authorization: 'Bearer admin-token' }, ca: fake.certs.ca.cert },
            (res) => {
              let buf = '';
              const ended = new Promise<void>((r) => res.on('close', () => r()));
              res.on('data', (d: Buffer) => {
                buf += d;
                const parts = buf.split('\n');
                buf = parts.pop()!;
                lines.push(...parts);
              });
              resolve({
                contentType: res.headers['content-type'] ?? '',
                close: () => req.destroy(),
                ended,
              });
            },
          );
          req.on('error', reject);
          req.end();
        },
      );
    const until = async (n: number) => {
      for (let i = 0; i < 200 && lines.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    // no resourceVersion: the current state as synthetic ADDED events, objects with kind and apiVersion
    const w = await watch('labelSelector=app%3Dweb');
    assert.equal(w.contentType, 'application/json');
    await until(2);
    assert.deepEqual(
      lines.map((l) => [
        JSON.parse(l).type,
        JSON.parse(l).object.kind,
        JSON.parse(l).object.apiVersion,
        JSON.parse(l).object.metadata.name,
      ]),
      [
        ['ADDED', 'Pod', 'v1', 'web-1'],
        ['ADDED', 'Pod', 'v1', 'web-2'],
      ],
    );
    const rv = fake.store.rv;
    fake.store.put(aPod('web-9'));
    await until(3);
    assert.deepEqual(
      [JSON.parse(lines[2]!).type, JSON.parse(lines[2]!).object.metadata.resourceVersion],
      ['ADDED', String(rv + 1)],
    );
    assert.equal(fake.openWatches(), 1);
    w.close();
    // an old resourceVersion: an ERROR event with the Expired Status, then the stream ends
    lines.length = 0;
    fake.store.compact();
    const old = await watch(`resourceVersion=${rv}`);
    await old.ended;
    assert.deepEqual(JSON.parse(lines[0]!), {
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${rv} (${fake.store.rv})`,
        reason: 'Expired',
        code: 410,
      },
    });
  });

  it('refuses a plain GET of pods/exec: it needs a WebSocket upgrade', async () => {
    const r = await call(
      fake,
      'GET',
      '/api/v1/namespaces/default/pods/web-1/exec?command=ls&stdout=true',
    );
    assert.deepEqual([r.status, r.json['message']], [400, 'Upgrade request required']);
  });
});
