// Where kube-proxy's DaemonSet says every Pod it schedules is ready and of its current template,
// `svc` does not list every kube-proxy Pod (tens of MB on a large cluster): it reads the chosen
// nodes' Pods by node and lets the DaemonSet's status speak for the rest, saying so; where the
// status is not settled, every Pod is listed and the node whose kube-proxy is down is found.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PODS_BY_NODE } from '../../src/cluster/collect/addons.js';
import { readLive, type NodeChoiceFlags } from '../../src/cluster/live-diagnosis.js';
import { KubeCluster, type NodeTransport } from '../../src/cluster/kube-cluster.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { startFakeApi, type RequestRecord } from '../support/fake-api/server.js';
import { aDaemonSet, aNode, aPod, webCluster } from './objects.js';
import { allModes } from '../support/modes.js';

const NODES = 60;
const target = { namespace: 'default', service: 'web' };

/** webCluster's two nodes and NODES more, each with its kube-proxy Pod; `down`: one of them
 * not ready, as its DaemonSet's status then counts. */
function cluster(down?: string): KubeObject[] {
  const objects = webCluster().relevant.filter((o) => o.kind !== 'DaemonSet');
  for (let i = 0; i < NODES; i++) {
    objects.push(aNode(`node-${i}`, `198.51.100.${i}`, `10.245.${i}.0/24`));
    const pod = aPod(`kube-proxy-n${i}`, 'kube-system', {
      labels: { 'k8s-app': 'kube-proxy' },
      node: `node-${i}`,
    });
    if (`node-${i}` === down) (pod['status'] as { conditions: unknown[] }).conditions = [];
    objects.push(pod);
  }
  const all = NODES + 2;
  const ds = aDaemonSet('kube-proxy', 'kube-system', { 'k8s-app': 'kube-proxy' });
  ds['status'] = {
    observedGeneration: 1,
    desiredNumberScheduled: all,
    numberReady: down ? all - 1 : all,
    updatedNumberScheduled: all,
    numberAvailable: down ? all - 1 : all,
    numberMisscheduled: 0,
  };
  return [...objects, ds];
}

async function svc(
  down?: string,
  which: NodeChoiceFlags = {},
): Promise<{ facts: Facts; requests: RequestRecord[]; ran: Set<string> }> {
  const fake = await startFakeApi({ objects: cluster(down) });
  const ran = new Set<string>();
  const transport: NodeTransport = {
    run: async (node) => {
      ran.add(node);
      return { stdout: '', stderr: `not reached: ${node}`, exitCode: 1, via: 'test' };
    },
  };
  const kube = await KubeCluster.connect({
    kubeconfig: fake.kubeconfig({ namespace: 'default' }),
    env: {},
    transport: () => transport,
  });
  try {
    const { facts } = await readLive(kube, target, '9.9.9', undefined, undefined, which);
    return { facts, requests: [...fake.requests], ran };
  } finally {
    await kube.close();
    await fake.close();
  }
}

/** The kube-proxy Pod reads: listed whole (no field selector) or by node. */
const proxyPodReads = (requests: RequestRecord[]) => {
  const reads = requests.filter(
    (r) =>
      r.path === '/api/v1/namespaces/kube-system/pods' &&
      r.query.get('labelSelector') === 'k8s-app=kube-proxy',
  );
  return {
    whole: reads.filter((r) => !r.query.get('fieldSelector')).length,
    byNode: reads.map((r) => r.query.get('fieldSelector')).filter(Boolean),
  };
};

describe("kube-proxy's Pods on a cluster whose DaemonSet is settled", () => {
  it('are read on the chosen nodes only; the DaemonSet speaks for the others, and says so', async () => {
    const { facts, requests } = await svc();
    const reads = proxyPodReads(requests);
    assert.equal(reads.whole, 0, 'no list of every kube-proxy Pod');
    const chosen = (facts.meta['nodeChoice'] as { chosen: { node: string; why: string[] }[] })
      .chosen;
    // the endpoints' two nodes and three at random: none looks unhealthy
    assert.equal(chosen.length, 5);
    assert.ok(
      chosen.every((c) => !c.why.includes('unhealthy')),
      'a Pod not read is not a Pod missing',
    );
    const readOn = facts.meta['kubeProxyPodsReadOn'] as string[];
    assert.deepEqual(readOn, chosen.map((c) => c.node).sort());
    assert.deepEqual(
      reads.byNode.sort(),
      readOn.map((n) => `spec.nodeName=${n}`),
    );
    const kp = diagnose(facts, target, { code: allModes }).steps.find(
      (s) => s.id === 'kube-proxy',
    )!.findings;
    const running = kp.find((f) => f.id === 'kube-proxy-running')!;
    assert.equal(running.status, 'pass');
    assert.equal(running.title, `kube-proxy running on ${NODES + 2} nodes`);
    assert.ok(
      running.evidence.some(
        (e) =>
          e.kind === 'read' &&
          e.text.startsWith(
            `DaemonSet kube-system/kube-proxy: ${NODES + 2} of ${NODES + 2} Pods ready, all of the current template; its Pods on `,
          ),
      ),
    );
    assert.ok(!kp.some((f) => f.id === 'kube-proxy-not-running'));
  });

  it('an unsettled DaemonSet: every Pod is listed, and the node whose kube-proxy is down is read', async () => {
    const { facts, requests } = await svc('node-42');
    assert.equal(proxyPodReads(requests).whole, 1);
    assert.equal(facts.meta['kubeProxyPodsReadOn'], undefined);
    const chosen = (facts.meta['nodeChoice'] as { chosen: { node: string; why: string[] }[] })
      .chosen;
    assert.deepEqual(chosen.find((c) => c.node === 'node-42')?.why, ['unhealthy']);
    const kp = diagnose(facts, target, { code: allModes }).steps.find(
      (s) => s.id === 'kube-proxy',
    )!.findings;
    assert.match(kp.find((f) => f.id === 'kube-proxy-not-running')!.title, /node-42/);
  });

  it('--nodes naming more than 50: 50 are read by name before the lists, the rest after the rows', async () => {
    const asked = Array.from({ length: NODES }, (_, i) => `node-${i}`);
    const { facts, requests, ran } = await svc(undefined, { nodes: asked });
    const byName = requests
      .filter((r) => r.path.startsWith('/api/v1/nodes/'))
      .map((r) => r.path.slice('/api/v1/nodes/'.length));
    // every Node asked for (and the endpoints') read whole by name; none listed whole
    assert.deepEqual([...new Set(byName)].sort(), [...asked, 'node-a', 'node-b'].sort());
    const lists = requests.filter((r) => r.path === '/api/v1/nodes');
    assert.ok(lists.length > 0 && lists.every((r) => r.query.get('includeObject') === 'None'));
    const whole = facts.objects.filter((o) => o.kind === 'Node' && o['spec']);
    assert.equal(whole.length, NODES + 2);
    const cilium = requests.filter((r) => r.query.get('labelSelector') === 'k8s-app=cilium');
    assert.equal(cilium.filter((r) => r.query.get('fieldSelector')).length, PODS_BY_NODE);
    assert.deepEqual([...ran].sort(), [...asked].sort(), 'every node asked for is still read');
  });
});
