// A selector Service's port renamed while its EndpointSlices (and legacy Endpoints) still name the
// old one: kube-proxy and the endpoints controller join ports by name, so the port has no
// endpoints. The Ports step says the names differ; the Endpoints step does not blame the Pods, nor
// say kube-proxy still sends the traffic to them.
//
// IP conventions (the demo cluster): nodes vm-12-7-centos 10.0.12.7, vm-12-11-centos 10.0.12.11;
// Pod CIDR 10.244.0.0/16; nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80, 10.244.1.7:80.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { diagnose } from '../../../src/core/diagnose.js';
import type { KubeObject } from '../../../src/core/model.js';
import { portsCheck } from '../../../src/core/checks/ports.js';
import { endpointsCheck } from '../../../src/core/checks/endpoints/endpoints.js';
import { aService, anEndpointSlice, facts, ids, run, webPods } from './builders.js';
import { allModes } from '../../support/modes.js';

const NGINX = { namespace: 'default', service: 'nginx-svc' };

/** The demo (kube-proxy v1.15, which proxies from the legacy Endpoints) with nginx-svc's port
 * renamed from http to web; its EndpointSlice and Endpoints still name it http. */
async function renamed() {
  const f = await readSnapshot('snapshots/nginx-svc');
  const objects = f.objects.map((o) => {
    if (o.kind !== 'Service' || o.metadata?.name !== 'nginx-svc') return o;
    const svc = structuredClone(o) as KubeObject & { spec: { ports: { name: string }[] } };
    svc.spec.ports[0]!.name = 'web';
    return svc;
  });
  return { ...f, objects };
}

describe('a Service port whose name no EndpointSlice port has', () => {
  it('selector Service: Ports fails with target-port-not-exposed beside the declared targetPort', () => {
    const objects = [aService(), anEndpointSlice({ portName: 'web' }), ...webPods()];
    assert.deepEqual(ids(run(portsCheck, facts(objects))), [
      'target-port-ok:pass',
      'target-port-not-exposed:fail',
    ]);
    const [, f] = run(portsCheck, facts(objects));
    assert.equal(f!.title, 'no EndpointSlice port is named "http"');
  });

  it('an unnamed Service port is said so, not as a name "", and a port added is told as one renamed', () => {
    const svc = aService({ spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] } });
    const [, f] = run(portsCheck, facts([svc, anEndpointSlice({ portName: 'web' }), ...webPods()]));
    assert.equal(f!.title, 'no EndpointSlice port is unnamed');
    assert.match(f!.explanation, /name their ports "web" TCP, so Service port \(unnamed\) 80\/TCP/);
    assert.match(f!.explanation, /a port renamed, or added/);
    assert.doesNotMatch(`${f!.title} ${f!.explanation}`, /""/);
    const endpoints = run(
      endpointsCheck,
      facts([svc, anEndpointSlice({ portName: 'web' }), ...webPods()]),
    );
    const evidence = endpoints.flatMap((e) => e.evidence.map((x) => x.text)).join('\n');
    assert.match(evidence, /no unnamed TCP port \(ports web 8080\/TCP\)/);
  });

  it('selector Service whose slices name the port: nothing more said', () => {
    assert.deepEqual(ids(run(portsCheck, facts([aService(), anEndpointSlice(), ...webPods()]))), [
      'target-port-ok:pass',
    ]);
  });

  it('the renamed demo: Ports says the names differ, Endpoints neither blames the Pods nor the Endpoints', async () => {
    const report = diagnose(await renamed(), NGINX, { code: allModes });
    const step = (id: string) => report.steps.find((s) => s.id === id)!;
    assert.ok(ids(step('ports').findings).includes('target-port-not-exposed:fail'));
    const endpoints = step('endpoints').findings;
    // the slice lists both Pods (under http), and the Endpoints list none for web
    assert.deepEqual(ids(endpoints), ['no-ready-endpoints:warn']);
    assert.match(endpoints[0]!.explanation, /follows from target-port-not-exposed \(Ports\)/);
    assert.doesNotMatch(endpoints[0]!.explanation, /still sends/);
    assert.match(
      endpoints[0]!.evidence.map((e) => e.text).join('\n'),
      /no port named "web" TCP \(ports http 80\/TCP\)/,
    );
  });
});
