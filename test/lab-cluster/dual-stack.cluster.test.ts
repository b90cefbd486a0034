// The lab cluster dual-stack (--families dual): a RequireDualStack Service whose IPv6 cluster IP
// really answers through the rules the real kube-proxy wrote with ip6tables, and what kdebug
// says of it: endpoints counted per family, each family's rules compared with what kube-proxy
// should have written (expect equals the real rules for every Service shape), and a fault in
// one family found in that family only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { ClusterClient, VIA_POD, type SvcJson } from '../support/cluster/client.js';
import { clusterUnavailable, down, up } from '../support/cluster/cluster.js';
import {
  DUAL_MATRIX_OBJECTS,
  LB_INGRESS,
  LB_INGRESS_V6,
  MATRIX_NAMESPACE,
} from '../support/cluster/matrix.js';
import { deployment, manifest, namespace, service } from '../support/cluster/objects.js';
import { differences, roundTrip, scratchNamespace } from '../support/cluster/truth.js';
import { skipWithout } from '../support/skip.js';

const OBJECTS = manifest(
  namespace('ds'),
  deployment('ds', 'web'),
  service(
    'ds',
    'web',
    'ipFamilyPolicy: RequireDualStack\nselector: {app: web}\nports: [{name: http, port: 80, targetPort: 80}]',
  ),
);

