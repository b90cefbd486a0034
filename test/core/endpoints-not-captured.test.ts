// A v1.15 kube-proxy routes by the legacy Endpoints: where the capture did not read them (listing
// Endpoints forbidden, none in the facts), the node's Service rules are not compared, never
// judged against "no endpoints".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { diagnose } from '../../src/core/diagnose.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { driftText } from '../../src/output/drift.js';
import { allModes } from '../support/modes.js';

const NODE = 'vm-12-7-centos';

async function withoutEndpoints(forbidden = false) {
  const facts = await readSnapshot('snapshots/nginx-svc');
  facts.objects = facts.objects.filter((o) => o.kind !== 'Endpoints');
  if (forbidden)
    facts.meta['readErrors'] = [
      {
        what: 'Endpoints default/nginx-svc',
        read: { resource: 'endpoints', namespace: 'default', name: 'nginx-svc' },
        error: 'endpoints "nginx-svc" is forbidden',
        reason: 'forbidden',
      },
    ];
  return facts;
}

describe('the Endpoints a v1.15 kube-proxy reads, not captured', () => {
  it('drift says the Service ports were not compared, with no endpoint-stale', async () => {
    const d = new Analysis(await withoutEndpoints(), { code: allModes }).node(NODE).drift();
    assert.deepEqual(
      d.findings.filter((f) => severityOf(f) !== 'info').map((f) => f.id),
      [],
    );
    assert.match(d.notRead![0]!.explanation, /Endpoints.*no Endpoints object at all.*not observed/);
  });

  it('the headline counts no Service port compared beside the note that none was', async () => {
    const d = new Analysis(await withoutEndpoints(), { code: allModes }).node(NODE).drift();
    const text = driftText({ label: 'snapshot', nodes: [d], drifted: false, notCompared: [] });
    assert.match(text.replace(/\s+/g, ' '), /: 0 Service ports compared with what kube-proxy/);
    assert.match(text, /note table-not-captured/);
  });

  it('a refused read of the Endpoints says so', async () => {
    const na = new Analysis(await withoutEndpoints(true), { code: allModes }).node(NODE);
    assert.match(na.expected().endpointsFrom.notRead!, /forbidden/);
  });

  it('step 7 does not pass: its nodes are not compared', async () => {
    const r = diagnose(
      await withoutEndpoints(),
      { namespace: 'default', service: 'nginx-svc' },
      { code: allModes },
    );
    const rules = r.steps.find((s) => s.id === 'rules')!;
    assert.equal(
      rules.findings.some((f) => f.status === 'pass'),
      false,
    );
    assert.ok(rules.findings.some((f) => f.id === 'rules-not-checked'));
  });
});
