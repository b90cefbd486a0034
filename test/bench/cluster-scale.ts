// `npm run bench:cluster` (root, Go): the lab cluster with 10,000 Services × 5 endpoints created
// in bulk through the API (selector-less Services with their own EndpointSlices: no 50,000 Pods)
// and 5,000 Nodes (the lab's two real ones, the rest in the API only, each given its kube-proxy
// Pod by the DaemonSet controller; those Pods never start), then `kdebug svc` on one Service timed
// with the nodes it read and its peak memory while the DaemonSet rolls out and again once it has
// settled (the bench writes the status a kubelet would), the same with --all-nodes, and the truth
// check at that size. A bench, not a test. `-- --services N --nodes N` for other sizes, `-- --svc-only`
// for the svc timings without the truth check, `-- --profile DIR` for one run's CPU profile,
// `-- --hold` to keep the cluster up for runs by hand until interrupted.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterClient } from '../support/cluster/client.js';
import { DIR, down, up } from '../support/cluster/cluster.js';
import { differences, roundTrip, scratchNamespace } from '../support/cluster/truth.js';

const arg = (flag: string) =>
  process.argv.includes(flag) ? Number(process.argv[process.argv.indexOf(flag) + 1]) : undefined;
const SERVICES = arg('--services') ?? 10_000;
/** Nodes in all, the two real ones included. */
const NODES = arg('--nodes') ?? 5000;
const ENDPOINTS = 5;
const NS = 'scale';

