// A large cluster on the lab's real kube-apiserver: the two real nodes and 4,998 Nodes in the
// API only, each with its kube-proxy Pod (three of them unhealthy: a Node not Ready, a kube-proxy
// not ready, one restarted); a Service whose endpoints run on the real nodes. kdebug svc reads
// the nodes that matter for it, says how many it did not read and how to, and its output grows
// with the nodes it read, not with the cluster.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { ClusterClient, type Run, type SvcJson } from '../support/cluster/client.js';
import { clusterUnavailable, down, up } from '../support/cluster/cluster.js';
import { manifest, namespace } from '../support/cluster/objects.js';
import {
  addSimulatedNodes,
  countOf,
  proxyReady,
  proxyRollout,
  simName,
} from '../support/cluster/simulated.js';
import { skipWithout } from '../support/skip.js';

/** Nodes in all, the two real ones included. */
const NODES = 5000;
const NS = 'large';
/** The unhealthy ones: a Node not Ready, a kube-proxy not ready, a kube-proxy restarted. */
const [NOT_READY, PROXY_NOT_READY, RESTARTED] = [100, 200, 300].map(simName) as [
  string,
  string,
  string,
];
const CLIENT = simName(4242);
const REAL = ['node-a', 'node-b'];

/** Two replicas, one on each real node (the scheduler would place them anywhere once the
 * API-only Nodes exist: they are placed before). */
