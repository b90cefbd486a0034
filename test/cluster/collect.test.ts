// collect() against the fake API server: it reads exactly the objects a diagnosis of one Service
// needs, in parallel, as the API returned them (so Facts equal the snapshot served), says what it
// is reading, never reads Secrets, explains a missing Service with "did you mean", and records
// reads RBAC refuses instead of failing.
// IP conventions: see objects.ts; the demo snapshot's are in test/snapshots/demo-snapshot.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { commandStem, type NodeCommand } from '../../src/cluster/cluster.js';
import {
  collect,
  collectAll,
  nodeBasics,
  type CollectProgress,
} from '../../src/cluster/collect.js';
import { readDecision } from '../../src/cluster/collect/node-plan.js';
import { labelSelectorString } from '../../src/cluster/collect/selectors.js';
import { KubeCluster, type NodeTransport } from '../../src/cluster/kube-cluster.js';
import { KubeApiError } from '../../src/cluster/kube/errors.js';
import { ServiceNotFoundError } from '../../src/cluster/kube/suggestions.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { nodeBackends, textSigns } from '../../src/core/dataplane/iptables/backend.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { nodeErrorsOf } from '../../src/core/nodes/errors.js';
import { serviceListScope } from '../../src/core/facts/service-list-scope.js';
import { startFakeApi, type FakeApi, type FakeApiOptions } from '../support/fake-api/server.js';
import { aPod, aService, anEndpointSlice, webCluster } from './objects.js';

const key = (o: KubeObject) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
const keys = (objects: KubeObject[]) => objects.map(key).sort();
const sorted = (objects: KubeObject[]) => [...objects].sort((a, b) => (key(a) < key(b) ? -1 : 1));

const fakes: FakeApi[] = [];
after(() => Promise.all(fakes.map((f) => f.close())));

async function serve(
  objects: KubeObject[],
  options: FakeApiOptions = {},
  transport?: NodeTransport,
) {
  const fake = await startFakeApi({ objects, ...options });
  fakes.push(fake);
  const cluster = await KubeCluster.connect({
    kubeconfig: fake.kubeconfig({ namespace: 'default' }),
    env: {},
    transport: transport && (() => transport),
  });
  return { fake, cluster };
}

describe('collect for one Service', () => {
  const { relevant, irrelevant } = webCluster();
  let fake: FakeApi;
  let facts: Facts;
  const progress: CollectProgress[] = [];
  before(async () => {
    const s = await serve([...relevant, ...irrelevant]);
    fake = s.fake;
    facts = await collect(
      s.cluster,
      { namespace: 'default', service: 'web' },
      {
        onProgress: (p) => progress.push(p),
        meta: { kdebugVersion: '9.9.9' },
        now: () => new Date('2025-01-02T03:04:05Z'),
      },
    );
  });

  it('reads the Service, its slices, Endpoints, Pods (selected and pointed at), Nodes, kube-proxy, DNS and NetworkPolicies', () => {
    assert.deepEqual(keys(facts.objects), keys(relevant));
  });

  it('keeps every object exactly as served (unknown fields, string timestamps): Facts equal the snapshot', () => {
    assert.deepEqual(sorted(facts.objects), sorted(relevant));
    const svc = facts.objects.find((o) => key(o) === 'Service default/web')!;
    assert.deepEqual(
      [
        typeof svc.metadata?.['creationTimestamp'],
        (svc['spec'] as Record<string, unknown>)['futureField'],
      ],
      ['string', { keep: true }],
    );
  });

  it('orders objects by kind, then namespace and name', () => {
    assert.deepEqual(
      facts.objects.map((o) => o.kind),
      [
        'Service',
        'Service',
        'EndpointSlice',
        'EndpointSlice',
        'Endpoints',
        'Pod',
        'Pod',
        'Pod',
        'Pod',
        'Pod',
        'Pod',
        'Node',
        'Node',
        'ConfigMap',
        'ConfigMap',
        'DaemonSet',
        'NetworkPolicy',
      ],
    );
  });

  it('records context, server, user, target, time and version in meta', () => {
    assert.deepEqual(facts.meta, {
      context: 'fake',
      server: fake.url,
      user: 'admin',
      namespace: 'default',
      service: 'web',
      capturedAt: '2025-01-02T03:04:05.000Z',
      kdebugVersion: '9.9.9',
    });
    // one Service read by name: no namespace's Service list read whole
    assert.deepEqual(serviceListScope(facts), { kind: 'none' });
  });

  it('never reads Secrets', () => {
    assert.deepEqual(
      fake.requests.filter((r) => /secrets/.test(r.path)),
      [],
    );
  });

  it('says what it reads: each start ends in done or failed, with counts', () => {
    const starts = progress.filter((p) => p.state === 'start').map((p) => p.what);
    const ends = progress.filter((p) => p.state !== 'start').map((p) => p.what);
    assert.deepEqual([...starts].sort(), [...ends].sort());
    const done = Object.fromEntries(
      progress.filter((p) => p.state === 'done').map((p) => [p.what, p.count]),
    );
    assert.deepEqual(done, {
      'Service default/web': 1,
      'EndpointSlices of default/web': 1,
      'Endpoints default/web': 1,
      'Pods selected by default/web': 2,
      'Pod default/old-web-0': 1,
      Nodes: 2,
      ServiceCIDRs: 0,
      'DaemonSet kube-system/kube-proxy': 1,
      'kube-proxy Pods': 2,
      'ConfigMap kube-system/kube-proxy': 1,
      'ConfigMap kube-system/kube-proxy-config': 0,
      'Cilium agent Pods': 0,
      'ConfigMap kube-system/cilium-config': 0,
      'Service kube-system/kube-dns': 1,
      'EndpointSlices of kube-system/kube-dns': 1,
      'CoreDNS Pods': 1,
      'ConfigMap kube-system/coredns': 1,
      'NetworkPolicies in default': 1,
    });
    assert.ok(progress.every((p) => p.node === undefined));
  });

  it('runs its reads in parallel', async () => {
    // a long delay a read, so that a loaded machine's own time does not decide the outcome
    const { cluster } = await serve([...relevant, ...irrelevant], { delayMs: 300 });
    const t = Date.now();
    await collect(cluster, { namespace: 'default', service: 'web' });
    // 19 reads, at most 3 in a row (Service -> selected Pods -> Pods the endpoints point at): one
    // after another they would take 5.7 s, in parallel about 0.9 s
    const took = Date.now() - t;
    assert.ok(took < 3000, `took ${took} ms`);
  });
});

