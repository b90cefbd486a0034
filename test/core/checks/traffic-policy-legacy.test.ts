// Traffic policy takes each node's endpoints from what its kube-proxy reads, as the Rules step
// does: on nginx-svc's v1.15 nodes the legacy Endpoints, not the EndpointSlices.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { trafficPolicyCheck } from '../../../src/core/checks/traffic-policy/traffic-policy.js';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import type { KubeObject } from '../../../src/core/model.js';
import { run } from './builders.js';
import { allModes } from '../../support/modes.js';

const NGINX = { namespace: 'default', service: 'nginx-svc' };
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** nginx-svc with internalTrafficPolicy Local, its EndpointSlice listing 10.244.1.7 (on
 * vm-12-11-centos) not ready while its Endpoints still list it ready. */
const disagreeing = (objects: KubeObject[]): KubeObject[] =>
  objects.map((o) => {
    const j = structuredClone(o) as Json;
    if (j.metadata?.namespace !== 'default' || !j.metadata?.name?.startsWith('nginx-svc')) return o;
    if (j.kind === 'Service') j.spec.internalTrafficPolicy = 'Local';
    if (j.kind === 'EndpointSlice')
      for (const e of j.endpoints)
        if (e.addresses[0] === '10.244.1.7') e.conditions = { ready: false, serving: false };
    return j as KubeObject;
  });

describe('traffic policy on nodes whose kube-proxy reads the legacy Endpoints', () => {
  it('a node has the local endpoint the Endpoints list ready, whatever the slice says', async () => {
    const read = await readSnapshot('snapshots/nginx-svc');
    const facts = { ...read, objects: disagreeing(read.objects) };
    // the Rules step expects it there: both steps take the same objects
    const expected = new Analysis(facts, { code: allModes }).node('vm-12-11-centos').expected();
    assert.deepEqual(
      expected.servicePorts
        .filter((p) => p.name === 'default/nginx-svc:http')
        .flatMap((p) => p.allEndpoints.filter((e) => e.local).map((e) => e.address)),
      ['10.244.1.7:80'],
    );
    const found = run(trafficPolicyCheck, facts, {}, NGINX);
    const said = found.flatMap((f) => f.evidence.map(evidenceText)).join('\n');
    assert.match(said, /vm-12-11-centos: local endpoint 10\.244\.1\.7:80/);
    assert.doesNotMatch(said, /vm-12-11-centos: no local endpoint/);
  });
});
