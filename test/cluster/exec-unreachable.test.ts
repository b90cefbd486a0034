// A node whose exec cannot succeed costs the report a bound, not the API server's 30 s dial: an
// exec whose stream does not open within EXEC_START_MS is cut and said, and a node whose kubelet
// the API shows unreachable (Ready Unknown, the unreachable taint) is not exec'd through at all.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { NodeCommand } from '../../src/cluster/cluster.js';
import { EXEC_START_MS, KubeApi } from '../../src/cluster/kube-api.js';
import { NodeAccessTransport } from '../../src/cluster/nodes/transport.js';
import { toNode } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import type { ExecHandler } from '../support/fake-api/exec.js';
import { startFakeApi, type FakeApiOptions } from '../support/fake-api/server.js';
import { TOPOLOGY } from '../support/lab/lab.js';
import { labObjects } from '../support/lab/objects.js';

const RULES: NodeCommand = { kind: 'iptables-save', backend: 'auto' };

const where: ExecHandler = (req) => ({
  stdout: `${(req.pod['spec'] as { nodeName: string }).nodeName}\n`,
  exitCode: 0,
});

/** node-b as the node controller leaves a node whose kubelet stopped posting its status. */
function kubeletGone(o: KubeObject, how: 'unknown' | 'taint'): KubeObject {
  if (o.kind !== 'Node' || o.metadata?.name !== 'node-b') return o;
  const status = o['status'] as { conditions?: { type: string; status: string }[] };
  return how === 'unknown'
    ? {
        ...o,
        status: {
          ...status,
          conditions: [
            { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' },
            ...(status.conditions ?? []).filter((c) => c.type !== 'Ready'),
          ],
        },
      }
    : {
        ...o,
        spec: {
          ...(o['spec'] as object),
          taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }],
        },
      };
}

const closing: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closing) await close();
});

async function serve(o: FakeApiOptions) {
  const fake = await startFakeApi({ exec: where, ...o });
  const api = await KubeApi.connect({
    kubeconfig: fake.kubeconfig({ namespace: 'default' }),
    env: {},
    timeoutMs: 60_000,
  });
  closing.push(async () => {
    api.close();
    await fake.close();
  });
  return { fake, api };
}

const execsOn = (fake: { requests: { path: string }[] }) =>
  fake.requests.filter((r) => r.path.endsWith('/exec')).map((r) => r.path.split('/')[6]);

describe('a node whose exec cannot succeed', () => {
  it(`an exec whose stream does not open is cut after ${EXEC_START_MS / 1000} s and said, though the command may take a minute`, async () => {
    const { api } = await serve({
      objects: labObjects(TOPOLOGY),
      stall: (r) => r.path.endsWith('/exec'),
    });
    const pod = labObjects(TOPOLOGY).find((o) =>
      o.metadata?.name?.startsWith('kube-proxy-'),
    )!.metadata!;
    const t = performance.now();
    const r = await api.exec(pod.namespace!, pod.name!, 'kube-proxy', ['iptables-save'], {
      timeoutMs: 60_000,
    });
    const took = performance.now() - t;
    assert.ok(took >= EXEC_START_MS - 50 && took < EXEC_START_MS + 3000, `${took} ms`);
    assert.equal(r.exitCode, null);
    assert.equal(
      r.error,
      `exec in pod ${pod.namespace}/${pod.name} did not start within ${EXEC_START_MS / 1000}s (is its node's kubelet reachable from the API server?)`,
    );
  });

  for (const how of ['unknown', 'taint'] as const)
    it(`a Node ${how === 'unknown' ? 'whose Ready is Unknown' : 'tainted unreachable'}: no exec through its kubelet, said; the others read`, async () => {
      const objects = labObjects(TOPOLOGY).map((o) => kubeletGone(o, how));
      const { fake, api } = await serve({ objects });
      const transport = NodeAccessTransport.create(api, { via: 'kube-proxy', timeoutMs: 3000 });
      closing.push(() => transport.close());
      transport.nodesRead(objects.filter((o) => o.kind === 'Node').map(toNode));
      const [a, b] = await Promise.all(['node-a', 'node-b'].map((n) => transport.run(n, RULES)));
      assert.equal(a!.exitCode, 0);
      assert.equal(a!.stdout, 'node-a\n');
      assert.equal(b!.exitCode, null);
      const shown = how === 'unknown' ? 'Ready Unknown' : 'tainted node.kubernetes.io/unreachable';
      assert.match(
        b!.error!,
        new RegExp(`Node node-b's kubelet is unreachable as the API shows it \\(${shown}\\)`),
      );
      // one exec, on node-a: none was tried through node-b's kubelet
      assert.deepEqual(execsOn(fake), [
        labObjects(TOPOLOGY)
          .filter((o) => o.kind === 'Pod' && o.metadata?.name?.startsWith('kube-proxy-'))
          .find((o) => (o['spec'] as { nodeName: string }).nodeName === 'node-a')!.metadata!.name,
      ]);
    });

  it('a Node Ready again: its kubelet is tried as any other', async () => {
    const objects = labObjects(TOPOLOGY).map((o) => kubeletGone(o, 'unknown'));
    const { api } = await serve({ objects: labObjects(TOPOLOGY) });
    const transport = NodeAccessTransport.create(api, { via: 'kube-proxy', timeoutMs: 3000 });
    closing.push(() => transport.close());
    transport.nodesRead(objects.filter((o) => o.kind === 'Node').map(toNode));
    transport.nodesRead(
      labObjects(TOPOLOGY)
        .filter((o) => o.kind === 'Node')
        .map(toNode),
    );
    const r = await transport.run('node-b', RULES);
    assert.equal(r.stdout, 'node-b\n');
  });
});
