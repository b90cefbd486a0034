// The service.cilium.io annotations whose values the agent compares lower-cased
// (reflectors/conversions.go getAnnotationServiceForwardingMode; Service.GetSourceRangesPolicy,
// GetProxyDelegation), as the flags of the BPF map entries kdebug expects say them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CILIUM_DEFAULTS,
  expectedCilium,
} from '../../../src/core/dataplane/cilium/expected/expected.js';
import {
  CILIUM_MAP_DEFAULTS,
  expectedMaps,
} from '../../../src/core/dataplane/cilium/maps/expected.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import { aService, anEndpointSlice } from '../../support/builders.js';

const NODE = { name: 'testnode', labels: {}, nodePortAddresses: [] };

/** The flags of the LoadBalancer entry of a Service annotated so, on an agent of `forwarding`. */
function flags(annotations: Record<string, string>, forwarding = 'snat'): string[] {
  const svc = aService('ns/web', {
    type: 'LoadBalancer',
    ports: [['http', 80, 'TCP', 30080]],
    loadBalancerIPs: ['198.51.100.7'],
    sourceRanges: ['10.0.0.0/8'],
  });
  (svc['metadata'] as { annotations?: Record<string, string> }).annotations = annotations;
  const view = clusterView([svc, anEndpointSlice('ns/web', ['10.244.1.1'], [['http', 80]])]);
  const options = { ...CILIUM_MAP_DEFAULTS, forwarding, forwardingAnnotation: true };
  const entries = expectedMaps(expectedCilium(view, NODE, CILIUM_DEFAULTS), {
    services: view.services,
    nodePortAddresses: [],
    options,
  });
  return entries.find((e) => e.ip === '198.51.100.7' && e.frontend.port === 80)!.flags;
}

const annotated = (key: string, value: string) => ({ [`service.cilium.io/${key}`]: value });

describe('service.cilium.io annotation values as the agent reads them', () => {
  it('forwarding-mode in capitals is honoured', () => {
    assert.ok(flags(annotated('forwarding-mode', 'DSR')).includes('dsr'));
  });
  it("forwarding-mode 'hybrid' is SNAT for every protocol, whatever the agent's mode", () => {
    assert.ok(!flags(annotated('forwarding-mode', 'hybrid'), 'dsr').includes('dsr'));
    assert.ok(!flags(annotated('forwarding-mode', 'Hybrid'), 'hybrid').includes('dsr'));
    // a value it does not know leaves the agent's own mode
    assert.ok(flags(annotated('forwarding-mode', 'fast'), 'dsr').includes('dsr'));
  });
  it('src-ranges-policy and proxy-delegation in capitals are honoured', () => {
    assert.ok(flags(annotated('src-ranges-policy', 'Deny')).includes('deny'));
    assert.ok(
      flags(annotated('proxy-delegation', 'Delegate-If-Local')).includes('delegate-if-local'),
    );
  });
});
