// Drift over an agent's table cut mid-row: what it lacks is not compared, and said.
//
// IP conventions: web's ClusterIP 10.96.0.50, its Pods 10.244.0.5 and 10.244.1.6; kube-dns
// 10.96.0.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { driftAnswer } from '../../../src/core/dataplane/drift.js';
import { driftText } from '../../../src/output/drift.js';
import { ciliumCluster, facts } from '../checks/builders.js';

const HEADER =
  'Address            Type       ServiceName           PortName  Backends                                  Status';
const DNS_CUT = '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns       ';

describe('Cilium drift of a db/show frontends table cut mid-row', () => {
  const d = new Analysis(
    facts(ciliumCluster({}), { 'node-b': { 'cilium-frontends': `${HEADER}\n${DNS_CUT}` } }),
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
      /^1 node: no drift \(read in part: see the notes\)$/m,
    ));
});
