// A kubeconfig whose server is not the Kubernetes API (a Rancher URL without its
// /k8s/clusters/<id> path, the wrong port behind an ingress, an OAuth proxy's login, a host whose
// certificate names another) is said so, in one line, exit 2: never "your Service does not
// exist". Stand-in servers on 127.0.0.1 answer as those do; the built CLI runs against each.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeApi } from '../../src/cluster/kube-api.js';
import { KubeApiError } from '../../src/cluster/kube/errors.js';
import { kdebugAsync } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { webCluster } from './objects.js';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

interface StandIn {
  url: string;
  close(): Promise<void>;
}

/** A server on 127.0.0.1 that answers every request with `answer`; https with `tls`. */
async function standIn(answer: Answer, tls?: { key: string; cert: string }): Promise<StandIn> {
  const server = tls ? createHttps(tls, answer) : createHttp(answer);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A self-signed certificate for hosts that are not 127.0.0.1 or localhost. */
function certificateFor(dir: string, names: string[]): { key: string; cert: string } {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'other.key',
      '-out',
      'other.crt',
      '-days',
      '2',
      '-subj',
      `/CN=${names[0]}`,
      '-addext',
      `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return {
    key: readFileSync(join(dir, 'other.key'), 'utf8'),
    cert: readFileSync(join(dir, 'other.crt'), 'utf8'),
  };
}

/** A kubeconfig (JSON is YAML) for `server`, context "edge"; `ca` makes the certificate trusted. */
function kubeconfigFor(dir: string, server: string, ca?: string): string {
  const file = join(dir, `kubeconfig-${server.replace(/\W/g, '-')}.yaml`);
  const cluster = {
    server,
    ...(ca ? { 'certificate-authority-data': Buffer.from(ca).toString('base64') } : {}),
  };
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'edge', cluster }],
      users: [{ name: 'me', user: { token: 'a-token' } }],
      contexts: [{ name: 'edge', context: { cluster: 'edge', user: 'me' } }],
      'current-context': 'edge',
    }),
  );
  return file;
}

const LOGIN_PAGE =
  '<!DOCTYPE html>\n<html><head><title>Sign in to Rancher</title></head><body><form></form></body></html>\n';
const NGINX_404 =
  '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n</body>\r\n</html>\r\n';

const answers: Record<string, Answer> = {
  'answers 404 with an empty body to every path': (_req, res) => res.writeHead(404).end(),
  'answers 404 with an HTML page to every path': (_req, res) =>
    res.writeHead(404, { 'Content-Type': 'text/html' }).end(NGINX_404),
  'answers every path with a login page (HTML, 200)': (_req, res) =>
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(LOGIN_PAGE),
  'redirects every path to a login page (302)': (req, res) =>
    res
      .writeHead(302, {
        Location: `/oauth2/sign_in?rd=${encodeURIComponent(req.url ?? '/')}`,
        'Content-Type': 'text/html',
      })
      .end('<a href="/oauth2/sign_in">Found</a>.\n'),
  // the API's Status, but for every path: discovery too, which no Kubernetes API server lacks
  "answers the API's Status NotFound (404) to every path": (_req, res) =>
    res
      .writeHead(404, { 'Content-Type': 'application/json' })
      .end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}'),
  'answers every path with JSON that is no Kubernetes object (200)': (_req, res) =>
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}'),
  // a proxy that passes discovery through and nothing else: GET /api looks right
  'answers /api as the API does and a plain 404 to every other path': (req, res) =>
    new URL(req.url ?? '/', 'http://x').pathname === '/api'
      ? res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end('{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}')
      : res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n'),
  // the same proxy answering the API's Status NotFound: a list names no object, so no API's 404
  'answers /api as the API does and a Status NotFound to every other path': (req, res) =>
    new URL(req.url ?? '/', 'http://x').pathname === '/api'
      ? res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end('{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}')
      : res
          .writeHead(404, { 'Content-Type': 'application/json' })
          .end(
            '{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}',
          ),
  // a proxy whose upstream drops the connection mid-answer: no "internal error", no empty list
  'answers /api as the API does and cuts every other answer mid-body': (req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname === '/api') {
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end('{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"kind":"ServiceList","apiVersion":"v1","items":[{"metadata":{"name":"a');
    setTimeout(() => res.destroy(), 20);
  },
};

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The one line each stand-in gets, `URL` being its address. */
const sentences: Record<string, (url: string) => RegExp> = {
  'answers 404 with an empty body to every path': (url) =>
    new RegExp(
      `^kdebug: the server at ${esc(url)} \\(context "edge"\\) is not a Kubernetes API server, or not at that path: GET /api answered 404 with an empty body, not the API's discovery; check the server: URL in the kubeconfig \\(its host, port and path\\)$`,
    ),
  "answers the API's Status NotFound (404) to every path": (url) =>
    new RegExp(
      `^kdebug: the server at ${esc(url)} \\(context "edge"\\) is not a Kubernetes API server, or not at that path: GET /api answered 404 with a Status NotFound, not the API's discovery; check the server: URL in the kubeconfig \\(its host, port and path\\)$`,
    ),
  'answers 404 with an HTML page to every path': (url) =>
    new RegExp(
      `^kdebug: the server at ${esc(url)} \\(context "edge"\\) is a web site, not a Kubernetes API server: GET \\S+ answered 404 with a web page \\("404 Not Found"\\); check the server: URL in the kubeconfig \\(its host, port and path\\)$`,
    ),
  'answers every path with a login page (HTML, 200)': (url) =>
    new RegExp(
      `^kdebug: the server at ${esc(url)} \\(context "edge"\\) is a web site, not a Kubernetes API server: GET \\S+ answered 200 with a web page \\("Sign in to Rancher"\\); check the server: URL in the kubeconfig \\(its host, port and path\\)$`,
    ),
  'redirects every path to a login page (302)': (url) =>
    new RegExp(
      `^kdebug: the server at ${esc(url)} \\(context "edge"\\) sends requests to a login page or another site, not to a Kubernetes API server: GET \\S+ answered 302, to ${esc(url)}/oauth2/sign_in \\(an authenticating proxy in front of the API\\? the kubeconfig needs the API server's own address\\)$`,
    ),
  'answers every path with JSON that is no Kubernetes object (200)': (url) =>
    new RegExp(
      `^kdebug: the server at ${esc(url)} \\(context "edge"\\) is not a Kubernetes API server, or not at that path: GET \\S+ answered JSON that is no Kubernetes (object|list); check the server: URL in the kubeconfig \\(its host, port and path\\)$`,
    ),
  'answers /api as the API does and a plain 404 to every other path': (url) =>
    new RegExp(
      `^kdebug: the server at ${esc(url)} \\(context "edge"\\) is not a Kubernetes API server, or not at that path: GET /api answers as the Kubernetes API does, but GET /apis?/\\S+ answered 404 with "404 page not found", which a kube-apiserver never does for its own (core|apps) group \\(a proxy serving part of it\\?\\); check the server: URL in the kubeconfig \\(its host, port and path\\)$`,
    ),
  'answers /api as the API does and a Status NotFound to every other path': (url) =>
    new RegExp(
      `^kdebug: the server at ${esc(url)} \\(context "edge"\\) is not a Kubernetes API server, or not at that path: GET /api answers as the Kubernetes API does, but GET /apis?/\\S+ answered 404 with a Status NotFound, which a kube-apiserver never does for its own (core|apps) group \\(a proxy serving part of it\\?\\); check the server: URL in the kubeconfig \\(its host, port and path\\)$`,
    ),
  'answers /api as the API does and cuts every other answer mid-body': (url) =>
    new RegExp(
      `^kdebug: the API server at ${esc(url)} \\(context "edge"\\) closed the connection in the middle of its answer to GET /\\S+ \\(aborted\\): a proxy or load balancer in front of it, or the server restarting$`,
    ),
};

