// svc on a large cluster lists the Nodes as the API server's Table rows (kubectl get nodes), reads
// whole only the nodes it chose and the endpoints' and client's, and diagnoses as it would with
// every Node whole (issue 36).
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { readLive } from '../../src/cluster/live-diagnosis.js';
import { KubeCluster } from '../../src/cluster/kube-cluster.js';
import { asRead } from '../../src/cluster/collect/as-read.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { startFakeApi, type RequestRecord } from '../support/fake-api/server.js';
import { aNode, aPod, webCluster } from './objects.js';
import { allModes } from '../support/modes.js';

const target = { namespace: 'default', service: 'web' };
const NODES = 300;

/** webCluster's two nodes and NODES more; every tenth without its kube-proxy Pod, one not Ready
 * (its condition Unknown, tainted), one Windows. */
function cluster(): KubeObject[] {
  const objects = [...webCluster().relevant];
  objects.push(aPod('client-0', 'default', { labels: { app: 'client' }, node: 'node-250' }));
  for (let i = 0; i < NODES; i++) {
    const n = aNode(`node-${i}`, `198.51.100.${i % 250}`, `10.245.${i % 250}.0/24`);
    if (i === 7) {
      const status = n['status'] as { conditions: { status: string; reason: string }[] };
      status.conditions[0]!.status = 'Unknown';
      status.conditions[0]!.reason = 'NodeStatusUnknown';
      n['spec'] = {
        ...(n['spec'] as object),
        taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }],
      };
    }
    if (i === 9) n.metadata!.labels = { 'kubernetes.io/os': 'windows' };
    objects.push(n);
    if (i % 10 !== 0)
      objects.push(
        aPod(`kube-proxy-n${i}`, 'kube-system', {
          labels: { 'k8s-app': 'kube-proxy' },
          node: `node-${i}`,
        }),
      );
  }
  return objects;
}

describe('svc on 302 nodes lists them as rows and reads whole only those it needs', () => {
  let facts: Facts;
  let requests: RequestRecord[];
  const served = cluster();
  before(async () => {
    const fake = await startFakeApi({ objects: served });
    const c = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
    });
    try {
      ({ facts } = await readLive(c, target, '9.9.9', undefined, undefined, {
        from: { kind: 'pod', name: 'client-0' },
      }));
      requests = fake.requests;
    } finally {
      await c.close();
      await fake.close();
    }
  });

  it('no request reads every Node whole; the Nodes read by name are the chosen, endpoints and client', () => {
    const nodeReads = requests.filter((r) => r.path.startsWith('/api/v1/nodes'));
    const lists = nodeReads.filter((r) => r.path === '/api/v1/nodes');
    assert.ok(lists.length >= 2, 'the rows, and the Windows nodes among them');
    const byName = nodeReads
      .filter((r) => r.path !== '/api/v1/nodes')
      .map((r) => r.path.slice('/api/v1/nodes/'.length));
    const choice = facts.meta['nodeChoice'] as { chosen: { node: string }[] };
    const needed = new Set([...choice.chosen.map((c) => c.node), 'node-a', 'node-b', 'node-250']);
    assert.deepEqual([...new Set(byName)].sort(), [...needed].sort());
    const nodes = facts.objects.filter((o) => o.kind === 'Node');
    assert.equal(nodes.length, NODES + 2);
    const whole = nodes.filter((o) => (o['spec'] as { podCIDRs?: string[] } | undefined)?.podCIDRs);
    assert.deepEqual(whole.map((o) => o.metadata!.name).sort(), [...needed].sort());
  });

  it('chooses as with every Node whole: the not Ready one and those without kube-proxy, no Windows one', () => {
    const choice = facts.meta['nodeChoice'] as {
      total: number;
      chosen: { node: string; why: string[]; detail?: string }[];
    };
    assert.equal(choice.total, NODES + 1, 'Linux nodes: the Windows one is not counted');
    const why = new Map(choice.chosen.map((c) => [c.node, c]));
    assert.equal(why.get('node-7')?.detail, 'Node not Ready');
    assert.equal(why.get('node-9'), undefined);
    assert.equal(why.get('node-10')?.detail, 'no kube-proxy Pod');
  });

  it('diagnoses as it would with every Node whole', () => {
    const whole = new Map(
      served.filter((o) => o.kind === 'Node').map((o) => [o.metadata!.name!, asRead(o)]),
    );
    const asServed = {
      ...facts,
      objects: facts.objects.map((o) => (o.kind === 'Node' ? whole.get(o.metadata!.name!)! : o)),
    };
    assert.deepEqual(
      diagnose(facts, target, { code: allModes }),
      diagnose(asServed, target, { code: allModes }),
    );
  });
});

/** webCluster's two nodes and NODES more, each with a Running, Ready kube-proxy Pod; the nodes of
 * `unknown` stopped posting status (Ready=Unknown, tainted unreachable): more than the cap. */
function unknownCluster(unknown: number): KubeObject[] {
  const objects = [...webCluster().relevant];
  for (let i = 0; i < NODES; i++) {
    const n = aNode(`node-${i}`, `198.51.100.${i % 250}`, `10.245.${i % 250}.0/24`);
    if (i >= 100 && i < 100 + unknown) {
      const status = n['status'] as { conditions: { status: string; reason: string }[] };
      status.conditions[0]!.status = 'Unknown';
      status.conditions[0]!.reason = 'NodeStatusUnknown';
      n['spec'] = {
        ...(n['spec'] as object),
        taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }],
      };
    }
    objects.push(n);
    objects.push(
      aPod(`kube-proxy-n${i}`, 'kube-system', {
        labels: { 'k8s-app': 'kube-proxy' },
        node: `node-${i}`,
      }),
    );
  }
  return objects;
}

describe('svc on 302 nodes, 25 of which stopped posting status: more than it reads', () => {
  const UNKNOWN = 25;
  let facts: Facts;
  const served = unknownCluster(UNKNOWN);
  before(async () => {
    const fake = await startFakeApi({ objects: served });
    const c = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
    });
    try {
      ({ facts } = await readLive(c, target, '9.9.9'));
    } finally {
      await c.close();
      await fake.close();
    }
  });

  it("a row's NotReady is never taken for Ready=False: every node not Ready is read whole", () => {
    const choice = facts.meta['nodeChoice'] as { chosen: { node: string }[] };
    const chosen = new Set(choice.chosen.map((c) => c.node));
    const down = Array.from({ length: UNKNOWN }, (_, k) => `node-${100 + k}`);
    assert.ok(
      down.some((n) => !chosen.has(n)),
      'some of them beyond the cap',
    );
    const kp = diagnose(facts, target, { code: allModes }).steps.find(
      (s) => s.id === 'kube-proxy',
    )!.findings;
    // a kube-proxy Pod the API calls Ready on a node whose kubelet went silent is not running
    const stale = kp.find((f) => f.id === 'kube-proxy-node-not-ready')!;
    assert.deepEqual([...(stale.nodes ?? [])].sort(), [...down].sort());
    assert.match(stale.evidence[0]!.text, /Ready=Unknown \(NodeStatusUnknown\)/);
  });

  it('diagnoses as it would with every Node whole', () => {
    const whole = new Map(
      served.filter((o) => o.kind === 'Node').map((o) => [o.metadata!.name!, asRead(o)]),
    );
    const asServed = {
      ...facts,
      objects: facts.objects.map((o) => (o.kind === 'Node' ? whole.get(o.metadata!.name!)! : o)),
    };
    assert.deepEqual(
      diagnose(facts, target, { code: allModes }),
      diagnose(asServed, target, { code: allModes }),
    );
  });
});
