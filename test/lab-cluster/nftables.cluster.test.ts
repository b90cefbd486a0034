// The lab cluster with kube-proxy in nftables mode (--mode nftables): the real kube-proxy writes
// its "kube-proxy" nftables table and traffic goes through it; kdebug reads iptables-mode rules
// only, and must say so per node, not call an empty iptables dump unreadable nor pass it.
import assert from 'node:assert/strict';
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

  it('kdebug svc: nftables mode said per node at Rules (not unreadable, not passed), nothing fails', () => {
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
    assert.equal(rules.status, 'skip');
    assert.deepEqual(
      rules.findings.map((f) => `${f.id}:${f.status}@${f.node}`),
      c.info.nodes.map((n) => `rules-other-mode:skip@${n.name}`),
    );
    assert.deepEqual(
      doc.steps.filter((s) => s.status === 'fail' || s.status === 'warn').map((s) => s.id),
      [],
    );
  });
});
