// IPVS mode where the objects kube-proxy takes its endpoints from were not captured (none in the
// facts): the virtual servers are compared, their real servers are not, never judged against
// "no endpoints" (as iptables drift does for its Service rules).
// The snapshot: ipvs-stale-real-server, its kube-proxy made v1.17 (the Endpoints), node
// vm-12-7-centos.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { allModes } from '../support/modes.js';

const NODE = 'vm-12-7-centos';

/** The snapshot as a v1.17 kube-proxy's (it reads the legacy Endpoints), `endpoints` or not. */
async function asV117(endpoints: boolean) {
  const facts = await readSnapshot('snapshots/ipvs-stale-real-server');
  facts.objects = (
    JSON.parse(
      JSON.stringify(facts.objects).replaceAll('v1.29.10', 'v1.17.17'),
    ) as typeof facts.objects
  ).filter((o) => endpoints || o.kind !== 'Endpoints');
  return new Analysis(facts, { code: allModes }).node(NODE);
}

describe('IPVS drift: the Endpoints a v1.17 kube-proxy reads, not captured', () => {
  it('no real server is said stale or missing; a note says they were not compared', async () => {
    const n = await asV117(false);
    assert.equal(n.expected().endpointsFrom.reads, 'Endpoints');
    const d = n.drift();
    assert.deepEqual(
      d.findings.filter((f) => /^endpoint-|real-server/.test(f.id)).map((f) => f.id),
      [],
    );
    assert.ok(
      d.notRead?.some(
        (f) =>
          /Endpoints not captured: the virtual servers' real servers were not compared/.test(
            f.title,
          ) && /never compared with "no endpoints"/.test(f.explanation),
      ),
      JSON.stringify(d.notRead?.map((f) => f.title)),
    );
  });

  it('captured: the real servers are compared (no such note)', async () => {
    const d = (await asV117(true)).drift();
    assert.ok(!d.notRead?.some((f) => /real servers were not compared/.test(f.title)));
  });
});
