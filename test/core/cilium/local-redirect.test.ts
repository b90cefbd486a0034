// A frontend a Cilium Local Redirect Policy takes (service list's LocalRedirect type, before
// 1.17): its backends are the policy's node-local Pods, not the Service's endpoints. Drift notes
// it; the Rules step warns that the Service's endpoints are not used there and never passes them
// as verified; Traffic policy does not say that node forwards to any ready endpoint.
//
// IP conventions: web's ClusterIP 10.96.0.50, its Pods 10.244.0.5 (node-a) and 10.244.1.6
// (node-b); kube-dns 10.96.0.10. The redirect Pod: 10.244.1.99, or web's own 10.244.1.6.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { diagnose } from '../../../src/core/diagnose.js';
import { TARGET, ciliumCluster, facts, run } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const listing = (backend: string) =>
  [
    'ID   Frontend              Service Type    Backend',
    `1    10.96.0.50:80/TCP     LocalRedirect   1 => ${backend}/TCP (active)`,
    '2    10.96.0.10:53/UDP     ClusterIP       1 => 10.244.0.2:53/UDP (active)',
    '',
  ].join('\n');
const factsWith = (backend: string) =>
  facts(ciliumCluster({}), { 'node-b': { 'cilium-service-list': listing(backend) } });

describe('a Service frontend taken by a Local Redirect Policy on a Cilium node', () => {
  for (const backend of ['10.244.1.99:8080', '10.244.1.6:8080']) {
    describe(`redirected to ${backend}`, () => {
      it('drift: a note of the redirect, no backend called missing or stale', () => {
        const d = new Analysis(factsWith(backend), { code: allModes }).node('node-b').drift();
        assert.deepEqual(
          d.findings.map((f) => f.id),
          [],
        );
        const note = d.notes?.find((n) => n.id === 'cilium-local-redirect');
        assert.match(
          note?.title ?? '',
          new RegExp(
            `^10\\.96\\.0\\.50:80/TCP is redirected by a Local Redirect Policy to ${backend.replace(/\./g, '\\.')}/TCP`,
          ),
        );
        assert.match(note!.explanation, /the Service's endpoints are not used here/);
      });

      // before: "80/TCP -> 1 endpoint in Cilium, as expected" where the policy's Pod is web's
      // own, and stale and missing backends where it is not
      it('the Rules step warns on node-b and passes nothing of it there', () => {
        const found = run(rulesCheck, factsWith(backend)).filter(
          (f) => f.node === 'node-b' || f.nodes?.includes('node-b'),
        );
        const ids = found.map((f) => `${f.id} ${f.status}`);
        assert.ok(ids.includes('cilium-local-redirect warn'), ids.join(', '));
        assert.ok(!ids.some((i) => i.startsWith('rules-match')), ids.join(', '));
        assert.ok(!ids.some((i) => /cilium-backend-(missing|stale)/.test(i)), ids.join(', '));
      });
    });
  }

  it('Traffic policy: node-b is not said to forward to any ready endpoint', () => {
    const report = diagnose(factsWith('10.244.1.6:8080'), TARGET, { code: allModes });
    const tp = report.steps.find((s) => s.id === 'traffic-policy')!;
    const pass = tp.findings.find((f) => f.id === 'traffic-policy-cluster' && f.status === 'pass');
    assert.ok(!pass?.nodes?.includes('node-b') && pass?.node !== 'node-b', JSON.stringify(pass));
    const notMet = tp.findings.find((f) => f.id === 'traffic-policy-not-met');
    assert.equal(notMet?.node, 'node-b');
    assert.match(notMet!.explanation, /redirected by a Local Redirect Policy/);
  });
});
