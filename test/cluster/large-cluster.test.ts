// A large cluster against the fake API server: `svc` reads the nodes that matter for the Service
// (the client's, the endpoints', those whose kube-proxy looks unhealthy), no more than the cap,
// says which it did not read, and its findings do not grow with the nodes.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { commandStem } from '../../src/cluster/cluster.js';
import { readLive, type NodeChoiceFlags } from '../../src/cluster/live-diagnosis.js';
import { KubeCluster, type NodeTransport } from '../../src/cluster/kube-cluster.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts, Finding, KubeObject, Report } from '../../src/core/model.js';
import {
  nodeAccess,
  NodeAccessTransport,
  type NodeChannel,
} from '../../src/cluster/nodes/transport.js';
import { byReason, nodeAccessLines, type NodeAccess } from '../../src/core/nodes/access.js';
import { nodeErrorsOf, type NodeErrorGroup } from '../../src/core/nodes/errors.js';
import { GROUPED, readErrorsOf, type ReadError } from '../../src/core/facts/not-read.js';
import { reportText } from '../../src/output/text.js';
import { startFakeApi } from '../support/fake-api/server.js';
import { aNode, aPod, webCluster } from './objects.js';
import { allModes } from '../support/modes.js';

const NODES = 300;
/** Nodes without a kube-proxy Pod (its DaemonSet cannot schedule there). */
const BROKEN = 30;
const target = { namespace: 'default', service: 'web' };

function largeCluster(nodes: number): KubeObject[] {
  const objects = [...webCluster().relevant];
  objects.push(aPod('client-0', 'default', { labels: { app: 'client' }, node: 'node-250' }));
  for (let i = 0; i < nodes; i++) {
    objects.push(aNode(`node-${i}`, `198.51.100.${i % 250}`, `10.245.${i % 250}.0/24`));
    if (i >= BROKEN)
      objects.push(
        aPod(`kube-proxy-n${i}`, 'kube-system', {
          labels: { 'k8s-app': 'kube-proxy' },
          node: `node-${i}`,
        }),
      );
  }
  return objects;
}

const findings = (r: Report, step: string): Finding[] =>
  r.steps.find((s) => s.id === step)?.findings ?? [];

/** svc's live read of a cluster of `nodes` Nodes (and webCluster's two): the facts, and the
 * nodes where a command ran. */
async function svcOn(
  nodes: number,
  which: NodeChoiceFlags = { from: { kind: 'pod', name: 'client-0' } },
): Promise<{ facts: Facts; ran: Set<string> }> {
  const fake = await startFakeApi({ objects: largeCluster(nodes) });
  const ran = new Set<string>();
  const transport: NodeTransport = {
    run: async (node, c) => {
      ran.add(node);
      // as a transport says it: the node named in the reason
      const stderr = `${commandStem(c)}: no kube-proxy Pod on node ${node}`;
      return { stdout: '', stderr, exitCode: 1, via: 'test' };
    },
  };
  const cluster = await KubeCluster.connect({
    kubeconfig: fake.kubeconfig({ namespace: 'default' }),
    env: {},
    transport: () => transport,
  });
  try {
    const { facts } = await readLive(cluster, target, '9.9.9', undefined, undefined, which);
    return { facts, ran };
  } finally {
    await cluster.close();
    await fake.close();
  }
}

