// service.cilium.io/node-selector as the agent reads it (CheckServiceNodeExposure, 1.18 on): the
// label selector text of k8s.io/apimachinery's labels.Parse, one it cannot parse ignored.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ciliumAgentOn } from '../../../src/core/dataplane/cilium/agent/agent.js';
import { expectedCilium } from '../../../src/core/dataplane/cilium/expected/expected.js';
import { parseNodeSelector } from '../../../src/core/dataplane/cilium/expected/node-selector.js';
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
    for (const text of ['a=b=c', 'tier=edge,', 'size>x', 'tier in (a b)', 'tier in (a,)b'])
      assert.equal(parseNodeSelector(text), undefined, text);
  });
  it('fails on ")" right after ",," as apimachinery v0.33 (Cilium 1.18) does; v0.35 reads it', () => {
    assert.equal(parseNodeSelector('tier in (a,,)', true), undefined);
    assert.equal(parseNodeSelector('tier in (a,,b)', true)?.({ tier: '' }), true);
    assert.equal(parseNodeSelector('tier in (a,,)')?.({ tier: '' }), true);
  });
  it('reads "()" as the set of the empty value, as parseValues does', () => {
    assert.equal(matches('tier in ()'), false);
    assert.equal(matches('tier notin ()'), true);
    assert.equal(parseNodeSelector('tier in ()')?.({ tier: '' }), true);
    assert.equal(parseNodeSelector('tier in (a,,b)')?.({ tier: '' }), true);
  });
  it('takes as gt/lt operand only an integer that is a label value: digits, no sign', () => {
    for (const text of ['size>-1', 'size<+9', 'size>99999999999999999999'])
      assert.equal(parseNodeSelector(text), undefined, text);
    assert.equal(matches('size>0004'), true);
    assert.equal(parseNodeSelector('n>9007199254740992')?.({ n: '9007199254740993' }), true);
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
    assert.equal(programmed('v1.20.2', 'size>-1'), true);
    assert.equal(programmed('v1.18.10', 'tier in (core,,)'), true);
    assert.equal(programmed('v1.19.0', 'tier in (core,,)'), false);
    // "()" parses, as {""}: a node whose tier is edge is not selected
    assert.equal(programmed('v1.20.2', 'tier in ()'), false);
  });
  it('1.17 knows no node selector: the service.cilium.io/node annotation decides', () => {
    assert.equal(programmed('v1.17.4', 'tier in (edge)'), false);
  });
});
