// A live diagnosis keeps of each kube-proxy Pod it lists (one a node: thousands on a large
// cluster) the fields kdebug reads, cut as each page of the list arrives, and diagnoses as it
// would with the Pods whole; a snapshot still keeps them as the API served them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { commandStem } from '../../src/cluster/cluster.js';
import { collect } from '../../src/cluster/collect.js';
import { readLive } from '../../src/cluster/live-diagnosis.js';
import { KubeApi } from '../../src/cluster/kube-api.js';
import { KubeCluster, type NodeTransport } from '../../src/cluster/kube-cluster.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { RUNNING_CONDITIONS } from '../support/fake-api/pods.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { servedKubeProxyPod } from './kube-proxy-pod.js';
import { aNode, webCluster } from './objects.js';
import { allModes } from '../support/modes.js';

const N = 600;
const target = { namespace: 'default', service: 'web' };
const GATES = '--feature-gates=KubeProxyNFTablesLocalhostNodePorts=true';

describe('kube-proxy Pods on 600 nodes, as a kubeadm cluster serves them', () => {
  let fake: FakeApi;
  /** The Pods as served, by name. */
  const served = new Map<string, KubeObject>();
  let facts: Facts;
  before(async () => {
    // webCluster's own kube-proxy Pods make way for served ones on its nodes
    const objects = webCluster().relevant.filter((o) => !/^kube-proxy-/.test(o.metadata!.name!));
    const nodes = [...['node-a', 'node-b'].map((n, i) => ({ n, ip: `192.0.2.${10 + i}` }))];
    for (let i = 0; i < N; i++) {
      const ip = `198.51.${i >> 8}.${i & 255}`;
      objects.push(aNode(`node-${i}`, ip, `10.245.${i % 250}.0/24`));
      nodes.push({ n: `node-${i}`, ip });
    }
    for (const [i, { n, ip }] of nodes.entries()) {
      const pod = servedKubeProxyPod(i, n, ip, n === 'node-a' ? [GATES] : []);
      served.set(pod.metadata!.name!, pod);
      objects.push(pod);
    }
    fake = await startFakeApi({ objects });
    const transport: NodeTransport = {
      run: async (_, c) => ({ stdout: '', stderr: commandStem(c), exitCode: 1, via: 'test' }),
    };
    const cluster = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      transport: () => transport,
    });
    try {
      facts = (await readLive(cluster, target, 'test')).facts;
    } finally {
      await cluster.close();
    }
  });
  after(() => fake.close());

  /** The kube-proxy Pod kept of `node`. */
  const kept = (node: string) =>
    facts.objects.find(
      (o) =>
        served.has(o.metadata?.name ?? '') &&
        (o['spec'] as { nodeName?: string }).nodeName === node,
    )!;

  it('keeps of each the fields kdebug reads, its command line whole', () => {
    const pod = kept('node-a');
    const { uid } = served.get(pod.metadata!.name!)!.metadata!;
    assert.deepEqual(pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: pod.metadata!.name,
        namespace: 'kube-system',
        uid,
        labels: {
          'controller-revision-hash': '6d8f9b7c5d',
          'k8s-app': 'kube-proxy',
          'pod-template-generation': '1',
        },
        ownerReferences: [{ kind: 'DaemonSet', name: 'kube-proxy' }],
      },
      spec: {
        containers: [
          {
            name: 'kube-proxy',
            image: 'registry.k8s.io/kube-proxy:v1.31.4',
            // every flag, as written: the steps read the command line as the API gave it
            command: [
              '/usr/local/bin/kube-proxy',
              '--config=/var/lib/kube-proxy/config.conf',
              '--hostname-override=$(NODE_NAME)',
              GATES,
            ],
          },
        ],
        hostNetwork: true,
        nodeName: 'node-a',
        // the ConfigMap it mounts; the other volumes keep only their place
        volumes: [{ configMap: { name: 'kube-proxy' } }, {}, {}, {}],
      },
      status: {
        phase: 'Running',
        conditions: RUNNING_CONDITIONS.map((type) => ({ type, status: 'True' })),
        containerStatuses: [
          {
            name: 'kube-proxy',
            ready: true,
            restartCount: 0,
            state: { running: {} },
            lastState: {},
          },
        ],
        hostIP: '192.0.2.10',
        podIP: '192.0.2.10',
        podIPs: [{ ip: '192.0.2.10' }],
      },
    });
  });

  it('diagnoses as it would with every kube-proxy Pod whole', () => {
    const proxies = facts.objects.filter((o) => served.has(o.metadata?.name ?? ''));
    assert.equal(proxies.length, N + 2);
    const whole = {
      ...facts,
      objects: facts.objects.map((o) => served.get(o.metadata?.name ?? '') ?? o),
    };
    assert.deepEqual(
      diagnose(facts, target, { code: allModes }),
      diagnose(whole, target, { code: allModes }),
    );
  });

  it('a snapshot keeps them as the API served them', async () => {
    const cluster = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
    });
    try {
      const snapshot = await collect(cluster, target, {});
      const pod = snapshot.objects.find((o) => o.metadata?.name === kept('node-b').metadata!.name);
      assert.deepEqual(pod, served.get(pod!.metadata!.name!));
    } finally {
      await cluster.close();
    }
  });

  it('cuts each Pod as its page arrives, before the next page is asked for', async () => {
    const api = await KubeApi.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
    });
    const lists = () =>
      fake.requests.filter((r) => r.path === '/api/v1/namespaces/kube-system/pods');
    const from = lists().length;
    /** For each Pod cut, how many pages had been asked for then. */
    const pagesAsked: number[] = [];
    const { items } = await api.list('/api/v1/namespaces/kube-system/pods', {
      labelSelector: 'k8s-app=kube-proxy',
      pageSize: 250,
      cut: (o) => {
        pagesAsked.push(lists().length - from);
        return { kind: o.kind, metadata: { name: o.metadata?.name } };
      },
    });
    assert.equal(items.length, N + 2);
    assert.deepEqual(items[0], { kind: 'Pod', metadata: { name: items[0]!.metadata!.name } });
    assert.deepEqual(
      [1, 2, 3].map((page) => pagesAsked.filter((n) => n === page).length),
      [250, 250, N + 2 - 500],
    );
  });
});
