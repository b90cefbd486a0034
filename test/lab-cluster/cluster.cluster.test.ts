// kdebug against the lab cluster: the real kube-apiserver, controllers and kube-proxy (built from
// their Go modules), Pods as network namespaces. `npm run test:cluster` (after `npm run check`
// in CI). The suite brings the cluster up and down itself, and checks the host is as it was.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { ClusterClient, VIA_POD, type SvcJson } from '../support/cluster/client.js';
import { clusterUnavailable, down, up } from '../support/cluster/cluster.js';
import { LB_INGRESS, MATRIX_NAMESPACE, MATRIX_OBJECTS } from '../support/cluster/matrix.js';
import { deployment, manifest, namespace, service } from '../support/cluster/objects.js';
import { differences, roundTrip, scratchNamespace } from '../support/cluster/truth.js';
import { skipWithout } from '../support/skip.js';

const PREFIX = 'kdc';

/** What the host's network looks like: rules, routes, links, and the netfilter sysctls. */
function hostState(): string {
  const out = (argv: string[]) =>
    spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }).stdout ?? '';
  const rules = (text: string) =>
    text
      .split('\n')
      .filter((l) => !l.startsWith('#'))
      .map((l) => l.replace(/\[\d+:\d+\]/, ''))
      .join('\n');
  const sysctls = out([
    'sysctl',
    'net.netfilter',
    'net.ipv4.ip_forward',
    'net.ipv4.conf.all',
    'net.ipv4.conf.default',
  ])
    .split('\n')
    .filter((l) => !/nf_conntrack_count|nf_conntrack_expect_count/.test(l))
    .join('\n');
  return [
    rules(out(['iptables-save'])),
    rules(out(['ip6tables-save'])),
    out(['ip', '-o', 'link', 'show']).replace(/ +link\/\S+ .*$/gm, ''),
    out(['ip', 'route', 'show', 'table', 'all']),
    sysctls,
  ].join('\n=====\n');
}

const ready = (c: ClusterClient, ns: string) => c.readiness(ns).filter((r) => r === 'True').length;