function objects(nodes: { name: string; podCIDR: string }[]): string {
  const docs = [`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${NS}}\n`];
  for (let i = 0; i < SERVICES; i++) {
    const name = `svc-${String(i).padStart(4, '0')}`;
    docs.push(`apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${NS}}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
`);
    const eps = Array.from({ length: ENDPOINTS }, (_, k) => {
      const node = nodes[(i + k) % nodes.length]!;
      const base = node.podCIDR.split('.').slice(0, 3).join('.');
      return `- addresses: [${base}.${10 + ((i * ENDPOINTS + k) % 240)}]\n  conditions: {ready: true, serving: true, terminating: false}\n  nodeName: ${node.name}`;
    });
    docs.push(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ${name}-1
  namespace: ${NS}
  labels: {kubernetes.io/service-name: ${name}, endpointslice.kubernetes.io/managed-by: kdebug-bench}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
${eps.join('\n')}
`);
  }
  return docs.join('---\n');
}

/** Nodes that exist in the API only (TEST-NET addresses; no kubelet ever reports). */
function simulatedNodes(n: number): string {
  return Array.from({ length: n }, (_, i) => {
    const name = `sim-${String(i).padStart(4, '0')}`;
    return `apiVersion: v1
kind: Node
metadata:
  name: ${name}
  labels: {kubernetes.io/hostname: ${name}, kubernetes.io/os: linux, kdebug.bench/simulated: "true"}
spec: {podCIDR: 10.${128 + (i >> 8)}.${i & 255}.0/24}
`;
  }).join('---\n');
}

const now = () => new Date().toISOString();
const ready = (types: string[]) =>
  `[${types.map((type) => `{type: ${type}, status: "True", lastTransitionTime: "${now()}"}`).join(', ')}]`;

/** What each API-only Node offers: the scheduler binds its kube-proxy Pod only where it fits. */
const CAPACITY = '{cpu: "4", memory: 16Gi, pods: "110"}';

/** The status a kubelet would write on each API-only Node: Ready, with room for Pods (no
 * address: kdebug's exec there fails, as on a lost node). */
function nodesReady(c: ClusterClient, n: number): void {
  const docs = Array.from(
    { length: n },
    (_, i) =>
      `apiVersion: v1\nkind: Node\nmetadata: {name: sim-${String(i).padStart(4, '0')}}\nstatus:\n  conditions: [{type: Ready, status: "True", reason: KubeletReady, lastHeartbeatTime: "${now()}", lastTransitionTime: "${now()}"}]\n  capacity: ${CAPACITY}\n  allocatable: ${CAPACITY}\n`,
  );
  c.kubectl(['apply', '--server-side', '--subresource=status', '-f', '-'], {
    input: docs.join('---\n'),
    timeoutMs: 3_600_000,
  });
}

/** The status a kubelet would write on the kube-proxy Pod of each API-only Node not ready yet
 * (the DaemonSet may still be creating some): running, ready. */
function proxyPodsReady(c: ClusterClient): void {
  const pods = c
    .kubectl([
      ...['get', 'pods', '-n', 'kube-system', '-l', 'k8s-app=kube-proxy', '-o'],
      'jsonpath={range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase}{"\\n"}{end}',
    ])
    .split('\n')
    .map((l) => l.split(' '))
    .filter(([, node, phase]) => node?.startsWith('sim-') && phase !== 'Running');
  if (pods.length === 0) return;
  const docs = pods.map(
    ([name]) =>
      `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: kube-system}\nstatus:\n  phase: Running\n  conditions: ${ready(['Ready', 'ContainersReady'])}\n`,
  );
  c.kubectl(['apply', '--server-side', '--subresource=status', '-f', '-'], {
    input: docs.join('---\n'),
    timeoutMs: 3_600_000,
  });
}

/** The kube-proxy DaemonSet's status: every desired Pod updated, ready and available. */
function proxySettled(c: ClusterClient): boolean {
  const [desired, updated, ready, available] = c
    .kubectl([
      ...['get', 'daemonset', '-n', 'kube-system', 'kube-proxy', '-o'],
      'jsonpath={.status.desiredNumberScheduled} {.status.updatedNumberScheduled} {.status.numberReady} {.status.numberAvailable}',
    ])
    .split(' ')
    .map(Number);
  return desired! > 0 && [updated, ready, available].every((n) => n === desired);
}

/** A run that told no timing: its stderr says why. */
const lines0 = (stderr: string) => !stderr.includes('timing: ');
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  // API-only Nodes never heartbeat: the one status the bench writes must hold for its whole run
  const c = new ClusterClient(await up({ nodes: 2, heartbeatGrace: '2h' }));
  try {
    let t = process.hrtime.bigint();
    // tens of thousands of objects: kubectl applies them one by one
    c.kubectl(['apply', '--server-side', '-f', '-'], {
      input: objects(c.info.nodes),
      timeoutMs: 3_600_000,
    });
    console.log(`created ${SERVICES} Services × ${ENDPOINTS} endpoints: ${Math.round(ms(t))} ms`);
    const simulated = Math.max(0, NODES - c.info.nodes.length);
    t = process.hrtime.bigint();
    c.kubectl(['apply', '--server-side', '-f', '-'], {
      input: simulatedNodes(simulated),
      timeoutMs: 3_600_000,
    });
    nodesReady(c, simulated);
    console.log(`created ${simulated} Nodes in the API only, Ready: ${Math.round(ms(t))} ms`);
    t = process.hrtime.bigint();
    const proxyPods = () =>
      c
        .kubectl(['get', 'pods', '-n', 'kube-system', '-l', 'k8s-app=kube-proxy', '--no-headers'])
        .split('\n')
        .filter(Boolean).length;
    await c
      .until(
        'the DaemonSet to give every Node its kube-proxy Pod',
        () => proxyPods() >= NODES,
        900_000,
      )
      .catch(() => undefined);
    console.log(`kube-proxy Pods: ${proxyPods()} for ${NODES} Nodes: ${Math.round(ms(t))} ms`);
    t = process.hrtime.bigint();
    await c.until(
      'kube-proxy to write every Service',
      () =>
        c.info.nodes.every(
          (n) =>
            (c.onNode(n.name, ['iptables-save', '-t', 'nat']).stdout.match(/^:KUBE-SVC-/gm) ?? [])
              .length >= SERVICES,
        ),
      600_000,
    );
    console.log(`kube-proxy synced on every node: ${Math.round(ms(t))} ms`);
    const target = `svc-${String(Math.floor(SERVICES / 2)).padStart(4, '0')}`;
    // `-- --profile DIR`: only the timed run below, with a CPU profile of kdebug written to DIR
    const profile = process.argv.includes('--profile')
      ? process.argv[process.argv.indexOf('--profile') + 1]
      : undefined;
    // a DaemonSet still rolling out: kdebug lists every kube-proxy Pod to see which nodes run one
    if (!profile) timeSvc(c, target, 'the kube-proxy DaemonSet rolling out');
    t = process.hrtime.bigint();
    await c.until(
      'the kube-proxy DaemonSet to settle',
      () => (proxyPodsReady(c), proxySettled(c)),
      600_000,
    );
    console.log(`kube-proxy DaemonSet settled (status written): ${Math.round(ms(t))} ms`);
    if (process.argv.includes('--hold')) return await hold(c, target);
    if (!profile) timeSvc(c, target, 'the kube-proxy DaemonSet settled', [[], ['--all-nodes']]);
    // where one svc's time goes: every API read and node command it made, the slowest first
    process.env['KDEBUG_TIMINGS'] = '1';

    const timed = c.kdebugMeasured(
      ['svc', target, '-n', NS, '--via', 'kube-proxy', '-o', 'json'],
      profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [],
    );
    if (lines0(timed.stderr)) console.log(`kdebug svc said: ${timed.stderr.slice(-2000)}`);
    delete process.env['KDEBUG_TIMINGS'];
    const lines = timed.stderr.split('\n').filter((l) => l.includes('timing: '));
    const took = (l: string) => Number(/timing: (\d+) ms/.exec(l)?.[1] ?? 0);
    const reads = lines.filter((l) => !/timing: (phase|sizes) /.test(l));
    const onNodes = reads.filter((l) => /ms\) node [^:]+: /.test(l)).length;
    console.log(
      `kdebug svc ${target}: ${reads.length - onNodes} API reads, ${onNodes} node commands; the slowest:\n  ${[
        ...lines,
      ]
        .sort((a, b) => took(b) - took(a))
        .slice(0, 15)
        .join('\n  ')}\n  the slowest API reads:\n  ${reads
        .filter((l) => !/ms\) node [^:]+: /.test(l))
        .sort((a, b) => took(b) - took(a))
        .slice(0, 6)
        .join(
          '\n  ',
        )}\n  phases: ${lines.filter((l) => l.includes('timing: phase')).join('; ')}\n  ${lines.find((l) => l.includes('timing: sizes')) ?? 'no sizes told'}`,
    );
    // `-- --svc-only`: the timings alone (kube-proxy's restart at this size takes many minutes)
    if (process.argv.includes('--svc-only')) return;
    // kube-proxy rewrites only changed Services between full syncs, and a large cluster gets
    // none until syncPeriod: chains written while it was small keep their comments. A restart
    // writes everything once, in large-cluster mode, as kdebug expect computes it.
    const started = Date.now();
    for (const n of c.info.nodes)
      spawnSync('pkill', ['-f', '--', `--config=${join(DIR, 'nodes', n.name, 'kube-proxy.conf')}`]);
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
      900_000,
    );
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
        `${n.name}: kdebug expect ${Math.round(took)} ms; differences from the real kube-proxy: ${d.length}${d.length ? `\n  ${d.slice(0, 10).join('\n  ')}` : ''}`,
      );
    }
    t = process.hrtime.bigint();
    const drift = c.kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
    console.log(`drift --all-nodes on the snapshot: exit ${drift.code}, ${Math.round(ms(t))} ms`);
    rmSync(dir, { recursive: true, force: true });
  } finally {
    down();
  }
}

/** kdebug's stderr line for one node read (a few nodes are said one line each). */
const READ_LINE = /^kdebug: [^\s:]+: (?!not reached).* via /;

/** `kdebug svc` on one Service, three times (once with --all-nodes), its median time, nodes read
 * and peak memory. */
function timeSvc(c: ClusterClient, target: string, when: string, runs = [[]] as string[][]): void {
  for (const more of runs) {
    const took: number[] = [];
    let said = '';
    for (let i = 0; i < (more.length ? 1 : 3); i++) {
      const t = process.hrtime.bigint();
      const r = c.kdebugMeasured([
        'svc',
        target,
        '-n',
        NS,
        '--via',
        'kube-proxy',
        '-o',
        'json',
        ...more,
      ]);
      took.push(ms(t));
      const doc = JSON.parse(r.stdout || '{}') as {
        steps?: { id: string; findings: { id: string; title: string }[] }[];
      };
      const rules = doc.steps?.find((s) => s.id === 'rules')?.findings ?? [];
      const unread =
        rules.find((f) => f.id === 'rules-nodes-not-read')?.title ?? 'every node chosen';
      // many nodes: one line counts them; a few: one line each, "NODE: … via …" when read
      const read =
        /^(?:kdebug: )?(\d+) nodes? read/m.exec(r.stderr)?.[1] ??
        String(r.stderr.split('\n').filter((l) => READ_LINE.test(l)).length);
      said = `exit ${r.code}; nodes read: ${read}; ${unread}; debug Pods created: 0 (--via kube-proxy); peak memory ${Math.round(r.maxRssKiB / 1024)} MiB`;
    }
    console.log(
      `kdebug svc ${target} ${more.join(' ')} (live, --via kube-proxy) on ${NODES} nodes and ${SERVICES} Services, ${when}: median ${Math.round(median(took))} ms of ${took.map(Math.round).join(', ')}; ${said}`,
    );
  }
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
