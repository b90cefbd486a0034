// The lab cluster with kube-proxy in nftables mode (--mode nftables), dual-stack: the real
// kube-proxy writes its "ip kube-proxy" and "ip6 kube-proxy" nftables tables and traffic goes
// through them; kdebug reads both on each node and compares them with the tables kube-proxy
// should write (kdebug expect's).
import { evidenceText } from '../../src/core/findings/evidence.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { ClusterClient, type SvcJson } from '../support/cluster/client.js';
import { clusterUnavailable, down, up } from '../support/cluster/cluster.js';
import {
  DUAL_MATRIX_OBJECTS,
  LB_INGRESS,
  LB_INGRESS_V6,
  MATRIX_NAMESPACE,
} from '../support/cluster/matrix.js';
import { nftDifferences, nftRoundTrip, scratchNamespace } from '../support/cluster/truth.js';
import { hasCommand, skipWithout } from '../support/skip.js';

const why =
  goUnavailable() ?? clusterUnavailable() ?? (hasCommand('nft') ? '' : 'nft (nftables) is missing');

describe('the lab cluster, kube-proxy in nftables mode', skipWithout(why), () => {
  let c: ClusterClient;
  before(async () => {
    c = new ClusterClient(
      await up({ prefix: 'kdc', nodes: 2, mode: 'nftables', families: 'dual' }),
    );
  });
  after(() => down());

  it('kube-proxy wrote its nftables table, and the kube-dns cluster IP answers through it', () => {
    for (const n of c.info.nodes) {
      const table = c.onNode(n.name, ['nft', 'list', 'table', 'ip', 'kube-proxy']);
      assert.match(
        table.stdout,
        /10\.96\.0\.10 \. udp \. 53 : goto service-\S+-kube-system\/kube-dns\/udp\/dns/,
      );
      assert.doesNotMatch(c.onNode(n.name, ['iptables-save', '-t', 'nat']).stdout, /KUBE-SVC-/);
      const dig = c.onNode(n.name, [
        'dig',
        '+short',
        '+time=2',
        '@10.96.0.10',
        'kubernetes.default.svc.cluster.local',
      ]);
      assert.equal(dig.stdout.trim(), '10.96.0.1', `${n.name}: ${dig.stderr}`);
    }
  });

  it("kdebug svc: each node's nftables table read and compared with what kube-proxy should write", () => {
    const r = c.kdebug([
      'svc',
      'kube-dns',
      '-n',
      'kube-system',
      '--via',
      'kube-proxy',
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as SvcJson;
    assert.equal(doc.service?.proxyMode, 'nftables');
    const rules = doc.steps.find((s) => s.id === 'rules')!;
    assert.equal(rules.status, 'pass');
    // both nodes hold what kube-proxy should write: one finding naming both
    assert.deepEqual(
      rules.findings.map((f) => `${f.id}:${f.status}@${(f.nodes ?? [f.node]).join(',')}`),
      [`rules-match:pass@${c.info.nodes.map((n) => n.name).join(',')}`],
    );
    assert.deepEqual(
      doc.steps.filter((s) => s.status === 'fail' || s.status === 'warn').map((s) => s.id),
      [],
    );
    // ping to the cluster IP, explained from the table the real kube-proxy wrote
    const ping = doc.steps
      .find((s) => s.id === 'reachability')!
      .findings.find((f) => f.id === 'ping-clusterip-explained');
    assert.ok(
      ping?.evidence
        .map(evidenceText)
        .some((e) => /: chain cluster-ips-check: ip daddr @cluster-ips reject/.test(e)),
      JSON.stringify(ping?.evidence.map(evidenceText)),
    );
    assert.ok(
      ping?.evidence
        .map(evidenceText)
        .some((e) => /: set cluster-ips holds 10\.96\.0\.10$/.test(e)),
    );
    // CoreDNS reaching itself through kube-dns: in its node's hairpin-connections set
    const hairpin = doc.steps.find((s) => s.id === 'hairpin')!;
    assert.deepEqual(
      hairpin.findings.map((f) => `${f.id}:${f.status}`),
      ['hairpin-masquerade-present:pass'],
    );
    assert.ok(
      hairpin.findings[0]!.evidence.map(evidenceText).every((e) =>
        /set hairpin-connections holds /.test(e),
      ),
    );
  });

  it('kdebug rules --file: the table the real kube-proxy wrote, read back into the Service trees', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'kdebug-nft-')), 'node-a.json');
    writeFileSync(
      file,
      c.onNode('node-a', ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy']).stdout,
    );
    const r = c.kdebug(['rules', '--file', file, '-o', 'json']);
    rmSync(dirname(file), { recursive: true, force: true });
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      mode: string;
      services: { name: string; clusterIP: string; endpoints: { address: string }[] }[];
    };
    assert.equal(doc.mode, 'nftables');
    const dns = doc.services.find((t) => t.name === 'kube-system/kube-dns:dns');
    assert.equal(dns?.clusterIP, '10.96.0.10');
    assert.deepEqual(
      dns?.endpoints.map((e) => e.address.split(':')[0]).sort(),
      c.podIPs('kube-system', 'k8s-app=kube-dns').sort(),
    );
  });
  it('truth: kdebug expect equals the ip and ip6 tables the real kube-proxy wrote, for every Service shape', async () => {
    c.kubectl(['apply', '-f', '-'], { input: DUAL_MATRIX_OBJECTS });
    c.setIngress(
      MATRIX_NAMESPACE,
      Object.fromEntries(
        Object.entries(LB_INGRESS).map(([svc, ip]) => [svc, [ip, LB_INGRESS_V6[svc]!]]),
      ),
    );
    const scratch = scratchNamespace('kdc');
    const wrong = () => {
      const dir = mkdtempSync(join(tmpdir(), 'kdc-nft-snapshot-'));
      rmSync(dir, { recursive: true });
      try {
        const saved = c.kdebug(['snapshot', 'save', dir, '--all', '-A', '--via', 'kube-proxy']);
        assert.equal(saved.code, 0, saved.stderr);
        return c.info.nodes.flatMap((n) =>
          (['ip', 'ip6'] as const).flatMap((family) => {
            const e = c.kdebug([
              'expect',
              ...['--snapshot', dir, '--node', n.name],
              ...['--family', family === 'ip' ? 'ipv4' : 'ipv6'],
            ]);
            assert.equal(e.code, 0, e.stderr);
            const actual = c.onNode(n.name, ['nft', 'list', 'table', family, 'kube-proxy']);
            assert.equal(actual.code, 0, actual.stderr);
            const d = nftDifferences(
              nftRoundTrip(scratch, e.stdout, family),
              nftRoundTrip(scratch, actual.stdout, family),
            );
            return d.length > 0 ? [`${n.name} ${family}:`, ...d] : [];
          }),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    // kube-proxy catches up with the API in its own time: its table must come to equal expect
    await c.until(
      'the matrix Pods ready',
      () =>
        c.readiness(MATRIX_NAMESPACE).length === 3 &&
        c.readiness(MATRIX_NAMESPACE).every((r) => r === 'True'),
    );
    let d = wrong();
    for (const end = Date.now() + 30_000; d.length > 0 && Date.now() < end; d = wrong())
      await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(d, [], `kdebug expect differs from kube-proxy's table:\n${d.join('\n')}`);
    // a dual-stack Service: each family's table compared, each finding naming its family
    const r = c.kdebug([
      'svc',
      'cluster-ip',
      '-n',
      MATRIX_NAMESPACE,
      '--via',
      'kube-proxy',
      '-o',
      'json',
    ]);
    const report = JSON.parse(r.stdout) as SvcJson;
    // what did not pass, said with the exit code
    const notPassed = report.steps.flatMap((s) =>
      s.findings
        .filter((f) => f.status === 'fail' || f.status === 'warn')
        .map((f) => `${s.id}: ${f.id} ${f.title}`),
    );
    assert.equal(r.code, 0, `${r.stderr}\n${notPassed.join('\n')}`);
    const rules = report.steps.find((s) => s.id === 'rules')!;
    assert.equal(rules.status, 'pass');
    // each family's pass names every node: the nodes agree
    const names = c.info.nodes.map((n) => n.name);
    assert.deepEqual(
      rules.findings
        .map(
          (f) => `${f.id}:${f.status} ${f.title.split(':')[0]} ${(f.nodes ?? [f.node]).join(',')}`,
        )
        .sort(),
      [`rules-match:pass IPv4 ${names.join(',')}`, `rules-match:pass IPv6 ${names.join(',')}`],
    );
  });

  // last: it deletes a map element kube-proxy may not restore before the lab goes down
  it('kdebug drift: nothing on what the real kube-proxy wrote; a map element deleted by hand is found on that node only', () => {
    const clean = c.kdebug(['drift', '--all-nodes', '--via', 'kube-proxy', '-o', 'json']);
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
    assert.deepEqual((JSON.parse(clean.stdout) as { findings: unknown[] }).findings, []);
    // inside node-a's own network namespace: the element kube-dns:dns is entered by
    const del = c.onNode('node-a', [
      'nft',
      'delete',
      'element',
      'ip',
      'kube-proxy',
      'service-ips',
      '{ 10.96.0.10 . udp . 53 }',
    ]);
    assert.equal(del.code, 0, del.stderr);
    const r = c.kdebug(['drift', '--all-nodes', '--via', 'kube-proxy', '-o', 'json']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const found = (
      JSON.parse(r.stdout) as { findings: { id: string; node: string; service?: string }[] }
    ).findings;
    assert.deepEqual(
      found.map((f) => `${f.id} ${f.node} ${f.service}`),
      ['service-rules-missing node-a kube-system/kube-dns:dns'],
    );
  });
});
