// kdebug as a user runs it (the built CLI, a subprocess) against the fake API server, whose
// pods/exec runs in the lab's node namespaces (test/support/lab/lab-exec.ts): every rule and
// probe below is real iptables, real sockets, real ping. Also the debug Pod's life cycle under
// Ctrl-C, SIGTERM and failures, the refusals, `kdebug cleanup`, `snapshot save` with node
// outputs, and SSH from the workstation namespace (`--via ssh`, `drift/trace --ssh`).
// IP conventions: test/support/lab/lab.ts (nodes 192.0.2.11-13, Pods 10.244.0.0/16, Services
// 10.96.0.0/16: nginx-svc 10.96.190.219:8080, kube-dns 10.96.0.10).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/core/model.js';
import { ROOT } from '../support/cli.js';
import { typeOfKind } from '../support/fake-api/resources.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { relayApi, type ApiRelay } from '../support/lab/api-relay.js';
import { labSuite, requireLab } from '../support/lab/harness.js';
import { labExec, type LabExecOptions } from '../support/lab/lab-exec.js';
import { Lab, SERVICES } from '../support/lab/lab.js';
import { labObjects } from '../support/lab/objects.js';
import { expectedLabRules } from '../support/lab/rules.js';
import { checkJsonStdout } from '../support/schema.js';

const PREFIX = 'kdt-live';
const POD = typeOfKind('Pod')!;
const NGINX = SERVICES[0]!;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}
interface Step {
  id: string;
  status: string;
  findings: {
    id: string;
    status: string;
    title: string;
    explanation?: string;
    node?: string;
    evidence: { kind: string; text: string }[];
  }[];
}

/** The built CLI in the host namespace; the fake API server in this process keeps answering. */
function start(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, ['bin/kdebug.js', ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d));
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done };
}

const step = (stdout: string, id: string): Step =>
  (JSON.parse(stdout) as { steps: Step[] }).steps.find((s) => s.id === id)!;
const findingIds = (s: Step) =>
  s.findings.map((f) => `${f.id}:${f.status}${f.node ? ` ${f.node}` : ''}`);

