// IPVS drift's advice names the objects the node's kube-proxy reads: the legacy Endpoints before
// 1.19, the EndpointSlices from then on (endpoint-source.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipvsDrift } from '../../src/core/dataplane/ipvs/drift/drift.js';
import { expectedIpvs } from '../../src/core/dataplane/ipvs/expected/expected.js';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { aNode, aService, anEndpointSlice } from '../support/builders.js';

const view = clusterView([
  aNode('node-a', '192.0.2.11', '10.244.0.0/24'),
  aService('shop/web', { clusterIP: '10.96.0.50', ports: [['http', 80, 'TCP']] }),
  anEndpointSlice('shop/web', ['10.244.1.6'], [['http', 80]]),
  {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'web', namespace: 'shop' },
    subsets: [{ addresses: [{ ip: '10.244.1.6' }], ports: [{ name: 'http', port: 80 }] }],
  },
]);

/** The advice of the finding for a virtual server the node lacks. */
const adviceOn = (minor: number) =>
  ipvsDrift({
    node: 'node-a',
    source: 's',
    expected: expectedIpvs(expectedRules(view, 'node-a', { release: { minor } })),
    table: parseIpvs('TCP  10.96.0.99:80 rr\n'),
    localEndpoints: new Set(),
    scoped: true,
    listed: { kind: 'none' },
  }).findings.find((f) => f.id === 'service-rules-missing')?.advice;

describe('IPVS drift: what kube-proxy has not synced', () => {
  it('before 1.19: the Services and Endpoints', () => {
    assert.match(adviceOn(15) ?? '', /not synced the current Services and Endpoints:/);
  });

  it('from 1.19: the Services and EndpointSlices', () => {
    assert.match(adviceOn(30) ?? '', /not synced the current Services and EndpointSlices:/);
  });
});
