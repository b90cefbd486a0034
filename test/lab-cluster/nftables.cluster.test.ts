// The lab cluster with kube-proxy in nftables mode (--mode nftables): the real kube-proxy writes
// its "kube-proxy" nftables table and traffic goes through it; kdebug reads that table on each
// node, compares the Service's endpoints in it, and says what it does not compare yet.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { goUnavailable } from '../support/cluster/build.js';
import { ClusterClient, type SvcJson } from '../support/cluster/client.js';
import { clusterUnavailable, down, up } from '../support/cluster/cluster.js';
import { hasCommand, skipWithout } from '../support/skip.js';

const why =
  goUnavailable() ?? clusterUnavailable() ?? (hasCommand('nft') ? '' : 'nft (nftables) is missing');

describe('the lab cluster, kube-proxy in nftables mode', skipWithout(why), () => {
  let c: ClusterClient;
  before(async () => {
    c = new ClusterClient(await up({ prefix: 'kdc', nodes: 2, mode: 'nftables' }));
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

  it("kdebug svc: each node's nftables table read, the endpoints in it as expected, what is not compared said", () => {
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
    assert.deepEqual(
      rules.findings.map((f) => `${f.id}:${f.status}@${f.node}`),
      c.info.nodes.flatMap((n) => [
        `rules-match:pass@${n.name}`,
        `rules-nftables-partly-observed:skip@${n.name}`,
      ]),
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
      ping?.evidence.some((e) => /: chain cluster-ips-check: ip daddr @cluster-ips reject/.test(e)),
      JSON.stringify(ping?.evidence),
    );
    assert.ok(ping?.evidence.some((e) => /: set cluster-ips holds 10\.96\.0\.10$/.test(e)));
    // CoreDNS reaching itself through kube-dns: in its node's hairpin-connections set
    const hairpin = doc.steps.find((s) => s.id === 'hairpin')!;
    assert.deepEqual(
      hairpin.findings.map((f) => `${f.id}:${f.status}`),
      ['hairpin-masquerade-present:pass'],
    );
    assert.ok(hairpin.findings[0]!.evidence.every((e) => /set hairpin-connections holds /.test(e)));
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
