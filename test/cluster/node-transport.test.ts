// --via against the fake API server: the order auto tries the ways in and what it says about each
// node, the kube-proxy Pod (found by its DaemonSet's selector, exec'd without a shell), command
// and connect timeouts, one unreachable node among reachable ones, and bounded parallelism.
// No SSH connection is ever opened here: without a key kdebug refuses before connecting.
// IP conventions: the lab's (test/support/lab/lab.ts): nodes 192.0.2.11-13, Pods 10.244.0.0/16.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import type { NodeCommand } from '../../src/cluster/cluster.js';
import { collect, type NodeTally } from '../../src/cluster/collect.js';
import { KubeApi } from '../../src/cluster/kube-api.js';
import { KubeCluster } from '../../src/cluster/kube-cluster.js';
import {
  NodeAccessTransport,
  nodeAccess,
  type NodeAccessOptions,
} from '../../src/cluster/nodes/transport.js';
import type { KubeObject } from '../../src/core/model.js';
import { nodeAccessLine } from '../../src/core/nodes/access.js';
import { nodeErrorsOf } from '../../src/core/nodes/errors.js';
import type { ExecHandler } from '../support/fake-api/exec.js';
import { startFakeApi, type FakeApiOptions } from '../support/fake-api/server.js';
import { TOPOLOGY } from '../support/lab/lab.js';
import { labObjects } from '../support/lab/objects.js';

const home = mkdtempSync(join(tmpdir(), 'kdebug-transport-'));
// no key, no agent, no config: SSH gives up before it would connect anywhere
const NO_SSH = { home, configFile: 'none', knownHostsFiles: [join(home, 'known_hosts')] };

const RULES: NodeCommand = { kind: 'iptables-save', backend: 'auto' };
const PING: NodeCommand = { kind: 'icmp-echo', ip: '10.96.190.219' };

/** The lab's objects with node-b's kube-proxy Pod Pending and node-c's gone. */
function cluster(): KubeObject[] {
  return labObjects(TOPOLOGY).flatMap((o) => {
    if (o.kind !== 'Pod' || !o.metadata?.name?.startsWith('kube-proxy-')) return [o];
    const node = (o['spec'] as { nodeName: string }).nodeName;
    if (node === 'node-c') return [];
    if (node === 'node-b')
      return [
        {
          ...o,
          status: {
            phase: 'Pending',
            containerStatuses: [
              { name: 'kube-proxy', state: { waiting: { reason: 'ContainerCreating' } } },
            ],
          },
        },
      ];
    return [o];
  });
}

/** Each exec answers with where it ran and what. */
const where: ExecHandler = (req) => ({
  stdout: `${(req.pod['spec'] as { nodeName: string }).nodeName} ${req.container}: ${req.command.join(' ')}\n`,
  exitCode: 0,
});

const opened: (() => Promise<void>)[] = [];
async function connect(o: FakeApiOptions = {}, user = 'admin') {
  const fake = await startFakeApi({
    objects: cluster(),
    exec: where,
    tokens: { 'admin-token': 'admin', 'dev-token': 'dev' },
    ...o,
  });
  const api = await KubeApi.connect({
    kubeconfig: fake.kubeconfig({ user, namespace: 'default' }),
    env: {},
    timeoutMs: 5000,
  });
  const transports: NodeAccessTransport[] = [];
  const transport = (t: NodeAccessOptions) => {
    const x = NodeAccessTransport.create(api, { ssh: NO_SSH, timeoutMs: 3000, ...t });
    transports.push(x);
    return x;
  };
  opened.push(async () => {
    for (const t of transports) await t.close();
    api.close();
    await fake.close();
  });
  return { fake, api, transport };
}