describe('kdebug live against the fake API server and the lab', labSuite(), () => {
  let lab: Lab;
  let fake: FakeApi;
  let kubeconfig: string;
  let home: string;
  const hooks: LabExecOptions = {};
  const debugPods = () =>
    fake.store
      .list(POD)
      .filter((p) => p.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'kdebug')
      .map((p) => p.metadata?.name);
  const kdebug = (...args: string[]) =>
    start([...args, '--kubeconfig', kubeconfig], { HOME: home }).done.then((r) => {
      checkJsonStdout(args, r.stdout); // every JSON it prints against its schema
      return r;
    });

  before(async () => {
    requireLab();
    if (!existsSync(join(ROOT, 'dist/cli.js')))
      spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
    home = mkdtempSync(join(tmpdir(), 'kdebug-live-')); // no ~/.ssh: SSH refuses before connecting
    lab = await Lab.up(PREFIX);
    fake = await startFakeApi({
      objects: labObjects(lab.topology),
      exec: labExec(lab, hooks),
      tokens: { 'admin-token': 'admin', 'dev-token': 'dev' },
      rbac: {
        deny: [{ users: ['dev'], verbs: ['create'], resources: ['pods'], namespaces: ['default'] }],
      },
    });
    kubeconfig = fake.kubeconfig({ namespace: 'default' });
  });
  afterEach(() => {
    delete hooks.unreachable;
    delete hooks.onExec;
  });
  after(async () => {
    await fake?.close();
    await Lab.down(PREFIX);
    rmSync(home, { recursive: true, force: true });
  });

  it("--via kube-proxy: the Rules step from each node's real rules, no Pod created", async () => {
    const r = await kdebug('svc', 'nginx-svc', '--via', 'kube-proxy', '-o', 'json');
    // node-b holds the seed's v1.15-era rules beside a kube-proxy v1.30.2 Pod: said, a warn
    assert.equal(r.code, 1, r.stderr);
    const rules = step(r.stdout, 'rules');
    assert.deepEqual(findingIds(rules), [
      'rules-match:pass',
      'rules-release-disagrees:warn node-b',
    ]);
    assert.equal(rules.findings[0]!.title, '3 nodes: 8080/TCP -> 2 endpoints, as expected');
    const evidence = rules.findings[0]!.evidence.map((e) => e.text).join('\n');
    for (const node of ['node-a', 'node-b', 'node-c'])
      assert.match(evidence, new RegExp(`^${node}:$`, 'm'));
    assert.equal(evidence.match(/DNAT 10\.244\.0\.3:80/g)?.length, 3);
    assert.equal(evidence.match(/DNAT 10\.244\.1\.7:80/g)?.length, 3);
    // node-a and node-b keep kube-proxy's chains in nft: a table this small is read whole there
    for (const node of ['node-a', 'node-b'])
      assert.match(
        evidence,
        new RegExp(
          `nodes/${node}/iptables-nft-save\\.txt:\\d+: -A KUBE-SERVICES -d 10\\.96\\.190\\.219/32`,
        ),
      );
    // node-c keeps them in legacy only: read whole, as the image's wrapper picks that backend
    assert.match(
      evidence,
      /nodes\/node-c\/iptables-save\.txt:\d+: -A KUBE-SERVICES -d 10\.96\.190\.219\/32/,
    );
    assert.deepEqual(findingIds(step(r.stdout, 'kube-proxy')), [
      'kube-proxy-running:pass',
      'proxy-mode:pass',
      'kube-proxy-version:pass',
      'iptables-backend:pass',
    ]);
    assert.equal(step(r.stdout, 'reachability').status, 'skip');
    assert.deepEqual(
      r.stderr
        .split('\n')
        .slice(0, 3)
        .map((l) => l.replace(/ \(.*/, '')),
      [
        'kdebug: node-a: rules via exec kube-system/kube-proxy-x7k2p',
        'kdebug: node-b: rules via exec kube-system/kube-proxy-q4n8d',
        'kdebug: node-c: rules via exec kube-system/kube-proxy-m2v9z',
      ],
    );
    assert.deepEqual(debugPods(), []);
  });

  it("--via pod: Reachability from real probes, ping vs curl; the lab's DNS fault found; Pods deleted", async () => {
    const r = await kdebug('svc', 'nginx-svc', '--via', 'pod', '--yes', '-o', 'text', '-v');
    assert.equal(r.code, 1, r.stderr);
    const reach = r.stdout.slice(
      r.stdout.indexOf(' 8 Reachability'),
      r.stdout.indexOf(' 9 Traffic'),
    );
    assert.match(
      reach,
      /^ 8 Reachability {4}ClusterIP 10\.96\.190\.219:8080 answers from node-a, node-b/,
    );
    assert.match(
      reach,
      /i ping 10\.96\.190\.219 gets no answer, curl 10\.96\.190\.219:8080 connects:/,
    );
    for (const node of ['node-a', 'node-b', 'node-c']) {
      assert.match(
        reach,
        new RegExp(`${node}: ping 10\\.96\\.190\\.219: no reply \\(100% packet loss\\)`),
      );
      assert.match(reach, new RegExp(`${node}: TCP connect 10\\.96\\.190\\.219:8080: connected`));
    }
    // node-b's rules are the seed's: no kube-dns Service there, so its lookup times out
    assert.match(
      r.stdout,
      /^Problem at step 5 \(DNS\): lookup of nginx-svc\.default\.svc\.cluster\.local timed/m,
    );
    assert.match(r.stdout, /from node node-b got no answer/);
    assert.match(
      r.stderr,
      /^kdebug: node-a: rules, addresses, kube-proxy status and probes via debug Pod kdebug\/kdebug-node-a-\w{5}$/m,
    );
    assert.deepEqual(debugPods(), []);
  });

  it('--via auto: kube-proxy for the rules; without --yes no debug Pod, and SSH without a key: said per node', async () => {
    const posts = () =>
      fake.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/pods')).length;
    const before = posts();
    const r = await kdebug('svc', 'nginx-svc', '-o', 'json');
    // a warn: node-b's rules are older than its kube-proxy Pod's release
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      r.stderr.split('\n')[0],
      'kdebug: node-a: rules via exec kube-system/kube-proxy-x7k2p (kube-proxy Pod skipped for addresses, kube-proxy status and probes: its image has no tools for them, kdebug runs only iptables-save there; debug Pod skipped for addresses, kube-proxy status and probes: kdebug creates a privileged debug Pod only with your consent: add --yes; SSH skipped for addresses, kube-proxy status and probes: no SSH key to offer root@192.0.2.11: pass --ssh-key, set IdentityFile in ~/.ssh/config, or start ssh-agent.)',
    );
    assert.equal(posts(), before);
  });

  it('--via auto --yes: kube-proxy for the rules, a debug Pod for the probes', async () => {
    const r = await kdebug('svc', 'nginx-svc', '--yes', '-o', 'json');
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^kdebug: node-c: rules via exec kube-system\/kube-proxy-m2v9z; addresses, kube-proxy status and probes via debug Pod kdebug\/kdebug-node-c-\w{5} \(kube-proxy Pod skipped for addresses, kube-proxy status and probes: its image has no tools for them, kdebug runs only iptables-save there\)$/m,
    );
    assert.equal(step(r.stdout, 'reachability').status, 'pass');
    assert.deepEqual(debugPods(), []);
  });

  it('one unreachable node is marked, the others are read', async () => {
    hooks.unreachable = ['node-c'];
    const r = await kdebug('svc', 'nginx-svc', '--via', 'kube-proxy', '-o', 'json');
    assert.equal(r.code, 1, r.stderr);
    const rules = step(r.stdout, 'rules');
    assert.deepEqual(findingIds(rules), [
      'rules-match:pass',
      'rules-release-disagrees:warn node-b',
      'rules-not-read:warn node-c',
    ]);
    // the node not reached is not among those the pass speaks for
    assert.equal(rules.findings[0]!.title, '2 of 3 nodes: 8080/TCP -> 2 endpoints, as expected');
    assert.match(
      r.stderr,
      /^kdebug: node-c: not reached \(kube-proxy Pod: exec kube-system\/kube-proxy-m2v9z: the API server could not connect to the node's kubelet at 192\.0\.2\.13:10250: no route to host\)$/m,
    );
  });

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)
    it(`${signal} in the middle of a run deletes the debug Pods, then exits ${code}`, async () => {
      // every node's ping never ends: kdebug is mid-run, its Pod on each node kept (a node read to
      // the end has its Pod deleted at once, so only stalled nodes keep theirs)
      const stalled = new Set<string>();
      hooks.onExec = (node, command) => {
        if (!/ping/.test(command[2] ?? '')) return;
        stalled.add(node);
        return new Promise(() => undefined);
      };
      const run = start(
        ['svc', 'nginx-svc', '--via', 'pod', '--yes', '-o', 'text', '--kubeconfig', kubeconfig],
        { HOME: home },
      );
      // up to 30 s: a loaded machine runs the whole suite beside it
      for (let i = 0; i < 600 && (stalled.size < 3 || debugPods().length < 3); i++)
        await new Promise((r) => setTimeout(r, 50));
      const pods = debugPods().length;
      run.child.kill(signal);
      assert.equal(pods, 3);
      const r = await run.done;
      assert.equal(r.code, code, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `^kdebug: ${signal === 'SIGINT' ? 'interrupted' : signal}: deleting the debug Pods kdebug created \\(3\\)$`,
          'm',
        ),
      );
      assert.equal(r.stdout, '');
      assert.deepEqual(debugPods(), []);
    });

  it('a failure in the middle (exec breaks on one node) marks that node; every Pod is deleted', async () => {
    hooks.onExec = (node) => {
      if (node === 'node-b') throw new Error('container "debugger" in pod is not running');
    };
    const r = await kdebug('svc', 'nginx-svc', '--via', 'pod', '--yes', '-o', 'json');
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(findingIds(step(r.stdout, 'rules')), [
      'rules-match:pass',
      'rules-not-read:warn node-b',
    ]);
    assert.match(
      r.stderr,
      /^kdebug: node-b: not reached \(debug Pod kdebug\/kdebug-node-b-\w{5}: container "debugger" in pod is not running\)$/m,
    );
    assert.deepEqual(debugPods(), []);
  });

  it('refuses a debug Pod where Pod Security forbids it, before trying, and says how to fix it', async () => {
    const ns = typeOfKind('Namespace')!;
    const original = fake.store.get(ns, undefined, 'default')!;
    fake.store.put({
      ...original,
      metadata: {
        ...original.metadata,
        labels: { ...original.metadata?.labels, 'pod-security.kubernetes.io/enforce': 'baseline' },
      },
    });
    const posts = () =>
      fake.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/pods')).length;
    const before = posts();
    try {
      const r = await kdebug(
        'svc',
        'nginx-svc',
        '--via',
        'pod',
        '--yes',
        '--debug-namespace',
        'default',
        '-o',
        'json',
      );
      assert.equal(r.code, 1);
      assert.equal(
        r.stderr.split('\n').filter((l) => !/warning|Warning/.test(l))[0],
        'kdebug: 3 nodes not reached: node-a, node-b, node-c (debug Pod: namespace default enforces Pod Security "baseline" (label pod-security.kubernetes.io/enforce=baseline), which refuses a privileged Pod with the node\'s network, PIDs and files. Use --debug-namespace with a namespace labelled pod-security.kubernetes.io/enforce=privileged, or allow it here: kubectl label namespace default pod-security.kubernetes.io/enforce=privileged --overwrite (or use --via kube-proxy or --via ssh))',
      );
      assert.equal(posts(), before);
    } finally {
      fake.store.put(original);
    }
  });

  it('refuses a debug Pod RBAC would refuse, before trying, with the verb and the namespace', async () => {
    const r = await start(
      [
        'svc',
        'nginx-svc',
        '--via',
        'pod',
        '--yes',
        '--debug-namespace',
        'default',
        '-o',
        'json',
        '--kubeconfig',
        fake.kubeconfig({ user: 'dev', namespace: 'default' }),
      ],
      { HOME: home },
    ).done;
    assert.equal(
      r.stderr.split('\n').filter((l) => !/warning|Warning/.test(l))[0],
      'kdebug: 3 nodes not reached: node-a, node-b, node-c (debug Pod: access denied by RBAC: user "dev" cannot create pods in namespace default. A debug Pod needs create, get, patch and delete on pods and get and create on pods/exec there (kdebug rbac --via pod prints the Role): ask for them, pick another namespace with --debug-namespace, or use --via kube-proxy or --via ssh)',
    );
  });

  it('kdebug cleanup removes the debug Pods a killed kdebug left, spares those of a live run, and --all --yes takes them too', async () => {
    const leftover = (
      name: string,
      namespace: string,
      phase = 'Failed',
      annotations = {},
    ): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace,
        labels: { 'app.kubernetes.io/managed-by': 'kdebug' },
        annotations: { 'kdebug.io/run': 'a1b2c3d4e5f60718', ...annotations },
      },
      spec: {
        nodeName: 'node-a',
        containers: [{ name: 'debugger', image: 'x', command: ['sleep', '900'] }],
      },
      status: { phase },
    });
    const now = Date.now();
    fake.store.put(leftover('kdebug-node-a-k2x4z', 'default'));
    fake.store.put(leftover('kdebug-node-c-p9q8r', 'kube-system'));
    fake.store.put(
      leftover('kdebug-node-b-live1', 'default', 'Running', {
        'kdebug.io/owner': 'laptop pid 7 started 2026-12-01T09:00:00.000Z',
        'kdebug.io/lease-renewed': new Date(now - 5000).toISOString(),
        'kdebug.io/lease-seconds': '60',
        'kdebug.io/deadline': new Date(now + 600_000).toISOString(),
      }),
    );
    const pods = fake.store.list(POD).length;
    const r = await kdebug('cleanup');
    assert.deepEqual([r.code, r.stderr], [0, '']);
    assert.equal(
      r.stdout.replace(/renewed it [4-9]s ago/, 'renewed it Ns ago'),
      [
        'deleted Pod default/kdebug-node-a-k2x4z (node node-a, Failed): it ended (Failed)',
        'deleted Pod kube-system/kdebug-node-c-p9q8r (node node-a, Failed): it ended (Failed)',
        'spared Pod default/kdebug-node-b-live1 (node node-a, Running): its run renewed it Ns ago; owner laptop pid 7 started 2026-12-01T09:00:00.000Z',
        '1 Pod of live runs spared (--all deletes them too)',
        '',
      ].join('\n'),
    );
    assert.equal(fake.store.list(POD).length, pods - 2);
    // no terminal to ask on: --all needs --yes, and nothing is deleted meanwhile
    const refused = await kdebug('cleanup', '--all');
    assert.deepEqual(
      [refused.code, refused.stderr],
      [
        2,
        'kdebug: cleanup --all deletes the Pods of live kdebug runs only after a yes: add --yes (1 live)\n',
      ],
    );
    assert.equal(fake.store.list(POD).length, pods - 2);
    // on a terminal it asks, naming the live Pods and their owners; "n" spares them
    const declined = await onTerminal(
      `${process.execPath} bin/kdebug.js cleanup --all --kubeconfig ${kubeconfig}`,
      'n',
    );
    assert.match(
      declined.replace(/\r/g, ''),
      /delete 1 debug Pod of kdebug runs that are still alive\?\n {2}Pod default\/kdebug-node-b-live1 \(node node-a, Running\): its run renewed it \d+s ago; owner laptop pid 7 started 2026-12-01T09:00:00\.000Z\n \[y\/N\] n\nspared Pod default\/kdebug-node-b-live1/,
    );
    assert.equal(fake.store.list(POD).length, pods - 2);
    const all = await kdebug('cleanup', '--all', '--yes');
    assert.match(
      all.stdout,
      /^deleted Pod default\/kdebug-node-b-live1 \(node node-a, Running\): its run renewed it \d+s ago/,
    );
    assert.equal(fake.store.list(POD).length, pods - 3);
    const again = await kdebug('cleanup');
    assert.equal(again.stdout, 'no kdebug debug Pods in all namespaces\n');
  });

  it('finds kube-proxy chains in both backends of a node: one set is stale', async () => {
    lab.loadIptables('node-a', 'legacy', expectedLabRules(lab.topology, 'node-a'));
    try {
      const r = await kdebug('svc', 'nginx-svc', '--via', 'kube-proxy', '-o', 'json');
      const kp = step(r.stdout, 'kube-proxy');
      assert.deepEqual(findingIds(kp), [
        'kube-proxy-running:pass',
        'proxy-mode:pass',
        'kube-proxy-version:pass',
        'iptables-backends-both:warn node-a',
      ]);
      assert.deepEqual(
        kp.findings.find((f) => f.id === 'iptables-backends-both')!.evidence.map((e) => e.text),
        [
          "node-a: kube-proxy's chains in legacy and nft (iptables-legacy-nat-S_KUBE-POSTROUTING, iptables-nft-save-nat, iptables-nft-save, iptables-nft-nat-S_KUBE-POSTROUTING)",
          // node-b has no legacy table: the kernel's list says so, and kdebug made none to look
          "node-b: kube-proxy's chains in nft only (ip_tables_names, iptables-nft-save, iptables-nft-nat-S_KUBE-POSTROUTING)",
          "node-c: kube-proxy's chains in legacy only (iptables-legacy-nat-S_KUBE-POSTROUTING, iptables-nft-save-nat, iptables-nft-nat-S_KUBE-POSTROUTING)",
        ],
      );
    } finally {
      lab.loadIptables('node-a', 'legacy', '*filter\nCOMMIT\n*nat\nCOMMIT\n');
    }
  });

  it('flags nodes whose /proxyMode disagrees with the ConfigMap', async () => {
    const cm = fake.store.get(typeOfKind('ConfigMap')!, 'kube-system', 'kube-proxy')!;
    fake.store.put({
      ...cm,
      data: { 'config.conf': 'kind: KubeProxyConfiguration\nmode: ipvs\n' },
    });
    try {
      const r = await kdebug('svc', 'nginx-svc', '--via', 'pod', '--yes', '-o', 'json');
      const f = step(r.stdout, 'kube-proxy').findings.find((x) => x.id === 'proxy-mode-differs')!;
      assert.equal(f.title, 'node-a, node-b and node-c run iptables, the ConfigMap says ipvs');
      assert.deepEqual(
        f.evidence.map((e) => e.text),
        [
          'node-a: iptables (/proxyMode on node-a)',
          'node-b: iptables (/proxyMode on node-b)',
          'node-c: iptables (/proxyMode on node-c)',
        ],
      );
    } finally {
      fake.store.put(cm);
    }
  });

  describe('snapshot save and SSH from the workstation', () => {
    let relay: ApiRelay;
    let dir: string;
    before(async () => {
      relay = await relayApi(lab, fake.port);
      dir = join(home, 'saved');
    });
    after(() => relay?.close());
    const inWorkstation = (...args: string[]) =>
      lab.execAsync('ws', [process.execPath, 'bin/kdebug.js', ...args]);

    it('snapshot save records what svc reads on each node, and replays it', async () => {
      const r = await kdebug(
        'snapshot',
        'save',
        dir,
        '--service',
        'nginx-svc',
        '--via',
        'pod',
        '--yes',
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        r.stdout,
        `saved 15 objects and the output of commands on 3 nodes from context fake to ${dir}\n` +
          'redacted: kept only the fields kdebug reads; context, user and server replaced by salted hashes (listed in meta.json; --no-redact keeps everything)\n',
      );
      const node = (n: string, stem: string) =>
        readFileSync(join(dir, 'nodes', n, `${stem}.txt`), 'utf8');
      assert.match(
        node('node-a', 'tcp-connect_10.96.190.219_8080'),
        /succeeded!\nkdebug-probe tcp-connect tool=nc exit=0\n$/,
      );
      assert.match(node('node-b', 'icmp-echo_10.96.190.219'), /1 packets transmitted, 0 received/);
      assert.equal(node('node-a', 'proxy-mode'), 'iptables');
      // node-c's default iptables-save is nft, its rules are legacy: the legacy dump was read too
      assert.doesNotMatch(node('node-c', 'iptables-save'), /^:KUBE-SERVICES /m);
      assert.match(node('node-c', 'iptables-legacy-save'), /^:KUBE-SERVICES - /m);
      const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
      assert.deepEqual(
        meta.nodeAccess.map((a: { node: string }) => a.node),
        ['node-a', 'node-b', 'node-c'],
      );
      assert.deepEqual(debugPods(), []);
      const replay = await kdebug('svc', 'nginx-svc', '--snapshot', dir, '-o', 'json');
      assert.equal(step(replay.stdout, 'reachability').status, 'pass');
      assert.equal(step(replay.stdout, 'dns').status, 'fail');
    });

    it('--via ssh: the nodes read over SSH (node-c through its jump host) with the Node addresses', async () => {
      const kc = fake.kubeconfig({ namespace: 'default', server: relay.server });
      const r = await inWorkstation(
        'svc',
        'nginx-svc',
        '--kubeconfig',
        kc,
        '--via',
        'ssh',
        '--ssh-config',
        lab.files.sshConfig,
        '--ssh-address-type',
        'Hostname',
        '-o',
        'json',
      );
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(r.stderr.trim().split('\n'), [
        'kdebug: node-a: rules, addresses, kube-proxy status and probes via ssh root@192.0.2.11',
        'kdebug: node-b: rules, addresses, kube-proxy status and probes via ssh root@192.0.2.12',
        'kdebug: node-c: rules, addresses, kube-proxy status and probes via ssh root@192.0.2.13:2222 via root@192.0.2.11',
      ]);
      assert.deepEqual(findingIds(step(r.stdout, 'rules')), [
        'rules-match:pass',
        'rules-release-disagrees:warn node-b',
      ]);
      assert.equal(step(r.stdout, 'reachability').status, 'pass');
    });

    it('drift --snapshot DIR --ssh: the objects of the snapshot, the rules of the host now', async () => {
      const r = await inWorkstation(
        'drift',
        '--snapshot',
        dir,
        '--ssh',
        'node-c',
        '--ssh-config',
        lab.files.sshConfig,
        '-o',
        'json',
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stderr, /they are in the legacy backend \(iptables-legacy-save\)/);
      assert.deepEqual(
        JSON.parse(r.stdout).nodes.map((n: { node: string }) => n.node),
        ['node-c'],
      );
    });

    it('trace --snapshot DIR --ssh: the node found by its address, the packet walked through its rules', async () => {
      const r = await inWorkstation(
        'trace',
        '--snapshot',
        dir,
        '--ssh',
        'root@192.0.2.11',
        '--ssh-config',
        'none',
        '--ssh-key',
        lab.files.key,
        '--known-hosts',
        lab.files.knownHosts,
        '--from-host',
        '--dst',
        `${NGINX.clusterIP}:${NGINX.port}`,
        '-o',
        'text',
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /node-a/);
      assert.match(r.stdout, /DNAT to 10\.244\.0\.3:80/);
      assert.match(r.stdout, /DNAT to 10\.244\.1\.7:80/);
    });
  });
});

/** A command on a terminal (script(1) gives it a pty): types `answer` once it asks [y/N]. */
function onTerminal(command: string, answer: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: tmpdir(), NO_COLOR: '1', TERM: 'dumb' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      if (out.includes('[y/N]') && !out.includes(`[y/N] ${answer}`))
        child.stdin.write(`${answer}\r`);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', () => (clearTimeout(timer), resolve(out)));
  });
}
