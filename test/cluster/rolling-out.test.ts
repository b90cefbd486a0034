// Past LIST_EVERY_UP_TO nodes, `svc` on a cluster whose kube-proxy DaemonSet is rolling out lists
// no kube-proxy Pod cluster-wide (24 MB and 7 s at 5,000 nodes): it reads the chosen nodes' Pods
// by node, judges those, and says what the DaemonSet's status counts for the others and that
// their nodes were not listed (issue 36).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LIST_EVERY_UP_TO } from '../../src/cluster/collect/finish.js';
import { readLive, type NodeChoiceFlags } from '../../src/cluster/live-diagnosis.js';
import { KubeCluster, type NodeTransport } from '../../src/cluster/kube-cluster.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts, Finding, KubeObject } from '../../src/core/model.js';
import { startFakeApi, type RequestRecord } from '../support/fake-api/server.js';
import { aDaemonSet, aNode, aPod, webCluster } from './objects.js';
import { allModes } from '../support/modes.js';

const NODES = LIST_EVERY_UP_TO + 10;
const ALL = NODES + 2; // webCluster's node-a and node-b
/** Nodes whose kube-proxy Pod is of the new template; the rest run the old one. */
const UPDATED = 300;
/** The new Pods not ready yet: the rollout is under way on these nodes. */
const STARTING = ['node-100', 'node-101', 'node-102'];
const target = { namespace: 'default', service: 'web' };

/** A kube-proxy rolling out: ALL Pods, UPDATED of the new template, STARTING of those not ready. */
function cluster(): KubeObject[] {
  const objects = webCluster().relevant.filter((o) => o.kind !== 'DaemonSet');
  for (let i = 0; i < NODES; i++) {
    const node = `node-${i}`;
    objects.push(aNode(node, `198.51.100.${i % 250}`, `10.245.${i % 250}.0/24`));
    const generation = i < UPDATED ? '2' : '1';
    const pod = aPod(`kube-proxy-n${i}`, 'kube-system', {
      labels: { 'k8s-app': 'kube-proxy', 'pod-template-generation': generation },
      node,
    });
    if (STARTING.includes(node)) {
      const status = pod['status'] as { phase: string; conditions: unknown[] };
      status.phase = 'Pending';
      status.conditions = [];
    }
    objects.push(pod);
  }
  const ds = aDaemonSet('kube-proxy', 'kube-system', { 'k8s-app': 'kube-proxy' });
  ds.metadata!['generation'] = 2;
  ds['status'] = {
    observedGeneration: 2,
    desiredNumberScheduled: ALL,
    currentNumberScheduled: ALL,
    numberReady: ALL - STARTING.length,
    updatedNumberScheduled: UPDATED,
    numberAvailable: ALL - STARTING.length,
    numberMisscheduled: 0,
  };
  return [...objects, ds];
}

async function svc(
  which: NodeChoiceFlags = {},
): Promise<{ facts: Facts; requests: RequestRecord[]; kubeProxy: Finding[] }> {
  const fake = await startFakeApi({ objects: cluster() });
  const transport: NodeTransport = {
    run: async (node) => ({ stdout: '', stderr: `not reached: ${node}`, exitCode: 1, via: 'test' }),
  };
  const kube = await KubeCluster.connect({
    kubeconfig: fake.kubeconfig({ namespace: 'default' }),
    env: {},
    transport: () => transport,
  });
  try {
    const { facts } = await readLive(kube, target, '9.9.9', undefined, undefined, which);
    const kubeProxy = diagnose(facts, target, { code: allModes }).steps.find(
      (s) => s.id === 'kube-proxy',
    )!.findings;
    return { facts, requests: [...fake.requests], kubeProxy };
  } finally {
    await kube.close();
    await fake.close();
  }
}

/** The reads of kube-proxy Pods: the field selector of each (undefined: every Pod listed). */
const proxyPodReads = (requests: RequestRecord[]) =>
  requests
    .filter(
      (r) =>
        r.path === '/api/v1/namespaces/kube-system/pods' &&
        r.query.get('labelSelector') === 'k8s-app=kube-proxy',
    )
    .map((r) => r.query.get('fieldSelector') ?? undefined);

describe(`a cluster of ${ALL} nodes whose kube-proxy DaemonSet is rolling out`, () => {
  it("reads the chosen nodes' kube-proxy Pods by node, never every one", async () => {
    const { facts, requests } = await svc();
    const reads = proxyPodReads(requests);
    assert.ok(!reads.includes(undefined), 'no unscoped list of kube-proxy Pods');
    const chosen = (facts.meta['nodeChoice'] as { chosen: { node: string }[] }).chosen;
    const readOn = facts.meta['kubeProxyPodsReadOn'] as string[];
    assert.deepEqual(readOn, chosen.map((c) => c.node).sort());
    assert.deepEqual([...reads].sort(), readOn.map((n) => `spec.nodeName=${n}`).sort());
    // nor every Pod of the cluster, by another way
    assert.ok(!requests.some((r) => r.path === '/api/v1/pods' && !r.query.get('fieldSelector')));
  });

  it("says what the DaemonSet counts and that the other nodes' Pods were not listed; calls none of them down", async () => {
    const { facts, kubeProxy } = await svc();
    const readOn = facts.meta['kubeProxyPodsReadOn'] as string[];
    const unread = ALL - readOn.length;
    const said = kubeProxy.find((f) => f.id === 'kube-proxy-not-observed')!;
    assert.equal(said.status, 'skip');
    assert.equal(
      said.title,
      `kube-proxy's DaemonSet counts ${STARTING.length} of ${ALL} Pods not ready, ${ALL - UPDATED} of an older template; their nodes among the ${unread} not read are not listed`,
    );
    const [ds, pods] = said.evidence;
    assert.equal(ds?.kind, 'read');
    assert.equal(
      ds.text,
      `DaemonSet kube-system/kube-proxy: ${ALL - STARTING.length} of ${ALL} Pods ready, ${UPDATED} of the current template`,
    );
    assert.equal(pods?.kind, 'not-observed');
    assert.match(
      pods.text,
      new RegExp(`^kube-proxy Pods on node-\\S+, \\S+, \\S+ and ${unread - 3} more: not listed$`),
    );
    assert.deepEqual(said.next?.argv.slice(-4), ['-l', 'k8s-app=kube-proxy', '-o', 'wide']);
    // the Pods not read are no Pods missing, and the Pods read are ready: nothing fails
    assert.ok(!kubeProxy.some((f) => f.id === 'kube-proxy-not-running'));
    const running = kubeProxy.find((f) => f.id === 'kube-proxy-running')!;
    assert.equal(running.title, `kube-proxy running on ${readOn.length} nodes`);
    assert.equal(running.explanation, 'Each kube-proxy Pod kdebug read is ready.');
  });

  it('a node named whose new kube-proxy Pod is not ready yet: its Pod is read and judged', async () => {
    const { facts, requests, kubeProxy } = await svc({ nodes: ['node-101', 'node-400'] });
    assert.ok(!proxyPodReads(requests).includes(undefined));
    assert.ok((facts.meta['kubeProxyPodsReadOn'] as string[]).includes('node-101'));
    const down = kubeProxy.filter((f) => f.id === 'kube-proxy-not-running');
    assert.equal(down.length, 1);
    assert.equal(down[0]!.node, 'node-101');
    assert.equal(down[0]!.status, 'fail');
  });
});
