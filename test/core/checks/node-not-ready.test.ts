import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import {
  resolveNext,
  shellLine,
  type NextCommand,
} from '../../../src/core/findings/next-command.js';
import { endpointsCheck } from '../../../src/core/checks/endpoints/endpoints.js';
import { kubeProxyCheck } from '../../../src/core/checks/kube-proxy/kube-proxy.js';
import type { KubeObject } from '../../../src/core/model.js';
import {
  aNode,
  aPod,
  aService,
  anEndpointSlice,
  facts,
  ids,
  kubeProxy,
  run,
  webPods,
} from './builders.js';

const line = (c: NextCommand | undefined) => c && shellLine(resolveNext(c));

/** node-b as the node controller leaves a node whose kubelet stopped posting status. */
const unreachable = (): KubeObject => {
  const n = aNode('node-b', '192.0.2.11', '10.244.1.0/24');
  return {
    ...n,
    spec: {
      ...(n['spec'] as object),
      taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }],
    },
    status: {
      addresses: [{ type: 'InternalIP', address: '192.0.2.11' }],
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
          lastTransitionTime: '2019-08-20T02:13:49Z',
        },
      ],
    },
  };
};
const nodes = () => [aNode('node-a', '192.0.2.10', '10.244.0.0/24'), unreachable()];

describe('a node whose Ready is Unknown', () => {
  it('says a ready endpoint on it is the last state it posted, not a plain pass', () => {
    // before: "✓ 2 of 2 endpoints ready", nothing said of node-b
    const f = run(
      endpointsCheck,
      facts([aService(), anEndpointSlice(), ...webPods(), ...nodes(), ...kubeProxy()]),
    );
    assert.deepEqual(ids(f), ['endpoints-ready:pass', 'endpoint-node-not-ready:warn']);
    const on = f.find((x) => x.id === 'endpoint-node-not-ready')!;
    assert.equal(on.node, 'node-b');
    assert.match(on.title, /1 ready endpoint on node-b, whose node is NotReady \(Ready=Unknown/);
    assert.match(on.explanation, /last state it posted/);
  });

  it('makes its kube-proxy not observed, never counted as running', () => {
    const f = run(
      kubeProxyCheck,
      facts([aService(), anEndpointSlice(), ...webPods(), ...nodes(), ...kubeProxy()]),
    );
    assert.deepEqual(
      ids(f).filter((x) => /^kube-proxy-(running|node)/.test(x)),
      ['kube-proxy-running:pass', 'kube-proxy-node-not-ready:skip'],
    );
    const running = f.find((x) => x.id === 'kube-proxy-running')!;
    assert.equal(running.title, 'kube-proxy running on 1 node');
    const stale = f.find((x) => x.id === 'kube-proxy-node-not-ready')!;
    assert.equal(stale.node, 'node-b');
    assert.ok(
      stale.evidence.some(
        (e) =>
          e.kind === 'read' &&
          evidenceText(e).includes('Ready=Unknown (NodeStatusUnknown') &&
          evidenceText(e).includes('since 2019-08-20T02:13:49Z') &&
          evidenceText(e).includes('node.kubernetes.io/unreachable:NoExecute'),
      ),
    );
    assert.ok(stale.evidence.some((e) => e.kind === 'not-observed'));
    assert.equal(line(stale.next), 'kubectl describe node node-b');
  });

  it('is the cause of its Pod not being ready, with describe node as the next command', () => {
    const f = run(
      endpointsCheck,
      facts([
        aService(),
        anEndpointSlice({
          endpoints: [
            { ip: '10.244.0.5', node: 'node-a', pod: 'web-1' },
            { ip: '10.244.1.6', node: 'node-b', pod: 'web-2', ready: false },
          ],
        }),
        aPod({ name: 'web-1' }),
        aPod({ name: 'web-2', ip: '10.244.1.6', node: 'node-b', ready: false }),
        ...nodes(),
      ]),
    );
    assert.deepEqual(ids(f), ['endpoints-ready:pass', 'endpoint-node-not-ready:warn']);
    const down = f[1]!;
    assert.match(
      down.title,
      /^Pod web-2 is not ready: its node node-b is NotReady \(Ready=Unknown/,
    );
    assert.equal(down.node, 'node-b');
    assert.equal(line(down.next), 'kubectl describe node node-b');
  });
});

describe('a Ready node with a not-ready taint left on it', () => {
  /** node-b Ready=True, its not-ready taint not yet removed by the node controller. */
  const tainted = (): KubeObject => {
    const n = aNode('node-b', '192.0.2.11', '10.244.1.0/24');
    return {
      ...n,
      spec: {
        ...(n['spec'] as object),
        taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
      },
    };
  };

  it('leaves the Pod its own cause, the taint said beside', () => {
    const f = run(
      endpointsCheck,
      facts([
        aService(),
        anEndpointSlice({
          endpoints: [
            { ip: '10.244.0.5', node: 'node-a', pod: 'web-1' },
            { ip: '10.244.1.6', node: 'node-b', pod: 'web-2', ready: false },
          ],
        }),
        aPod({ name: 'web-1' }),
        aPod({ name: 'web-2', ip: '10.244.1.6', node: 'node-b', ready: false }),
        aNode('node-a', '192.0.2.10', '10.244.0.0/24'),
        tainted(),
      ]),
    );
    assert.deepEqual(ids(f), ['endpoints-ready:pass', 'endpoint-not-ready:warn']);
    assert.ok(
      f[1]!.evidence.some((e) =>
        evidenceText(e).includes('taint node.kubernetes.io/not-ready:NoSchedule'),
      ),
    );
  });
});