describe('a cluster of 302 nodes: svc reads the nodes that matter, and says so', () => {
  let facts: Facts;
  let ran: Set<string>;
  let twice: Facts; // the same with twice the nodes
  before(async () => {
    ({ facts, ran } = await svcOn(NODES));
    ({ facts: twice } = await svcOn(2 * NODES));
  });

  it("reads the client's node, the endpoints' nodes and unhealthy ones, 20 in all", () => {
    const choice = facts.meta['nodeChoice'] as { chosen: { node: string; why: string[] }[] };
    assert.deepEqual([...ran].sort(), choice.chosen.map((c) => c.node).sort());
    assert.equal(ran.size, 20);
    const why = new Map(choice.chosen.map((c) => [c.node, c.why.join()]));
    assert.equal(why.get('node-250'), 'client');
    assert.equal(why.get('node-a'), 'endpoints');
    assert.equal(why.get('node-b'), 'endpoints');
    // the rest of the cap: nodes with no kube-proxy Pod
    assert.equal([...why.values()].filter((w) => w === 'unhealthy').length, 17);
  });

  it('the Rules step says how many nodes it did not read, and passes nothing for them', () => {
    const report = diagnose(facts, target, { code: allModes });
    const rules = findings(report, 'rules');
    const unread = rules.find((f) => f.id === 'rules-nodes-not-read');
    assert.ok(unread, rules.map((f) => f.id).join());
    assert.equal(unread.title, '282 of 302 nodes not read: --all-nodes reads them');
    assert.equal(unread.status, 'skip');
    assert.deepEqual(unread.next?.argv.slice(-1), ['--all-nodes']);
    // the 20 nodes read failed the same way: one finding names them all
    const failed = rules.filter((f) => f.id === 'rules-not-read');
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.nodes?.length, 20);
    assert.match(failed[0]!.title, /^rules not read on 20 nodes: node-\S+, \S+, \S+ and 17 more$/);
    // each node's own words as its evidence, the first node's in the explanation
    const first = failed[0]!.nodes![0]!;
    assert.match(failed[0]!.explanation, new RegExp(`On ${first}: .*on node ${first}\\.$`));
    assert.deepEqual(
      failed[0]!.evidence.map((e) => e.text.endsWith(`on node ${e.node}`)),
      failed[0]!.nodes!.map(() => true),
    );
    // a node not chosen is never named as checked
    const said = JSON.stringify(rules.filter((f) => f.id !== 'rules-nodes-not-read'));
    assert.doesNotMatch(said, /"node-(1[0-9]{2}|2[0-46-9][0-9])"/);
  });

  it('nodes in the same condition are one finding, and its text is bounded', () => {
    const report = diagnose(facts, target, { code: allModes });
    const down = findings(report, 'kube-proxy').filter((f) => f.id === 'kube-proxy-not-running');
    assert.equal(down.length, 1);
    assert.equal(down[0]!.title, `no kube-proxy Pod on ${BROKEN} of 302 nodes`);
    assert.equal(down[0]!.nodes?.length, BROKEN);
    assert.equal(down[0]!.evidence.length, BROKEN + 1, 'JSON keeps every node');
    const text = reportText(report, { verbose: true, width: 120 });
    assert.match(text, /\.\.\. and 20 more \(-o json lists every one\)/);
    assert.doesNotMatch(text, /undefined/);
    // the report grows with the nodes read (at most 20), not with the cluster
    const lines = (f: Facts) =>
      reportText(diagnose(f, target, { code: allModes }), { verbose: true, width: 120 }).split('\n')
        .length;
    assert.equal(lines(twice), lines(facts));
  });
});

describe('--all-nodes on a cluster of many nodes none of which could be read', () => {
  it("each step's findings stay a few, whatever the number of nodes", async () => {
    const { facts: some } = await svcOn(100, { all: true });
    const { facts: more } = await svcOn(200, { all: true });
    const text = (f: Facts) =>
      reportText(diagnose(f, target, { code: allModes }), { verbose: true, width: 120 });
    assert.equal(text(more).split('\n').length, text(some).split('\n').length, text(more));
    for (const step of diagnose(more, target, { code: allModes }).steps)
      assert.ok(
        step.findings.length <= 6,
        `${step.id}: ${step.findings.map((f) => f.title).join('; ')}`,
      );
  });
});

/** A Node as a kubelet writes it: versions, capacity, conditions with their words, images. */
function kubeletWritten(o: KubeObject): KubeObject {
  const status = o['status'] as { conditions: object[] };
  return {
    ...o,
    metadata: { ...o.metadata, uid: 'u-1', annotations: { 'node.alpha.kubernetes.io/ttl': '0' } },
    spec: { ...(o['spec'] as object), providerID: 'kind://docker/kind/node' },
    status: {
      ...status,
      capacity: { cpu: '8', pods: '110' },
      conditions: [
        ...status.conditions,
        { type: 'DiskPressure', status: 'False', message: 'kubelet has no disk pressure' },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.31.4',
        kubeProxyVersion: 'v1.31.4',
        operatingSystem: 'linux',
        bootID: 'b-1',
      },
      images: [{ names: ['registry.k8s.io/kube-proxy:v1.31.4'], sizeBytes: 30_000_000 }],
    },
  };
}

