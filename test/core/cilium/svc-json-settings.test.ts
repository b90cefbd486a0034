// `svc -o json` carries each Cilium node's agent settings with where each was read, as drift's
// and expect's JSON do (agent/provenance.ts settingsStated): before, svc's JSON had none.
//
// IP conventions: web 10.96.0.50:80 -> 10.244.0.5:8080 (node-a), 10.244.1.6:8080 (node-b).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diagnose } from '../../../src/core/diagnose.js';
import { reportDoc } from '../../../src/output/json.js';
import { settingsStated } from '../../../src/core/dataplane/cilium/agent/provenance.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { ciliumCluster, dumps, facts, healthy, TARGET } from '../checks/builders.js';
import { assertMatchesSchema } from '../../support/schema.js';
import { allModes } from '../../support/modes.js';

describe("svc -o json: each Cilium node's agent settings, with their sources", () => {
  const f = facts(ciliumCluster({ 'bpf-lb-mode': 'dsr' }));
  const doc = reportDoc(diagnose(f, TARGET, { code: allModes })) as ReturnType<typeof reportDoc> & {
    nodes?: { node: string; cilium: { agent: string; settings: unknown[] } }[];
  };

  it('names each node in Cilium mode with its agent and settings, as drift and expect say them', () => {
    assert.deepEqual(
      doc.nodes?.map((n) => n.node),
      ['node-a', 'node-b'],
    );
    const a = new Analysis(f, { code: allModes }).state('node-b').cilium!;
    const b = doc.nodes!.find((n) => n.node === 'node-b')!;
    assert.equal(b.cilium.agent, `${a.pod.namespace}/${a.pod.name}`);
    assert.deepEqual(b.cilium.settings, settingsStated(a));
    const mode = (b.cilium.settings as { setting: string }[]).find(
      (s) => s.setting === 'bpf-lb-mode',
    );
    assert.deepEqual(mode, {
      setting: 'bpf-lb-mode',
      value: 'dsr',
      source: { from: 'cilium-config', key: 'bpf-lb-mode' },
      assumed: false,
    });
  });

  it('matches the published schema, where nodes is optional', () => assertMatchesSchema(doc));

  it('a cluster without Cilium: no nodes property (the document as before)', () => {
    const d = reportDoc(diagnose(facts(healthy(), dumps(healthy())), TARGET, { code: allModes }));
    assert.equal('nodes' in d, false);
  });
});