/** The failure is one line on stderr, that sentence, and nothing else anywhere. */
function assertOneLine(r: { code: number | null; stdout: string; stderr: string }, want: RegExp) {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, want);
  assert.doesNotMatch(r.stderr, /does not exist|has no Services|not found in namespace/);
}

describe('a server that is not a Kubernetes API server: one line, exit 2 (built CLI)', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'kdebug-not-k8s-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  for (const [what, answer] of Object.entries(answers)) {
    describe(`a server that ${what}`, () => {
      let server: StandIn;
      let kubeconfig: string;
      before(async () => {
        server = await standIn(answer);
        kubeconfig = kubeconfigFor(tmp, server.url);
      });
      after(() => server.close());

      it('kdebug svc says so, never "does not exist"', async () => {
        const r = await kdebugAsync(['svc', 'nginx-svc', '--kubeconfig', kubeconfig, '-o', 'text']);
        assertOneLine(r, sentences[what]!(server.url));
      });

      it('kdebug snapshot save --service says so and writes nothing', async () => {
        const dir = join(tmp, `snap-${server.url.replace(/\W/g, '-')}`);
        const r = await kdebugAsync([
          'snapshot',
          'save',
          dir,
          '--service',
          'x',
          '--kubeconfig',
          kubeconfig,
        ]);
        assertOneLine(r, sentences[what]!(server.url));
        assert.equal(existsSync(dir), false);
      });
    });
  }

  describe('the other commands that read a cluster (a 404 to every path)', () => {
    let server: StandIn;
    let kubeconfig: string;
    const want = (url: string) => sentences['answers 404 with an empty body to every path']!(url);
    before(async () => {
      server = await standIn(answers['answers 404 with an empty body to every path']!);
      kubeconfig = kubeconfigFor(tmp, server.url);
    });
    after(() => server.close());

    const commands: [string, string[]][] = [
      ['rules', ['rules', '-o', 'text']],
      ['drift', ['drift', '-o', 'text']],
      ['snapshot save --all -A', ['snapshot', 'save', 'ALL', '--all', '-A']],
      ['cleanup', ['cleanup']],
    ];
    for (const [name, args] of commands) {
      it(`kdebug ${name}`, async () => {
        const r = await kdebugAsync([
          ...args.map((a) => (a === 'ALL' ? join(tmp, 'all') : a)),
          '--kubeconfig',
          kubeconfig,
        ]);
        assertOneLine(r, want(server.url));
      });
    }

    it('completion offers nothing, quietly', async () => {
      const r = await kdebugAsync(['__complete', 'svc', '--kubeconfig', kubeconfig, '']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.deepEqual(
        r.stdout.split('\n').filter((l) => l && !l.startsWith(':')),
        [],
      );
    });
  });

  describe('a server whose certificate names other hosts', () => {
    let server: StandIn;
    let kubeconfig: string;
    before(async () => {
      const pair = certificateFor(tmp, ['rancher.example.com', 'www.rancher.example.com']);
      server = await standIn((_req, res) => res.writeHead(404).end(), pair);
      kubeconfig = kubeconfigFor(tmp, server.url, pair.cert);
    });
    after(() => server.close());

    const want = (url: string) =>
      new RegExp(
        `^kdebug: the server at ${esc(url)} \\(context "edge"\\) presented a certificate for DNS:rancher\\.example\\.com, DNS:www\\.rancher\\.example\\.com, not for 127\\.0\\.0\\.1 \\(ERR_TLS_CERT_ALTNAME_INVALID\\): it is not the API server the kubeconfig means, or the cluster entry needs tls-server-name: one of those names$`,
      );

    it('kdebug svc names the URL, the context and what the certificate names', async () => {
      const r = await kdebugAsync(['svc', 'nginx-svc', '--kubeconfig', kubeconfig, '-o', 'text']);
      assertOneLine(r, want(server.url));
    });

    it('kdebug snapshot save --service the same, and writes nothing', async () => {
      const dir = join(tmp, 'snap-tls');
      const r = await kdebugAsync([
        'snapshot',
        'save',
        dir,
        '--service',
        'x',
        '--kubeconfig',
        kubeconfig,
      ]);
      assertOneLine(r, want(server.url));
      assert.equal(existsSync(dir), false);
    });
  });
});