describe('reaching the nodes (--via)', () => {
  afterEach(async () => {
    for (const close of opened.splice(0)) await close();
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it("a Running kube-proxy Pod whose container is not running says the container's state", async () => {
    // a Pod bound and Running that the kubelet has not reported a container for (a lab's
    // API-only Node), and one whose container waits
    const running = (o: KubeObject, statuses: unknown[]): KubeObject => ({
      ...o,
      status: { phase: 'Running', containerStatuses: statuses },
    });
    const objects = cluster().map((o) => {
      const node = (o['spec'] as { nodeName?: string } | undefined)?.nodeName;
      if (o.kind !== 'Pod' || !o.metadata?.name?.startsWith('kube-proxy-')) return o;
      if (node === 'node-a') return running(o, []);
      if (node === 'node-b')
        return running(o, [
          { name: 'kube-proxy', state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ]);
      return o;
    });
    const { transport } = await connect({ objects });
    const t = transport({ via: 'kube-proxy' });
    const said = async (node: string) => (await t.run(node, RULES)).error;
    assert.match(
      (await said('node-a'))!,
      /kube-proxy Pod kube-system\/kube-proxy-\w+ on node-a is Running, but its container kube-proxy has no status yet$/,
    );
    assert.match(
      (await said('node-b'))!,
      /on node-b is Running, but its container kube-proxy is waiting \(CrashLoopBackOff\)$/,
    );
  });

  it('auto: the kube-proxy Pod for rules, a debug Pod for the rest and where kube-proxy is missing; says why', async () => {
    const { fake, transport } = await connect();
    const t = transport({ via: 'auto', pod: { yes: true } });
    const out: string[] = [];
    for (const node of ['node-a', 'node-b', 'node-c'])
      for (const c of [RULES, PING]) {
        const r = await t.run(node, c);
        out.push(`${node} ${c.kind}: ${r.exitCode} ${r.stdout.trim().split(':')[0]}`);
      }
    assert.deepEqual(out, [
      'node-a iptables-save: 0 node-a kube-proxy',
      'node-a icmp-echo: 0 node-a debugger',
      'node-b iptables-save: 0 node-b debugger',
      'node-b icmp-echo: 0 node-b debugger',
      'node-c iptables-save: 0 node-c debugger',
      'node-c icmp-echo: 0 node-c debugger',
    ]);
    const lines = t
      .describe()
      .map((a) => nodeAccessLine(a).replace(/kdebug-(node-.)-\w{5}/g, 'kdebug-$1-xxxxx'));
    assert.deepEqual(lines, [
      'node-a: rules via exec kube-system/kube-proxy-x7k2p; probes via debug Pod kdebug/kdebug-node-a-xxxxx (kube-proxy Pod skipped for probes: its image has no tools for them, kdebug runs only iptables-save there)',
      'node-b: rules and probes via debug Pod kdebug/kdebug-node-b-xxxxx (kube-proxy Pod skipped for rules: kube-proxy Pod kube-system/kube-proxy-q4n8d on node-b is not running (Pending, ContainerCreating); kube-proxy Pod skipped for probes: its image has no tools for them, kdebug runs only iptables-save there)',
      'node-c: rules and probes via debug Pod kdebug/kdebug-node-c-xxxxx (kube-proxy Pod skipped for rules: no kube-proxy Pod on node node-c; kube-proxy Pod skipped for probes: its image has no tools for them, kdebug runs only iptables-save there)',
    ]);
    // the kube-proxy Pods were found by the DaemonSet's selector
    assert.ok(fake.requests.some((r) => r.query.get('labelSelector') === 'k8s-app=kube-proxy'));
  });

  it('auto without --yes: no debug Pod, then SSH, and the node is not reached for probes', async () => {
    const { fake, transport } = await connect();
    const t = transport({ via: 'auto' });
    const rules = await t.run('node-a', RULES);
    const ping = await t.run('node-a', PING);
    assert.equal(rules.exitCode, 0);
    assert.equal(ping.exitCode, null);
    assert.equal(
      ping.error,
      'cannot run ping -c 1 -W 2 10.96.190.219 on node node-a: kube-proxy Pod: its image has no tools for them, kdebug runs only iptables-save there; debug Pod: kdebug creates a privileged debug Pod only with your consent: add --yes; SSH: no SSH key to offer root@192.0.2.11: pass --ssh-key, set IdentityFile in ~/.ssh/config, or start ssh-agent.',
    );
    assert.equal(
      fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods')).length,
      0,
    );
  });

  it('kube-proxy: exec of the save binary itself, no shell; probes are said to be impossible there', async () => {
    const seen: string[][] = [];
    const { transport, fake } = await connect({
      exec: (req) => (seen.push(req.command), where(req)),
    });
    const t = transport({ via: 'kube-proxy' });
    const r = await t.run('node-a', { kind: 'iptables-save', backend: 'legacy', table: 'nat' });
    assert.equal(r.via, 'exec kube-system/kube-proxy-x7k2p');
    assert.deepEqual(seen, [['iptables-legacy-save', '-t', 'nat']]);
    // the node's kube-proxy Pod is asked for by node: a large cluster's are tens of MB
    const lists = fake.requests.filter(
      (q) => q.method === 'GET' && q.path === '/api/v1/namespaces/kube-system/pods',
    );
    assert.deepEqual(
      lists.map((q) => q.query.get('fieldSelector')),
      ['spec.nodeName=node-a'],
    );
    const p = await t.run('node-a', PING);
    assert.match(
      p.error!,
      /^cannot run ping -c 1 -W 2 10\.96\.190\.219 on node node-a: kube-proxy Pod: its image has no tools/,
    );
  });

  it('kube-proxy on many nodes: each Pod asked for by node, then, past 50 nodes, all of them once', async () => {
    const base = cluster().find(
      (o) =>
        o.kind === 'Pod' &&
        o.metadata?.name?.startsWith('kube-proxy-') &&
        (o['spec'] as { nodeName?: string }).nodeName === 'node-a',
    )!;
    const many = Array.from({ length: 60 }, (_, i) => `node-${String(i).padStart(2, '0')}`);
    const pods: KubeObject[] = many.map((node) => ({
      ...base,
      metadata: { ...base.metadata, name: `kube-proxy-${node}` },
      spec: { ...(base['spec'] as object), nodeName: node },
    }));
    const { transport, fake } = await connect({ objects: [...cluster(), ...pods] });
    const t = transport({ via: 'kube-proxy' });
    for (const node of many) {
      const r = await t.run(node, RULES);
      assert.equal(r.exitCode, 0, `${node}: ${r.error}`);
    }
    const lists = fake.requests
      .filter((q) => q.method === 'GET' && q.path === '/api/v1/namespaces/kube-system/pods')
      .map((q) => q.query.get('fieldSelector'));
    assert.deepEqual(lists, [...many.slice(0, 50).map((n) => `spec.nodeName=${n}`), null]);
  });

  it("cilium: the agent's own listings by exec in its Pod, whatever --via; nothing else there", async () => {
    // a Cilium agent on node-a only, its container named as Cilium's DaemonSet names it
    const agent: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'cilium-8kq2t',
        namespace: 'kube-system',
        labels: { 'k8s-app': 'cilium' },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'cilium', controller: true },
        ],
      },
      spec: { nodeName: 'node-a', containers: [{ name: 'cilium-agent' }] },
      status: {
        phase: 'Running',
        containerStatuses: [{ name: 'cilium-agent', state: { running: {} } }],
      },
    };
    const seen: string[][] = [];
    const { fake, transport } = await connect({
      objects: [...cluster(), agent],
      exec: (req) => (
        seen.push([
          req.pod['metadata'] ? String((req.pod['metadata'] as { name: string }).name) : '',
          ...req.command,
        ]),
        where(req)
      ),
    });
    for (const via of ['auto', 'ssh'] as const) {
      const t = transport({ via, pod: { yes: true } });
      const r = await t.run('node-a', { kind: 'cilium', list: 'frontends' });
      assert.deepEqual([r.exitCode, r.via], [0, 'exec kube-system/cilium-8kq2t']);
      // the node's rules do not go through the agent's Pod
      const rules = await t.run('node-a', RULES);
      assert.notEqual(rules.via, 'exec kube-system/cilium-8kq2t');
      const none = await t.run('node-b', { kind: 'cilium', list: 'status' });
      assert.equal(none.exitCode, null);
      assert.match(none.error!, /Cilium agent Pod: no Cilium agent Pod on node node-b/);
    }
    assert.deepEqual(seen[0], [
      'cilium-8kq2t',
      'cilium-dbg',
      'shell',
      '--',
      'db/show',
      'frontends',
    ]);
    assert.ok(fake.requests.some((r) => r.query.get('labelSelector') === 'k8s-app=cilium'));
  });

  it('kube-proxy: static Pods without the DaemonSet label are found by name', async () => {
    const statics = labObjects(TOPOLOGY)
      .filter((o) => o.kind !== 'DaemonSet')
      .map((o) =>
        o.metadata?.name?.startsWith('kube-proxy-')
          ? { ...o, metadata: { ...o.metadata, labels: { component: 'kube-proxy', tier: 'node' } } }
          : o,
      );
    const { transport } = await connect({ objects: statics });
    const r = await transport({ via: 'kube-proxy' }).run('node-c', RULES);
    assert.deepEqual([r.exitCode, r.via], [0, 'exec kube-system/kube-proxy-m2v9z']);
  });

  it('kube-proxy: RBAC refusing exec in kube-system is said before trying', async () => {
    const { fake, transport } = await connect(
      {
        rbac: {
          deny: [
            {
              users: ['dev'],
              verbs: ['create'],
              resources: ['pods/exec'],
              namespaces: ['kube-system'],
            },
          ],
        },
      },
      'dev',
    );
    const r = await transport({ via: 'kube-proxy' }).run('node-a', RULES);
    assert.equal(
      r.error,
      'cannot run iptables-save on node node-a: kube-proxy Pod: access denied by RBAC: user "dev" cannot create pods/exec in namespace kube-system',
    );
    assert.equal(fake.requests.filter((q) => q.path.endsWith('/exec')).length, 0);
  });

  it('one node that does not answer does not stop the others, and is marked', async () => {
    const { fake, api } = await connect({
      exec: (req) => {
        if ((req.pod['spec'] as { nodeName: string }).nodeName === 'node-c')
          throw new Error(
            'error dialing backend: dial tcp 192.0.2.13:10250: connect: no route to host',
          );
        return where(req);
      },
    });
    fake.store.put(labObjects(TOPOLOGY).find((o) => o.metadata?.name === 'kube-proxy-m2v9z')!);
    fake.store.put(labObjects(TOPOLOGY).find((o) => o.metadata?.name === 'kube-proxy-q4n8d')!);
    const kc = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      transport: nodeAccess({ via: 'kube-proxy', ssh: NO_SSH }),
    });
    api.close();
    try {
      const facts = await collect(
        kc,
        { namespace: 'default', service: 'nginx-svc' },
        {
          nodeCommands: [RULES],
        },
      );
      assert.deepEqual(Object.keys(facts.nodes).sort(), ['node-a', 'node-b']);
      assert.deepEqual(nodeErrorsOf(facts).all(), [
        {
          node: 'node-c',
          command: 'iptables-save',
          typed: ['iptables-save'],
          // the command it ran, typed: the Rules step asks it whether the rules were read
          read: { backend: 'auto', kind: 'iptables-save' },
          exitCode: null,
          error:
            "exec kube-system/kube-proxy-m2v9z: the API server could not connect to the node's kubelet at 192.0.2.13:10250: no route to host",
        },
      ]);
      assert.equal(
        nodeAccessLine(kc.nodeAccess().find((a) => a.node === 'node-c')!),
        "node-c: not reached (kube-proxy Pod: exec kube-system/kube-proxy-m2v9z: the API server could not connect to the node's kubelet at 192.0.2.13:10250: no route to host)",
      );
    } finally {
      await kc.close();
    }
  });

  it('a capture finds each kube-proxy Pod among the Pods it read, tells the nodes read, failed and left, and shows those read as they come', async () => {
    // node-a's kube-proxy runs, node-b's is Pending, node-c has none
    const { fake } = await connect();
    const kc = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      transport: nodeAccess({ via: 'kube-proxy', ssh: NO_SSH }),
    });
    const tallies: NodeTally[] = [];
    const shown: string[][] = [];
    // a clock two seconds on at each look: every node done is shown while others are left
    let t = 0;
    try {
      const facts = await collect(
        kc,
        { namespace: 'default', service: 'nginx-svc' },
        {
          nodeCommands: [RULES],
          nodeConcurrency: 1,
          onNodes: (t) => tallies.push(t),
          onNodeFacts: (nodes) => shown.push(Object.keys(nodes)),
          now: () => new Date((t += 2000)),
        },
      );
      // the nodes done so far, those read: node-a after it, still node-a after node-b failed
      assert.deepEqual(shown, [['node-a'], ['node-a']]);
      assert.deepEqual(Object.keys(facts.nodes), ['node-a']);
      assert.deepEqual(tallies, [
        { read: 0, failed: 0, left: 3 },
        { read: 1, failed: 0, left: 2 },
        { read: 1, failed: 1, left: 1 },
        { read: 1, failed: 2, left: 0 },
      ]);
      // node-a and node-b were found among the Pods the capture read; only node-c, which has
      // none there, was asked for (by label, then by name for a static Pod)
      const byNode = fake.requests
        .filter((q) => q.path === '/api/v1/namespaces/kube-system/pods')
        .map((q) => q.query.get('fieldSelector'))
        .filter((f) => f !== null);
      assert.deepEqual([...new Set(byNode)], ['spec.nodeName=node-c']);
      assert.match(
        nodeAccessLine(kc.nodeAccess().find((a) => a.node === 'node-b')!),
        /kube-proxy Pod kube-system\/\S+ on node-b is not running \(Pending, ContainerCreating\)/,
      );
    } finally {
      await kc.close();
    }
  });

  it('a command past its time limit is given up on; the others still run', async () => {
    const { transport } = await connect({
      exec: (req) =>
        (req.pod['spec'] as { nodeName: string }).nodeName === 'node-b'
          ? new Promise(() => undefined)
          : where(req),
    });
    const t = transport({ via: 'pod', pod: { yes: true }, timeoutMs: 800 });
    const started = Date.now();
    const [a, b] = await Promise.all([t.run('node-a', RULES), t.run('node-b', RULES)]);
    assert.equal(a.exitCode, 0);
    assert.equal(b.exitCode, null);
    assert.match(
      b.error!,
      /^command in pod kdebug\/kdebug-node-b-\w{5} did not finish within 0\.8s$/,
    );
    assert.ok(Date.now() - started < 5000);
  });

  it('reads a bounded number of nodes at once', async () => {
    let now = 0;
    let most = 0;
    const nodes = Array.from({ length: 6 }, (_, i) => `node-${i}`);
    const objects: KubeObject[] = [
      ...labObjects(TOPOLOGY).filter((o) => o.kind === 'Service' || o.kind === 'EndpointSlice'),
      ...nodes.flatMap((n) => [
        { apiVersion: 'v1', kind: 'Node', metadata: { name: n } },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: `kube-proxy-${n}`,
            namespace: 'kube-system',
            labels: { 'k8s-app': 'kube-proxy' },
          },
          spec: { nodeName: n, containers: [{ name: 'kube-proxy', image: 'kube-proxy' }] },
          status: {
            phase: 'Running',
            containerStatuses: [{ name: 'kube-proxy', state: { running: {} } }],
          },
        },
      ]),
    ];
    const fake = await startFakeApi({
      objects,
      exec: async (req) => {
        most = Math.max(most, ++now);
        await new Promise((r) => setTimeout(r, 100));
        now--;
        return where(req);
      },
    });
    const kc = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      transport: nodeAccess({ via: 'kube-proxy' }),
    });
    try {
      const facts = await collect(
        kc,
        { namespace: 'default', service: 'nginx-svc' },
        {
          nodeCommands: [RULES, { kind: 'iptables-save', backend: 'nft', table: 'nat' }],
          nodeConcurrency: 3,
        },
      );
      assert.equal(Object.keys(facts.nodes).length, 6);
      assert.equal(most, 3);
    } finally {
      await kc.close();
      await fake.close();
    }
  });
});