describe('collect: a Service that does not exist', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    const { relevant, irrelevant } = webCluster();
    s = await serve([
      ...relevant,
      ...irrelevant,
      aService('nginx-svc', 'team-a'),
      aService('api-gateway', 'team-a'),
    ]);
  });

  const cases: [string, string, string, string[]][] = [
    ['a typo', 'default', 'wbe', ['default/web', 'default/webapp', 'prod/web']],
    [
      'the right name in the wrong namespace',
      'staging',
      'web',
      ['default/web', 'prod/web', 'default/webapp'],
    ],
    ['a transposition, elsewhere', 'default', 'ngnix-svc', ['team-a/nginx-svc']],
    ['nothing alike', 'default', 'zzzzzz', []],
  ];
  for (const [name, ns, svc, want] of cases) {
    it(`suggests names for ${name}`, async () => {
      const e = await collect(s.cluster, { namespace: ns, service: svc }).then(
        () => assert.fail('expected ServiceNotFoundError'),
        (err: unknown) => err,
      );
      assert.ok(e instanceof ServiceNotFoundError);
      assert.deepEqual(
        e.suggestions.map((x) => `${x.namespace}/${x.name}`),
        want,
      );
    });
  }

  it('words it for a person', async () => {
    const messages = await Promise.all(
      [
        ['default', 'wbe'],
        ['staging', 'web'],
        ['default', 'zzzzzz'],
        ['empty', 'web'],
      ].map(([namespace, service]) =>
        collect(s.cluster, { namespace: namespace!, service: service! }).catch(
          (e: Error) => e.message,
        ),
      ),
    );
    assert.deepEqual(messages, [
      'service "wbe" not found in namespace default; did you mean "web", "webapp" or "web" in namespace prod (-n prod)?',
      'service "web" not found in namespace staging; did you mean "web" in namespace default (-n default), "web" in namespace prod (-n prod) or "webapp" in namespace default (-n default)?',
      'service "zzzzzz" not found in namespace default (no Service has a similar name)',
      'service "web" not found in namespace empty; did you mean "web" in namespace default (-n default), "web" in namespace prod (-n prod) or "webapp" in namespace default (-n default)?',
    ]);
  });
});

