// `npm run bench:api`: what one `kdebug svc` asks of the API server on a large cluster — 5,000
// Nodes each with its kube-proxy Pod, 10,000 Services with their EndpointSlices — served by the
// test's fake API server; requests, bytes, time to the facts, nodes chosen. The node commands
// answer at once (a stub transport): this measures the API side and the choice only.
import { commandStem } from '../../src/cluster/cluster.js';
import { readLive } from '../../src/cluster/facts-source.js';
import { KubeCluster, type NodeTransport } from '../../src/cluster/kube-cluster.js';
import { diagnose } from '../../src/core/diagnose.js';
import type { KubeObject } from '../../src/core/model.js';
import { reportJson } from '../../src/output/json.js';
import { startFakeApi } from '../support/fake-api/server.js';
import { aNode, aPod, anEndpointSlice, aService, webCluster } from '../cluster/objects.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const NODES = Number(args.get('nodes') ?? 5000);
const SERVICES = Number(args.get('services') ?? 10000);

const objects: KubeObject[] = [...webCluster().relevant];
for (let i = 0; i < NODES; i++) {
  objects.push(aNode(`node-${i}`, `198.51.100.${i % 250}`, `10.${64 + (i >> 8)}.${i & 255}.0/24`));
  objects.push(
    aPod(`kube-proxy-n${i}`, 'kube-system', {
      labels: { 'k8s-app': 'kube-proxy' },
      node: `node-${i}`,
    }),
  );
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
if (args.get('daemonset') === 'settled') {
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
const ran = new Set<string>();
const transport: NodeTransport = {
  run: async (node, c) => {
    ran.add(node);
    return { stdout: '', stderr: `${commandStem(c)}: stub`, exitCode: 1, via: 'bench' };
  },
};
const cluster = await KubeCluster.connect({
  kubeconfig: fake.kubeconfig({ namespace: 'default' }),
  env: {},
  transport: () => transport,
});
const before = process.memoryUsage().rss;
const t = performance.now();
const { facts } = await readLive(cluster, { namespace: 'default', service: 'web' }, 'bench');
const took = performance.now() - t;
await cluster.close();
await fake.close();
// the diagnosis over those facts: the checks see 5,000 Nodes and their Pods
const d = performance.now();
const report = diagnose(facts, { namespace: 'default', service: 'web' });
const diagnosed = performance.now() - d;
const r = performance.now();
const json = reportJson(report);
const rendered = performance.now() - r;

const api = fake.requests.filter((r) => r.path.startsWith('/api'));
const bytes = api.reduce((n, r) => n + (r.bytes ?? 0), 0);
const byPath = new Map<string, { n: number; bytes: number }>();
for (const r of api) {
  const k = r.path
    .replace(/\/namespaces\/[^/]+/, '/namespaces/NS')
    .replace(/\/[^/]+$/, (m) =>
      /pods|nodes|services|endpoints|endpointslices|configmaps|daemonsets|networkpolicies|servicecidrs/.test(
        m,
      )
        ? m
        : '/NAME',
    );
  const e = byPath.get(k) ?? { n: 0, bytes: 0 };
  e.n++;
  e.bytes += r.bytes ?? 0;
  byPath.set(k, e);
}
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
console.log(
  `svc web on ${NODES.toLocaleString('en-US')} nodes and ${SERVICES.toLocaleString('en-US')} Services (fake API server, stub node commands; kube-proxy DaemonSet ${args.get('daemonset') === 'settled' ? 'settled' : 'rolling out'})`,
);
console.log(`  API requests: ${api.length}, ${mb(bytes)} read, facts in ${took.toFixed(0)} ms`);
console.log(
  `  objects kept: ${facts.objects.length}; nodes read: ${ran.size}; rss +${mb(process.memoryUsage().rss - before)}`,
);
console.log(
  `  diagnose: ${diagnosed.toFixed(0)} ms; JSON: ${rendered.toFixed(0)} ms, ${mb(json.length)}`,
);
for (const [path, e] of [...byPath].sort((a, b) => b[1].bytes - a[1].bytes))
  console.log(`    ${String(e.n).padStart(3)} × ${path}  ${mb(e.bytes)}`);
