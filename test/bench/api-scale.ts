// `npm run bench:api`: what one `kdebug svc` asks of the API server on a large cluster — 5,000
// Nodes each with its kube-proxy Pod, 10,000 Services with their EndpointSlices — served by the
// test's fake API server (api-scale-server.ts, a worker of its own); requests, bytes, time to the
// facts, nodes chosen. The node commands answer at once (a stub transport): this measures the API
// side and the choice only. The heap kdebug holds is measured at its peak while it reads and once
// the facts are in (from a collected heap with node's --expose-gc, as `npm run bench:api` runs).
import { Worker } from 'node:worker_threads';
import { commandStem } from '../../src/cluster/cluster.js';
import { readLive } from '../../src/cluster/live-diagnosis.js';
import { KubeCluster, type NodeTransport } from '../../src/cluster/kube-cluster.js';
import { diagnose } from '../../src/core/diagnose.js';
import { reportJson } from '../../src/output/json.js';
import { allModes } from '../support/modes.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const NODES = Number(args.get('nodes') ?? 5000);
const SERVICES = Number(args.get('services') ?? 10000);

// the API server in a worker of its own: the heap measured here is kdebug's
const entry = new URL('./api-scale-server.ts', import.meta.url).href;
// the worker loads TypeScript as this thread does (tsx), then the server
const server = new Worker(
  `import('tsx/esm/api').then((t) => (t.register(), import(${JSON.stringify(entry)})))`,
  { eval: true, workerData: { NODES, SERVICES, settled: args.get('daemonset') === 'settled' } },
);
const answer = <T>() => new Promise<T>((done) => server.once('message', done));
const { kubeconfig } = await answer<{ kubeconfig: string }>();
const ran = new Set<string>();
const transport: NodeTransport = {
  run: async (node, c) => {
    ran.add(node);
    return { stdout: '', stderr: `${commandStem(c)}: stub`, exitCode: 1, via: 'bench' };
  },
};
const cluster = await KubeCluster.connect({
  kubeconfig,
  env: {},
  transport: () => transport,
  // the fake API server shares this machine's CPUs with kdebug: a real one answers in its own
  timeoutMs: 120_000,
});
const heap = () => process.memoryUsage().heapUsed;
globalThis.gc?.();
const before = heap();
// the heap at its highest while kdebug reads, sampled between its awaits
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, heap())), 2);
const t = performance.now();
const { facts } = await readLive(cluster, { namespace: 'default', service: 'web' }, 'bench');
const took = performance.now() - t;
clearInterval(sampler);
peak = Math.max(peak, heap());
await cluster.close();
globalThis.gc?.();
const held = heap() - before;
server.postMessage('done');
const requests = await answer<{ path: string; bytes: number }[]>();
await server.terminate();
// the diagnosis over those facts: the checks see 5,000 Nodes and their Pods
const d = performance.now();
const report = diagnose(facts, { namespace: 'default', service: 'web' }, { code: allModes });
const diagnosed = performance.now() - d;
const r = performance.now();
const json = reportJson(report);
const rendered = performance.now() - r;

const api = requests.filter((r) => r.path.startsWith('/api'));
const bytes = api.reduce((n, r) => n + r.bytes, 0);
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
  e.bytes += r.bytes;
  byPath.set(k, e);
}
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
console.log(
  `svc web on ${NODES.toLocaleString('en-US')} nodes and ${SERVICES.toLocaleString('en-US')} Services (fake API server, stub node commands; kube-proxy DaemonSet ${args.get('daemonset') === 'settled' ? 'settled' : 'rolling out'})`,
);
console.log(`  API requests: ${api.length}, ${mb(bytes)} read, facts in ${took.toFixed(0)} ms`);
console.log(
  `  objects kept: ${facts.objects.length}; nodes read: ${ran.size}; heap while reading: peak +${mb(peak - before)}${globalThis.gc ? `, held after +${mb(held)}` : ' (run with --expose-gc for the heap held after)'}`,
);
console.log(
  `  diagnose: ${diagnosed.toFixed(0)} ms; JSON: ${rendered.toFixed(0)} ms, ${mb(json.length)}`,
);
for (const [path, e] of [...byPath].sort((a, b) => b[1].bytes - a[1].bytes))
  console.log(`    ${String(e.n).padStart(3)} × ${path}  ${mb(e.bytes)}`);