describe(
  'kdebug against the lab cluster',
  skipWithout(goUnavailable() ?? clusterUnavailable() ?? ''),
  () => {
    let c: ClusterClient;
    let host: string;
    let scratch: string;
    const snapshots: string[] = [];

    before(async () => {
      host = hostState();
      c = new ClusterClient(await up({ prefix: PREFIX, nodes: 2 }));
      scratch = scratchNamespace(PREFIX);
    });
    after(() => {
      down();
      for (const s of snapshots) rmSync(s, { recursive: true, force: true });
    });

    /** Waits until kube-proxy on every node wrote a DNAT to each ready Pod of `ns` and the
     * LoadBalancer IPs (set on the Services' status after they were created). */
    const synced = (ns: string) => {
      const ips = c.podIPs(ns);
      return c.until('kube-proxy to write the endpoints and LoadBalancer IPs', () =>
        c.info.nodes.every((n) => {
          const rules = c.onNode(n.name, ['iptables-save']).stdout;
          return (
            Object.values(LB_INGRESS).every((ip) => rules.includes(`-d ${ip}/32`)) &&
            rules.includes(`"${ns}/lb:http loadbalancer IP"`) &&
            ips.every((ip) => rules.includes(`--to-destination ${ip}:`))
          );
        }),
      );
    };

    /** A snapshot of every Service read live, with each node's rules read through its kube-proxy Pod. */
    const save = () => {
      const dir = mkdtempSync(join(tmpdir(), 'kdc-snapshot-'));
      snapshots.push(dir);
      rmSync(dir, { recursive: true });
      const r = c.kdebug(['snapshot', 'save', dir, '--all', '-A', '--via', 'kube-proxy']);
      assert.equal(r.code, 0, r.stderr);
      return dir;
    };

    /** `kdebug expect` against what the real kube-proxy wrote on each node. */
    /** What `kdebug expect` (on a fresh live snapshot) gets wrong about each node's real rules. */
    const wrong = () => {
      const dir = save();
      return c.info.nodes.flatMap((n) => {
        const e = c.kdebug(['expect', '--snapshot', dir, '--node', n.name]);
        assert.equal(e.code, 0, e.stderr);
        const actual = c.onNode(n.name, ['iptables-save']);
        assert.equal(actual.code, 0, actual.stderr);
        const d = differences(roundTrip(scratch, e.stdout), roundTrip(scratch, actual.stdout));
        return d.length > 0 ? [`${n.name}:`, ...d] : [];
      });
    };

    /** kube-proxy catches up with the API in its own time (the last Service's endpoints may reach
     * it a moment later): its rules must come to equal `kdebug expect`, and stay so. */
    const truth = async () => {
      let d = wrong();
      for (const end = Date.now() + 30_000; d.length > 0 && Date.now() < end; d = wrong())
        await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(d, [], `kdebug expect differs from kube-proxy's rules:\n${d.join('\n')}`);
    };

    it('kdebug svc on a healthy Service: every step passes, from real objects, rules and probes', async () => {
      c.kubectl(['apply', '-f', '-'], {
        input: manifest(
          namespace('demo'),
          deployment('demo', 'nginx'),
          service(
            'demo',
            'nginx-svc',
            'selector: {app: nginx}\nports: [{name: http, port: 8080, targetPort: 80}]',
          ),
        ),
      });
      await c.until('the nginx Pods ready', () => ready(c, 'demo') === 2);
      // kube-proxy has written the Service once a node's rules hold its cluster IP
      const ip = c.kubectl([
        '-n',
        'demo',
        'get',
        'svc',
        'nginx-svc',
        '-o',
        'jsonpath={.spec.clusterIP}',
      ]);
      await c.until('kube-proxy to write both endpoints', () => c.dnatEverywhere(c.podIPs('demo')));
      await c.until('kube-proxy to write nginx-svc', () =>
        c.info.nodes.every((n) =>
          c.onNode(n.name, ['iptables-save', '-t', 'nat']).stdout.includes(`${ip}/32`),
        ),
      );
      await c.until(
        'the legacy Endpoints to list both Pods',
        () => c.legacyEndpoints('demo', 'nginx-svc').length === 2,
      );
      const r = c.kdebug(['svc', 'nginx-svc', '-n', 'demo', ...VIA_POD, '-o', 'json']);
      assert.equal(r.code, 0, r.stderr);
      const doc = JSON.parse(r.stdout) as SvcJson;
      assert.equal(doc.status, 'pass');
      assert.deepEqual(doc.unobserved, []);
      for (const s of doc.steps)
        assert.equal(
          s.status,
          'pass',
          `${s.id}: ${s.findings.map((f) => `${f.id}:${f.status}`).join(' ')}`,
        );
      // the probes were really made: the ClusterIP answered through the real rules from both nodes
      const reach = doc.steps.find((s) => s.id === 'reachability')!;
      assert.ok(reach.findings.some((f) => f.id === 'clusterip-reachable' && f.status === 'pass'));
      // and the debug Pods are gone
      await c.until(
        'the debug Pods to be deleted',
        () => !/kdebug-/.test(c.kubectl(['-n', 'default', 'get', 'pods', '-o', 'name'])),
      );
    });

    it('kdebug rbac, applied to the real apiserver: a ServiceAccount with only that runs svc (debug Pods and kube-proxy exec), cleanup and snapshot save -A, never refused', () => {
      const debugNs = 'kdebug-debug';
      c.kubectl(['create', 'namespace', debugNs]);
      c.kubectl(['label', 'namespace', debugNs, 'pod-security.kubernetes.io/enforce=privileged']);
      c.kubectl(['-n', 'default', 'create', 'serviceaccount', 'kdebug-sa']);
      const grant = (args: string[]) => {
        const r = c.kdebug(['rbac', ...args, '--serviceaccount', 'default:kdebug-sa']);
        assert.equal(r.code, 0, r.stderr);
        c.kubectl(['apply', '-f', '-'], { input: r.stdout });
      };
      // a kubeconfig for the ServiceAccount: the admin's cluster, the account's token
      const asAccount = () => {
        const config = JSON.parse(
          c.kubectl(['config', 'view', '--raw', '--minify', '-o', 'json']),
        ) as {
          users: { name: string; user: Record<string, unknown> }[];
        };
        config.users = config.users.map((u) => ({
          name: u.name,
          user: { token: c.kubectl(['-n', 'default', 'create', 'token', 'kdebug-sa']).trim() },
        }));
        const file = join(mkdtempSync(join(tmpdir(), 'kdc-sa-')), 'kubeconfig');
        snapshots.push(dirname(file));
        writeFileSync(file, JSON.stringify(config));
        return file;
      };
      grant(['-n', 'demo', '--via', 'auto', '--debug-namespace', debugNs]);
      const kubeconfig = asAccount();
      const refused = /access denied|forbidden|could not read/i;
      for (const via of [
        ['--via', 'pod', '--yes', '--debug-namespace', debugNs],
        ['--via', 'kube-proxy'],
      ]) {
        const r = c.kdebug(['svc', 'nginx-svc', '-n', 'demo', '-o', 'json', ...via], {
          kubeconfig,
        });
        assert.doesNotMatch(r.stderr, refused, r.stderr);
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(r.stdout, /access denied/);
        const doc = JSON.parse(r.stdout) as SvcJson;
        assert.equal(doc.status, 'pass', JSON.stringify(doc.unobserved));
      }
      const clean = c.kdebug(['cleanup', '-n', debugNs], { kubeconfig });
      assert.deepEqual([clean.code, clean.stderr], [0, '']);
      // without a grant for every namespace, -A is refused (the Role is what was asked, no more)
      const dir = mkdtempSync(join(tmpdir(), 'kdc-rbac-'));
      snapshots.push(dir);
      const narrow = c.kdebug(
        ['snapshot', 'save', join(dir, 'a'), '--all', '-A', '--via', 'kube-proxy'],
        { kubeconfig },
      );
      assert.match(
        narrow.stderr,
        /access denied by RBAC: user "system:serviceaccount:default:kdebug-sa" cannot list services at the cluster scope/,
      );
      grant(['-A', '--via', 'kube-proxy', '--name', 'kdebug-all']);
      const wide = c.kdebug(
        ['snapshot', 'save', join(dir, 'b'), '--all', '-A', '--via', 'kube-proxy'],
        { kubeconfig },
      );
      assert.doesNotMatch(wide.stderr, refused, wide.stderr);
      assert.equal(wide.code, 0, wide.stderr);
    });

    it('snapshot save from the live cluster, then replay: the same svc, rules and drift answers', () => {
      const dir = mkdtempSync(join(tmpdir(), 'kdc-replay-'));
      snapshots.push(dir);
      rmSync(dir, { recursive: true });
      const via = ['--via', 'kube-proxy'];
      // not redacted: the replay is compared with the live answer field by field, context included
      const saved = c.kdebug(['snapshot', 'save', dir, '--all', '-A', '--no-redact', ...via]);
      assert.equal(saved.code, 0, saved.stderr);
      const both = (args: string[]) => {
        const live = c.kdebug([...args, ...via, '-o', 'json']);
        const replay = c.kdebug([...args, '--snapshot', dir, '-o', 'json']);
        assert.equal(replay.code, live.code, `${args.join(' ')}: ${live.stderr}${replay.stderr}`);
        return [JSON.parse(live.stdout), JSON.parse(replay.stdout)] as const;
      };
      const [svcLive, svcReplay] = both(['svc', 'nginx-svc', '-n', 'demo']);
      // a live run says no node could probe, a replay that the snapshot holds no probes: the
      // same finding, worded for where the answer came from
      const sameProbes = (r: {
        unobserved: string[];
        steps: { findings: { id: string; status: string }[] }[];
      }) => ({
        ...r,
        unobserved: r.unobserved.map((u) => u.replace(/^Reachability: no probe.*/, 'Reachability')),
        steps: r.steps.map((st) => ({
          ...st,
          findings: st.findings.map((f) =>
            f.id === 'probes-not-recorded' ? { id: f.id, status: f.status } : f,
          ),
        })),
      });
      // live, svc reads each backend's probe and (a table this small) nft's whole dump, or a large
      // one's chains by name; the snapshot holds the default dumps: where each rule was read (file,
      // line, the backends' sources, the dump the mode was seen in, the by-name sentence) differs,
      // no verdict
      const sameRules = (r: unknown): unknown =>
        JSON.parse(JSON.stringify(r), (key, v: unknown) =>
          (key === 'line' || key === 'source') && typeof v !== 'object'
            ? undefined
            : typeof v === 'string'
              ? v
                  .replace(/nodes\/\S+?\.txt:\d+: /g, '')
                  .replace(/the rules in nodes\/\S+?\.txt/g, 'the rules')
                  .replace(/ \((?:ip_tables_names, )?iptables-nft-[^)]*\)/g, '')
                  .replace(
                    / On .*? kdebug read the nat chains this Service reaches by name .*?not read\./,
                    '',
                  )
              : v,
        ) as unknown;
      assert.deepEqual(sameRules(sameProbes(svcReplay)), sameRules(sameProbes(svcLive)));
      const [rulesLive, rulesReplay] = both(['rules', '--node', 'node-a']);
      assert.deepEqual(rulesReplay, rulesLive);
      // where the rules came from is the one field that differs
      const [driftLive, driftReplay] = both(['drift', '--all-nodes']);
      assert.deepEqual({ ...driftReplay, source: '' }, { ...driftLive, source: '' });
      assert.match(driftReplay.source, /^snapshot /);
    });

    it('truth: kdebug expect equals what the real kube-proxy wrote, for every Service shape; drift reports nothing', async () => {
      c.kubectl(['apply', '-f', '-'], { input: MATRIX_OBJECTS });
      c.setIngress(
        MATRIX_NAMESPACE,
        Object.fromEntries(Object.entries(LB_INGRESS).map(([svc, ip]) => [svc, [ip]])),
      );
      await c.until('the matrix Pods ready', () => ready(c, MATRIX_NAMESPACE) === 3);
      await synced(MATRIX_NAMESPACE);
      await truth();
      const drift = c.kdebug(['drift', '--all-nodes', '--via', 'kube-proxy', '-o', 'json']);
      assert.equal(drift.code, 0, drift.stdout + drift.stderr);
    });

    it('truth with terminating endpoints: the only Pod of an ETP=Local Service being deleted', async () => {
      c.kubectl(['-n', MATRIX_NAMESPACE, 'scale', 'deployment', 'solo', '--replicas=0']);
      await c.until('the solo endpoint to be terminating and serving', () =>
        /"terminating":true/.test(
          c
            .kubectl([
              '-n',
              MATRIX_NAMESPACE,
              'get',
              'endpointslices',
              '-l',
              'kubernetes.io/service-name=lb-local',
              '-o',
              'json',
            ])
            .replace(/\s/g, ''),
        ),
      );
      // kube-proxy's minSyncPeriod is 0 in the lab: give it a sync period to write the change
      await new Promise((r) => setTimeout(r, 3000));
      await truth();
    });

    it('lab-kubelet (which starts kube-proxy) refuses to run outside the node namespace it is given', () => {
      const bin = join(dirname(c.info.kubectl), 'lab-kubelet');
      const host = String(statSync('/proc/self/ns/net').ino);
      const refuse = (args: string[], why: RegExp) => {
        const r = spawnSync(bin, [...args, `--host-netns-inode=${host}`], {
          encoding: 'utf8',
          timeout: 10_000,
        });
        assert.equal(r.status, 1, r.stderr);
        assert.match(r.stderr, why);
      };
      // here, in the host's namespace, pointed at a node's: not inside it
      refuse(
        [`--netns=/run/netns/${PREFIX}.node-a`, `--prefix=${PREFIX}`],
        /refusing to run: not inside/,
      );
      // a namespace that is not the lab's
      refuse(['--netns=/proc/self/ns/net', `--prefix=${PREFIX}`], /is not a lab namespace/);
      // inside the node's namespace but told the host's is that one: refused too
      const inside = spawnSync(
        'nsenter',
        [
          `--net=/run/netns/${PREFIX}.node-a`,
          '--',
          bin,
          `--netns=/run/netns/${PREFIX}.node-a`,
          `--prefix=${PREFIX}`,
          `--host-netns-inode=${statSync(`/run/netns/${PREFIX}.node-a`).ino}`,
        ],
        { encoding: 'utf8', timeout: 10_000 },
      );
      assert.equal(inside.status, 1);
      assert.match(inside.stderr, /refusing to run/);
    });

    it('down leaves nothing: no namespace, no process, and the host as it was', () => {
      down();
      const left = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter((l) => l.startsWith(`${PREFIX}.`));
      assert.deepEqual(left, []);
      const procs = spawnSync('pgrep', ['-f', 'kdebug-lab/'], { encoding: 'utf8' }).stdout.trim();
      assert.equal(procs, '', `processes left: ${procs}`);
      assert.equal(hostState(), host);
    });
  },
);
