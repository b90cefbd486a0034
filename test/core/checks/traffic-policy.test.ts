import assert from 'node:assert/strict';
import { evidenceText } from '../../../src/core/evidence.js';
import { describe, it } from 'node:test';
import { trafficPolicyCheck } from '../../../src/core/checks/traffic-policy.js';
import type { KubeObject } from '../../../src/core/model.js';
import {
  aService,
  anEndpointSlice,
  dumpFor,
  facts,
  healthy,
  ids,
  replace,
  run,
} from './builders.js';

const nodePortLocal = (type = 'NodePort') =>
  aService({
    spec: {
      type,
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }],
      ...(type === 'LoadBalancer' ? { healthCheckNodePort: 31999 } : {}),
    },
  });
const onlyNodeA = () =>
  anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', node: 'node-a', pod: 'web-1' }] });
const cluster = (svc: KubeObject, slice = onlyNodeA()) =>
  replace(replace(healthy(), 'Service', 'web', svc), 'EndpointSlice', 'web-abcde', slice);

describe('traffic policy step', () => {
  const cases: { name: string; objects: KubeObject[]; want: string[] }[] = [
    { name: 'Cluster policies', objects: healthy(), want: ['traffic-policy-cluster:pass'] },
    {
      name: 'NodePort, ETP Local, a node without a local endpoint',
      objects: cluster(nodePortLocal()),
      want: ['no-local-endpoint:fail'],
    },
    {
      name: 'LoadBalancer, ETP Local: the health check steers away',
      objects: cluster(nodePortLocal('LoadBalancer')),
      want: ['no-local-endpoint:warn'],
    },
    {
      name: 'ETP Local with an endpoint on every node',
      objects: cluster(nodePortLocal(), anEndpointSlice()),
      want: ['local-endpoints-everywhere:pass'],
    },
    {
      name: 'ETP Local on a ClusterIP Service without external IPs does nothing',
      objects: cluster(aService({ spec: { externalTrafficPolicy: 'Local' } })),
      want: ['traffic-policy-cluster:pass'],
    },
    {
      name: 'ITP Local, a node without a local endpoint',
      objects: cluster(aService({ spec: { internalTrafficPolicy: 'Local' } })),
      want: ['no-local-endpoint:warn'],
    },
  ];
  for (const c of cases)
    it(c.name, () => assert.deepEqual(ids(run(trafficPolicyCheck, facts(c.objects))), c.want));

  it('names the node that drops, with its DROP rule', () => {
    const objects = cluster(nodePortLocal());
    const [f] = run(
      trafficPolicyCheck,
      facts(objects, { 'node-b': { 'iptables-save': dumpFor(objects, 'node-b') } }),
    );
    assert.equal(
      f!.title,
      'externalTrafficPolicy Local: node-b has no local endpoint and drops node port 30080',
    );
    assert.equal(f!.node, 'node-b');
    assert.ok(f!.evidence.map(evidenceText).includes('node-a: local endpoint 10.244.0.5:8080'));
    assert.ok(
      f!.evidence
        .map(evidenceText)
        .some((e) => e.includes('has no local endpoints') && e.includes('-j DROP')),
      f!.evidence.map(evidenceText).join('\n'),
    );
  });
});
