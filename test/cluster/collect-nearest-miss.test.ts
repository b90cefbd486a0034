// A live selector typo: when the Service's selector matches no Pod, collect reads the
// namespace's Pods too, so the Selector step can name the nearest miss as it does offline.
// IP conventions: the demo's (snapshots/selector-typo/README.md).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { collect } from '../../src/cluster/collect.js';
import { KubeCluster } from '../../src/cluster/kube-cluster.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts } from '../../src/core/model.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { allModes } from '../support/modes.js';

const TARGET = { namespace: 'default', service: 'nginx-svc' };

describe('collect: a selector that matches no Pod', () => {
  let fake: FakeApi;
  let cluster: KubeCluster;
  let offline: Facts;
  before(async () => {
    offline = await readSnapshot('snapshots/selector-typo');
    fake = await startFakeApi({ objects: offline.objects });
    cluster = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
    });
  });
  after(async () => {
    await cluster.close();
    await fake.close();
  });

  it("reads the namespace's Pods, and the live report names the nearest miss as offline", async () => {
    const facts = await collect(cluster, TARGET);
    const pods = facts.objects
      .filter((o) => o.kind === 'Pod' && o.metadata?.namespace === 'default')
      .map((o) => o.metadata?.name);
    assert.deepEqual(pods, ['nginx-55fc968d9-4pddn', 'nginx-55fc968d9-kh24k']);
    assert.ok(
      fake.requests.some(
        (r) => r.path === '/api/v1/namespaces/default/pods' && !r.query.get('labelSelector'),
      ),
    );
    const selector = (f: Facts) =>
      diagnose(f, TARGET, { code: allModes }).steps.find((s) => s.id === 'selector')!;
    const live = selector(facts).findings[0]!;
    assert.equal(live.id, 'selector-matches-no-pods');
    assert.match(live.explanation, /The nearest miss: Pods nginx-55fc968d9-4pddn/);
    assert.deepEqual(live, selector(offline).findings[0]);
  });

  it('does not list the whole namespace when the selector matches', async () => {
    const demo = await readSnapshot('snapshots/nginx-svc');
    const f = await startFakeApi({ objects: demo.objects });
    const c = await KubeCluster.connect({
      kubeconfig: f.kubeconfig({ namespace: 'default' }),
      env: {},
    });
    try {
      await collect(c, TARGET);
      assert.equal(
        f.requests.filter(
          (r) => r.path === '/api/v1/namespaces/default/pods' && !r.query.get('labelSelector'),
        ).length,
        0,
      );
    } finally {
      await c.close();
      await f.close();
    }
  });
});
