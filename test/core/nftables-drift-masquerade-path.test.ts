// Masquerade in the nftables tables of 1.31-1.35, judged by what the table does: there a packet
// is masqueraded only through the 0x4000 mark (an endpoint or Service chain jumps to
// mark-for-masquerade, which sets it; masquerading, from nat-postrouting, masquerades what
// carries it: kube-proxy's pkg/proxy/nftables/proxier.go at v1.33). Each fault is made here
// from a real recording (test/fixtures/releases/<minor>/nftables); drift, the Hairpin step and
// kdebug's own walk must say the same: not masqueraded. A masquerading chain spelled as 1.36
// writes it does the same and is no finding. IP conventions (the lab, topology.ts): Pod CIDR
// 10.244.0.0/16, Service CIDR 10.96.0.0/16.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { diagnose } from '../../src/core/diagnose.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { FIXTURES } from '../versions/record.js';
import { allModes } from '../support/modes.js';

type Rule = { chain: string; expr: unknown[] };
type Listing = { nftables: Record<string, unknown>[] };
const NODE = 'node-a';
const SERVICE = { namespace: 'matrix', service: 'cluster-ip' };

/** A release's recording with node-a's table changed by `edit` (nft's JSON listing). */
async function edited(minor: number, edit: (json: Listing) => void): Promise<Facts> {
  const facts = await readSnapshot(join(FIXTURES, String(minor), 'nftables'));
  const stem = nftStems('IPv4').json;
  const json = JSON.parse(facts.nodes[NODE]![stem]!) as Listing;
  edit(json);
  facts.nodes[NODE]![stem] = JSON.stringify(json);
  return facts;
}

const rulesOf = (json: Listing, chain: string) =>
  json.nftables.filter((o) => (o['rule'] as Rule | undefined)?.chain === chain);

/** Deletes every rule of `chain`. */
const emptied = (chain: string) => (json: Listing) => {
  const before = json.nftables.length;
  json.nftables = json.nftables.filter((o) => (o['rule'] as Rule | undefined)?.chain !== chain);
  assert.ok(json.nftables.length < before, `${chain} held rules`);
};

/** What drift, svc and the walk say of the Service's endpoint on node-a reaching itself. */
function said(facts: Facts) {
  const analysis = new Analysis(facts, { code: allModes });
  const drift = analysis
    .node(NODE)
    .drift()
    .findings.map((f) => ({
      id: f.id,
      severity: severityOf(f),
      title: f.title,
      text: f.explanation,
    }));
  const report = diagnose(facts, SERVICE, { analysis });
  const step = (id: string) => report.steps.find((s) => s.id === id)!;
  // the Service's endpoint on node-a, connecting to its own Service
  const svc = analysis.view.services.find(
    (s) => s.namespace === 'matrix' && s.name === 'cluster-ip',
  )!;
  const hairpin = step('hairpin').findings.find((f) => f.status !== 'pass');
  const pod = /\((10\.244\.\d+\.\d+)\)/.exec(hairpin?.explanation ?? '')?.[1];
  const walk = pod
    ? analysis.node(NODE).trace({
        src: pod,
        dst: svc.clusterIP!,
        dport: svc.ports[0]!.port,
        protocol: 'tcp',
        fromHost: false,
      }).outcomes
    : [];
  return { drift, rules: step('rules'), hairpin: step('hairpin'), pod, walk };
}

describe('nftables 1.31-1.35: masquerade through the mark, by behaviour', () => {
  for (const minor of [31, 33, 35]) {
    it(`v1.${minor}: mark-for-masquerade's rule deleted: masquerade-missing naming the mark, Hairpin not passed, as the walk says`, async () => {
      const s = said(await edited(minor, emptied('mark-for-masquerade')));
      assert.deepEqual(
        s.drift.map((f) => `${f.severity} ${f.id} ${f.title}`),
        ['warning masquerade-missing mark-for-masquerade does not set the mark 0x4000'],
      );
      assert.match(s.drift[0]!.text, /is not masqueraded: replies take another path/);
      assert.equal(s.rules.status, 'warn');
      assert.equal(s.hairpin.status, 'warn');
      const h = s.hairpin.findings.find((f) => f.status === 'warn')!;
      assert.equal(h.id, 'hairpin-masquerade-missing');
      assert.match(
        h.explanation,
        /jumps to mark-for-masquerade, but on node-a mark-for-masquerade sets no mark/,
      );
      // kdebug's walk: the Pod balanced to itself is DNATed to itself and not masqueraded
      const self = s.walk.filter((o) => o.dnat?.startsWith(`${s.pod}:`));
      assert.ok(self.length > 0, `a walk DNATs ${s.pod} to itself`);
      assert.ok(self.every((o) => !o.masquerade));
    });
  }

  it("v1.33: the masquerading chain's rules deleted: one masquerade-missing saying marked packets are not masqueraded", async () => {
    const s = said(await edited(33, emptied('masquerading')));
    assert.deepEqual(
      s.drift.map((f) => `${f.severity} ${f.id} ${f.title}`),
      ['warning masquerade-missing nat-postrouting does not masquerade packets marked 0x4000'],
    );
    assert.equal(s.hairpin.status, 'warn');
    assert.match(
      s.hairpin.findings.find((f) => f.status === 'warn')!.explanation,
      /nat-postrouting does not masquerade packets marked 0x4000/,
    );
    assert.ok(s.walk.filter((o) => o.dnat?.startsWith(`${s.pod}:`)).every((o) => !o.masquerade));
  });

  it('v1.33: the masquerading chain spelled as 1.36 writes it (one rule, same effect): no finding, Hairpin passed', async () => {
    const v36 = JSON.parse(
      (await readSnapshot(join(FIXTURES, '36', 'nftables'))).nodes[NODE]![nftStems('IPv4').json]!,
    ) as Listing;
    // 1.36's `mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random`
    const oneRule = rulesOf(v36, 'masquerading').find((o) => {
      const text = JSON.stringify(o);
      return text.includes('"mangle"') && !text.includes('hairpin-connections');
    });
    assert.ok(oneRule, "1.36's recording holds the one-rule masquerade");
    const s = said(
      await edited(33, (json) => {
        emptied('masquerading')(json);
        json.nftables.push(structuredClone(oneRule));
      }),
    );
    assert.deepEqual(s.drift, []);
    assert.equal(s.rules.status, 'pass');
    assert.equal(s.hairpin.status, 'pass');
  });

  it('v1.34: mark-for-masquerade and every jump to it deleted: the Hairpin step names the missing chain', async () => {
    const s = said(
      await edited(34, (json) => {
        const before = json.nftables.length;
        json.nftables = json.nftables.filter((o) => {
          const text = JSON.stringify(o);
          return !(
            (o['chain'] as { name?: string } | undefined)?.name === 'mark-for-masquerade' ||
            (o['rule'] !== undefined && text.includes('"mark-for-masquerade"'))
          );
        });
        assert.ok(json.nftables.length < before);
      }),
    );
    assert.equal(s.hairpin.status, 'fail');
    const h = s.hairpin.findings.find((f) => f.status === 'fail')!;
    assert.match(h.explanation, /kube-proxy before 1\.36 writes/);
    assert.match(h.explanation, /and the table has no chain mark-for-masquerade/);
    assert.ok(h.evidence.some((e) => e.text.endsWith('no chain mark-for-masquerade')));
  });
});