describe('collect when RBAC refuses a read', () => {
  const { relevant } = webCluster();

  it('records a refused optional read and carries on', async () => {
    const { cluster } = await serve(relevant, {
      rbac: {
        deny: [
          { verbs: ['list'], resources: ['networkpolicies.networking.k8s.io'] },
          { verbs: ['get'], resources: ['configmaps'], namespaces: ['kube-system'] },
        ],
      },
    });
    const progress: CollectProgress[] = [];
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      { onProgress: (p) => progress.push(p) },
    );
    assert.deepEqual(
      keys(facts.objects),
      keys(relevant.filter((o) => o.kind !== 'NetworkPolicy' && o.kind !== 'ConfigMap')),
    );
    const byWhat = (a: { what: string }, b: { what: string }) => (a.what < b.what ? -1 : 1);
    const refused = (what: string) =>
      `access denied by RBAC: user "admin" cannot ${what} (context "fake")`;
    assert.deepEqual((facts.meta['readErrors'] as { what: string }[]).sort(byWhat), [
      {
        what: 'ConfigMap kube-system/cilium-config',
        read: {
          resource: 'configmaps',
          namespace: 'kube-system',
          name: 'cilium-config',
          addon: true,
        },
        error: refused('get configmaps in namespace kube-system'),
        reason: 'forbidden',
      },
      {
        what: 'ConfigMap kube-system/coredns',
        read: { resource: 'configmaps', namespace: 'kube-system', name: 'coredns', addon: true },
        error: refused('get configmaps in namespace kube-system'),
        reason: 'forbidden',
      },
      {
        what: 'ConfigMap kube-system/kube-proxy',
        read: { resource: 'configmaps', namespace: 'kube-system', name: 'kube-proxy', addon: true },
        error: refused('get configmaps in namespace kube-system'),
        reason: 'forbidden',
      },
      {
        what: 'ConfigMap kube-system/kube-proxy-config',
        read: {
          resource: 'configmaps',
          namespace: 'kube-system',
          name: 'kube-proxy-config',
          addon: true,
        },
        error: refused('get configmaps in namespace kube-system'),
        reason: 'forbidden',
      },
      {
        what: 'NetworkPolicies in default',
        read: { resource: 'networkpolicies', namespace: 'default' },
        error: refused('list networkpolicies.networking.k8s.io in namespace default'),
        reason: 'forbidden',
      },
    ]);
    assert.equal(progress.filter((p) => p.state === 'failed').length, 5);
  });

  it('fails when the Service itself cannot be read', async () => {
    const { cluster } = await serve(relevant, {
      rbac: { deny: [{ verbs: ['get'], resources: ['services'], namespaces: ['default'] }] },
    });
    await assert.rejects(collect(cluster, { namespace: 'default', service: 'web' }), {
      name: 'KubeApiError',
      message:
        'access denied by RBAC: user "admin" cannot get services in namespace default (context "fake")',
    });
  });

  it('fails fast when the credentials are refused', async () => {
    const fake = await startFakeApi({ objects: relevant });
    fakes.push(fake);
    const cluster = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ token: 'expired' }),
      env: {},
    });
    await assert.rejects(
      collect(cluster, { namespace: 'default', service: 'web' }),
      (e: unknown) => e instanceof KubeApiError && e.reason === 'unauthorized',
    );
  });
});

/** A Service "outside" without a selector, and its EndpointSlice written by hand: no Pod named. */
function handMade(...ips: string[]): [KubeObject, KubeObject] {
  const slice = anEndpointSlice(
    'outside',
    'default',
    ips.map((ip) => ({ ip, pod: '' })),
  );
  for (const e of slice['endpoints'] as Record<string, unknown>[]) delete e['targetRef'];
  return [aService('outside', 'default', { selector: {} }), slice];
}

