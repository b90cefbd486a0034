// kdebug's drift on the node of each of Cilium's own script tests: the objects, an agent of the
// vector's release with its script's flags, and the tables the script checks as that agent's
// listings (frontends, backends, the BPF maps). What Cilium holds there is no drift; the same
// maps dump with a fault made in it is, named by the finding and its Service.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drift, edited, found, gone } from '../../support/cilium-drift.js';
import { listing, setup, vectors } from '../../support/cilium-vectors.js';

describe("Cilium vectors: what Cilium's tests hold is no drift, its BPF maps included", () => {
  for (const v of vectors) {
    if (listing(v, 'expected-maps.txt') === undefined) continue;
    // without kube-proxy replacement kube-proxy serves the node: its rules are what drift reads
    if (!setup(v).options.kubeProxyReplacement) continue;
    it(v, () => {
      const d = drift(v);
      assert.deepEqual(
        d.findings.map((f) => `${f.id} ${f.title}`),
        [],
      );
      // the maps are compared with the agent's table where the script checks both
      if (listing(v, 'expected-frontends.txt') !== undefined) assert.equal(d.cilium?.read, 'both');
    });
  }
});

describe('Cilium vectors: the BPF maps as the only table read', () => {
  it("1.17's portless <zero> wildcard entries: not called stale, said as not compared", () => {
    const d = drift('01-v117-nodeport-two-services', undefined, null);
    assert.deepEqual(
      d.findings.map((f) => `${f.id} ${f.title}`),
      [],
    );
    assert.equal(d.cilium?.read, 'maps');
    assert.deepEqual(
      d.notRead?.filter((n) => n.id === 'table-not-captured').map((n) => n.title),
      ['2 wildcard BPF map entries not compared'],
    );
  });
});

describe("Cilium vectors: faults made in the BPF maps Cilium's tests hold", () => {
  it('a backend the health check quarantined is a note, no drift', () => {
    const d = drift('26-v118-unhealthy-backend-quarantined');
    assert.deepEqual(d.findings, []);
    assert.deepEqual(
      d.notes?.map((n) => n.title),
      ['10.96.50.104:80/TCP: backend 10.244.1.2:80/TCP quarantined in the BPF map'],
    );
  });

  it("a backend gone from a NodePort address's entry, still in the agent's table", () => {
    const v = '05-v118-nodeport-two-services';
    const maps = edited(v, ...gone('1\\.1\\.1\\.1:30781/TCP', 4, 4));
    const [f, ...rest] = drift(v, maps).findings;
    assert.deepEqual([f?.id, f?.service, rest], ['cilium-bpf-map-differs', 'test/echo:http', []]);
    // the node address's entry, not the wildcard's, lacks it
    assert.match(f!.explanation, /^For frontend 1\.1\.1\.1:30781\/TCP .* lacks 10\.244\.1\.4:80:/);
  });

  it('a backend gone from the only table read, the maps', () => {
    const v = '09-v118-lb-etp-cluster-itp-local-two-scopes';
    const maps = edited(v, ...gone('1\\.1\\.1\\.1:80/TCP', 2, 2));
    assert.deepEqual(found(v, maps), [['cilium-backend-missing', 'test/echo:http']]);
  });

  const terminating = '11-v118-terminating-maglev-one-terminating';
  const busy = () =>
    edited(terminating, [/^(SVC: ID=1 .* SLOT=0 .*)COUNT=1 QCOUNT=1/m, '$1COUNT=2 QCOUNT=0']);

  it('a terminating backend given new connections while an active one is left', () =>
    assert.deepEqual(found(terminating, busy()), [
      ['cilium-backend-state-differs', 'test/graceful-term-svc'],
    ]));

  it("the same, where the agent's table says it terminating", () => {
    // 11's frontends table as 10 and 12 hold it: the same backends (their states in 11's backends table)
    const table = listing('10-v118-terminating-maglev-all-active', 'expected-frontends.txt');
    assert.deepEqual(found(terminating, listing(terminating, 'expected-maps.txt')!, table), []);
    assert.deepEqual(found(terminating, busy(), table), [
      ['cilium-bpf-map-differs', 'test/graceful-term-svc'],
    ]);
  });

  it("a frontend gone from the maps, still in the agent's table", () => {
    const v = '07-v118-loadbalancer-class';
    const maps = edited(v, [/^SVC: ID=\d+ ADDR=172\.16\.1\.1:80\/TCP .*\n/gm, '']);
    assert.deepEqual(found(v, maps), [['cilium-bpf-map-differs', 'test/echo:http']]);
  });

  it('a frontend gone from the maps, the only table read', () => {
    const v = '27-v118-forwarding-mode-dsr-annotation';
    const maps = edited(v, [/^SVC: ID=\d+ ADDR=172\.16\.1\.1:80\/TCP .*\n/gm, '']);
    assert.deepEqual(found(v, maps), [['cilium-frontend-missing', 'test/echo:http']]);
  });

  it('a LoadBalancer entry without the source-range check lets every source through', () => {
    const v = '13-v118-lb-source-ranges-allow';
    const maps = edited(v, [
      /(ADDR=10\.0\.0\.2:80\/TCP SLOT=\d+ .*FLAGS=LoadBalancer)\+check source-range/g,
      '$1',
    ]);
    assert.deepEqual(found(v, maps), [['cilium-source-range-missing', 'test/echo:http']]);
  });
});
