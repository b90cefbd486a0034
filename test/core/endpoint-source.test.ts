// Which object kube-proxy takes the endpoints from, by its release: the legacy Endpoints before
// 1.19, the EndpointSlices from 1.19 (EndpointSliceProxying on by default), a gate deciding from
// 1.16 to 1.21. The demo (kube-proxy v1.15) with its EndpointSlice moved to another address and
// its Endpoints left as they were.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { diagnose } from '../../src/core/diagnose.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { endpointSource } from '../../src/core/dataplane/kube-proxy/endpoint-source.js';
import { dualStackKubeProxy } from '../support/dual-stack-release.js';
import { allModes } from '../support/modes.js';

const NODE = 'vm-12-7-centos';

async function sliceMoved(release?: 'v1.21') {
  const facts = await readSnapshot('snapshots/nginx-svc');
  const slice = facts.objects.find(
    (o) => o.kind === 'EndpointSlice' && o.metadata?.name?.startsWith('nginx-svc'),
  )!;
  for (const e of slice['endpoints'] as { addresses: string[] }[])
    if (e.addresses[0] === '10.244.0.3') e.addresses = ['10.244.0.9'];
  if (release) dualStackKubeProxy(facts.objects);
  return new Analysis(facts, { code: allModes }).node(NODE);
}

describe('the endpoints kube-proxy is expected to hold, by its release', () => {
  it('v1.15 proxies from the Endpoints: the node holding them has no drift', async () => {
    const na = await sliceMoved();
    const exp = na.expected();
    assert.deepEqual(exp.endpointsFrom, { reads: 'Endpoints' });
    const web = exp.servicePorts.find((sp) => sp.name === 'default/nginx-svc:http')!;
    assert.deepEqual(
      web.clusterEndpoints.map((e) => e.address),
      ['10.244.0.3:80', '10.244.1.7:80'],
    );
    assert.deepEqual(
      na
        .drift()
        .findings.filter((f) => severityOf(f) !== 'info')
        .map((f) => f.id),
      [],
    );
  });

  it('v1.21 proxies from the EndpointSlices: the same node is behind them', async () => {
    const na = await sliceMoved('v1.21');
    assert.deepEqual(na.expected().endpointsFrom, { reads: 'EndpointSlices' });
    assert.deepEqual(
      na
        .drift()
        .findings.filter((f) => severityOf(f) !== 'info')
        .map((f) => f.id),
      ['endpoint-stale', 'endpoint-missing'],
    );
  });

  it('an unknown release reads the EndpointSlices, and says that was assumed', () => {
    assert.equal(endpointSource(undefined).reads, 'EndpointSlices');
    assert.match(endpointSource(undefined).assumed!, /EndpointSlices, as kube-proxy 1\.19/);
    assert.equal(endpointSource({ minor: 18 }).reads, 'Endpoints');
    assert.equal(endpointSource({ minor: 19 }).reads, 'EndpointSlices');
  });

  it('from 1.18 to 1.21 the EndpointSliceProxying gate the configuration sets decides, with its source', () => {
    const config = (on: boolean) => ({
      featureGates: { EndpointSliceProxying: on },
      source: 'ConfigMap kube-system/kube-proxy key config.conf',
    });
    assert.deepEqual(endpointSource({ minor: 18 }, config(true)), {
      reads: 'EndpointSlices',
      gate: 'EndpointSliceProxying=true in ConfigMap kube-system/kube-proxy key config.conf',
    });
    assert.equal(endpointSource({ minor: 21 }, config(false)).reads, 'Endpoints');
    // locked on from 1.22 (GA), and no gate before 1.18
    assert.deepEqual(endpointSource({ minor: 22 }, config(false)), { reads: 'EndpointSlices' });
    assert.deepEqual(endpointSource({ minor: 17 }, config(true)), { reads: 'Endpoints' });
  });

  it('at 1.16 and 1.17 the EndpointSlice gate decides (kube-proxy watches the slices when it is on); not before 1.16, nor from 1.18', () => {
    const config = (gates: Record<string, boolean>) => ({
      featureGates: gates,
      source: 'ConfigMap kube-system/kube-proxy key config.conf',
    });
    assert.deepEqual(endpointSource({ minor: 17 }, config({ EndpointSlice: true })), {
      reads: 'EndpointSlices',
      gate: 'EndpointSlice=true in ConfigMap kube-system/kube-proxy key config.conf',
    });
    assert.deepEqual(endpointSource({ minor: 16 }, config({ EndpointSlice: false })), {
      reads: 'Endpoints',
      gate: 'EndpointSlice=false in ConfigMap kube-system/kube-proxy key config.conf',
    });
    assert.equal(
      endpointSource({ minor: 16 }, config({ EndpointSlice: true })).reads,
      'EndpointSlices',
    );
    // no EndpointSlice before 1.16; 1.18 reads EndpointSliceProxying alone
    assert.deepEqual(endpointSource({ minor: 15 }, config({ EndpointSlice: true })), {
      reads: 'Endpoints',
    });
    assert.deepEqual(endpointSource({ minor: 18 }, config({ EndpointSlice: true })), {
      reads: 'Endpoints',
    });
  });
});

describe('step 4 on v1.15 nodes: the Endpoints kube-proxy routes by', () => {
  it('no EndpointSlice while the Endpoints list the Pods: a warning that says kube-proxy still routes there', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.objects = facts.objects.filter((o) => o.kind !== 'EndpointSlice');
    const r = diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const f = r.steps
      .find((s) => s.id === 'endpoints')!
      .findings.find((x) => x.id === 'pod-missing-from-endpoints')!;
    assert.equal(f.status, 'warn');
    assert.match(f.explanation, /kube-proxy still sends the Service's traffic there/);
  });
});
