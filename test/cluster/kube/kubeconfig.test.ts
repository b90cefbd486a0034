// Kubeconfig loading as kubectl does it (KUBECONFIG merging, contexts, namespaces) and every kind
// of credential kubectl users have, checked against the fake API server.
// Addresses: kubeconfig-only servers are TEST-NET (192.0.2.0/24, 198.51.100.0/24) and are never
// contacted; live ones are the fake server on 127.0.0.1.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dump, load as loadYaml } from 'js-yaml';
import { KubeApi } from '../../../src/cluster/kube-api.js';
import { KubeApiError } from '../../../src/cluster/kube/errors.js';
import { loadKubeconfig } from '../../../src/cluster/kube/kubeconfig.js';
import { startFakeApi, type FakeApi } from '../../support/fake-api/server.js';
import { aNode } from '../objects.js';
import { kdebug } from '../../support/cli.js';

const FILE_A = `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: shared
  cluster: {server: "https://192.0.2.1:6443"}
- name: only-a
  cluster: {server: "https://192.0.2.2:6443"}
users:
- name: u
  user: {token: token-from-a}
contexts:
- name: a
  context: {cluster: shared, user: u, namespace: team-a}
- name: both
  context: {cluster: only-a, user: u}
`;

const FILE_B = `apiVersion: v1
kind: Config
current-context: b
clusters:
- name: shared
  cluster: {server: "https://198.51.100.1:6443"}
- name: only-b
  cluster: {server: "https://198.51.100.2:6443"}
users:
- name: u
  user: {token: token-from-b}
contexts:
- name: b
  context: {cluster: only-b, user: u}
- name: both
  context: {cluster: only-b, user: u, namespace: from-b}
`;

const NO_CURRENT = FILE_B.replace('current-context: b\n', '');

