// service.cilium.io/node-selector as the agent reads it (CheckServiceNodeExposure, 1.18 on): the
// label selector text of k8s.io/apimachinery's labels.Parse, one it cannot parse ignored.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ciliumAgentOn } from '../../../src/core/dataplane/cilium/agent.js';
import { expectedCilium } from '../../../src/core/dataplane/cilium/expected.js';
import { parseNodeSelector } from '../../../src/core/dataplane/cilium/node-selector.js';
import { clusterView, type Pod } from '../../../src/core/kube/objects.js';
import { aCiliumAgent, aCiliumConfig, aService } from '../../support/builders.js';

const LABELS = { 'topology.kubernetes.io/zone': 'eu-1a', tier: 'edge', size: '8' };
const matches = (text: string) => parseNodeSelector(text)?.(LABELS);

describe('a node selector in the text form labels.Parse takes', () => {
  it('reads set terms: in and notin, with spaces around their values', () => {
    assert.equal(matches('topology.kubernetes.io/zone in (eu-1a, eu-1b)'), true);
    assert.equal(matches('tier notin (edge)'), false);
    assert.equal(matches('tier in (core),size'), false);
  });
  it('reads equality, existence and gt/lt terms', () => {
    assert.equal(matches('tier=edge,!gpu,size>4'), true);
    assert.equal(matches('tier==edge,size<4'), false);
    assert.equal(matches('gpu!=yes'), true);
    assert.equal(matches(''), true);
  });
  it('says which texts it cannot parse', () => {
    for (const text of ['tier in ()', 'a=b=c', 'tier=edge,', 'size>x', 'tier in (a b)'])
      assert.equal(parseNodeSelector(text), undefined, text);
  });
});

describe('the Services an agent of a release programs by that annotation', () => {
  /** Whether the agent of `tag` on a node labelled LABELS programs a Service so annotated. */
  const programmed = (tag: string, selector: string) => {
    const svc = aService('ns/web', { ports: [['http', 80]] });
    (svc['metadata'] as { annotations?: Record<string, string> }).annotations = {
      'service.cilium.io/node-selector': selector,
      'service.cilium.io/node': 'elsewhere',
    };
    const view = clusterView([
      aCiliumAgent('n1', `quay.io/cilium/cilium:${tag}`),
      aCiliumConfig({}),
      svc,
    ]);
    const pod = view.pods.find((p: Pod) => p.nodeName === 'n1');
    const settings = ciliumAgentOn(view, pod, undefined)!.settings;
    return expectedCilium(view, { name: 'n1', labels: LABELS }, settings).length > 0;
  };

  it('from 1.18, by the selector; one it cannot parse is ignored with the node annotation', () => {
    assert.equal(programmed('v1.18.0', 'tier in (edge)'), true);
    assert.equal(programmed('v1.20.2', 'tier notin (edge)'), false);
    assert.equal(programmed('v1.20.2', 'tier in ()'), true);
  });
  it('1.17 knows no node selector: the service.cilium.io/node annotation decides', () => {
    assert.equal(programmed('v1.17.4', 'tier in (edge)'), false);
  });
});
