// Each fault made for real on the lab cluster (through the API, on a node, or by stopping
// kube-proxy), and kdebug's answer: its finding id at the right step, and no other step failing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { ClusterClient, VIA_POD, type Run, type SvcJson } from '../support/cluster/client.js';
import { clusterUnavailable, DIR, down, ROOT, up } from '../support/cluster/cluster.js';
import { API_IP } from '../support/cluster/topology.js';
import { FAULT_OBJECTS, FAULTS_NAMESPACE } from '../support/cluster/faults.js';
import { skipWithout } from '../support/skip.js';

describe(
  'faults made on the lab cluster',
  skipWithout(goUnavailable() ?? clusterUnavailable() ?? ''),
  () => {
    let c: ClusterClient;
    before(async () => {
      c = new ClusterClient(await up({ prefix: 'kdc', nodes: 2 }));
      c.kubectl(['apply', '-f', '-'], { input: FAULT_OBJECTS });
      // web, scaled: 2 Pods each; unready: 1 Pod that never gets ready; solo: 1
      await c.until('the Pods to run, ready where they can be', () => {
        const ready = c.readiness(FAULTS_NAMESPACE);
        return ready.filter((r) => r === 'True').length === 5 && ready.includes('False');
      });
      await synced(['web', 'scaled', 'solo']);
    });
    after(() => down());

    /** Waits until every node's rules send traffic to each ready Pod of these apps. */
    const synced = (apps: string[]) =>
      c.until('kube-proxy to write the endpoints', () =>
        c.dnatEverywhere(c.podIPs(FAULTS_NAMESPACE, `app in (${apps.join(',')})`)),
      );

    const svc = (
      name: string,
      extra: string[] = ['--via', 'kube-proxy'],
      limited = false,
    ): { r: Run; doc: SvcJson } => {
      const r = c.kdebug(['svc', name, '-n', FAULTS_NAMESPACE, '-o', 'json', ...extra], {
        limited,
      });
      assert.ok(r.code === 0 || r.code === 1, `exit ${r.code}: ${r.stderr}`);
      return { r, doc: JSON.parse(r.stdout) as SvcJson };
    };

    /** A Service without a selector and its EndpointSlice written by hand, naming no Pod. */
    const handMade = (name: string, addresses: string[]) =>
      c.kubectl(['apply', '-f', '-'], {
        input: `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${FAULTS_NAMESPACE}}
spec: {ports: [{name: http, port: 80, targetPort: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${name}-1, namespace: ${FAULTS_NAMESPACE}, labels: {kubernetes.io/service-name: ${name}}}
addressType: IPv4
ports: [{name: http, port: 80, protocol: TCP}]
endpoints: [${addresses.map((ip) => `{addresses: [${ip}], conditions: {ready: true}}`).join(', ')}]
`,
      });

    /** Waits until the kube-proxy Pod of `node` is not ready (its process stopped by the lab). */
    const kubeProxyStopped = (node: string) =>
      c.until(`kube-proxy on ${node} to stop`, () =>
        /False/.test(
          c.kubectl([
            ...['-n', 'kube-system', 'get', 'pods', '--field-selector', `spec.nodeName=${node}`],
            ...['-l', 'k8s-app=kube-proxy', '-o'],
            'jsonpath={.items[0].status.conditions[?(@.type=="Ready")].status}',
          ]),
        ),
      );

    /** `id` is reported at `step` with `status`; no step fails but `failing` (root cause first). */
    function finds(
      doc: SvcJson,
      step: string,
      id: string,
      status: string,
      failing: string[] = [step],
      node?: string,
    ) {
      const s = doc.steps.find((x) => x.id === step)!;
      const all = doc.steps
        .map(
          (x) =>
            `${x.id}:${x.status} [${x.findings.map((f) => `${f.id}:${f.status}${f.node ? `@${f.node}` : ''}`).join(' ')}]`,
        )
        .join('\n');
      assert.ok(
        s.findings.some(
          (f) => f.id === id && f.status === status && (node === undefined || f.node === node),
        ),
        `${id}:${status} not at ${step}:\n${all}`,
      );
      const failed = doc.steps.filter((x) => x.status === 'fail').map((x) => x.id);
      assert.ok(
        failed.every((f) => failing.includes(f)),
        `only ${failing.join(', ') || 'no step'} may fail:\n${all}`,
      );
    }

    it('a selector typo: selector-matches-no-pods at Selector', () => {
      finds(svc('typo').doc, 'selector', 'selector-matches-no-pods', 'fail');
    });

    it('a wrong targetPort: target-port-not-exposed at Ports', () => {
      finds(svc('wrong-port').doc, 'ports', 'target-port-not-exposed', 'fail');
    });

    it('a Pod failing its readiness check: endpoint-not-ready at Endpoints', () => {
      finds(svc('unready').doc, 'endpoints', 'endpoint-not-ready', 'fail');
    });

    it('externalTrafficPolicy Local without a local endpoint: no-local-endpoint at Traffic policy', () => {
      finds(svc('local').doc, 'traffic-policy', 'no-local-endpoint', 'fail');
    });

    it("a hand-made slice: the address no Pod has is said so (looked up by address on the real API server), a Pod's address is not", () => {
      const [soloIP] = c.podIPs(FAULTS_NAMESPACE, 'app=solo');
      assert.ok(soloIP, 'the solo Pod has an address');
      // 10.244.1.250: on node-a's Pod bridge, and no Pod's
      handMade('outside', ['10.244.1.250', soloIP]);
      // through debug Pods: the nodes probe each endpoint
      const { doc } = svc('outside', VIA_POD);
      const f = doc.steps
        .find((x) => x.id === 'endpoints')!
        .findings.find((x) => x.id === 'endpoint-not-a-pod');
      assert.ok(f, JSON.stringify(doc.steps.find((x) => x.id === 'endpoints')));
      assert.equal(f.title, "10.244.1.250 is no Pod's address");
      const reach = doc.steps
        .find((x) => x.id === 'reachability')!
        .findings.filter((x) => x.id === 'endpoint-unreachable');
      assert.ok(
        reach.every((x) => !x.title.includes(soloIP)),
        JSON.stringify(reach),
      );
      assert.ok(
        reach.some((x) => /^No Pod and no node has 10\.244\.1\.250/.test(x.explanation)),
        JSON.stringify(reach),
      );
    });

    it('a debug Pod deleted by someone else while kdebug uses it: a complete report marked partial, the loss named, no Pod left', async () => {
      // a Service whose only endpoint nobody on the node subnet has: each probe waits out its
      // 3 s (ARP), so the debug Pods are in use long enough to be deleted under kdebug
      handMade('away', ['192.0.2.99']);
      const running = c.kdebugAsync([
        'svc',
        'away',
        '-n',
        FAULTS_NAMESPACE,
        '-o',
        'json',
        ...VIA_POD,
      ]);
      const podOn = (node: string) =>
        c
          .kubectl([
            '-n',
            'default',
            'get',
            'pods',
            '-l',
            'app.kubernetes.io/managed-by=kdebug',
            '-o',
            `jsonpath={range .items[?(@.spec.nodeName=="${node}")]}{.metadata.name} {.status.phase}{"\\n"}{end}`,
          ])
          .split('\n')
          .find((l) => l.endsWith(' Running'))
          ?.split(' ')[0];
      let victim: string | undefined;
      await c.until(
        'the debug Pod on node-b to run',
        () => (victim = podOn('node-b')) !== undefined,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 2000)); // in its probes now
      c.kubectl([
        '-n',
        'default',
        'delete',
        'pod',
        victim!,
        '--grace-period=0',
        '--force',
        '--wait=false',
      ]);
      const r = await running;
      assert.ok(r.code === 1 || r.code === 2, `exit ${r.code}: ${r.stderr}`);
      const doc = JSON.parse(r.stdout) as SvcJson & {
        partial: boolean;
        notRead: { what: string; why: string }[];
      };
      assert.equal(doc.steps.length, 10);
      assert.equal(doc.partial, true, r.stderr);
      assert.ok(
        doc.notRead.some(
          (n) =>
            n.what.endsWith('on node node-b') &&
            /was deleted by someone else while kdebug used it/.test(n.why),
        ),
        JSON.stringify(doc.notRead),
      );
      assert.ok(!doc.notRead.some((n) => n.what.endsWith('on node node-a')), 'node-a lost nothing');
      await c.until(
        'no debug Pod left',
        () => !/kdebug-/.test(c.kubectl(['-n', 'default', 'get', 'pods', '-o', 'name'])),
      );
    });

    it('the real API server goes away after the first read: a complete report marked partial, what was lost and why, exit 2 or 1', async () => {
      // kdebug reaches the API server through a relay that lets its first connection through
      // (the Service read) and resets every later one
      const relay = spawn(
        'ip',
        [
          'netns',
          'exec',
          c.info.clientNetns,
          process.execPath,
          '--import',
          'tsx',
          join(ROOT, 'test/support/cluster/api-cut.ts'),
          '16443',
          API_IP,
          '6443',
          '1',
        ],
        { cwd: ROOT },
      );
      try {
        await new Promise<void>((ready, failed) => {
          relay.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && ready());
          relay.on('exit', (code) => failed(new Error(`relay exited ${code}`)));
        });
        const config = JSON.parse(
          c.kubectl(['config', 'view', '--raw', '--minify', '-o', 'json']),
        ) as {
          clusters: { cluster: { server: string } }[];
        };
        for (const cl of config.clusters) cl.cluster.server = 'https://127.0.0.1:16443';
        const dir = mkdtempSync(join(tmpdir(), 'kdc-cut-'));
        const kubeconfig = join(dir, 'kubeconfig');
        writeFileSync(kubeconfig, JSON.stringify(config));
        try {
          const r = c.kdebug(
            ['svc', 'web', '-n', FAULTS_NAMESPACE, '-o', 'json', '--via', 'kube-proxy'],
            { kubeconfig },
          );
          assert.ok(r.code === 1 || r.code === 2, `exit ${r.code}: ${r.stderr}`);
          const doc = JSON.parse(r.stdout) as SvcJson & {
            partial: boolean;
            notRead: { what: string; why: string }[];
          };
          assert.equal(doc.steps.length, 10);
          assert.equal(doc.steps[0]!.findings[0]!.id, 'service-found');
          assert.equal(doc.partial, true);
          assert.ok(doc.notRead.length > 0);
          for (const n of doc.notRead)
            assert.match(
              n.why,
              /cannot reach the API server|reset|closed|socket hang up/,
              `${n.what}: ${n.why}`,
            );
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      } finally {
        relay.kill();
      }
    });

    it('a Pod reaching its own Service is masqueraded: hairpin-masquerade-present at Hairpin', () => {
      const { doc } = svc('web');
      const hairpin = doc.steps.find((s) => s.id === 'hairpin')!;
      assert.equal(hairpin.status, 'pass');
      assert.ok(hairpin.findings.some((f) => f.id === 'hairpin-masquerade-present'));
    });

    it('the limited user: refused reads are not observed (RBAC said so), never an outage', () => {
      const { r, doc } = svc('web', ['--via', 'kube-proxy'], true);
      assert.match(
        r.stderr,
        /access denied by RBAC: user "kdebug-limited" cannot get or create pods\/exec in namespace kube-system/,
      );
      const ids = (step: string) =>
        doc.steps.find((s) => s.id === step)!.findings.map((f) => `${f.id}:${f.status}`);
      assert.ok(
        ids('endpoints').includes('endpoints-not-observed:skip'),
        ids('endpoints').join(' '),
      );
      assert.ok(ids('dns').includes('coredns-not-observed:skip'), ids('dns').join(' '));
      assert.match(
        doc.steps.find((s) => s.id === 'endpoints')!.findings[0]!.explanation,
        /access denied by RBAC: user "kdebug-limited" cannot list endpointslices/,
      );
      assert.deepEqual(
        doc.steps.filter((s) => s.status === 'fail').map((s) => s.id),
        [],
      );
    });

    it('a namespace that enforces Pod Security restricted: the debug Pod is refused up front, with the fix', () => {
      const { r, doc } = svc('web', ['--via', 'pod', '--yes', '--debug-namespace', 'locked']);
      assert.match(r.stderr, /namespace locked enforces Pod Security "restricted"/);
      assert.match(
        r.stderr,
        /kubectl label namespace locked pod-security\.kubernetes\.io\/enforce=privileged/,
      );
      finds(doc, 'rules', 'rules-not-read', 'warn', []);
      // refused before creating anything
      assert.equal(c.kubectl(['-n', 'locked', 'get', 'pods', '-o', 'name']).trim(), '');
    });

    it('a rule deleted by hand on one node: endpoint-missing at Rules, on that node only', () => {
      const nat = c.onNode('node-a', ['iptables-save', '-t', 'nat']).stdout.split('\n');
      const jump = nat.find(
        (l) => l.startsWith('-A KUBE-SVC-') && l.includes(`"${FAULTS_NAMESPACE}/web:http -> `),
      );
      assert.ok(jump, 'no KUBE-SVC jump for web on node-a');
      const del = c.deleteRule('node-a', jump);
      assert.equal(del.code, 0, del.stderr);
      const { doc } = svc('web');
      finds(doc, 'rules', 'endpoint-missing', 'warn', [], 'node-a');
      const rules = doc.steps.find((s) => s.id === 'rules')!;
      assert.ok(!rules.findings.some((f) => f.status === 'warn' && f.node === 'node-b'));
    });

    it("kube-proxy stopped on one node, then CoreDNS moved: node-b's UDP conntrack entries still go to the old Pod, found with the command that clears them", async () => {
      const stop = join(DIR, 'nodes', 'node-b', 'kube-proxy.stopped');
      writeFileSync(stop, '');
      const dns = () => c.podIPs('kube-system', 'k8s-app=kube-dns');
      const lookup = () =>
        c.onNode('node-b', [
          'dig',
          '+short',
          '+time=1',
          '+tries=1',
          '@10.96.0.10',
          'kubernetes.default.svc.cluster.local',
        ]);
      try {
        await kubeProxyStopped('node-b');
        const old = dns();
        // a lookup from node-b: the kernel tracks it, DNATed to a CoreDNS Pod
        assert.equal(lookup().stdout.trim(), '10.96.0.1');
        const tracked = c.onNode('node-b', ['conntrack', '-L', '-p', 'udp', '-d', '10.96.0.10']);
        assert.ok(
          old.some((ip) => tracked.stdout.includes(`src=${ip} `)),
          `${old.join(', ')} in ${tracked.stdout}${tracked.stderr}`,
        );
        // CoreDNS moves: its Pods are replaced by ones with other addresses
        c.kubectl(['-n', 'kube-system', 'delete', 'pod', '-l', 'k8s-app=kube-dns', '--wait=false']);
        await c.until(
          'CoreDNS ready again, elsewhere',
          () =>
            c.readiness('kube-system', 'k8s-app=kube-dns').every((r) => r === 'True') &&
            dns().length === old.length &&
            dns().every((ip) => !old.includes(ip)),
          60_000,
        );
        // node-b's kube-proxy, stopped, neither rewrote its rules nor cleared its entries: a new
        // lookup there goes to the old Pod too
        lookup();
        const { doc } = svc('kube-dns', ['-n', 'kube-system', ...VIA_POD]);
        const reach = doc.steps.find((s) => s.id === 'reachability')!;
        const stale = reach.findings.filter(
          (f) => f.id === 'conntrack-stale-entries' && f.node === 'node-b',
        );
        assert.ok(
          stale.some((f) => old.some((ip) => f.title.includes(`still go to ${ip},`))),
          JSON.stringify(reach.findings.map((f) => `${f.id}:${f.status}@${f.node} ${f.title}`)),
        );
        assert.equal(stale[0]!.status, 'fail');
        // the command, whole, with the way onto node-b and the kubeconfig this run used
        assert.match(
          String(stale[0]!.next),
          /^kubectl --kubeconfig \S+admin\.kubeconfig debug node\/node-b -it --image=\S+ --profile=sysadmin -- conntrack -D -p udp --orig-dst 10\.96\.0\.10 --reply-src 10\.244\.\d+\.\d+$/,
        );
        // node-a's kube-proxy cleared its own
        assert.ok(
          !reach.findings.some((f) => f.id === 'conntrack-stale-entries' && f.node === 'node-a'),
        );
      } finally {
        rmSync(stop, { force: true });
        // the next fault starts from a node-b that sends DNS to the CoreDNS Pods there are now
        await c.until('node-b to write the new CoreDNS Pods', () =>
          c.dnatEverywhere(dns(), ['node-b']),
        );
      }
    });

    it('kube-proxy stopped on one node, then the Deployment scaled: not running there, its rules stale there only', async () => {
      const stop = join(DIR, 'nodes', 'node-b', 'kube-proxy.stopped');
      writeFileSync(stop, '');
      try {
        await kubeProxyStopped('node-b');
        c.kubectl(['-n', FAULTS_NAMESPACE, 'scale', 'deployment', 'scaled', '--replicas=4']);
        await c.until(
          '4 ready Pods',
          () =>
            c.readiness(FAULTS_NAMESPACE, 'app=scaled').filter((r) => r === 'True').length === 4,
        );
        await c.until('node-a to write them', () =>
          c.dnatEverywhere(c.podIPs(FAULTS_NAMESPACE, 'app=scaled'), ['node-a']),
        );
        // the kube-proxy Pod cannot be exec'd into while it is down: read the nodes with debug Pods
        const { doc } = svc('scaled', VIA_POD);
        finds(doc, 'kube-proxy', 'kube-proxy-not-running', 'fail', ['kube-proxy'], 'node-b');
        finds(doc, 'rules', 'endpoint-missing', 'warn', ['kube-proxy'], 'node-b');
        const rules = doc.steps.find((s) => s.id === 'rules')!;
        assert.ok(
          !rules.findings.some((f) => f.status === 'warn' && f.node === 'node-a'),
          'node-a is in sync',
        );
      } finally {
        rmSync(stop, { force: true });
      }
    });
  },
);