describe('collect: Services without a selector, and node commands', () => {
  it('reads the Pods the endpoints name when the Service selects none', async () => {
    const manual = aService('legacy', 'default', { selector: {} });
    const slice = anEndpointSlice('legacy', 'default', [{ ip: '10.244.1.40', pod: 'legacy-db-0' }]);
    const { fake, cluster } = await serve([
      manual,
      slice,
      aPod('legacy-db-0', 'default', { labels: { app: 'db' }, ip: '10.244.1.40' }),
      aPod('web-1'),
    ]);
    const facts = await collect(cluster, { namespace: 'default', service: 'legacy' });
    assert.deepEqual(keys(facts.objects.filter((o) => o.kind === 'Pod')), [
      'Pod default/legacy-db-0',
    ]);
    assert.equal(
      fake.requests.filter((r) => r.path === '/api/v1/namespaces/default/pods').length,
      0,
    );
  });

  it('looks up by address the Pods of endpoints that name none, in every namespace, and records the lookups', async () => {
    const [manual, slice] = handMade('192.0.2.99', '10.244.2.50');
    const { fake, cluster } = await serve([
      manual,
      slice,
      aPod('cache-0', 'other', { labels: { app: 'cache' }, ip: '10.244.2.50' }),
      aPod('web-1'),
    ]);
    let early: unknown;
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'outside' },
      // what the node reads start from already says what was looked up
      { nodeCommands: (f) => ((early = f.meta['podIPLookups']), []) },
    );
    assert.deepEqual([...(early as string[])].sort(), ['10.244.2.50', '192.0.2.99']);
    assert.deepEqual(keys(facts.objects.filter((o) => o.kind === 'Pod')), ['Pod other/cache-0']);
    assert.deepEqual([...(facts.meta['podIPLookups'] as string[])].sort(), [
      '10.244.2.50',
      '192.0.2.99',
    ]);
    const lookups = fake.requests
      .filter((r) => r.path === '/api/v1/pods')
      .map((r) => r.query.get('fieldSelector'))
      .sort();
    assert.deepEqual(lookups, ['status.podIP=10.244.2.50', 'status.podIP=192.0.2.99']);
  });

  it('an address written as no API server stores one is looked up canonical; a name (FQDN) is not looked up', async () => {
    const [manual, slice] = handMade('FD00:0:0::6', 'db.example.com');
    const held = aPod('v6pod', 'other', { labels: { app: 'v6' }, ip: 'fd00::6' });
    const { fake, cluster } = await serve([manual, slice, held]);
    const facts = await collect(cluster, { namespace: 'default', service: 'outside' });
    assert.deepEqual(
      fake.requests
        .filter((r) => r.path === '/api/v1/pods')
        .map((r) => r.query.get('fieldSelector')),
      ['status.podIP=fd00::6'],
    );
    assert.deepEqual(keys(facts.objects.filter((o) => o.kind === 'Pod')), ['Pod other/v6pod']);
  });

  it('a lookup by address that fails is recorded as a failed read, and not as a lookup', async () => {
    const [manual, slice] = handMade('192.0.2.99');
    const { cluster } = await serve([manual, slice], {
      rbac: { deny: [{ verbs: ['list'], resources: ['pods'] }] },
    });
    const facts = await collect(cluster, { namespace: 'default', service: 'outside' });
    assert.equal(facts.meta['podIPLookups'], undefined);
    const failed = (facts.meta['readErrors'] as { read?: { podIP?: string } }[])
      .map((e) => e.read?.podIP)
      .filter(Boolean);
    assert.deepEqual(failed, ['192.0.2.99']);
  });

  const commands: NodeCommand[] = [
    { kind: 'iptables-save', backend: 'auto' },
    { kind: 'proxy-mode' },
  ];

  it('releases each node as soon as its commands are done, not all at the end', async () => {
    const events: string[] = [];
    const transport: NodeTransport = {
      run: async (node, c) => {
        events.push(`run ${node} ${commandStem(c)}`);
        return { stdout: '', stderr: '', exitCode: 0, via: 'test' };
      },
      done: async (node) => void events.push(`done ${node}`),
    };
    const { cluster } = await serve(webCluster().relevant, {}, transport);
    await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      { nodeCommands: commands, nodeConcurrency: 1 },
    );
    assert.deepEqual(events, [
      'run node-a iptables-save',
      'run node-a proxy-mode',
      'done node-a',
      'run node-b iptables-save',
      'run node-b proxy-mode',
      'done node-b',
    ]);
  });

  it('runs node commands through the transport and keeps their stdout per node', async () => {
    const ran: string[] = [];
    const transport: NodeTransport = {
      run: async (node, c) => {
        ran.push(`${node} ${commandStem(c)}`);
        if (node === 'node-b' && c.kind === 'proxy-mode')
          return {
            stdout: '',
            stderr: 'curl: (7) Failed to connect to 127.0.0.1 port 10249',
            exitCode: 7,
            via: 'test',
          };
        return { stdout: `${commandStem(c)} of ${node}\n`, stderr: '', exitCode: 0, via: 'test' };
      },
    };
    const { cluster } = await serve(webCluster().relevant, {}, transport);
    const progress: CollectProgress[] = [];
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      { nodeCommands: commands, onProgress: (p) => progress.push(p) },
    );
    assert.deepEqual(facts.nodes, {
      'node-a': {
        'iptables-save': 'iptables-save of node-a\n',
        'proxy-mode': 'proxy-mode of node-a\n',
      },
      'node-b': { 'iptables-save': 'iptables-save of node-b\n', 'proxy-mode': '' },
    });
    assert.deepEqual(nodeErrorsOf(facts).all(), [
      {
        node: 'node-b',
        command: 'proxy-mode',
        typed: ['curl', '-sS', '--max-time', '4', 'http://127.0.0.1:10249/proxyMode'],
        read: { kind: 'proxy-mode' },
        exitCode: 7,
        error: 'curl: (7) Failed to connect to 127.0.0.1 port 10249',
      },
    ]);
    assert.deepEqual(ran.sort(), [
      'node-a iptables-save',
      'node-a proxy-mode',
      'node-b iptables-save',
      'node-b proxy-mode',
    ]);
    assert.deepEqual(
      progress
        .filter((p) => p.node !== undefined && p.state !== 'start')
        .map((p) => `${p.node} ${p.what} ${p.state}`)
        .sort(),
      // each command as a person types it on the node
      [
        'node-a curl -sS --max-time 4 http://127.0.0.1:10249/proxyMode done',
        'node-a iptables-save done',
        'node-b curl -sS --max-time 4 http://127.0.0.1:10249/proxyMode failed',
        'node-b iptables-save done',
      ],
    );
  });

  it("lists kube-proxy's nftables table as text where the node's nft has no JSON", async () => {
    const ran: string[] = [];
    const transport: NodeTransport = {
      run: async (node, c) => {
        ran.push(`${node} ${commandStem(c)}`);
        // node-a's nft was built without JSON; node-b has no table at all
        if (c.kind === 'nft-list' && c.format !== 'text' && node === 'node-a')
          return {
            stdout: '',
            stderr: 'Error: JSON support not compiled-in',
            exitCode: 1,
            via: 'test',
          };
        if (c.kind === 'nft-list' && node === 'node-b')
          return {
            stdout: '',
            stderr:
              'Error: No such file or directory; did you mean table ‘kube-proxy’ in family ip6?',
            exitCode: 1,
            via: 'test',
          };
        return { stdout: `${commandStem(c)} of ${node}\n`, stderr: '', exitCode: 0, via: 'test' };
      },
    };
    const { cluster } = await serve(webCluster().relevant, {}, transport);
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      { nodeCommands: [{ kind: 'nft-list', family: 'ip' }] },
    );
    assert.deepEqual(ran.sort(), [
      'node-a nft-ip-kube-proxy',
      'node-a nft-ip-kube-proxy-text',
      'node-b nft-ip-kube-proxy',
      'node-b nft-ip-kube-proxy-text',
    ]);
    // a failed listing is no listing: only node-a's text one is kept
    assert.deepEqual(facts.nodes, {
      'node-a': { 'nft-ip-kube-proxy-text': 'nft-ip-kube-proxy-text of node-a\n' },
    });
    // node-a's table was read (as text); node-b's in neither form
    assert.deepEqual(
      nodeErrorsOf(facts)
        .all()
        .map((e) => `${e.node} ${e.command}`),
      ['node-b nft-ip-kube-proxy', 'node-b nft-ip-kube-proxy-text'],
    );
  });

  it('lists the virtual servers with ipvsadm -Ln where the node has no ipvsadm-save', async () => {
    const ran: string[] = [];
    const transport: NodeTransport = {
      run: async (node, c) => {
        ran.push(`${node} ${commandStem(c)}`);
        if (c.kind === 'ipvs-save' && c.format === undefined && node === 'node-a')
          return { stdout: '', stderr: 'sh: ipvsadm-save: not found', exitCode: 127, via: 'test' };
        return { stdout: `${commandStem(c)} of ${node}\n`, stderr: '', exitCode: 0, via: 'test' };
      },
    };
    const { cluster } = await serve(webCluster().relevant, {}, transport);
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      { nodeCommands: [{ kind: 'proc-net', file: 'ip_vs_stats' }, { kind: 'ipvs-save' }] },
    );
    assert.deepEqual(ran.sort(), [
      'node-a ip_vs_stats',
      'node-a ipvsadm-list',
      'node-a ipvsadm-save',
      'node-b ip_vs_stats',
      'node-b ipvsadm-save',
    ]);
    assert.deepEqual(facts.nodes, {
      'node-a': {
        ip_vs_stats: 'ip_vs_stats of node-a\n',
        'ipvsadm-list': 'ipvsadm-list of node-a\n',
      },
      'node-b': {
        ip_vs_stats: 'ip_vs_stats of node-b\n',
        'ipvsadm-save': 'ipvsadm-save of node-b\n',
      },
    });
    // read the other way: nothing lost
    assert.deepEqual(nodeErrorsOf(facts).all(), []);
  });

  it("reads the Cilium agents and cilium-config, and each agent's listings where agents run: the tables from 1.18, its Service list before, cilium where there is no cilium-dbg", async () => {
    const agent = (node: string, image: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `cilium-${node}`,
        namespace: 'kube-system',
        labels: { 'k8s-app': 'cilium' },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'cilium', controller: true },
        ],
      },
      spec: { nodeName: node, containers: [{ name: 'cilium-agent', image }] },
      status: { phase: 'Running' },
    });
    const plan = (image: string) =>
      nodeBasics({
        objects: [...webCluster().relevant, agent('node-a', image)],
        nodes: {},
        meta: {},
      })
        .filter((c) => c.kind === 'cilium')
        .map(commandStem);
    assert.deepEqual(plan('quay.io/cilium/cilium:v1.18.6@sha256:0'), [
      'cilium-status',
      'cilium-frontends',
      'cilium-backends',
      'cilium-bpf-lb-list',
    ]);
    assert.deepEqual(plan('quay.io/cilium/cilium:v1.14.4'), [
      'cilium-status',
      'cilium-service-list',
      'cilium-bpf-lb-list',
    ]);
    // no Cilium agent: nothing of Cilium's is read
    assert.deepEqual(
      nodeBasics({ objects: webCluster().relevant, nodes: {}, meta: {} }).filter(
        (c) => c.kind === 'cilium',
      ),
      [],
    );
    const ran: string[] = [];
    const transport: NodeTransport = {
      run: async (node, c) => {
        ran.push(
          `${node} ${c.kind === 'cilium' ? `${c.binary ?? 'cilium-dbg'} ${c.list}` : commandStem(c)}`,
        );
        if (c.kind === 'cilium' && c.binary === undefined)
          return {
            stdout: '',
            stderr: '',
            exitCode: null,
            error: 'cilium-dbg is not in the Cilium agent image on node-a',
            missingBinary: true,
            via: 'test',
          };
        return { stdout: `${commandStem(c)} of ${node}\n`, stderr: '', exitCode: 0, via: 'test' };
      },
    };
    const config: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cilium-config', namespace: 'kube-system' },
      data: { 'kube-proxy-replacement': 'true' },
    };
    const operator: KubeObject = {
      ...agent('node-b', 'operator-generic:v1.14.4'),
      metadata: {
        name: 'cilium-operator-1',
        namespace: 'kube-system',
        labels: { 'io.cilium/app': 'operator' },
      },
    };
    const { cluster } = await serve(
      [...webCluster().relevant, agent('node-a', 'cilium:v1.14.4'), config, operator],
      {},
      transport,
    );
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      { nodeCommands: [{ kind: 'cilium', list: 'service-list' }], nodes: ['node-a'] },
    );
    // live, the agents and their ConfigMap are read from the API (the operator is no agent)
    assert.deepEqual(
      keys(facts.objects).filter((k) => k.includes('cilium')),
      ['ConfigMap kube-system/cilium-config', 'Pod kube-system/cilium-node-a'],
    );
    assert.deepEqual(ran, ['node-a cilium-dbg service-list', 'node-a cilium service-list']);
    assert.deepEqual(facts.nodes['node-a'], {
      'cilium-service-list': 'cilium-service-list of node-a\n',
    });
  });

  it("reads the endpoints' nodes while every Node is still being listed, then gives them what the full commands add", async () => {
    let commandRan!: () => void;
    const first = new Promise<void>((r) => (commandRan = r));
    const ran: string[] = [];
    const transport: NodeTransport = {
      run: async (node, c) => {
        ran.push(`${node} ${commandStem(c)}`);
        commandRan();
        return { stdout: `${commandStem(c)}\n`, stderr: '', exitCode: 0, via: 'test' };
      },
    };
    const { cluster } = await serve(webCluster().relevant, {}, transport);
    const list = cluster.list.bind(cluster);
    // the Node list answers only once a node command has run: an early start or a deadlock
    cluster.list = async (request) => {
      if (request.path === '/api/v1/nodes') {
        await first;
        ran.push('Nodes listed');
      }
      return list(request);
    };
    const tables: NodeCommand = { kind: 'proc-net', file: 'ip_tables_names' };
    const stats: NodeCommand = { kind: 'conntrack-stats' };
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      {
        early: { nodes: () => ['node-a', 'no-such-node'], commands: () => [tables] },
        nodes: () => ['node-a', 'node-b'],
        nodeCommands: () => [tables, stats],
      },
    );
    assert.deepEqual(ran.slice(0, 2), ['node-a ip_tables_names', 'Nodes listed']);
    // node-b reads everything; node-a only what it had not; a node that is not there, nothing
    assert.deepEqual(ran.slice(2).sort(), [
      'node-a conntrack-stats',
      'node-b conntrack-stats',
      'node-b ip_tables_names',
    ]);
    for (const node of ['node-a', 'node-b'])
      assert.deepEqual(Object.keys(facts.nodes[node] ?? {}).sort(), [
        'conntrack-stats',
        'ip_tables_names',
      ]);
    // what was read by name early is in the facts once, the lists' copies beside it
    const nodes = facts.objects.filter((o) => o.kind === 'Node').map((o) => o.metadata?.name);
    assert.deepEqual(nodes, ['node-a', 'node-b']);
  });

  // What each node's kernel says, by how `cat /proc/net/...` ends there.
  const CAT: Record<string, { stdout: string; stderr: string; exitCode: number }> = {
    listed: { stdout: 'filter\nnat\n', stderr: '', exitCode: 0 },
    'not-listed': { stdout: 'filter\n', stderr: '', exitCode: 0 },
    'no-list': {
      stdout: '',
      stderr: 'cat: /proc/net/ip_tables_names: No such file or directory',
      exitCode: 1,
    },
    'not-readable': {
      stdout: '',
      stderr: 'sudo: a password is required',
      exitCode: 1,
    },
  };

  /** collect's node runs on one node per kernel answer: what ran, what was kept, what it said. */
  async function legacyPlan(commands: (f: Facts) => NodeCommand[]) {
    const ran: string[] = [];
    const transport: NodeTransport = {
      run: async (node, c) => {
        ran.push(`${node} ${commandStem(c)}`);
        if (c.kind === 'proc-net') return { ...CAT[node]!, via: 'test' };
        return { stdout: `${commandStem(c)} of ${node}\n`, stderr: '', exitCode: 0, via: 'test' };
      },
    };
    const { cluster } = await serve(webCluster().relevant, {}, transport);
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      { nodeCommands: commands, nodes: Object.keys(CAT) },
    );
    return { ran, facts };
  }

  it("reads legacy's nat table only where the kernel lists it: reading it by name would create it", async () => {
    const { ran, facts } = await legacyPlan(nodeBasics);
    const legacyRead = (node: string) => ran.includes(`${node} iptables-legacy-save-nat`);
    assert.deepEqual(
      Object.keys(CAT).map((node) => `${node}: ${legacyRead(node) ? 'read' : 'not read'}`),
      ['listed: read', 'not-listed: not read', 'no-list: not read', 'not-readable: not read'],
    );
    // the list first, after the dumps (a kube-proxy image without cat fails nothing else)
    assert.deepEqual(ran.filter((r) => r.startsWith('listed ')).slice(0, 4), [
      'listed iptables-save',
      'listed iptables-nft-save-nat',
      'listed ip_tables_names',
      'listed iptables-legacy-save-nat',
    ]);
    // no list: ip_tables is not loaded, so no legacy table exists; kept as an empty list
    assert.equal(facts.nodes['no-list']?.['ip_tables_names'], '');
    assert.equal(facts.nodes['not-readable']?.['ip_tables_names'], undefined);
    assert.deepEqual(nodeErrorsOf(facts).all(), [
      {
        node: 'not-readable',
        command: 'ip_tables_names',
        typed: ['cat', '/proc/net/ip_tables_names'],
        read: { kind: 'proc-net', file: 'ip_tables_names' },
        exitCode: 1,
        error: 'sudo: a password is required',
      },
      {
        node: 'not-readable',
        command: 'iptables-legacy-save-nat',
        typed: ['iptables-legacy-save', '-t', 'nat'],
        read: { kind: 'iptables-save', backend: 'legacy', table: 'nat' },
        exitCode: null,
        error:
          'not run: /proc/net/ip_tables_names could not be read, and where it does not list what this reads, reading it would create it',
      },
    ]);
  });

  it('runs no guarded read whose list was not planned before it', async () => {
    const { ran } = await legacyPlan(() => [
      { kind: 'ip6tables-save', backend: 'legacy', table: 'nat' },
      { kind: 'ipvs-save' },
      { kind: 'ipset-save' },
      // without -t, iptables-legacy-save dumps only the tables the kernel lists
      { kind: 'iptables-save', backend: 'legacy' },
    ]);
    assert.deepEqual([...new Set(ran.map((r) => r.split(' ')[1]))], ['iptables-legacy-save']);
  });

  it('a legacy nat table the list does not name reads as holding no chain; older captures as before', () => {
    const NFT_NAT = '*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n';
    const backendsOf = (outputs: Record<string, string>) => {
      const b = nodeBackends(Object.keys(outputs), (s) => textSigns(outputs[s]!));
      return `${b.chains} (${b.sources.join(', ')})`;
    };
    // planned now: the list, and legacy's nat table only where it is listed
    assert.equal(
      backendsOf({ ip_tables_names: 'filter\n', 'iptables-nft-save-nat': NFT_NAT }),
      'nft (ip_tables_names, iptables-nft-save-nat)',
    );
    assert.equal(
      backendsOf({ ip_tables_names: '', 'iptables-nft-save-nat': '*nat\nCOMMIT\n' }),
      'none (ip_tables_names, iptables-nft-save-nat)',
    );
    // a list that could not be read: legacy not observed
    assert.equal(
      backendsOf({ 'iptables-nft-save-nat': '*nat\nCOMMIT\n' }),
      'unknown (iptables-nft-save-nat)',
    );
    // older captures: no list, legacy's nat table read (or not) as it was
    assert.equal(
      backendsOf({ 'iptables-legacy-save-nat': NFT_NAT, 'iptables-nft-save-nat': NFT_NAT }),
      'both (iptables-legacy-save-nat, iptables-nft-save-nat)',
    );
    assert.equal(
      backendsOf({ 'iptables-legacy-save-nat': '', 'iptables-nft-save-nat': NFT_NAT }),
      'nft (iptables-legacy-save-nat, iptables-nft-save-nat)',
    );
  });

  // One line per case: the command, what the node printed before it, the decision.
  const DECISIONS: [NodeCommand, Record<string, string>, 'run' | 'absent' | 'unread'][] = [
    [
      { kind: 'iptables-save', backend: 'legacy', table: 'nat' },
      { ip_tables_names: 'nat\n' },
      'run',
    ],
    [
      { kind: 'iptables-save', backend: 'legacy', table: 'nat' },
      { ip_tables_names: 'filter\n' },
      'absent',
    ],
    [{ kind: 'iptables-save', backend: 'legacy', table: 'nat' }, { ip_tables_names: '' }, 'absent'],
    [
      { kind: 'iptables-save', backend: 'legacy', table: 'nat' },
      { ip6_tables_names: 'nat\n' },
      'unread',
    ],
    [
      { kind: 'iptables-save', backend: 'legacy', table: 'filter' },
      { ip_tables_names: 'nat\nfilter\n' },
      'run',
    ],
    [
      { kind: 'ip6tables-save', backend: 'legacy', table: 'nat' },
      { ip6_tables_names: 'nat\n' },
      'run',
    ],
    [
      { kind: 'ip6tables-save', backend: 'legacy', table: 'nat' },
      { ip_tables_names: 'nat\n' },
      'unread',
    ],
    [{ kind: 'iptables-save', backend: 'legacy' }, {}, 'run'],
    [{ kind: 'iptables-save', backend: 'nft', table: 'nat' }, {}, 'run'],
    [{ kind: 'iptables-save', backend: 'auto' }, {}, 'run'],
    [{ kind: 'ipvs-save' }, { ip_vs_stats: '   Total Incoming Outgoing\n' }, 'run'],
    [{ kind: 'ipvs-save', format: 'list' }, { ip_vs_stats: '' }, 'absent'],
    [{ kind: 'ipset-save' }, {}, 'unread'],
    [{ kind: 'conntrack-stats' }, {}, 'run'],
  ];
  for (const [command, printed, decision] of DECISIONS)
    it(`${commandStem(command)} after ${JSON.stringify(printed)}: ${decision}`, () => {
      assert.equal(readDecision(command, printed), decision);
    });

  it('says so when no node transport is configured', async () => {
    const { cluster } = await serve(webCluster().relevant);
    const facts = await collect(
      cluster,
      { namespace: 'default', service: 'web' },
      { nodeCommands: [commands[0]!], nodes: ['node-a'] },
    );
    assert.deepEqual(facts.nodes, {});
    assert.deepEqual(nodeErrorsOf(facts).all(), [
      {
        node: 'node-a',
        command: 'iptables-save',
        typed: ['iptables-save'],
        read: { kind: 'iptables-save', backend: 'auto' },
        exitCode: null,
        error: 'no node transport configured: cannot run iptables-save on node node-a',
      },
    ]);
  });
});

