// Drift over an agent's table cut mid-row: what it lacks is not compared, and said.
//
// IP conventions: web's ClusterIP 10.96.0.50, its Pods 10.244.0.5 and 10.244.1.6; kube-dns
// 10.96.0.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { driftAnswer, driftExit } from '../../../src/core/dataplane/drift.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { driftDoc, driftText } from '../../../src/output/drift.js';
import { assertMatchesSchema } from '../../support/schema.js';
import { ciliumCluster, facts, run } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const HEADER =
  'Address            Type       ServiceName           PortName  Backends                                  Status';
const DNS_CUT = '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns       ';

describe('Cilium drift of a db/show frontends table cut mid-row', () => {
  const d = new Analysis(
    facts(ciliumCluster({}), { 'node-b': { 'cilium-frontends': `${HEADER}\n${DNS_CUT}` } }),
    { code: allModes },
  )
    .node('node-b')
    .drift();
  it('a frontend not in it is not called missing', () =>
    assert.deepEqual(
      d.findings.filter((f) => f.id === 'cilium-frontend-missing').map((f) => f.title),
      [],
    ));
  it('says what was not compared, so "no drift" is of what was read only', () => {
    const note = d.notRead?.find((n) => /read in part/.test(n.title));
    assert.match(
      note?.explanation ?? '',
      /frontends not in it, not compared: 10\.96\.0\.50:80\/TCP/,
    );
  });
  it('the closing line says the node was read in part, not a bare "no drift"', () =>
    assert.match(
      driftText(driftAnswer('test', [d]), {}, 200),
      /^1 node: no drift in what was read \(read in part: see the notes\)$/m,
    ));
  // before: exit 0, as a node read whole with no drift
  it('exits 2 where no drift is found, as a dump cut short does; 1 where drift is', () => {
    assert.deepEqual(d.readInPart, ['nodes/node-b/cilium-frontends.txt']);
    assert.equal(driftExit(driftAnswer('test', [d])), 'failed');
    // a node not compared (an iptables dump cut short) exits the same
    assert.equal(
      driftExit(driftAnswer('test', [], [{ node: 'node-a', why: 'cut short' }])),
      'failed',
    );
    assert.equal(driftExit(driftAnswer('test', [{ ...d, drifted: true }])), 'problem');
  });
  // before: the JSON said nothing of it (notes aside), and its schema forbade saying it
  it('-o json says which listing the node was read in part from, valid against drift.v1', () => {
    const doc = driftDoc(driftAnswer('test', [d]));
    assertMatchesSchema(doc, 'drift -o json of a node read in part');
    assert.deepEqual(doc.nodes[0]!.readInPart, ['nodes/node-b/cilium-frontends.txt']);
    // a node read whole carries none
    const whole = { ...d, readInPart: undefined };
    const doc2 = driftDoc(driftAnswer('test', [whole]));
    assertMatchesSchema(doc2, 'drift -o json of a node read whole');
    assert.equal('readInPart' in doc2.nodes[0]!, false);
  });
});

describe('the Rules step on a node whose Cilium table was read in part', () => {
  const rulesOn = (listing: string) =>
    run(rulesCheck, facts(ciliumCluster({}), { 'node-b': { 'cilium-frontends': listing } })).filter(
      (f) => f.node === 'node-b' || f.nodes?.includes('node-b'),
    );
  // before: nothing was said of web on node-b, its frontend past the cut
  it("web's frontend past the cut: not observed there, not a match", () => {
    const found = rulesOn(`${HEADER}\n${DNS_CUT}`);
    assert.deepEqual(
      found.filter((f) => f.id === 'rules-match'),
      [],
    );
    const f = found.find((x) => x.id === 'rules-cilium-not-observed');
    assert.ok(f, JSON.stringify(found.map((x) => x.id)));
    assert.equal(f.status, 'skip');
    assert.match(
      f.evidence.map((e) => `${e.kind}: ${e.text}`).join('\n'),
      /^not-observed: nodes\/node-b\/cilium-frontends\.txt:2: /m,
    );
  });
  // before: "80/TCP -> 2 endpoints in Cilium, as expected", a pass
  it('web\'s backends cut off by Cilium\'s own "+ N more": not a match', () => {
    const found = rulesOn(
      [
        HEADER,
        '10.96.0.50:80/TCP  ClusterIP  default/web           http      10.244.0.5:8080/TCP + 1 more ...          Done',
        '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns       10.244.0.2:53/UDP                         Done',
        '',
      ].join('\n'),
    );
    assert.deepEqual(
      found.filter((f) => f.id === 'rules-match'),
      [],
    );
    const f = found.find((x) => x.id === 'rules-cilium-not-observed');
    assert.ok(f, JSON.stringify(found.map((x) => x.id)));
    assert.match(f.evidence[0]!.text, /10\.96\.0\.50:80\/TCP: 1 of its backends not shown/);
  });
  it('the table read whole: a match', () => {
    const found = rulesOn(
      [
        HEADER,
        '10.96.0.50:80/TCP  ClusterIP  default/web           http      10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP  Done',
        '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns       10.244.0.2:53/UDP                         Done',
        '',
      ].join('\n'),
    );
    assert.ok(
      found.some((f) => f.id === 'rules-match'),
      JSON.stringify(found.map((x) => x.id)),
    );
  });
});