describe('--all-nodes on 3,000 nodes whose kubelets the API server cannot reach', () => {
  const N = 3000;
  /** The Nodes that have more than the steps read, as the API serves them. */
  const whole: KubeObject[] = [];
  let facts: Facts;
  let access: NodeAccess[];
  before(async () => {
    const objects = [...webCluster().relevant];
    for (let i = 0; i < N; i++)
      objects.push(aNode(`node-${i}`, `198.51.${i >> 8}.${i & 255}`, `10.245.${i % 250}.0/24`));
    // the endpoints' nodes as a kubelet writes them: what the steps do not read, beside what they do
    for (const o of objects.filter(
      (x) => x.kind === 'Node' && /^node-[ab]$/.test(x.metadata!.name!),
    ))
      whole.push(kubeletWritten(o));
    const fake = await startFakeApi({
      objects: objects.map((o) => whole.find((w) => w.metadata!.name === o.metadata?.name) ?? o),
    });
    // the kube-proxy channel as it fails there: each node's own Pod and address in the words
    const channel: NodeChannel = {
      name: 'kube-proxy',
      cannotRun: () => undefined,
      open: async (node) => {
        const via = `exec kube-system/kube-proxy-${node.slice(5)}x9z`;
        const error = `the API server could not connect to the node's kubelet at 198.51.100.${node.length}:10250: connect: connection refused`;
        return { via, run: async () => ({ stdout: '', stderr: '', exitCode: null, error, via }) };
      },
      close: async () => undefined,
    };
    const cluster = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      transport: () => new NodeAccessTransport([channel]),
    });
    try {
      ({ facts } = await readLive(cluster, target, '9.9.9', undefined, undefined, { all: true }));
      access = cluster.nodeAccess();
    } finally {
      await cluster.close();
      await fake.close();
    }
  });

  it("keeps one record of the failures and every node's name, not one a node and command", () => {
    const groups = facts.meta['nodeErrorGroups'] as NodeErrorGroup[];
    assert.equal(groups.length, 1);
    assert.equal(groups[0]!.nodes.length, N + 2);
    assert.equal(facts.meta['nodeErrors'], undefined);
    // a kdebug that reads only meta.nodeErrors takes the marker for a lost read: partial, never whole
    const marks = (facts.meta['readErrors'] as ReadError[]).filter((e) => e.reason === GROUPED);
    assert.equal(marks.length, 1);
    assert.match(marks[0]!.what, new RegExp(`^the failed commands of ${N + 2} nodes`));
    assert.equal(readErrorsOf(facts).filter((e) => e.reason === GROUPED).length, 0);
    assert.equal(facts.meta['nodeAccess'], undefined, 'told on stderr, not kept for the steps');
    assert.ok(JSON.stringify(facts.meta).length < 200_000, `${JSON.stringify(facts.meta).length}`);
    // each node's failures in its own name where the words named it
    const on = nodeErrorsOf(facts).on('node-2999');
    assert.ok(on.length > 3);
    assert.ok(
      on.every((e) => e.node === 'node-2999'),
      on.map((e) => e.node).join(),
    );
    const said = on.map((e) => e.error).join('\n');
    assert.match(
      said,
      /^cannot run ip -br addr on node node-2999: kube-proxy Pod: exec kube-system\/kube-proxy-…: /m,
    );
  });

  it('the Rules step says it in one finding that names them all in JSON, a few in text', () => {
    const report = diagnose(facts, target, { code: allModes });
    const failed = findings(report, 'rules').filter((f) => f.id === 'rules-not-read');
    assert.equal(failed.length, 1);
    assert.equal(
      failed[0]!.title,
      `rules not read on ${N + 2} nodes: node-0, node-1, node-10 and ${N - 1} more`,
    );
    assert.equal(failed[0]!.nodes?.length, N + 2);
    assert.equal(failed[0]!.evidence.length, N + 2);
    const text = reportText(report, { width: 120 });
    assert.match(
      text,
      new RegExp(`\\.\\.\\. and ${N + 2 - 11} more \\(-o json lists every one\\)`),
    );
    // bounded whatever the node count (the footer naming what was not observed takes three lines)
    assert.ok(text.split('\n').length < 130, `${text.split('\n').length} lines`);
  });

  it('keeps of each Node what the steps read, and diagnoses as it would with the Nodes whole', () => {
    const kept = facts.objects.find((o) => o.kind === 'Node' && o.metadata?.name === 'node-a')!;
    assert.deepEqual(kept, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'node-a',
        labels: { 'kubernetes.io/hostname': 'node-a' },
        annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
      },
      spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
      status: {
        addresses: [
          { type: 'InternalIP', address: '192.0.2.10' },
          { type: 'Hostname', address: 'node-a' },
        ],
        conditions: [
          // the Ready condition's reason and since when (node-health.ts), never its message
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastTransitionTime: '2024-05-01T10:00:00Z',
          },
          { type: 'DiskPressure', status: 'False' },
        ],
        nodeInfo: {
          kubeletVersion: 'v1.31.4',
          kubeProxyVersion: 'v1.31.4',
          operatingSystem: 'linux',
        },
      },
    });
    const asServed = {
      ...facts,
      objects: facts.objects.map(
        (o) => whole.find((w) => o.kind === 'Node' && w.metadata!.name === o.metadata?.name) ?? o,
      ),
    };
    assert.deepEqual(
      diagnose(facts, target, { code: allModes }),
      diagnose(asServed, target, { code: allModes }),
    );
  });

  it('one stderr line says the nodes not reached, with the reason once', () => {
    assert.equal(access.length, N + 2);
    assert.deepEqual(nodeAccessLines(access), [
      `${N + 2} nodes not reached: node-0, node-1, node-10 and ${N - 1} more (kube-proxy Pod: exec kube-system/kube-proxy-…: the API server could not connect to the node's kubelet at 198.51.100.…:10250: connect: connection refused)`,
    ]);
  });
});

