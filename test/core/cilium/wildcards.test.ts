// A VIP's wildcard entry (Cilium 1.19 on: ADDR=VIP:0/ANY), which drops traffic from outside to the
// address's ports no Service uses: drift compares it with what the agent writes
// (pkg/loadbalancer/reconciler isWildcardClass: default-lb-service-ipam, the loadBalancerClass;
// 1.20's bpf-lb-enable-wildcard-entries), and where those options are not known (a refused
// cilium-config) neither expect nor drift says it is or is not there. Before, drift skipped every
// wildcard entry, and the 1.20 option was read on 1.19 too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drift, edited } from '../../support/cilium-drift.js';
import { aCiliumAgent, aCiliumConfig } from '../../support/builders.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import { ciliumAgentOn } from '../../../src/core/dataplane/cilium/agent/agent.js';
import { ViewIndex } from '../../../src/core/kube/view-index.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import type { ExpectedFrontend } from '../../../src/core/dataplane/cilium/expected/expected.js';
import {
  CILIUM_MAP_DEFAULTS,
  expectedMaps,
} from '../../../src/core/dataplane/cilium/maps/expected.js';

// a LoadBalancer Service without a loadBalancerClass: ClusterIP 10.96.50.104, LB IP 172.16.1.1
const V = '105-v120-loadbalancer-multiport';
const titles = (d: ReturnType<typeof drift>) => d.findings.map((f) => `${f.id} ${f.title}`);

describe("drift of a VIP's wildcard entry (Cilium's own test vectors, faults made in them)", () => {
  it('a wildcard entry the maps lack: the address is not guarded', () => {
    const maps = edited(V, [/^SVC: ID=0 ADDR=172\.16\.1\.1:0\/ANY .*\n/m, '']);
    assert.deepEqual(titles(drift(V, maps)), [
      'cilium-bpf-map-differs no wildcard entry for 172.16.1.1',
    ]);
  });

  it('one for an address no Service has: a leftover that drops traffic to it', () => {
    const maps = edited(V, [
      /^(SVC: ID=0 ADDR=172\.16\.1\.1:0\/ANY .*\n)/m,
      '$1SVC: ID=0 ADDR=172.16.9.9:0/ANY SLOT=0 LBALG=undef AFFTimeout=0 COUNT=0 QCOUNT=0 FLAGS=LoadBalancer+non-routable\n',
    ]);
    const d = drift(V, maps);
    assert.deepEqual(titles(d), [
      'cilium-bpf-map-differs wildcard entry 172.16.9.9:0/ANY not expected',
    ]);
    assert.match(
      d.findings[0]!.explanation,
      /no Service has a ClusterIP or LoadBalancer IP 172\.16\.9\.9/,
    );
  });

  it("default-lb-service-ipam nodeipam: the Service's IPs are not LB-IPAM's, so no entry is due", () => {
    const d = drift(V, undefined, undefined, { 'default-lb-service-ipam': 'nodeipam' });
    assert.deepEqual(titles(d), [
      'cilium-bpf-map-differs wildcard entry 10.96.50.104:0/ANY not expected',
      'cilium-bpf-map-differs wildcard entry 172.16.1.1:0/ANY not expected',
    ]);
  });

  it("1.20's bpf-lb-enable-wildcard-entries off: none is due, the maps' are leftovers", () => {
    const d = drift(V, undefined, undefined, { 'bpf-lb-enable-wildcard-entries': '0' });
    assert.equal(d.findings.length, 2);
  });
});

const view = (image: string, data: Record<string, string>) =>
  clusterView([aCiliumAgent('n1', `quay.io/cilium/cilium:${image}`), aCiliumConfig(data)]);
const agentOn = (image: string, data: Record<string, string>) => {
  const v = view(image, data);
  return ciliumAgentOn(v, new ViewIndex(v).ciliumAgentPod('n1'), undefined)!;
};
const REFUSED = { 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'disabled' };

describe('the wildcard options as the release reads them, and where they are not known', () => {
  it('bpf-lb-enable-wildcard-entries: read from 1.20 as a boolean, no key of 1.19', () => {
    const off = { 'bpf-lb-enable-wildcard-entries': 'false' };
    assert.equal(agentOn('v1.20.2', off).settings.wildcardEntries, false);
    assert.equal(
      agentOn('v1.20.2', { 'bpf-lb-enable-wildcard-entries': '0' }).settings.wildcardEntries,
      false,
    );
    assert.equal(agentOn('v1.19.5', off).settings.wildcardEntries, true);
    assert.equal(agentOn('v1.18.6', {}).settings.wildcardEntries, false);
  });

  it('refused: default-lb-service-ipam not known; the 1.20 option too, not 1.19 (no such option)', () => {
    const not = (image: string) =>
      agentOn(image, REFUSED).settings.notKnown.filter((s) => /wildcard|IPAM/.test(s));
    assert.deepEqual(not('v1.20.2'), ['lbServiceIPAM', 'wildcardEntries']);
    assert.deepEqual(not('v1.19.5'), ['lbServiceIPAM']);
  });

  it("an entry resting on a setting not known is marked, and a class of Cilium's own is known", () => {
    const frontend: ExpectedFrontend = {
      ip: '172.16.1.1',
      port: 80,
      protocol: 'tcp',
      type: 'LoadBalancer',
      service: 'test/echo',
      portName: 'http',
      servicePort: 80,
      localOnly: false,
      backends: [],
    };
    const svc = (spec: Record<string, unknown>) =>
      ({ namespace: 'test', name: 'echo', raw: { spec } }) as never;
    const drops = (spec: Record<string, unknown>) =>
      expectedMaps([frontend], {
        services: [svc(spec)],
        nodePortAddresses: [],
        options: { ...CILIUM_MAP_DEFAULTS, wildcardEntries: true, notKnown: ['lbServiceIPAM'] },
      })
        .filter((e) => e.frontend.port === 0)
        .map((e) => e.wildcardNotKnown ?? []);
    assert.deepEqual(drops({}), [['default-lb-service-ipam']]);
    // expect says it apart, not in the bpf lb list rows
    const maps = expectedMaps([frontend], {
      services: [svc({})],
      nodePortAddresses: [],
      options: { ...CILIUM_MAP_DEFAULTS, wildcardEntries: true, notKnown: ['lbServiceIPAM'] },
    });
    const text = expectedCiliumText([frontend], maps, {
      node: 'n1',
      agent: 'kube-system/cilium-n1',
      settings: 'ConfigMap kube-system/cilium-config',
      notKnown: ['lbServiceIPAM'],
    });
    assert.match(
      text,
      /^# not in the rows below: whether the agent writes these wildcard entries, .* rests on default-lb-service-ipam, not known: .*: 172\.16\.1\.1:0\/ANY \(test\/echo\)$/m,
    );
    assert.doesNotMatch(text, /^172\.16\.1\.1:0\/ANY \(0\)/m);
    assert.deepEqual(drops({ loadBalancerClass: 'io.cilium/l2-announcer' }), [[]]);
    assert.deepEqual(drops({ loadBalancerClass: 'example.com/other' }), []);
  });
});