describe('collectAll (snapshot save --all)', () => {
  const { relevant, irrelevant } = webCluster();
  let cluster: KubeCluster;
  before(async () => {
    ({ cluster } = await serve([...relevant, ...irrelevant]));
  });

  it('reads every Service of a namespace and what they need', async () => {
    const facts = await collectAll(cluster, { namespace: 'default' });
    const want = [...relevant, ...irrelevant].filter(
      (o) =>
        o.kind !== 'Secret' &&
        !(o.kind === 'ConfigMap' && o.metadata?.namespace === 'default') &&
        o.metadata?.namespace !== 'prod',
    );
    assert.deepEqual(sorted(facts.objects), sorted(want));
    assert.deepEqual([facts.meta.namespace, facts.meta.service], ['default', undefined]);
    // kube-system's kube-dns, read as an add-on, does not make kube-system's list read whole
    assert.deepEqual(serviceListScope(facts), { kind: 'namespace', namespace: 'default' });
  });

  it('reads every Service of the cluster', async () => {
    const facts = await collectAll(cluster, {});
    assert.deepEqual(
      keys(facts.objects.filter((o) => o.kind === 'Service' || o.kind === 'NetworkPolicy')),
      [
        'NetworkPolicy default/default-deny',
        'NetworkPolicy prod/prod-deny',
        'Service default/web',
        'Service default/webapp',
        'Service kube-system/kube-dns',
        'Service prod/payments',
        'Service prod/web',
      ],
    );
    assert.equal(facts.meta.namespace, undefined);
    // snapshot save -A and live drift's reads: every namespace's Services listed
    assert.deepEqual(serviceListScope(facts), { kind: 'all' });
    // every Pod of the cluster read: an address none has is no Pod's without a lookup
    assert.equal(facts.meta['everyPodRead'], true);
    assert.equal(
      (await collectAll(cluster, { namespace: 'prod' })).meta['everyPodRead'],
      undefined,
    );
  });
});

