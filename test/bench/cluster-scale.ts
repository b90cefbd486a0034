// `npm run bench:cluster` (root, Go): the lab cluster with 10,000 Services × 5 endpoints created
// in bulk through the API (selector-less Services with their own EndpointSlices: no 50,000 Pods)
// and 5,000 Nodes (the lab's two real ones, the rest in the API only, each given its kube-proxy
// Pod directly, as the DaemonSet would, bound by spec.nodeName: simulated.ts), then `kdebug svc`
// on one Service, timed with the nodes it chose and read, the debug Pods it created, the bytes
// it read from nodes and its peak memory: while those Pods are Pending (a DaemonSet rolling out)
// and again once they run (the bench writes the status a kubelet would); then, side by side,
// svc, svc --all-nodes and svc --via pod --yes (on the real nodes: the others have no kubelet to
// run a debug Pod); and the truth check at that size. A bench, not a
// test. `-- --services N --nodes N` for other sizes, `-- --sizes 1000,2500,5000` for the same
// measures at each of those Node counts (Services scaled alike, one cluster grown from size to
// size, the truth check at the last), side by side; `-- --svc-only` for the svc timings without
// the truth check, `-- --profile DIR` for one run's CPU profile, `-- --hold` to keep the cluster up
// for runs by hand until interrupted (both at the last size). Killed by any signal or ended by a
// throw, it leaves no lab behind: the lab's reaper tears it down (test/support/cluster/reaper.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUBELET_ACK_MS } from '../../src/cluster/nodes/debug-pod/pod-state.js';
import type { ApiWrite } from '../support/cluster/api-writer.js';
import { ClusterClient, VIA_POD } from '../support/cluster/client.js';
import { DIR, down, up } from '../support/cluster/cluster.js';
import { createSimulatedNodes, startSimulatedProxies } from '../support/cluster/simulated.js';
import { differences, roundTrip, scratchNamespace } from '../support/cluster/truth.js';
import { measureSvc, runLine, runsTable, sizesTable, type SizeRuns } from './cluster-svc.js';

const arg = (flag: string) =>
  process.argv.includes(flag) ? Number(process.argv[process.argv.indexOf(flag) + 1]) : undefined;
const SERVICES = arg('--services') ?? 10_000;
/** Nodes in all, the two real ones included. */
const NODES = arg('--nodes') ?? 5000;
/** Node counts measured one after the other, each with SERVICES / NODES Services a Node. */
const SIZES = process.argv.includes('--sizes')
  ? process.argv[process.argv.indexOf('--sizes') + 1]!.split(',').map(Number)
  : [NODES];
if (SIZES.some((n, k) => !Number.isSafeInteger(n) || n < 2 || n <= (SIZES[k - 1] ?? 0)))
  throw new Error(`--sizes: Node counts of 2 or more, ascending, not ${SIZES.join(',')}`);
const servicesAt = (nodes: number) => Math.round((nodes * SERVICES) / NODES);
const ENDPOINTS = 5;
const NS = 'scale';