describe('--all-nodes where a refusal holds for every node', () => {
  it('meets it on the first node: the others cost no request, and one line says it', async () => {
    const N = 3000;
    const objects = [...webCluster().relevant];
    for (let i = 0; i < N; i++)
      objects.push(aNode(`node-${i}`, `198.51.${i >> 8}.${i & 255}`, `10.245.${i % 250}.0/24`));
    const fake = await startFakeApi({
      objects,
      rbac: { deny: [{ verbs: ['create'], resources: ['pods/exec'] }] },
    });
    const cluster = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      transport: nodeAccess({ via: 'kube-proxy' }),
    });
    try {
      const { facts } = await readLive(cluster, target, '9.9.9', undefined, undefined, {
        all: true,
      });
      // the API reads for the Service, and the access review once: none a node
      assert.ok(fake.requests.length < 100, `${fake.requests.length} requests`);
      assert.equal(nodeErrorsOf(facts).nodes().length, N + 2);
      assert.deepEqual(nodeAccessLines(cluster.nodeAccess()), [
        `${N + 2} nodes not reached: node-0, node-1, node-10 and ${N - 1} more (kube-proxy Pod: access denied by RBAC: user "admin" cannot create pods/exec in namespace kube-system)`,
      ]);
    } finally {
      await cluster.close();
      await fake.close();
    }
  });
});

