// bench:api's API server, in a worker thread of its own: its objects and its answers' text are
// not in the heap the bench measures. It serves 5,000 Nodes each with its kube-proxy Pod (as a
// kubeadm cluster serves them) and 10,000 Services with their EndpointSlices; once asked, it
// answers with the requests it received and the bytes of each answer.
import { parentPort, workerData } from 'node:worker_threads';
import type { KubeObject } from '../../src/core/model.js';
import { startFakeApi } from '../support/fake-api/server.js';
import { servedKubeProxyPod } from '../cluster/kube-proxy-pod.js';
import { aNode, anEndpointSlice, aService, webCluster } from '../cluster/objects.js';

const { NODES, SERVICES, settled } = workerData as {
  NODES: number;
  SERVICES: number;
  settled: boolean;
};

const objects: KubeObject[] = [...webCluster().relevant];
for (let i = 0; i < NODES; i++) {
  const ip = `198.51.100.${i % 250}`;
  objects.push(aNode(`node-${i}`, ip, `10.${64 + (i >> 8)}.${i & 255}.0/24`));
  objects.push(servedKubeProxyPod(i, `node-${i}`, ip));
}
for (let i = 0; i < SERVICES; i++) {
  const name = `svc-${i}`;
  const ns = `ns-${i % 100}`;
  objects.push(aService(name, ns, { clusterIP: `10.96.${(i >> 8) & 255}.${i & 255}` }));
  objects.push(
    anEndpointSlice(name, ns, [
      {
        ip: `10.${64 + ((i >> 8) & 15)}.${i & 255}.5`,
        pod: `${name}-0`,
        node: `node-${i % NODES}`,
      },
    ]),
  );
}

// `--daemonset settled`: kube-proxy's DaemonSet says every Pod it schedules is ready and current,
// as on a healthy cluster (its Pods are then read by node); by default it is mid-rollout
if (settled) {
  const ds = objects.find((o) => o.kind === 'DaemonSet' && o.metadata?.name === 'kube-proxy')!;
  const all = NODES + 2;
  ds['status'] = {
    observedGeneration: 1,
    desiredNumberScheduled: all,
    numberReady: all,
    updatedNumberScheduled: all,
    numberAvailable: all,
    numberMisscheduled: 0,
  };
}

const fake = await startFakeApi({ objects });
parentPort!.postMessage({ kubeconfig: fake.kubeconfig({ namespace: 'default' }) });
parentPort!.once('message', () => {
  const requests = fake.requests.map((r) => ({ path: r.path, bytes: r.bytes ?? 0 }));
  void fake.close().then(() => parentPort!.postMessage(requests));
});