/** Services [from, to) and their EndpointSlices, as API writes (kubectl writes one at a time). */
function objects(
  nodes: { name: string; podCIDR: string }[],
  from: number,
  to: number,
): (ApiWrite | 'wait')[] {
  const at = `/api/v1/namespaces/${NS}`;
  const writes: (ApiWrite | 'wait')[] =
    from === 0
      ? [{ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: NS } } }, 'wait']
      : [];
  for (let i = from; i < to; i++) {
    const name = `svc-${String(i).padStart(4, '0')}`;
    writes.push({
      method: 'POST',
      path: `${at}/services`,
      body: {
        metadata: { name, namespace: NS },
        spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      },
    });
    const endpoints = Array.from({ length: ENDPOINTS }, (_, k) => {
      const node = nodes[(i + k) % nodes.length]!;
      const base = node.podCIDR.split('.').slice(0, 3).join('.');
      return {
        addresses: [`${base}.${10 + ((i * ENDPOINTS + k) % 240)}`],
        conditions: { ready: true, serving: true, terminating: false },
        nodeName: node.name,
      };
    });
    writes.push({
      method: 'POST',
      path: `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
      body: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `${name}-1`,
          namespace: NS,
          labels: {
            'kubernetes.io/service-name': name,
            'endpointslice.kubernetes.io/managed-by': 'kdebug-bench',
          },
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints,
      },
    });
  }
  return writes;
}

/** The kube-proxy DaemonSet's status: every desired Pod updated, ready and available. */
function proxySettled(c: ClusterClient, nodes: number): boolean {
  const [desired, updated, ready, available] = c
    .kubectl([
      ...['get', 'daemonset', '-n', 'kube-system', 'kube-proxy', '-o'],
      'jsonpath={.status.desiredNumberScheduled} {.status.updatedNumberScheduled} {.status.numberReady} {.status.numberAvailable}',
    ])
    .split(' ')
    .map(Number);
  return desired === nodes && [updated, ready, available].every((n) => n === desired);
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** The cluster grown to `nodes` Nodes and their Services, kube-proxy synced and its DaemonSet
 * settled, with svc timed while it rolls out and after; undefined where --hold or --profile ran. */
async function measureSize(
  c: ClusterClient,
  from: { nodes: number; services: number },
  nodes: number,
  last: boolean,
): Promise<SizeRuns | undefined> {
  const services = servicesAt(nodes);
  let t = process.hrtime.bigint();
  await c.apiWrites(objects(c.info.nodes, from.services, services));
  console.log(
    `created Services ${from.services} to ${services} × ${ENDPOINTS} endpoints: ${Math.round(ms(t))} ms`,
  );
  const simulated = {
    from: Math.max(0, from.nodes - c.info.nodes.length),
    count: Math.max(0, nodes - Math.max(from.nodes, c.info.nodes.length)),
  };
  t = process.hrtime.bigint();
  await createSimulatedNodes(c, simulated);
  console.log(
    `created ${simulated.count} Nodes in the API only, Ready, each with its kube-proxy Pod (Pending): ${Math.round(ms(t))} ms`,
  );
  t = process.hrtime.bigint();
  await c.until(
    'kube-proxy to write every Service',
    () =>
      c.info.nodes.every(
        (n) =>
          (c.onNode(n.name, ['iptables-save', '-t', 'nat']).stdout.match(/^:KUBE-SVC-/gm) ?? [])
            .length >= services,
      ),
    600_000,
  );
  console.log(`kube-proxy synced on every node: ${Math.round(ms(t))} ms`);
  const target = `svc-${String(Math.floor(services / 2)).padStart(4, '0')}`;
  const svc = [target, '-n', NS, '--via', 'kube-proxy'];
  // `-- --profile DIR`: only the timed run below, with a CPU profile of kdebug written to DIR
  const profile =
    last && process.argv.includes('--profile')
      ? process.argv[process.argv.indexOf('--profile') + 1]
      : undefined;
  // a DaemonSet rolling out: kdebug lists every kube-proxy Pod to see which nodes run one
  const rolling = profile
    ? undefined
    : await measureSvc(c, `svc ${target}, the kube-proxy DaemonSet rolling out`, svc, 3);
  if (rolling) {
    console.log(runLine(rolling));
    whereTimeGoes(target, rolling.stderr);
  }
  t = process.hrtime.bigint();
  await startSimulatedProxies(c, simulated);
  await c.until('the kube-proxy DaemonSet to settle', () => proxySettled(c, nodes), 600_000);
  console.log(
    `kube-proxy Pods running (status written), DaemonSet settled: ${Math.round(ms(t))} ms`,
  );
  if (last && process.argv.includes('--hold')) return void (await hold(c, target));
  if (profile) {
    process.env['KDEBUG_TIMINGS'] = '1';
    const timed = c.kdebugMeasured(
      [...svc, '-o', 'json'],
      ['--cpu-prof', `--cpu-prof-dir=${profile}`],
    );
    delete process.env['KDEBUG_TIMINGS'];
    return void whereTimeGoes(target, timed.stderr);
  }
  // the API-only Nodes have no kubelet, unlike a real cluster's Ready nodes: a debug Pod bound to
  // one is never taken (kdebug gives it up after KUBELET_ACK_MS, and says so)
  const real = c.info.nodes.map((n) => n.name);
  const viaPod = `svc --via pod --yes --nodes ${real.join(',')}`;
  console.log(
    `${viaPod}: on the lab's ${real.length} real nodes only; a debug Pod on one of the ${nodes - real.length} API-only Nodes would wait ${KUBELET_ACK_MS / 1000} s for a kubelet that is not there`,
  );
  // the same Service read three ways, side by side
  const runs = [
    await measureSvc(c, 'svc', svc, 3),
    await measureSvc(c, 'svc --all-nodes', [...svc, '--all-nodes']),
    await measureSvc(c, viaPod, [target, '-n', NS, ...VIA_POD, '--nodes', real.join(',')]),
  ];
  for (const r of runs) console.log(runLine(r));
  console.log(
    `kdebug svc ${target} (live) on ${nodes} nodes and ${services} Services, the DaemonSet settled:\n${runsTable(runs)}`,
  );
  whereTimeGoes(target, runs[0]!.stderr);
  return { nodes, services, rolling: rolling!, runs };
}

async function main(): Promise<void> {
  try {
    // API-only Nodes never heartbeat: the one status the bench writes must hold for its whole run
    const c = new ClusterClient(await up({ nodes: 2, heartbeatGrace: '2h' }));
    const sizes: SizeRuns[] = [];
    let made = { nodes: c.info.nodes.length, services: 0 };
    for (const [k, nodes] of SIZES.entries()) {
      const measured = await measureSize(c, made, nodes, k === SIZES.length - 1);
      if (!measured) return;
      sizes.push(measured);
      made = { nodes: Math.max(nodes, made.nodes), services: servicesAt(nodes) };
    }
    if (sizes.length > 1)
      console.log(
        `kdebug svc at each size, the DaemonSet settled but where said:\n${sizesTable(sizes)}`,
      );
    // `-- --svc-only`: the timings alone (kube-proxy's restart at this size takes many minutes)
    if (process.argv.includes('--svc-only')) return;
    // kube-proxy rewrites only changed Services between full syncs, and a large cluster gets
    // none until syncPeriod: chains written while it was small keep their comments. A restart
    // writes everything once, in large-cluster mode, as kdebug expect computes it.
    let t = process.hrtime.bigint();
    // what the restarted kube-proxy writes again in one iptables-restore, said if it outlasts the wait
    const natRules = c.info.nodes.map(
      (n) => (c.onNode(n.name, ['iptables-save', '-t', 'nat']).stdout.match(/^-A /gm) ?? []).length,
    );
    const started = Date.now();
    for (const n of c.info.nodes)
      spawnSync('pkill', ['-f', '--', `--config=${join(DIR, 'nodes', n.name, 'kube-proxy.conf')}`]);
    try {
      await c.until(
        'kube-proxy to restart and write every rule afresh',
        () =>
          c.info.nodes.every((n) => {
            const m =
              /^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{ip_family="IPv4"\} (\S+)/m.exec(
                c.onNode(n.name, ['curl', '-s', 'http://127.0.0.1:10249/metrics']).stdout,
              );
            return m !== null && Number(m[1]) * 1000 > started + 1000;
          }),
        RESTART_WAIT_MS,
      );
    } catch {
      return void console.log(restartTooSlow(c, natRules));
    }
    const dir = join(mkdtempSync(join(tmpdir(), 'kdc-scale-')), 'snap');
    t = process.hrtime.bigint();
    const s = c.kdebug(['snapshot', 'save', dir, '--all', '-A', '--via', 'kube-proxy']);
    console.log(`snapshot save --all -A: exit ${s.code}, ${Math.round(ms(t))} ms`);
    const scratch = scratchNamespace('kdc');
    for (const n of c.info.nodes) {
      t = process.hrtime.bigint();
      const e = c.kdebug(['expect', '--snapshot', dir, '--node', n.name]);
      const took = ms(t);
      writeFileSync(join(tmpdir(), `kdc-scale-expect-${n.name}.txt`), e.stdout);
      const d = differences(
        roundTrip(scratch, e.stdout),
        roundTrip(scratch, c.onNode(n.name, ['iptables-save']).stdout),
      );
      console.log(
        `${n.name}: kdebug expect ${Math.round(took)} ms, exit ${e.code}${e.code !== 0 ? ` (${e.stderr.trim().split('\n')[0]})` : ''}; differences from the real kube-proxy: ${d.length}${d.length ? `\n  ${d.slice(0, 10).join('\n  ')}` : ''}`,
      );
    }
    t = process.hrtime.bigint();
    const drift = c.kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
    console.log(
      `drift --all-nodes on the snapshot: exit ${drift.code}, ${Math.round(ms(t))} ms${drift.code === 2 ? ` (${drift.stderr.trim().split('\n')[0]})` : ''}`,
    );
    rmSync(dir, { recursive: true, force: true });
  } finally {
    down();
  }
}

/** How long the truth check waits for kube-proxy's restart to write every rule again. */
const RESTART_WAIT_MS = 900_000;

/** The truth check given up: kube-proxy's restart did not write its rules in time, and which
 * restores were still running (iptables-nft 1.8.9 takes tens of minutes for 170,000 nat rules). */
function restartTooSlow(c: ClusterClient, natRules: number[]): string {
  const running = spawnSync('ps', ['-eo', 'pid,etimes,pcpu,args'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => /iptables[-\w]*-restore/.test(l))
    .map((l) => {
      const [pid, secs, cpu, ...args] = l.trim().split(/\s+/);
      return `pid ${pid}, ${Math.round(Number(secs) / 60)} min, ${cpu}% CPU: ${args.join(' ').slice(0, 80)}`;
    });
  const rules = c.info.nodes.map((n, k) => `${n.name} ${natRules[k]!.toLocaleString('en-US')}`);
  return `truth check skipped: the restarted kube-proxy did not write its rules within ${RESTART_WAIT_MS / 60_000} min (nat rules to restore: ${rules.join(', ')}); ${running.length > 0 ? `still running:\n  ${running.join('\n  ')}` : 'no iptables-restore is running'}`;
}

/** Where one svc's time went: every API read and node command it made, the slowest first. */
function whereTimeGoes(target: string, stderr: string): void {
  const lines = stderr.split('\n').filter((l) => l.includes('timing: '));
  if (lines.length === 0) return void console.log(`kdebug svc said: ${stderr.slice(-2000)}`);
  const took = (l: string) => Number(/timing: (\d+) ms/.exec(l)?.[1] ?? 0);
  const reads = lines.filter((l) => !/timing: (phase|sizes) /.test(l));
  const onNode = (l: string) => /ms\) node [^:]+: /.test(l);
  const slowest = (xs: string[], n: number) =>
    [...xs]
      .sort((a, b) => took(b) - took(a))
      .slice(0, n)
      .join('\n  ');
  console.log(
    `kdebug svc ${target}: ${reads.filter((l) => !onNode(l)).length} API reads, ${reads.filter(onNode).length} node commands; the slowest:\n  ${slowest(lines, 15)}\n  the slowest API reads:\n  ${slowest(
      reads.filter((l) => !onNode(l)),
      6,
    )}\n  phases: ${lines.filter((l) => l.includes('timing: phase')).join('; ')}\n  ${lines.find((l) => l.includes('timing: sizes')) ?? 'no sizes told'}`,
  );
}

/** Waits for Ctrl-C with the cluster up, having said how to run kdebug on it. */
async function hold(c: ClusterClient, target: string): Promise<void> {
  console.log(
    `held: ip netns exec ${c.info.clientNetns} node bin/kdebug.js svc ${target} -n ${NS} --kubeconfig=${c.info.kubeconfig}; Ctrl-C (or kill -INT ${process.pid}) tears it down`,
  );
  // a signal listener alone keeps no process alive: the timer does, until the signal
  const alive = setInterval(() => undefined, 1 << 30);
  await new Promise<void>((done) => process.once('SIGINT', done).once('SIGTERM', done));
  clearInterval(alive);
}

await main();