const WEB = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${NS}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [${REAL.join(', ')}]}]
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}
      containers:
      - name: app
        image: nginx:1.27
        ports: [{name: http, containerPort: 80}]
        readinessProbe: {httpGet: {path: /, port: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${NS}}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
`;

const seconds = (t: number) => `${((performance.now() - t) / 1000).toFixed(1)} s`;

/** The nodes a run read, and why, as the Rules step's rules-nodes-not-read finding says them
 * ("read node-a: holds endpoints"); its title; what it says of the rest. */
function choice(doc: SvcJson) {
  const rules = doc.steps.find((s) => s.id === 'rules')!.findings;
  const f = rules.find((x) => x.id === 'rules-nodes-not-read');
  assert.ok(f, `no rules-nodes-not-read: ${rules.map((x) => x.id).join(', ')}`);
  const why = new Map<string, string>();
  for (const e of f.evidence) {
    const m = /^read (\S+): (.*)$/.exec(e.text);
    if (m) why.set(m[1]!, m[2]!);
  }
  const rest = f.evidence.filter((e) => e.text.startsWith('not read: ')).map((e) => e.text);
  return { finding: f, why, rest };
}

/** Every node a finding names: its node, its nodes, its evidence's, and those in its words. */
function named(f: SvcJson['steps'][number]['findings'][number]): Set<string> {
  const out = new Set([...(f.node ? [f.node] : []), ...(f.nodes ?? [])]);
  for (const e of f.evidence) if (e.node) out.add(e.node);
  for (const m of JSON.stringify(f).matchAll(/\b(?:node-[abc]|sim-\d{4})\b/g)) out.add(m[0]);
  return out;
}

const findings = (doc: SvcJson) => doc.steps.flatMap((s) => s.findings.map((f) => ({ s, f })));

/** kdebug's node lines on stderr: each node read or not reached, or their counts. */
const nodeLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) =>
      /^kdebug: (?:\d+ nodes? (?:read|not reached)|(?:node-[ab]|sim-\d{4}): )/.test(l),
    );

describe(
  'a large cluster in the lab: 5,000 Nodes on the real kube-apiserver',
  skipWithout(goUnavailable() ?? clusterUnavailable() ?? ''),
  () => {
    let c: ClusterClient;
    before(async () => {
      let t = performance.now();
      // API-only Nodes never heartbeat: the status written for them must hold for the suite
      c = new ClusterClient(await up({ prefix: 'kdc', nodes: 2, heartbeatGrace: '2h' }));
      console.log(`large: cluster up in ${seconds(t)}`);
      c.kubectl(['apply', '-f', '-'], { input: manifest(namespace(NS), WEB) });
      await c.until('the web Pods to be ready', () => c.readiness(NS).join() === 'True,True');
      t = performance.now();
      await addSimulatedNodes(c, {
        count: NODES - REAL.length,
        notReady: [NOT_READY],
        proxyNotReady: [PROXY_NOT_READY],
        proxyRestarted: [RESTARTED],
      });
      console.log(`large: ${NODES - REAL.length} Nodes and kube-proxy Pods in ${seconds(t)}`);
      t = performance.now();
      // its status, written by the DaemonSet controller, counts the Pods the suite made
      await c.until(
        'the kube-proxy DaemonSet to count every Node',
        () => {
          const r = proxyRollout(c);
          return r.desired === NODES && r.updated === NODES && r.ready === NODES - 1;
        },
        120_000,
      );
      console.log(`large: the DaemonSet counted them in ${seconds(t)}`);
      await c.until('kube-proxy to write the endpoints', () => c.dnatEverywhere(c.podIPs(NS)));
    });
    after(() => down());

    /** kdebug svc web, timed; KDEBUG_TIMINGS=1 tells the API objects it kept. */
    const svc = (args: string[]): Run & { apiObjects: number } => {
      const t = performance.now();
      process.env['KDEBUG_TIMINGS'] = '1';
      const r = c.kdebug(['svc', 'web', '-n', NS, '--via', 'kube-proxy', ...args]);
      delete process.env['KDEBUG_TIMINGS'];
      console.log(`large: kdebug svc web ${args.join(' ')}: exit ${r.code} in ${seconds(t)}`);
      const sizes = /^kdebug: timing: sizes .*; (\d+) API objects in \d+ bytes from the API$/m.exec(
        r.stderr,
      );
      assert.ok(sizes, r.stderr.slice(-1000));
      return { ...r, apiObjects: Number(sizes[1]) };
    };

    it('has 5,000 Nodes, each with one kube-proxy Pod, the DaemonSet counting all of them', () => {
      assert.equal(countOf(c, '/api/v1/nodes'), NODES);
      // the API server's table of them (not the Pods themselves: MBs): their nodes, one each
      const on = c
        .kubectl(['-n', 'kube-system', 'get', 'pods', '-l', 'k8s-app=kube-proxy', '-o', 'wide'])
        .split('\n')
        .slice(1)
        .filter(Boolean)
        .map((row) =>
          row
            .split(/\s+/)
            .filter((w) => /^(?:node-[a-z]|sim-\d{4})$/.test(w))
            .join(),
        );
      assert.equal(on.length, NODES);
      assert.equal(new Set(on).size, NODES, 'one kube-proxy Pod on each Node');
      assert.deepEqual(proxyRollout(c), {
        desired: NODES,
        current: NODES,
        ready: NODES - 1,
        updated: NODES,
      });
    });

    it('svc --from node/NAME reads the client, the endpoints, the unhealthy and 3 sampled nodes; says the 4,991 others', () => {
      const r = svc(['-o', 'json', '--from', `node/${CLIENT}`]);
      const doc = JSON.parse(r.stdout) as SvcJson;
      const { finding, why, rest } = choice(doc);
      const sampled = [...why].filter(([, w]) => w === 'sampled').map(([n]) => n);
      assert.deepEqual(Object.fromEntries([...why].filter(([, w]) => w !== 'sampled')), {
        [CLIENT]: 'the client',
        'node-a': 'holds endpoints',
        'node-b': 'holds endpoints',
        [NOT_READY]: 'Node not Ready',
        [PROXY_NOT_READY]: `kube-proxy Pod kube-proxy-${PROXY_NOT_READY} not Running and Ready`,
        [RESTARTED]: `kube-proxy Pod kube-proxy-${RESTARTED} restarted`,
      });
      assert.equal(sampled.length, 3, `three others at random: ${sampled.join(', ')}`);
      assert.ok(sampled.every((n) => /^sim-\d{4}$/.test(n)));
      const read = new Set(why.keys());
      assert.equal(read.size, 9);
      // the rest: counted, how to read them, and not one of them judged
      assert.equal(finding.title, '4,991 of 5,000 nodes not read: --all-nodes reads them');
      assert.equal(finding.status, 'skip');
      assert.equal(finding.observed, false);
      assert.match(String(finding.next), /^kdebug svc web -n large --all-nodes /);
      const first = Array.from({ length: NODES - 2 }, (_, i) => simName(i)).filter(
        (n) => !read.has(n),
      );
      assert.deepEqual(rest, [
        `not read: ${first.slice(0, 5).join(', ')} and ${first.length - 5} more`,
      ]);
      for (const { s, f } of findings(doc)) {
        if (f === finding) continue;
        const unread = [...named(f)].filter((n) => !read.has(n));
        assert.deepEqual(unread, [], `${s.id}/${f.id} names nodes it did not read`);
        // a judgement from the nodes' own rules or probes: only the nodes whose were read
        if (f.status === 'pass' && !f.info) {
          const notReached = [...named(f)].filter((n) => !REAL.includes(n));
          assert.deepEqual(notReached, [], `${s.id}/${f.id} passes for nodes it did not reach`);
        }
      }
      // the Service's own rules, read on both real nodes, hold; every node not reached says so
      const rules = doc.steps.find((s) => s.id === 'rules')!.findings;
      const match = rules.find((f) => f.id === 'rules-match');
      assert.equal(match?.status, 'pass');
      assert.match(match!.title, /^2 of 9 nodes: 80\/TCP -> 2 endpoints, as expected$/);
      const notRead = rules.filter((f) => f.id === 'rules-not-read');
      assert.deepEqual(
        [...new Set(notRead.flatMap((f) => [...named(f)]))].sort(),
        [...read].filter((n) => !REAL.includes(n)).sort(),
      );
      assert.ok(notRead.every((f) => f.status === 'warn'));
      // the problems: the kube-proxy that is not ready, and the nodes kdebug could not reach
      const problems = findings(doc)
        .filter(({ f }) => f.status === 'fail' || f.status === 'warn')
        .map(({ s, f }) => `${s.id}/${f.id}`);
      assert.deepEqual(
        [...new Set(problems)],
        ['kube-proxy/kube-proxy-not-running', 'rules/rules-not-read'],
      );
      const down = doc.steps.find((s) => s.id === 'kube-proxy')!.findings[0]!;
      assert.deepEqual([down.id, down.node], ['kube-proxy-not-running', PROXY_NOT_READY]);
      assert.equal(r.code, 1, 'a problem found: exit 1');
      // a DaemonSet not settled: every kube-proxy Pod is listed, to find the unhealthy ones
      assert.ok(r.apiObjects > 2 * NODES, `${r.apiObjects} API objects`);
      assert.doesNotMatch(r.stdout + r.stderr, /undefined/);
      // the nodes said in two lines: how many were read, and which were not reached and why
      const lines = nodeLines(r.stderr);
      assert.equal(lines.length, 2, lines.join('\n'));
      assert.equal(lines[0], 'kdebug: 2 nodes read (2 through the kube-proxy Pod)');
      assert.match(lines[1]!, /^kdebug: 7 nodes not reached: /);
      // the same failure said once for the nodes that share it: each node's Pod and address
      // reduced to what they share, never a node's name cut out of its Pod's
      assert.doesNotMatch(lines[1]!, /kube-proxy-the node/);
      for (const [, pod] of lines[1]!.matchAll(/kube-system\/([^\s:;)]+)/g))
        assert.match(pod!, /^kube-proxy-sim-(?:\d{4}|\d{0,3}…)$/, lines[1]);
      assert.ok(lines[1]!.length < 800, `${lines[1]!.length} characters: ${lines[1]}`);
      const said = new Set(lines[1]!.match(/\bsim-\d{4}\b/g));
      assert.ok(
        [...said].every((n) => read.has(n)),
        `${[...said]}`,
      );
    });

    it('svc as text: the same nodes, no "undefined", no unread node named', () => {
      const r = svc(['--from', `node/${CLIENT}`]);
      assert.equal(r.code, 1);
      assert.doesNotMatch(r.stdout + r.stderr, /undefined/);
      assert.match(
        r.stdout,
        /^ ✗ +6 kube-proxy +kube-proxy on sim-0200 is not running: not ready$/m,
      );
      assert.match(r.stdout, /^ ! +7 Rules +rules not read on \d nodes: sim-\d{4}, /m);
      // the nodes not read, said though the step warns of those it could not reach
      assert.match(
        r.stdout,
        /^ {5}\? 4,991 of 5,000 nodes not read: --all-nodes reads them \(--verbose explains\)$/m,
      );
      const sims = new Set(r.stdout.match(/\bsim-\d{4}\b/g));
      assert.ok(sims.size <= 7, [...sims].join(', '));
      assert.equal(nodeLines(r.stderr).length, 2, r.stderr);
    });

    it('--max-nodes 4: the endpoints, then the unhealthy nodes, no sample; a line per node', () => {
      const r = svc(['-o', 'json', '--max-nodes', '4']);
      const { finding, why } = choice(JSON.parse(r.stdout) as SvcJson);
      assert.deepEqual(Object.fromEntries(why), {
        'node-a': 'holds endpoints',
        'node-b': 'holds endpoints',
        [NOT_READY]: 'Node not Ready',
        [PROXY_NOT_READY]: `kube-proxy Pod kube-proxy-${PROXY_NOT_READY} not Running and Ready`,
      });
      assert.equal(finding.title, '4,996 of 5,000 nodes not read: --all-nodes reads them');
      assert.match(finding.explanation, /reads at most 4 nodes \(--max-nodes\)/);
      assert.equal(r.code, 1);
      // a few nodes: one line each read, and one for those not reached
      const lines = nodeLines(r.stderr);
      assert.deepEqual(
        lines.map((l) => /^kdebug: (\S+): /.exec(l)?.[1]),
        ['node-a', 'node-b', undefined],
      );
      assert.match(lines[2]!, /^kdebug: 2 nodes not reached: /);
      for (const node of [NOT_READY, PROXY_NOT_READY])
        assert.ok(lines[2]!.includes(node), lines[2]);
    });

    it('the DaemonSet settled: its status speaks for the Pods not read; the Node not Ready is still read', async () => {
      proxyReady(c, PROXY_NOT_READY);
      await c.until(
        'the kube-proxy DaemonSet to settle',
        () => proxyRollout(c).ready === NODES,
        60_000,
      );
      const r = svc(['-o', 'json']);
      const doc = JSON.parse(r.stdout) as SvcJson;
      const { finding, why } = choice(doc);
      // a restart is seen on the Pods read only: the Node's condition is in every Node listed
      assert.deepEqual(Object.fromEntries([...why].filter(([, w]) => w !== 'sampled')), {
        'node-a': 'holds endpoints',
        'node-b': 'holds endpoints',
        [NOT_READY]: 'Node not Ready',
      });
      assert.equal([...why.values()].filter((w) => w === 'sampled').length, 3);
      assert.equal(finding.title, '4,994 of 5,000 nodes not read: --all-nodes reads them');
      const proxy = doc.steps.find((s) => s.id === 'kube-proxy')!;
      assert.ok(
        proxy.findings.every((f) => f.status !== 'fail' && f.status !== 'warn'),
        proxy.findings.map((f) => `${f.id}:${f.status} ${f.title}`).join('\n'),
      );
      assert.equal(r.code, 1, 'the API-only nodes it read cannot be reached');
      // the kube-proxy Pods of the chosen nodes only, by node: the Nodes and a few dozen more
      assert.ok(r.apiObjects < NODES + 100, `${r.apiObjects} API objects`);
      assert.doesNotMatch(r.stdout + r.stderr, /undefined/);
      // two nodes read, one line each; the four not reached in one
      assert.equal(nodeLines(r.stderr).length, 3, r.stderr);
    });
  },
);
