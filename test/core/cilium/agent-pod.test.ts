// Which Pods are Cilium's agents: a Pod of a DaemonSet in kube-system carrying Cilium's label.
// The label alone is any tenant's to set; such a Pod is never exec'd, counted nor believed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { KubeApi } from '../../../src/cluster/kube-api.js';
import { ciliumAgentExec } from '../../../src/cluster/nodes/kube-proxy.js';
import {
  ciliumAgentPodOn,
  ciliumConfig,
  isCiliumAgentPod,
} from '../../../src/core/dataplane/cilium/agent/agent.js';
import { ViewIndex } from '../../../src/core/kube/view-index.js';
import { toPod } from '../../../src/core/kube/objects.js';
import type { KubeObject } from '../../../src/core/model.js';
import { startFakeApi } from '../../support/fake-api/server.js';

const SNAPSHOT = 'snapshots/cilium-stale-backend/objects.json';
const objects = (JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as { items: KubeObject[] }).items;
const real = objects.filter((o) => o.kind === 'Pod' && isCiliumAgentPod(toPod(o)));
const NODE = (real[0]!['spec'] as { nodeName: string }).nodeName;

/** A Pod labelled as Cilium's agent on NODE, Running, sorting before the real one by name. */
function impostor(namespace: string, name: string, owner?: { kind: string; name: string }) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid: `uid-${name}`,
      labels: { 'k8s-app': 'cilium', 'app.kubernetes.io/name': 'cilium-agent' },
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'apps/v1', controller: true, ...owner }] }
        : {}),
    },
    spec: { nodeName: NODE, containers: [{ name: 'cilium-agent', image: 'evil/cilium:v1.18.6' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'cilium-agent', ready: true, state: { running: {} } }],
    },
  } as KubeObject;
}
const tenant = impostor('default', 'aaa-not-cilium', { kind: 'ReplicaSet', name: 'x' });
const tenantDs = impostor('default', 'aaa-tenant-ds', { kind: 'DaemonSet', name: 'cilium' });
const bare = impostor('kube-system', 'aaa-bare');

describe('Cilium agent Pods', () => {
  it('the snapshot holds real agents, of the cilium DaemonSet in kube-system', () => {
    assert.equal(real.length, 2);
  });

  it('a Pod with the labels in another namespace, or bare in kube-system, is no agent', () => {
    for (const o of [tenant, tenantDs, bare]) assert.equal(isCiliumAgentPod(toPod(o)), false);
  });

  it("the node's agent is the real one, whatever order the Pods were read in", () => {
    const pods = [tenant, tenantDs, bare, ...objects.filter((o) => o.kind === 'Pod')].map(toPod);
    const picked = ciliumAgentPodOn(pods, NODE)!;
    assert.ok(real.some((o) => o.metadata?.name === picked.pod.name));
    assert.deepEqual(picked.ignored, []);
    const index = new ViewIndex({ pods, nodes: [] });
    assert.equal(index.ciliumAgentPod(NODE)?.namespace, 'kube-system');
    assert.equal(index.ciliumAgentPod(NODE)?.name, picked.pod.name);
  });

  it('of two of the DaemonSet on a node (a rollout), the Running one, then by name', () => {
    const base = real.find((o) => (o['spec'] as { nodeName: string }).nodeName === NODE)!;
    const pending = {
      ...base,
      metadata: { ...base.metadata, name: 'cilium-0000' },
      status: { phase: 'Pending' },
    } as KubeObject;
    const pods = [pending, base].map(toPod);
    const picked = ciliumAgentPodOn(pods, NODE)!;
    assert.equal(picked.pod.name, base.metadata?.name);
    assert.deepEqual(
      picked.ignored.map((p) => p.name),
      ['cilium-0000'],
    );
  });

  describe('exec (fake API)', () => {
    const close: (() => Promise<void>)[] = [];
    after(async () => {
      for (const c of close) await c();
    });

    it("execs cilium-dbg only in the real agent's Pod, never in a labelled tenant Pod", async () => {
      const execs: string[] = [];
      const fake = await startFakeApi({
        objects: [...objects, tenant, tenantDs, bare],
        exec: (req) => {
          execs.push(`${req.namespace}/${String(req.pod.metadata?.name)}`);
          return { stdout: 'ok\n', exitCode: 0 };
        },
      });
      const api = await KubeApi.connect({
        kubeconfig: fake.kubeconfig({ namespace: 'default' }),
        env: {},
        timeoutMs: 5000,
      });
      close.push(async () => (api.close(), await fake.close()));
      const pods = [tenant, tenantDs, bare, ...objects.filter((o) => o.kind === 'Pod')].map(toPod);
      const want = `kube-system/${ciliumAgentPodOn(pods, NODE)!.pod.name}`;
      // seeded with every Pod the run read, and listed from the API (the bare Pod matches the
      // label selector in kube-system)
      for (const seed of [true, false]) {
        const channel = ciliumAgentExec(api, { timeoutMs: 3000 });
        if (seed) channel.podsRead?.(pods);
        const runner = await channel.open(NODE);
        assert.equal(runner.via, `exec ${want}`);
        const r = await runner.run({ kind: 'cilium', list: 'status' });
        assert.equal(r.exitCode, 0);
      }
      assert.deepEqual(execs, [want, want]);
    });
  });
});

describe("Cilium's ConfigMap", () => {
  it("is kube-system's: a tenant's ConfigMap named cilium-config is not believed", () => {
    const cm = (namespace: string, kpr: string) => ({
      name: 'cilium-config',
      namespace,
      data: { 'kube-proxy-replacement': kpr },
    });
    const tenant = cm('default', 'false');
    assert.equal(ciliumConfig({ configMaps: [tenant] as never }), undefined);
    const own = cm('kube-system', 'true');
    assert.equal(ciliumConfig({ configMaps: [tenant, own] as never }), own);
  });
});
