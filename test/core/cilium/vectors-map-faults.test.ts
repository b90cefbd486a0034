// Faults made in the BPF maps dump of Cilium's own script tests that leave every backend in place
// but change where packets go or who may send them: a traffic-policy flag, DSR, the source-range
// check, its policy and CIDRs, session affinity and its timeout, Maglev, reverse NAT. Each is
// found against the entries kdebug expects (cilium/maps/expected.ts), with its id, Service and map line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drift, edited, found } from '../../support/cilium-drift.js';

/** The one finding a fault makes. */
function only(v: string, maps: string) {
  const [f, ...rest] = drift(v, maps).findings;
  assert.deepEqual(rest, []);
  return f!;
}

describe("Cilium vectors: a fault in a BPF map entry's flags or tables, found by its behaviour", () => {
  it("Local gone from a LoadBalancer entry (the agent's table read besides)", () => {
    const v = '08-v118-lb-etp-local-itp-local';
    const maps = edited(v, [/(ADDR=1\.1\.1\.1:80\/TCP SLOT=\d+ .*LoadBalancer)\+Local/g, '$1']);
    const f = only(v, maps);
    assert.deepEqual([f.id, f.service], ['cilium-traffic-policy-differs', 'test/echo:http']);
    assert.match(f.title, /^1\.1\.1\.1:80\/TCP: BPF map lacks Local$/);
    // the map line of the entry is the evidence
    assert.match(
      f.drift.actual[0]!,
      /^nodes\/testnode\/cilium-bpf-lb-list\.txt:\d+: 1\.1\.1\.1:80\/TCP /,
    );
  });

  it('two-scopes gone from the external scope (the maps the only table)', () => {
    const v = '09-v118-lb-etp-cluster-itp-local-two-scopes';
    const maps = edited(v, [/(ADDR=1\.1\.1\.1:80\/TCP SLOT=\d+ .*)\+two-scopes/g, '$1']);
    assert.deepEqual(found(v, maps), [['cilium-traffic-policy-differs', 'test/echo:http']]);
  });

  it('InternalLocal written where the Service has none', () => {
    const v = '07-v118-loadbalancer-class';
    const maps = edited(v, [
      /(ADDR=10\.96\.50\.104:80\/TCP SLOT=\d+ .*ClusterIP)/g,
      '$1+InternalLocal',
    ]);
    assert.deepEqual(found(v, maps), [['cilium-traffic-policy-differs', 'test/echo:http']]);
  });

  it('DSR gone from the entry of a Service annotated dsr', () => {
    const v = '27-v118-forwarding-mode-dsr-annotation';
    const maps = edited(v, [/(ADDR=172\.16\.1\.1:80\/TCP SLOT=\d+ .*)\+dsr/g, '$1']);
    assert.deepEqual(found(v, maps), [['cilium-forwarding-differs', 'test/echo:http']]);
  });

  it('a source-range check where the Service has no ranges', () => {
    const v = '07-v118-loadbalancer-class';
    const maps = edited(v, [
      /(ADDR=172\.16\.1\.1:80\/TCP SLOT=\d+ .*LoadBalancer)/g,
      '$1+check source-range',
    ]);
    assert.deepEqual(found(v, maps), [['cilium-source-range-differs', 'test/echo:http']]);
  });

  it('a CIDR gone from an allow list keeps its clients out', () => {
    const v = '13-v118-lb-source-ranges-allow';
    const f = only(v, edited(v, [/^SRCRANGE: ID=2 .*\n/m, '']));
    assert.deepEqual([f.id, f.service], ['cilium-source-range-differs', 'test/echo:http']);
    assert.match(f.explanation, /10\.0\.0\.0\/8 missing from the map: keeps their clients out/);
  });

  it('a CIDR gone from a deny list lets its clients in', () => {
    const v = '14-v118-lb-source-ranges-deny';
    const f = only(v, edited(v, [/^SRCRANGE: ID=1 .*\n/m, '']));
    assert.deepEqual([f.id, f.service], ['cilium-source-range-differs', 'test/echo:http']);
    assert.match(f.explanation, /10\.0\.0\.0\/8 missing from the map: lets their clients in/);
  });

  it('a CIDR the Service does not name, in an allow list, lets its clients in', () => {
    const v = '13-v118-lb-source-ranges-allow';
    const f = only(v, edited(v, [/^(SRCRANGE: ID=2 .*\n)/m, '$1SRCRANGE: ID=2 CIDR=0.0.0.0/0\n']));
    assert.deepEqual([f.id, f.service], ['cilium-source-range-differs', 'test/echo:http']);
    assert.match(f.explanation, /0\.0\.0\.0\/0 in the map: lets their clients in/);
  });

  it('deny gone: the ranges to keep out are the ones let in', () => {
    const v = '14-v118-lb-source-ranges-deny';
    const maps = edited(v, [/(ADDR=10\.0\.0\.2:80\/TCP SLOT=\d+ .*)\+deny/g, '$1']);
    assert.deepEqual(found(v, maps), [['cilium-source-range-differs', 'test/echo:http']]);
  });

  it('a session affinity timeout changed', () => {
    const v = '03-v118-clusterip-session-affinity';
    const f = only(v, edited(v, [/AFFTimeout=42/, 'AFFTimeout=10']));
    assert.deepEqual([f.id, f.service], ['cilium-affinity-differs', 'test/echo:http']);
    assert.match(f.title, /on \(10 s\), expected 42 s$/);
  });

  it('session affinity gone from the entry', () => {
    const v = '03-v118-clusterip-session-affinity';
    const maps = edited(v, [/\+sessionAffinity/g, ''], [/AFFTimeout=42/, 'AFFTimeout=0']);
    assert.deepEqual(found(v, maps), [['cilium-affinity-differs', 'test/echo:http']]);
  });

  it("a backend gone from the affinity map: its clients' affinity is not kept", () => {
    const v = '04-v118-clusterip-session-affinity-3-backends';
    const f = only(v, edited(v, [/^AFF: ID=3 BEID=4\n/m, '']));
    assert.deepEqual([f.id, f.service], ['cilium-affinity-differs', 'test/echo:http']);
    assert.match(f.title, /affinity map lacks /);
  });

  it('Maglev turned into random on a Service annotated maglev', () => {
    const v = '29-v118-lb-algorithm-annotation-maglev';
    const maps = edited(
      v,
      [/(ADDR=10\.96\.50\.105:80\/TCP SLOT=0 )LBALG=maglev/, '$1LBALG=random'],
      [/^MAGLEV: ID=6 .*\n/m, ''],
    );
    assert.deepEqual(found(v, maps), [['cilium-algorithm-differs', 'test/echo2:http2']]);
  });

  it("the Maglev table gone where the agent's algorithm is maglev", () => {
    const v = '28-v118-external-clusterip-maglev';
    const f = only(v, edited(v, [/^MAGLEV: .*\n/m, '']));
    assert.deepEqual([f.id, f.service], ['cilium-algorithm-differs', 'test/echo:http']);
    assert.match(f.title, /random in the BPF map, expected Maglev$/);
  });

  it('a backend gone from the Maglev table gets no new connections', () => {
    const v = '29-v118-lb-algorithm-annotation-maglev';
    const maps = edited(v, [/^(MAGLEV: ID=5 INNER=\[)5\(256\), /m, '$1']);
    assert.deepEqual(found(v, maps), [['cilium-algorithm-differs', 'test/echo2:http2']]);
  });

  it("a NodePort address's reverse-NAT entry gone, or another address", () => {
    const v = '05-v118-nodeport-two-services';
    const gone = edited(v, [/^REV: ID=2 ADDR=1\.1\.1\.1:30781\n/m, '']);
    assert.deepEqual(found(v, gone), [['cilium-reverse-nat-differs', 'test/echo:http']]);
    const moved = edited(v, [
      /^REV: ID=6 ADDR=10\.96\.50\.105:80$/m,
      'REV: ID=6 ADDR=10.96.50.104:80',
    ]);
    assert.deepEqual(found(v, moved), [['cilium-reverse-nat-differs', 'test/echo2:http2']]);
    // the evidence is the REV line itself, not the Service's entry
    const at = moved.split('\n').findIndex((l) => l === 'REV: ID=6 ADDR=10.96.50.104:80') + 1;
    assert.deepEqual(drift(v, moved).findings[0]!.drift.actual, [
      `${'nodes/testnode/cilium-bpf-lb-list.txt'}:${at}: REV 10.96.50.104:80`,
    ]);
  });
});
