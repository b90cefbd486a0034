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