/** What kube-apiserver answers: /api lists its versions; a path it does not serve (an API group
 * this cluster lacks) gets Go's plain NotFound handler; a missing object gets a Status. */
const apiServerLike: Answer = (req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/api')
    return void res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end('{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}');
  if (path.startsWith('/apis/example.com/'))
    return void res
      .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
      .end('404 page not found\n');
  res
    .writeHead(404, { 'Content-Type': 'application/json' })
    .end(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"services \\"web\\" not found","reason":"NotFound","details":{"name":"web","kind":"services"},"code":404}',
    );
};

describe('KubeApi: which answers are the Kubernetes API', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'kdebug-not-k8s-api-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  /** An API client of a stand-in that answers with `answer`, and the paths it was asked. */
  async function against(
    answer: Answer,
  ): Promise<{ api: KubeApi; asked: string[]; close(): Promise<void> }> {
    const asked: string[] = [];
    const server = await standIn((req, res) => {
      asked.push(new URL(req.url ?? '/', 'http://x').pathname);
      answer(req, res);
    });
    const api = await KubeApi.connect({ kubeconfig: kubeconfigFor(tmp, server.url), env: {} });
    return {
      api,
      asked,
      close: async () => {
        api.close();
        await server.close();
      },
    };
  }

  const failure = async (p: Promise<unknown>): Promise<KubeApiError> => {
    const e = await p.then(
      () => assert.fail('expected a KubeApiError'),
      (e: unknown) => e,
    );
    assert.ok(e instanceof KubeApiError, String(e));
    return e;
  };

  it('a 404 without a Status, on reads at once: not Kubernetes, and GET /api asked once', async () => {
    const s = await against((_req, res) => res.writeHead(404).end());
    try {
      const reads = ['/api/v1/services', '/api/v1/nodes', '/api/v1/namespaces/default/pods'];
      const errors = await Promise.all(reads.map((p) => failure(s.api.list(p))));
      assert.deepEqual(
        errors.map((e) => e.reason),
        ['not-kubernetes', 'not-kubernetes', 'not-kubernetes'],
      );
      await failure(s.api.getIfExists('/api/v1/namespaces/default/services/web'));
      assert.equal(s.asked.filter((p) => p === '/api').length, 1);
    } finally {
      await s.close();
    }
  });

  it("kube-apiserver's own plain 404 (a group it does not serve) stays not-found: /api shows the API", async () => {
    const s = await against(apiServerLike);
    try {
      const e = await failure(s.api.list('/apis/example.com/v1/widgets'));
      assert.deepEqual(
        [e.reason, e.message],
        ['not-found', '404 page not found (GET /apis/example.com/v1/widgets)'],
      );
      assert.equal(await s.api.getIfExists('/api/v1/namespaces/default/services/web'), undefined);
      await failure(s.api.list('/apis/example.com/v1/gadgets'));
      assert.deepEqual(
        s.asked.filter((p) => p === '/api'),
        ['/api'],
      );
    } finally {
      await s.close();
    }
  });

  it('a plain 404 on a built-in group where /api shows the API: not Kubernetes (a proxy serving part of it)', async () => {
    const s = await against(
      answers['answers /api as the API does and a plain 404 to every other path']!,
    );
    try {
      for (const path of [
        '/api/v1/services',
        '/api/v1/namespaces/default/pods',
        '/apis/apps/v1/daemonsets',
      ]) {
        const e = await failure(s.api.list(path));
        assert.equal(e.reason, 'not-kubernetes', `${path}: ${e.message}`);
        assert.match(
          e.message,
          new RegExp(`but GET ${esc(path)} answered 404 with "404 page not found"`),
        );
      }
      // a group a cluster may lack stays not-found
      const e = await failure(s.api.list('/apis/cilium.io/v2/ciliumnodes'));
      assert.equal(e.reason, 'not-found');
    } finally {
      await s.close();
    }
  });

  it("a missing object's Status never asks discovery", async () => {
    const s = await against(apiServerLike);
    try {
      assert.equal(await s.api.getIfExists('/api/v1/namespaces/default/services/web'), undefined);
      assert.deepEqual(s.asked, ['/api/v1/namespaces/default/services/web']);
    } finally {
      await s.close();
    }
  });

  const table: [string, Answer, string, RegExp][] = [
    [
      '/api answering JSON that is not the list of versions',
      (req, res) =>
        req.url?.startsWith('/api?') || req.url === '/api'
          ? res
              .writeHead(200, { 'Content-Type': 'application/json' })
              .end('{"kind":"Problem","status":404}')
          : res
              .writeHead(404, { 'Content-Type': 'application/json' })
              .end('{"message":"no route"}'),
      'not-kubernetes',
      /is not a Kubernetes API server, or not at that path: GET \/api answered JSON of kind Problem, not the API's list of versions \(APIVersions\);/,
    ],
    [
      'a web page under a JSON Content-Type (a body that starts with "<")',
      (_req, res) =>
        res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end('\n<html><title>Portal</title></html>'),
      'not-kubernetes',
      /is a web site, not a Kubernetes API server: GET \/api\/v1\/nodes answered 200 with a web page \("Portal"\);/,
    ],
    [
      'a 401 page keeps the credentials message',
      (_req, res) =>
        res.writeHead(401, { 'Content-Type': 'text/html' }).end('<title>Unauthorized</title>'),
      'unauthorized',
      /rejected the credentials of user "me" \(context "edge"\): 401 Unauthorized/,
    ],
    [
      'a 403 page keeps the access-denied message, the page named by its title',
      (_req, res) =>
        res.writeHead(403, { 'Content-Type': 'text/html' }).end('<title>Forbidden</title>'),
      'forbidden',
      /^access denied: cannot list nodes at the cluster scope \(context "edge"\): a web page \("Forbidden"\)$/,
    ],
    [
      'a 502 page is a proxy whose API server is down, not "not Kubernetes"',
      (_req, res) =>
        res
          .writeHead(502, { 'Content-Type': 'text/html' })
          .end('<html><head><title>502 Bad Gateway</title></head></html>'),
      'server',
      /failed GET \/api\/v1\/nodes: 502 a web page \("502 Bad Gateway"\)$/,
    ],
  ];
  for (const [name, answer, reason, message] of table) {
    it(name, async () => {
      const s = await against(answer);
      try {
        const e = await failure(s.api.list('/api/v1/nodes'));
        assert.equal(e.reason, reason, e.message);
        assert.match(e.message, message);
      } finally {
        await s.close();
      }
    });
  }
});

describe('a real API server: a missing Service is still "does not exist" (built CLI)', () => {
  let fake: FakeApi;
  before(async () => {
    const { relevant, irrelevant } = webCluster();
    fake = await startFakeApi({ objects: [...relevant, ...irrelevant] });
  });
  after(() => fake.close());

  it('service-not-found, exit 1, and the API is not asked for its discovery', async () => {
    const r = await kdebugAsync([
      'svc',
      'nope',
      '--kubeconfig',
      fake.kubeconfig({ namespace: 'default' }),
      '-o',
      'json',
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /"id": "service-not-found"/);
    assert.equal(r.stderr, '');
    assert.equal(
      fake.requests.some((q) => q.path === '/api' || q.path === '/version'),
      false,
    );
  });
});