describe('kubeconfig: files, merging and contexts the way kubectl reads them', () => {
  let dir: string;
  const file = (name: string) => join(dir, name);
  const env = (...names: string[]) => ({
    KUBECONFIG: names.map(file).join(delimiter),
    HOME: join(dir, 'home'),
  });
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kdebug-kubeconfig-'));
    writeFileSync(file('a'), FILE_A);
    writeFileSync(file('b'), FILE_B);
    writeFileSync(file('no-current'), NO_CURRENT);
    writeFileSync(file('bad-yaml'), 'clusters: [\n  - name: x\n');
    writeFileSync(file('no-server'), 'clusters:\n- name: x\n  cluster: {}\n');
    writeFileSync(
      file('ghost-cluster'),
      'current-context: g\ncontexts:\n- name: g\n  context: {cluster: ghost, user: u}\nusers:\n- name: u\n  user: {}\n',
    );
    writeFileSync(
      file('ghost-user'),
      'current-context: g\ncontexts:\n- name: g\n  context: {cluster: c, user: ghost}\nclusters:\n- name: c\n  cluster: {server: "https://192.0.2.3:6443"}\n',
    );
    writeFileSync(
      file('bad-url'),
      'current-context: g\ncontexts:\n- name: g\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: "https://exa mple:6443"}\nusers:\n- name: u\n  user: {}\n',
    );
    mkdirSync(join(dir, 'home'));
    for (const name of ['gcp', 'azure'])
      writeFileSync(
        file(name),
        `current-context: p\ncontexts:\n- name: p\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n  cluster: {server: "https://192.0.2.4:6443"}\nusers:\n- name: u\n  user:\n    auth-provider:\n      name: ${name}\n      config: {cmd-path: touch, cmd-args: "${file(`${name}-ran`)}", tenant-id: t, client-id: c, apiserver-id: a, environment: AzurePublicCloud}\n`,
      );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: {
    name: string;
    files: string[];
    context?: string;
    want: [string, string, string, string];
  }[] = [
    {
      name: 'a missing file in KUBECONFIG is skipped',
      files: ['a', 'missing', 'b'],
      want: ['a', 'https://192.0.2.1:6443', 'team-a', 'token-from-a'],
    },
    {
      name: 'current-context comes from the first file that sets it',
      files: ['b', 'a'],
      want: ['b', 'https://198.51.100.2:6443', 'default', 'token-from-b'],
    },
    {
      name: '...even when an earlier file sets none',
      files: ['no-current', 'a'],
      want: ['a', 'https://198.51.100.1:6443', 'team-a', 'token-from-b'],
    },
    {
      name: '--context picks another context',
      files: ['a', 'b'],
      context: 'b',
      want: ['b', 'https://198.51.100.2:6443', 'default', 'token-from-a'],
    },
    {
      name: 'a duplicate context name: the first file wins',
      files: ['a', 'b'],
      context: 'both',
      want: ['both', 'https://192.0.2.2:6443', 'default', 'token-from-a'],
    },
    {
      name: 'a duplicate context name, files swapped',
      files: ['b', 'a'],
      context: 'both',
      want: ['both', 'https://198.51.100.2:6443', 'from-b', 'token-from-b'],
    },
    {
      name: 'duplicate cluster and user names: the first file wins',
      files: ['b', 'a'],
      context: 'a',
      want: ['a', 'https://198.51.100.1:6443', 'team-a', 'token-from-b'],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const k = await loadKubeconfig({ env: env(...c.files), context: c.context });
      assert.deepEqual([k.context, k.server, k.namespace, k.kc.getCurrentUser()?.token], c.want);
    });
  }

  it('--kubeconfig wins over KUBECONFIG', async () => {
    const k = await loadKubeconfig({ kubeconfig: file('b'), env: env('a') });
    assert.deepEqual([k.context, k.files], ['b', [file('b')]]);
  });

  it('reads ~/.kube/config when KUBECONFIG is unset', async () => {
    const home = join(dir, 'home-with-config');
    mkdirSync(join(home, '.kube'), { recursive: true });
    writeFileSync(join(home, '.kube', 'config'), FILE_A);
    const k = await loadKubeconfig({ env: { HOME: home } });
    assert.deepEqual([k.context, k.server], ['a', 'https://192.0.2.1:6443']);
  });

  const errors: [string, () => Promise<unknown>, string, RegExp][] = [
    [
      'no kubeconfig at all: says so, never localhost:8080',
      () => loadKubeconfig({ env: { HOME: join(dir, 'home') } }),
      'no-kubeconfig',
      /^no kubeconfig: .*home\/\.kube\/config does not exist and neither --kubeconfig nor KUBECONFIG is set$/,
    ],
    [
      'every KUBECONFIG file missing',
      () => loadKubeconfig({ env: env('x', 'y') }),
      'no-kubeconfig',
      /^no kubeconfig: none of the files in KUBECONFIG exist \(.*\/x, .*\/y\)$/,
    ],
    [
      '--kubeconfig names a missing file',
      () => loadKubeconfig({ kubeconfig: '/nonexistent/config', env: env('a') }),
      'kubeconfig',
      /^kubeconfig \/nonexistent\/config: no such file$/,
    ],
    [
      '--context names an unknown context',
      () => loadKubeconfig({ env: env('a', 'b'), context: 'prod' }),
      'kubeconfig',
      /^context "prod" not found in kubeconfig .*\(contexts: a, both, b\)$/,
    ],
    [
      'no current-context and no --context',
      () => loadKubeconfig({ env: env('no-current') }),
      'kubeconfig',
      /has no current-context; pass --context \(contexts: b, both\)$/,
    ],
    [
      'a file that is not YAML',
      () => loadKubeconfig({ env: env('bad-yaml') }),
      'kubeconfig',
      /bad-yaml: not valid YAML/,
    ],
    [
      'an invalid entry',
      () => loadKubeconfig({ env: env('no-server') }),
      'kubeconfig',
      /no-server: clusters\[0\]\.cluster\.server is missing$/,
    ],
    [
      'a context whose cluster is not defined',
      () => loadKubeconfig({ env: env('ghost-cluster') }),
      'kubeconfig',
      /^context "g" refers to cluster "ghost", which kubeconfig .* does not define$/,
    ],
    [
      'a server that is not a URL: the file and the cluster, not "Invalid URL"',
      () => loadKubeconfig({ env: env('bad-url') }),
      'kubeconfig',
      /^cluster "c" in kubeconfig .*bad-url: server "https:\/\/exa mple:6443" is not an https:\/\/ \(or http:\/\/\) URL$/,
    ],
    [
      'a context whose user is not defined',
      () => loadKubeconfig({ env: env('ghost-user') }),
      'kubeconfig',
      /^context "g" refers to user "ghost", which kubeconfig .* does not define$/,
    ],
    [
      'the gcp auth provider (it runs cmd-path in a shell): refused as kubectl refuses it',
      () => loadKubeconfig({ env: env('gcp') }),
      'kubeconfig',
      /^user "u": The gcp auth plugin has been removed\. Please use the "gke-gcloud-auth-plugin"/,
    ],
    [
      'the azure auth provider: refused as kubectl refuses it',
      () => loadKubeconfig({ env: env('azure') }),
      'kubeconfig',
      /^user "u": The azure auth plugin has been removed\. Please use the https:\/\/github\.com\/Azure\/kubelogin/,
    ],
  ];
  for (const [name, load, reason, message] of errors) {
    it(name, async () => {
      await assert.rejects(load, (e: unknown) => {
        assert.ok(e instanceof KubeApiError);
        assert.equal(e.reason, reason);
        assert.match(e.message, message);
        return true;
      });
    });
  }

  it('runs nothing a gcp or azure auth provider names, from the CLI: one line, exit 2', () => {
    for (const name of ['gcp', 'azure']) {
      const r = kdebug(['svc', 'web', '--kubeconfig', file(name), '-o', 'text']);
      assert.equal(r.code, 2);
      assert.match(
        r.stderr,
        new RegExp(`^kdebug: user "u": The ${name} auth plugin has been removed\\. [^\\n]*\\n$`),
      );
      assert.ok(!existsSync(file(`${name}-ran`)), `the ${name} provider's cmd-path ran`);
    }
  });
});

