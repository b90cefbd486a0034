// The BPF map findings say where each setting they rest on was read; one that rests on a setting
// not read (Cilium's default taken) is a note, said assumed, never drift. Vector 27 (1.18): a
// Service annotated service.cilium.io/forwarding-mode dsr, the annotation honoured.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drift, edited } from '../../support/cilium-drift.js';
import { driftDoc } from '../../../src/output/drift.js';

const V = '27-v118-forwarding-mode-dsr-annotation';
const noDsr = () => edited(V, [/(ADDR=172\.16\.1\.1:80\/TCP SLOT=\d+ .*)\+dsr/g, '$1']);

describe("BPF map drift: the settings' sources", () => {
  it('bpf-lb-mode and its annotation read from cilium-config: drift, each source said', () => {
    const d = drift(V, noDsr());
    const f = d.findings.find((x) => x.id === 'cilium-forwarding-differs');
    assert.ok(f, JSON.stringify(d.findings.map((x) => x.id)));
    assert.match(
      f.explanation,
      /bpf-lb-mode \(snat, from ConfigMap kube-system\/cilium-config bpf-lb-mode\)/,
    );
    assert.match(
      f.explanation,
      /bpf-lb-mode-annotation, from ConfigMap kube-system\/cilium-config bpf-lb-mode-annotation\)/,
    );
    assert.equal(d.drifted, true);
  });

  it('bpf-lb-mode not set: the same difference is a note, said assumed, and no drift', () => {
    const d = drift(V, noDsr(), undefined, { 'bpf-lb-mode': undefined as unknown as string });
    assert.deepEqual(
      d.findings.filter((x) => x.id === 'cilium-forwarding-differs'),
      [],
    );
    const n = d.notes?.find((x) => x.id === 'cilium-forwarding-differs');
    assert.ok(n);
    assert.equal(d.drifted, false);
    assert.match(n.title, /\(assumed\)$/);
    assert.match(n.explanation, /bpf-lb-mode \(snat, not read \(Cilium's default: snat\)\)/);
    assert.match(n.explanation, /an assumption, not drift/);
  });

  it("drift's JSON gives each setting typed: its value, its source, and whether it was assumed", () => {
    const d = drift(V, noDsr(), undefined, { 'bpf-lb-mode': undefined as unknown as string });
    const [node] = driftDoc({ label: 'x', nodes: [d], drifted: d.drifted, notCompared: [] }).nodes;
    const by = new Map(node!.cilium!.settings.map((s) => [s.setting, s]));
    // no status recorded for this vector: cilium-config's key
    assert.deepEqual(by.get('kube-proxy-replacement')?.source, {
      from: 'cilium-config',
      key: 'kube-proxy-replacement',
    });
    assert.deepEqual(by.get('bpf-lb-mode'), {
      setting: 'bpf-lb-mode',
      value: 'snat',
      source: { from: 'not read', assumed: "Cilium's default: snat" },
      assumed: true,
    });
    assert.deepEqual(by.get('bpf-lb-mode-annotation'), {
      setting: 'bpf-lb-mode-annotation',
      value: true,
      source: { from: 'cilium-config', key: 'bpf-lb-mode-annotation' },
      assumed: false,
    });
    assert.equal(by.get('bpf-lb-external-clusterip')?.source.from, 'cilium-config');
  });
});

// The source-range check and session affinity findings name the settings they rest on as the
// others do: before, cilium-source-range-missing and cilium-affinity-differs said none.
describe("BPF map drift: the source-range check's and session affinity's settings, with their sources", () => {
  it('a ClusterIP guarded by bpf-lb-source-range-all-types: its source is named (vector 123, 1.18.10)', () => {
    const v = '123-v118-source-ranges-all-types-1-18-10';
    const maps = edited(v, [
      /(ADDR=10\.0\.0\.1:80\/TCP SLOT=0 .*ClusterIP\+non-routable)\+check source-range/,
      '$1',
    ]);
    const f = drift(v, maps).findings.find((x) => x.id === 'cilium-source-range-missing');
    assert.ok(f);
    assert.match(
      f.explanation,
      /guard this frontend \(bpf-lb-source-range-all-types, from ConfigMap kube-system\/cilium-config bpf-lb-source-range-all-types\)/,
    );
  });

  it('a LoadBalancer frontend: guarded by the release whatever its settings say, said so (vector 13)', () => {
    const v = '13-v118-lb-source-ranges-allow';
    const maps = edited(v, [/(ADDR=10\.0\.0\.2:80\/TCP SLOT=\d+ .*)\+check source-range/g, '$1']);
    const f = drift(v, maps).findings.find((x) => x.id === 'cilium-source-range-missing');
    assert.ok(f);
    assert.match(
      f.explanation,
      /\(Cilium 1\.18\.0 guards LoadBalancer frontends whatever its settings say\)/,
    );
  });

  it('a session affinity timeout changed: enable-session-affinity and why it is on are said (vector 03)', () => {
    const v = '03-v118-clusterip-session-affinity';
    const d = drift(v, edited(v, [/AFFTimeout=42/, 'AFFTimeout=10']));
    const f = d.findings.find((x) => x.id === 'cilium-affinity-differs');
    assert.ok(f);
    assert.match(
      f.explanation,
      /the agent's session affinity: enable-session-affinity on: kube-proxy replacement turns it on\)/,
    );
  });

  it('a backend gone from the affinity map: the same setting and source said (vector 04)', () => {
    const v = '04-v118-clusterip-session-affinity-3-backends';
    const d = drift(v, edited(v, [/^AFF: ID=3 BEID=4\n/m, '']));
    const f = d.findings.find((x) => x.id === 'cilium-affinity-differs');
    assert.ok(f, JSON.stringify(d.findings.map((x) => x.id)));
    assert.match(f.title, /affinity map lacks /);
    assert.match(
      f.explanation,
      /\(the agent's session affinity: enable-session-affinity on: kube-proxy replacement turns it on\)\.$/,
    );
  });
});
