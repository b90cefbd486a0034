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
import { aNode, aPod, aService, webCluster } from './objects.js';
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

/** A Service without a selector whose one endpoint is node-100's second InternalIP: a row shows
 * its first only. */
function secondAddressCluster(): KubeObject[] {
  const objects = unknownCluster(0);
  const n100 = objects.find((o) => o.kind === 'Node' && o.metadata?.name === 'node-100')!;
  const status = n100['status'] as { addresses: { type: string; address: string }[] };
  status.addresses.splice(1, 0, { type: 'InternalIP', address: '203.0.113.100' });
  objects.push(aService('ext', 'default', { selector: {}, clusterIP: '10.96.0.30' }), {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'ext-1',
      namespace: 'default',
      labels: {
        'kubernetes.io/service-name': 'ext',
        'endpointslice.kubernetes.io/managed-by': 'staff',
      },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['203.0.113.100'], conditions: { ready: true } }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  });
  return objects;
}

describe("svc whose endpoint is a row node's second address", () => {
  const ext = { namespace: 'default', service: 'ext' };
  let facts: Facts;
  const served = secondAddressCluster();
  before(async () => {
    const fake = await startFakeApi({ objects: served });
    const c = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
    });
    try {
      ({ facts } = await readLive(c, ext, '9.9.9'));
    } finally {
      await c.close();
      await fake.close();
    }
  });
  const said = (f: Facts) =>
    diagnose(f, ext, { code: allModes })
      .steps.flatMap((s) => s.findings)
      .map((x) =>
        [x.id, x.title, x.explanation, ...(x.evidence ?? []).map((e) => e.text)].join(' '),
      )
      .join('\n');

  it('never says that no node holds it: what a row does not show is said', () => {
    assert.ok((facts.meta['nodesAsRows'] as string[]).includes('node-100'));
    const text = said(facts);
    assert.doesNotMatch(text, /no Pod or node has/);
    assert.match(text, /listed as rows only/);
  });

  it('with node-100 whole, it is a node address', () => {
    const whole = new Map(
      served.filter((o) => o.kind === 'Node').map((o) => [o.metadata!.name!, asRead(o)]),
    );
    const { nodesAsRows: _, ...meta } = facts.meta;
    const text = said({
      ...facts,
      meta,
      objects: facts.objects.map((o) => (o.kind === 'Node' ? whole.get(o.metadata!.name!)! : o)),
    });
    assert.doesNotMatch(text, /listed as rows only|no Pod or node has/);
  });
});