describe('kubeconfig credentials against the fake API server', () => {
  let fake: FakeApi;
  before(async () => {
    fake = await startFakeApi({
      objects: [aNode('node-a', '192.0.2.10', '10.244.1.0/24')],
      tokens: { 'admin-token': 'admin', 'carol-token': 'carol' },
    });
  });
  after(() => fake.close());

  /** Lists Nodes and returns the user the server saw. */
  async function whoAmI(kubeconfig: string): Promise<string | undefined> {
    const api = await KubeApi.connect({ kubeconfig, env: {}, timeoutMs: 5000 });
    const before = fake.requests.length;
    assert.deepEqual(
      (await api.list('/api/v1/nodes')).items.map((n) => n.metadata?.name),
      ['node-a'],
    );
    return fake.requests[before]?.user;
  }

  const ok: [string, Parameters<FakeApi['kubeconfig']>[0], string][] = [
    ['a bearer token', { auth: 'token' }, 'admin'],
    ['a client certificate (data)', { auth: 'cert', user: 'alice' }, 'alice'],
    [
      'client certificate, key and CA files relative to the kubeconfig',
      { auth: 'cert-files', user: 'bob', tls: 'ca-file' },
      'bob',
    ],
    ['an exec credential plugin', { auth: 'exec', user: 'carol' }, 'carol'],
    ['insecure-skip-tls-verify without a CA', { auth: 'token', tls: 'insecure' }, 'admin'],
    [
      'tls-server-name naming a host the certificate covers',
      { auth: 'token', tlsServerName: 'localhost' },
      'admin',
    ],
  ];
  for (const [name, options, user] of ok) {
    it(`authenticates with ${name}`, async () => {
      assert.equal(await whoAmI(fake.kubeconfig(options)), user);
    });
  }

  it('tells exec plugins how they are called (KUBERNETES_EXEC_INFO), as kubectl does', async () => {
    const kubeconfig = fake.kubeconfig({ auth: 'exec', user: 'carol', file: 'exec-info.yaml' });
    rmSync(join(fake.dir, 'exec-plugin.log'), { force: true });
    await whoAmI(kubeconfig);
    const info = JSON.parse(
      readFileSync(join(fake.dir, 'exec-plugin.log'), 'utf8').trim().split('\n')[0]!,
    );
    assert.deepEqual(info, {
      kind: 'ExecCredential',
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      spec: { interactive: false },
    });
  });

  it('runs an exec plugin once while its credential has not expired', async () => {
    const kubeconfig = fake.kubeconfig({
      auth: 'exec',
      user: 'carol',
      execExpires: true,
      userEntry: 'carol-expiring',
    });
    rmSync(join(fake.dir, 'exec-plugin.log'), { force: true });
    const api = await KubeApi.connect({ kubeconfig, env: {} });
    for (let i = 0; i < 3; i++) await api.list('/api/v1/nodes');
    assert.equal(
      readFileSync(join(fake.dir, 'exec-plugin.log'), 'utf8').trim().split('\n').length,
      1,
    );
  });

  it('reads the in-cluster service account when there is no kubeconfig (kubectl in a Pod)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kdebug-sa-'));
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'carol-token');
    writeFileSync(join(sa, 'ca.crt'), fake.certs.ca.cert);
    writeFileSync(join(sa, 'namespace'), 'monitoring');
    try {
      const env = {
        HOME: root,
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: String(fake.port),
      };
      const api = await KubeApi.connect({ env, serviceAccountRoot: root });
      assert.deepEqual([api.config.context, api.namespace], ['in-cluster', 'monitoring']);
      const before = fake.requests.length;
      await api.list('/api/v1/nodes');
      assert.equal(fake.requests[before]?.user, 'carol');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('talks plain HTTP to a kubectl proxy address (client-node alone refuses it)', async () => {
    const proxy = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        '{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"via-proxy"}}]}',
      );
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const kubeconfig = fake.kubeconfig({
        auth: 'none',
        tls: 'none',
        server: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      });
      const api = await KubeApi.connect({ kubeconfig, env: {} });
      assert.deepEqual((await api.list('/api/v1/nodes')).items, [
        { apiVersion: 'v1', kind: 'Node', metadata: { name: 'via-proxy' } },
      ]);
    } finally {
      proxy.close();
    }
  });

  const failures: [string, Parameters<FakeApi['kubeconfig']>[0], string, RegExp][] = [
    [
      'a wrong token',
      { auth: 'token', token: 'stolen' },
      'unauthorized',
      /^the API server at https:\/\/127\.0\.0\.1:\d+ rejected the credentials of user "admin" \(context "fake"\): 401 Unauthorized; the token or client certificate is missing, wrong or expired$/,
    ],
    [
      'a user without credentials',
      { auth: 'none' },
      'unauthorized',
      /rejected the credentials of user "admin"/,
    ],
    [
      'a CA that did not sign the server',
      { auth: 'token', tls: 'none' },
      'unreachable',
      /^cannot reach the API server at https:\/\/127\.0\.0\.1:\d+ \(context "fake"\): its certificate is not signed by the kubeconfig's certificate-authority \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)$/,
    ],
    [
      'tls-server-name naming a host the certificate does not cover',
      { auth: 'token', tlsServerName: 'kubernetes.example' },
      'not-kubernetes',
      /^the server at https:\/\/127\.0\.0\.1:\d+ \(context "fake"\) presented a certificate for IP Address:127\.0\.0\.1, DNS:localhost, not for kubernetes\.example \(ERR_TLS_CERT_ALTNAME_INVALID\): it is not the API server the kubeconfig means, or its tls-server-name should be one of those names$/,
    ],
    [
      'an exec plugin that fails',
      {
        auth: 'exec',
        execFails: 'error: token expired, run `login` again\n',
        userEntry: 'failing',
      },
      'credentials',
      /^the credential plugin ".*node" of user "failing" failed: error: token expired, run `login` again \(context "fake"\)$/,
    ],
  ];
  for (const [name, options, reason, message] of failures) {
    it(`explains ${name}`, async () => {
      const api = await KubeApi.connect({ kubeconfig: fake.kubeconfig(options), env: {} });
      await assert.rejects(api.list('/api/v1/nodes'), (e: unknown) => {
        assert.ok(e instanceof KubeApiError, String(e));
        assert.deepEqual([e.reason, e.message.match(message) !== null], [reason, true], e.message);
        return true;
      });
    });
  }

  it('uses the CA of a context that names no user, and says the request was anonymous', async () => {
    const file = fake.kubeconfig({ auth: 'none', userEntry: 'nobody' });
    const doc = loadYaml(readFileSync(file, 'utf8')) as {
      contexts: { context: { user?: string } }[];
    };
    delete doc.contexts[0]!.context.user;
    writeFileSync(file, dump(doc));
    const api = await KubeApi.connect({ kubeconfig: file, env: {} });
    await assert.rejects(
      api.list('/api/v1/nodes'),
      /rejected the credentials of user "\(anonymous\)"/,
    );
  });

  it('explains an exec plugin that is not installed', async () => {
    const file = fake.kubeconfig({ auth: 'exec', userEntry: 'no-plugin' });
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(/command: .*/, 'command: kdebug-test-no-such-plugin'),
    );
    const api = await KubeApi.connect({ kubeconfig: file, env: {} });
    await assert.rejects(
      api.list('/api/v1/nodes'),
      /^KubeApiError: the credential plugin "kdebug-test-no-such-plugin" of user "no-plugin" was not found \(is it on PATH\?\)/,
    );
  });
});
