// How the agent reads an EndpointSlice's endpoints into backends (pkg/k8s/endpoints.go,
// ParseEndpointSliceV1), where it differs from reading the slice's own fields.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CILIUM_DEFAULTS,
  expectedCilium,
} from '../../../src/core/dataplane/cilium/expected/expected.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import { aService, anEndpointSlice } from '../../support/builders.js';

const NODE = { name: 'testnode', labels: {}, nodePortAddresses: [] };

describe("an endpoint that names its node in deprecatedTopology only (a v1beta1 writer's)", () => {
  const svc = aService('ns/web', {
    type: 'NodePort',
    ports: [['http', 80, 'TCP', 30080]],
    externalTrafficPolicy: 'Local',
  });
  const slice = anEndpointSlice('ns/web', ['10.244.1.1', '10.244.2.1'], [['http', 80]]);
  const endpoints = slice['endpoints'] as Record<string, unknown>[];
  endpoints[0]!['deprecatedTopology'] = { 'kubernetes.io/hostname': 'testnode' };
  endpoints[1]!['deprecatedTopology'] = { 'kubernetes.io/hostname': 'other' };

  it("is on that node: a Local policy's frontends keep it, not the other node's", () => {
    const view = clusterView([svc, slice]);
    const nodePort = expectedCilium(view, NODE, CILIUM_DEFAULTS).find(
      (f) => f.type === 'NodePort' && !f.internal,
    )!;
    assert.deepEqual(
      nodePort.backends.map((b) => `${b.ip} ${b.nodeName}`),
      ['10.244.1.1 testnode'],
    );
  });
});