describe('collect against the demo snapshot (snapshots/nginx-svc)', () => {
  let served: Facts;
  let facts: Facts;
  before(async () => {
    served = await readSnapshot('snapshots/nginx-svc');
    const { cluster } = await serve(served.objects);
    facts = await collect(cluster, { namespace: 'default', service: 'nginx-svc' });
  });

  it('reads what nginx-svc needs, each object identical to the snapshot', () => {
    assert.deepEqual(keys(facts.objects), [
      'ConfigMap kube-system/coredns',
      'ConfigMap kube-system/kube-proxy',
      'DaemonSet kube-system/kube-proxy',
      'EndpointSlice default/nginx-svc-7c6vz',
      'EndpointSlice kube-system/kube-dns-q8mtw',
      'Endpoints default/nginx-svc',
      'Node /vm-12-11-centos',
      'Node /vm-12-7-centos',
      'Pod default/nginx-55fc968d9-4pddn',
      'Pod default/nginx-55fc968d9-kh24k',
      'Pod kube-system/coredns-5c98db65d4-gtwn8',
      'Pod kube-system/coredns-5c98db65d4-xmzd5',
      'Pod kube-system/kube-proxy-8vbqn',
      'Pod kube-system/kube-proxy-n2jtl',
      'Service default/nginx-svc',
      'Service kube-system/kube-dns',
    ]);
    const original = new Map(served.objects.map((o) => [key(o), o]));
    for (const o of facts.objects) assert.deepEqual(o, original.get(key(o)), key(o));
  });
});

describe('labelSelectorString', () => {
  it('writes a workload selector in the query syntax', () => {
    const table: [Parameters<typeof labelSelectorString>[0], string][] = [
      [{ matchLabels: { 'k8s-app': 'kube-proxy' } }, 'k8s-app=kube-proxy'],
      [
        {
          matchLabels: { a: 'b' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['x', 'y'] },
            { key: 'gone', operator: 'DoesNotExist' },
          ],
        },
        'a=b,tier in (x,y),!gone',
      ],
      [
        {
          matchExpressions: [
            { key: 'env', operator: 'NotIn', values: ['dev'] },
            { key: 'team', operator: 'Exists' },
          ],
        },
        'env notin (dev),team',
      ],
    ];
    for (const [selector, want] of table) assert.equal(labelSelectorString(selector), want);
  });
});
