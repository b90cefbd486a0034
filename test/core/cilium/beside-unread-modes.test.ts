// kube-proxy in nftables and IPVS mode beside a Cilium agent whose half was not read: what drift's
// text and JSON and the Rules step say of the agent. The lab's truth matrix as recorded with
// kube-proxy v1.37 in each mode (test/fixtures/releases/37/{nftables,ipvs}: kube-proxy's Pods and
// state), with a Cilium 1.18.6 agent Pod on each node and cilium-config set to
// kube-proxy-replacement: false with enable-node-port: true, a partial replacement (1.18 keeps the
// per-feature keys for "false": pkg/kpr) whose Service table was never listed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { driftAnswer, driftExit } from '../../../src/core/dataplane/drift.js';
import { driftDoc, driftText } from '../../../src/output/drift.js';
import type { Facts } from '../../../src/core/model.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { allModes } from '../../support/modes.js';
import { aCiliumAgent, aCiliumConfig } from '../../support/builders.js';
import { assertMatchesSchema } from '../../support/schema.js';
import { run } from '../checks/builders.js';

const NODE = 'node-a';
const NOT_READ =
  /its Service table \(cilium-dbg service list, db\/show frontends or bpf lb list\) was not read/;

async function facts(mode: 'nftables' | 'ipvs'): Promise<Facts> {
  const base = await readSnapshot(`test/fixtures/releases/37/${mode}`);
  const config = aCiliumConfig({ 'kube-proxy-replacement': 'false', 'enable-node-port': 'true' });
  return {
    ...base,
    objects: [...base.objects, aCiliumAgent('node-a'), aCiliumAgent('node-b'), config],
  };
}

for (const mode of ['nftables', 'ipvs'] as const)
  describe(`kube-proxy in ${mode} mode beside an agent whose table was not read`, () => {
    it('drift names what of the agent was not read, in text and JSON, and says no verdict on it', async () => {
      const a = new Analysis(await facts(mode), { code: allModes });
      assert.equal(a.state(NODE).mode.value, mode);
      const d = a.node(NODE).drift();
      const note = d.notRead?.find((n) => n.drift.component === 'cilium');
      assert.equal(note?.id, 'table-not-captured');
      assert.match(note!.explanation, NOT_READ);
      const answer = driftAnswer('t', [d], []);
      const text = driftText(answer);
      assert.match(text, NOT_READ);
      assert.match(text, /no drift in what was read/);
      // before: exit 0 and nothing in the node's JSON said the agent's part was not compared
      assert.equal(driftExit(answer), 'failed');
      const doc = driftDoc(answer);
      assert.deepEqual(doc.nodes[0]!.readInPart, [
        'agent kube-system/cilium-node-a beside kube-proxy (its Service table not read)',
      ]);
      assert.match(doc.notes.find((n) => n.id === 'table-not-captured')?.message ?? '', NOT_READ);
      assertMatchesSchema(doc);
    });

    // before: rules-match (pass) on kube-proxy's state alone, the agent's part in its explanation
    it('the Rules step does not pass the node: what was not read is why', async () => {
      const all = run(
        rulesCheck,
        await facts(mode),
        {},
        { namespace: 'matrix', service: 'node-port' },
      );
      const here = all.filter((x) => x.node === NODE || x.nodes?.includes(NODE));
      const match = here.find((x) => x.id === 'rules-match');
      assert.equal(match, undefined, match?.explanation);
      const skip = here.find((x) => x.status === 'skip' && NOT_READ.test(x.explanation));
      assert.ok(skip, here.map((x) => `${x.id} ${x.status}: ${x.title}`).join('\n'));
      assert.match(
        skip.title,
        /^node-a: agent kube-system\/cilium-node-a beside kube-proxy \(its Service table not read\): whether it forwards the Service is not observed$/,
      );
    });
  });