describe(
  'the lab cluster, dual-stack',
  skipWithout(goUnavailable() ?? clusterUnavailable() ?? ''),
  () => {
    let c: ClusterClient;
    let v4: string;
    let v6: string;
    before(async () => {
      c = new ClusterClient(await up({ prefix: 'kdc', nodes: 2, families: 'dual' }));
      c.kubectl(['apply', '-f', '-'], { input: OBJECTS });
      await c.until(
        'both Pods ready',
        () => c.readiness('ds').every((r) => r === 'True') && c.readiness('ds').length === 2,
      );
      [v4, v6] = JSON.parse(
        c.kubectl(['-n', 'ds', 'get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIPs}']),
      ) as [string, string];
      await c.until('kube-proxy to write both endpoints', () => c.dnatEverywhere(c.podIPs('ds')));
      await c.until('kube-proxy to write both families', () =>
        c.info.nodes.every(
          (n) =>
            c.onNode(n.name, ['iptables-save', '-t', 'nat']).stdout.includes(`-d ${v4}/32`) &&
            c.onNode(n.name, ['ip6tables-save', '-t', 'nat']).stdout.includes(`-d ${v6}/128`),
        ),
      );
      // the Endpoints controller (the legacy object kdebug compares) may write after the slices
      await c.until(
        'the legacy Endpoints to list both Pods',
        () => c.legacyEndpoints('ds', 'web').length === 2,
      );
    });
    after(() => {
      down();
      rmSync(snapshot, { recursive: true, force: true });
    });

    let snapshot = '';
    /** What `kdebug expect --family F` gets wrong about each node's real rules of that family. */
    const wrong = (family: 'ipv4' | 'ipv6') => {
      rmSync(snapshot, { recursive: true, force: true });
      snapshot = mkdtempSync(join(tmpdir(), 'kdc-ds-'));
      rmSync(snapshot, { recursive: true });
      const saved = c.kdebug(['snapshot', 'save', snapshot, '--all', '-A', '--via', 'kube-proxy']);
      assert.equal(saved.code, 0, saved.stderr);
      const scratch = scratchNamespace('kdc');
      const ip6 = family === 'ipv6';
      return c.info.nodes.flatMap((n) => {
        const e = c.kdebug([
          'expect',
          '--snapshot',
          snapshot,
          '--node',
          n.name,
          '--family',
          family,
        ]);
        assert.equal(e.code, 0, e.stderr);
        const actual = c.onNode(n.name, [ip6 ? 'ip6tables-save' : 'iptables-save']);
        assert.equal(actual.code, 0, actual.stderr);
        const d = differences(
          roundTrip(scratch, e.stdout, ip6),
          roundTrip(scratch, actual.stdout, ip6),
        );
        return d.length > 0 ? [`${n.name}:`, ...d] : [];
      });
    };

    for (const family of ['ipv4', 'ipv6'] as const)
      it(`truth, ${family}: kdebug expect --family ${family} equals what the real kube-proxy wrote`, async () => {
        let d = wrong(family);
        for (const end = Date.now() + 30_000; d.length > 0 && Date.now() < end; d = wrong(family))
          await new Promise((r) => setTimeout(r, 1000));
        assert.deepEqual(d, [], `kdebug expect differs from kube-proxy's rules:\n${d.join('\n')}`);
      });

    it('truth for every Service shape in both families: NodePort, LoadBalancer with source ranges, external IPs, affinity, traffic policies', async () => {
      c.kubectl(['apply', '-f', '-'], { input: DUAL_MATRIX_OBJECTS });
      c.setIngress(
        MATRIX_NAMESPACE,
        Object.fromEntries(
          Object.entries(LB_INGRESS).map(([svc, ip]) => [svc, [ip, LB_INGRESS_V6[svc]!]]),
        ),
      );
      await c.until('the matrix Pods ready', () => {
        const r = c.readiness(MATRIX_NAMESPACE);
        return r.length === 3 && r.every((x) => x === 'True');
      });
      const ips = c.podIPs(MATRIX_NAMESPACE);
      await c.until('kube-proxy to write the matrix in both families', () =>
        c.info.nodes.every((n) => {
          const v4rules = c.onNode(n.name, ['iptables-save']).stdout;
          const v6rules = c.onNode(n.name, ['ip6tables-save']).stdout;
          return (
            Object.values(LB_INGRESS).every((ip) => v4rules.includes(`-d ${ip}/32`)) &&
            Object.values(LB_INGRESS_V6).every((ip) => v6rules.includes(`-d ${ip}/128`)) &&
            ips.every((ip) => v4rules.includes(`--to-destination ${ip}:`))
          );
        }),
      );
      for (const family of ['ipv4', 'ipv6'] as const) {
        let d = wrong(family);
        for (const end = Date.now() + 30_000; d.length > 0 && Date.now() < end; d = wrong(family))
          await new Promise((r) => setTimeout(r, 1000));
        assert.deepEqual(
          d,
          [],
          `${family}: kdebug expect differs from kube-proxy's rules:\n${d.join('\n')}`,
        );
      }
      // drift compares each family with its own dump: none on kube-proxy's own rules
      const drift = c.kdebug(['drift', '--all-nodes', '--via', 'kube-proxy', '-o', 'json']);
      assert.equal(drift.code, 0, drift.stdout + drift.stderr);
      const doc = JSON.parse(drift.stdout) as {
        nodes: { node: string; family: string; source: string }[];
      };
      assert.deepEqual(
        doc.nodes.map((n) => `${n.node} ${n.family} ${n.source.split('/').pop()}`),
        c.info.nodes.flatMap((n) => [
          `${n.name} IPv4 iptables-save.txt`,
          `${n.name} IPv6 ip6tables-save.txt`,
        ]),
      );
    });

    it('the IPv6 cluster IP answers from every node, through the real ip6tables rules', () => {
      const pods = c
        .kubectl(['-n', 'ds', 'get', 'pods', '-o', 'jsonpath={.items[*].metadata.name}'])
        .split(' ');
      for (const n of c.info.nodes) {
        const r = c.onNode(n.name, ['curl', '-s', '-g', '--max-time', '3', `http://[${v6}]:80/`]);
        assert.equal(r.code, 0, `${n.name}: ${r.stderr}`);
        assert.ok(pods.includes(r.stdout.trim()), `${n.name} got ${r.stdout}`);
      }
    });

    const svcJson = () => {
      const r = c.kdebug(['svc', 'web', '-n', 'ds', '--via', 'kube-proxy', '-o', 'json']);
      const doc = JSON.parse(r.stdout) as SvcJson;
      const said = doc.steps.map(
        (s) =>
          `${s.id}:${s.status} ${s.findings.map((f) => `${f.id}:${f.status} ${f.title}`).join(' | ')}`,
      );
      return {
        r,
        doc,
        said: said.join('\n'),
        step: (id: string) => doc.steps.find((s) => s.id === id)!,
      };
    };

    it("kdebug svc: two Pods are two endpoints (IPv4 and IPv6), and both families' rules compared on every node", () => {
      const { r, doc, said, step } = svcJson();
      assert.equal(r.code, 0, `${r.stderr}\n${said}`);
      assert.equal(
        step('endpoints').findings[0]!.title,
        '80/TCP: 2 of 2 endpoints ready (IPv4 and IPv6)',
      );
      assert.ok(!step('endpoints').findings.some((f) => f.id === 'endpoints-disagree'));
      const matches = step('rules')
        .findings.filter((f) => f.id === 'rules-match' && f.status === 'pass')
        .map((f) => f.title);
      assert.deepEqual(
        matches,
        [
          'IPv4: 2 nodes: 80/TCP -> 2 endpoints, as expected',
          'IPv6: 2 nodes: 80/TCP -> 2 endpoints, as expected',
        ],
        said,
      );
      // through kube-proxy's Pods nothing probes: said as not observed, never as passed
      assert.deepEqual(
        doc.unobserved,
        [
          'DNS: no recorded lookup of the Service name',
          'Reachability: no probe ran: no node could run one',
        ],
        said,
      );
    });

    it('kdebug svc --via pod: both ClusterIPs answer from every node, and DNS has an A and an AAAA record', () => {
      const r = c.kdebug(['svc', 'web', '-n', 'ds', '-o', 'json', ...VIA_POD]);
      const doc = JSON.parse(r.stdout) as SvcJson;
      const said = doc.steps
        .map(
          (s) =>
            `${s.id}:${s.status} ${s.findings.map((f) => `${f.id}:${f.status} ${f.title}`).join(' | ')}`,
        )
        .join('\n');
      assert.equal(r.code, 0, `${r.stderr}\n${said}`);
      const titles = (id: string) =>
        doc.steps.find((s) => s.id === id)!.findings.map((f) => f.title);
      assert.ok(
        titles('reachability').some((t) => t.startsWith(`IPv4: ClusterIP ${v4}:80 answers from`)),
        said,
      );
      assert.ok(
        titles('reachability').some((t) => t.startsWith(`IPv6: ClusterIP [${v6}]:80 answers from`)),
        said,
      );
      // each node's lookups of the full name, each said as that node's
      for (const { name } of c.info.nodes) {
        assert.ok(titles('dns').includes(`${name}: web.ds.svc.cluster.local AAAA -> ${v6}`), said);
        assert.ok(titles('dns').includes(`${name}: web.ds.svc.cluster.local A -> ${v4}`), said);
      }
    });

    it('a fault in one family is found in that family only: an IPv6 endpoint rule deleted on node-a', () => {
      const nat = c.onNode('node-a', ['ip6tables-save', '-t', 'nat']).stdout.split('\n');
      const jump = nat.find((l) => l.startsWith('-A KUBE-SVC-') && l.includes('"ds/web:http -> ['));
      assert.ok(jump, 'no IPv6 KUBE-SVC jump for ds/web on node-a');
      const del = c.deleteRule('node-a', jump, true);
      assert.equal(del.code, 0, del.stderr);
      const { doc, said, step } = svcJson();
      const rules = step('rules').findings;
      const missing = rules.filter((f) => f.id === 'endpoint-missing');
      assert.ok(missing.length > 0, said);
      for (const f of missing) {
        assert.equal(f.node, 'node-a', said);
        assert.match(f.title, /^IPv6: /, said);
      }
      // IPv4 still matches everywhere, IPv6 on node-b
      const matches = rules.filter((f) => f.id === 'rules-match').map((f) => f.title);
      assert.ok(matches.includes('IPv4: 2 nodes: 80/TCP -> 2 endpoints, as expected'), said);
      assert.ok(
        matches.some((t) => /^IPv6: 1 node: /.test(t)),
        said,
      );
      assert.equal(doc.steps.find((s) => s.id === 'rules')!.status, 'warn');
    });
  },
);