describe('how many nodes were reached, said in a few lines', () => {
  const access = (node: string, reached: boolean): NodeAccess =>
    reached
      ? {
          node,
          used: [
            {
              transport: 'kube-proxy',
              via: `exec kube-system/kube-proxy-${node}`,
              commands: ['iptables-save'],
            },
          ],
          skipped: [],
        }
      : {
          node,
          used: [],
          skipped: [
            {
              transport: 'kube-proxy',
              reason: `no kube-proxy Pod on node ${node}`,
              commands: ['iptables-save'],
            },
          ],
        };

  it('one line a node for a few nodes', () => {
    assert.equal(nodeAccessLines([access('a', true), access('b', false)]).length, 2);
  });

  it("a name that holds the node's stays whole: a kube-proxy Pod named after its node", () => {
    const lines = nodeAccessLines(
      Array.from({ length: 9 }, (_, i): NodeAccess => {
        const node = `n-${i}.example.com`;
        const reason = `kube-proxy Pod kube-system/kube-proxy-${node} on ${node} is not running (Pending)`;
        return { node, used: [], skipped: [{ transport: 'kube-proxy', reason, commands: [] }] };
      }),
    );
    assert.deepEqual(lines, [
      '9 nodes not reached: n-0.example.com, n-1.example.com, n-2.example.com and 6 more (kube-proxy Pod kube-system/kube-proxy-n-… on the node is not running (Pending))',
    ]);
  });

  it("one reason for many nodes whose failures differ only in each node's Pod and address", () => {
    // what kube-apiserver says for each Node whose kubelet it cannot reach, and SSH after it
    const node = (i: number): NodeAccess => ({
      node: `sim-${i}`,
      used: [],
      skipped: [
        {
          transport: 'kube-proxy',
          reason: `exec kube-system/kube-proxy-${'abcde'[i % 5]}${i}x9z: the API server could not connect to the node's kubelet at 198.51.100.${i + 1}:10250: network is unreachable`,
          commands: ['iptables-save'],
        },
        {
          transport: 'ssh',
          reason: `no SSH key to offer root@198.51.100.${i + 1}: pass --ssh-key`,
          commands: ['iptables-save'],
        },
      ],
    });
    const other: NodeAccess = {
      node: 'sim-99',
      used: [],
      skipped: [
        { transport: 'kube-proxy', reason: 'no kube-proxy Pod on node sim-99', commands: [] },
      ],
    };
    const lines = nodeAccessLines([node(0), node(1), node(2), other, node(3)]);
    assert.deepEqual(lines, [
      "5 nodes not reached: sim-0, sim-1, sim-2 and 1 more (kube-proxy Pod: exec kube-system/kube-proxy-…: the API server could not connect to the node's kubelet at 198.51.100.…:10250: network is unreachable; SSH: no SSH key to offer root@198.51.100.…: pass --ssh-key); sim-99 (kube-proxy Pod: no kube-proxy Pod on the node)",
    ]);
    // ports, times and numbers are no per-node words: failures that differ there stay apart
    assert.deepEqual(
      byReason([
        { node: 'a', reason: 'dial tcp 10.0.0.1:6443: i/o timeout' },
        { node: 'b', reason: 'dial tcp 10.0.0.1:6444: i/o timeout' },
        { node: 'c', reason: 'x509: certificate has expired: current time 2024-01-01T10:31:43Z' },
        { node: 'd', reason: 'x509: certificate has expired: current time 2024-01-01T10:31:44Z' },
      ]).map((g) => g.nodes),
      [['a'], ['b'], ['c'], ['d']],
    );
    // IPv6 addresses are, written short or bracketed with a port
    assert.deepEqual(
      byReason([
        { node: 'a', reason: 'dial tcp [fd00:10::a]:10250: refused' },
        { node: 'b', reason: 'dial tcp [fd00:10::b]:10250: refused' },
      ]),
      [{ nodes: ['a', 'b'], reason: 'dial tcp [fd00:10::…]:10250: refused' }],
    );
    // a word every node shares stays whole; one node alone keeps its own
    assert.deepEqual(
      byReason([
        { node: 'a', reason: 'exec kube-system/p-1: dial tcp 10.0.0.1:6443: refused' },
        { node: 'b', reason: 'exec kube-system/p-2: dial tcp 10.0.0.1:6443: refused' },
        { node: 'c', reason: 'exec kube-system/p-3 on node c: timed out' },
      ]),
      [
        { nodes: ['a', 'b'], reason: 'exec kube-system/p-…: dial tcp 10.0.0.1:6443: refused' },
        { nodes: ['c'], reason: 'exec kube-system/p-3 on the node: timed out' },
      ],
    );
  });

  it('a few nodes: each read one a line, those not reached in one line', () => {
    const down = (node: string): NodeAccess => ({
      node,
      used: [],
      skipped: [
        { transport: 'kube-proxy', reason: `no kube-proxy Pod on node ${node}`, commands: [] },
      ],
    });
    assert.deepEqual(nodeAccessLines([access('a', true), down('b'), down('c')]), [
      'a: rules via exec kube-system/kube-proxy-a',
      '2 nodes not reached: b, c (kube-proxy Pod: no kube-proxy Pod on the node)',
    ]);
  });

  it('two lines for many: those read by way, those not reached by reason', () => {
    const lines = nodeAccessLines([
      ...Array.from({ length: 17 }, (_, i) => access(`ok-${i}`, true)),
      ...Array.from({ length: 5 }, (_, i) => access(`bad-${i}`, false)),
    ]);
    assert.deepEqual(lines, [
      '17 nodes read (17 through the kube-proxy Pod)',
      '5 nodes not reached: bad-0, bad-1, bad-2 and 2 more (kube-proxy Pod: no kube-proxy Pod on the node)',
    ]);
  });
});
