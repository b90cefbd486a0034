// The options 1.19 folded into kube-proxy replacement (pkg/kpr): enable-session-affinity, read
// from an agent of each release and carried through to the BPF map entries expected and drift.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ciliumAgentOn, knownMapFlags } from '../../../src/core/dataplane/cilium/agent.js';
import { ciliumDrift } from '../../../src/core/dataplane/cilium/drift.js';
import { expectedCilium } from '../../../src/core/dataplane/cilium/expected.js';
import { expectedMaps } from '../../../src/core/dataplane/cilium/maps/expected.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read.js';
import { clusterView, type Pod } from '../../../src/core/kube/objects.js';
import type { KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent, aCiliumConfig, aService, anEndpointSlice } from '../../support/builders.js';
import { edited } from '../../support/cilium-drift.js';
import { setup } from '../../support/cilium-vectors.js';

const NODE = { name: 'testnode', labels: {} };

/** The settings of an agent of `tag` on testnode, with `objects` in the cluster. */
const settingsAt = (tag: string, config: Record<string, string>, objects: KubeObject[] = []) => {
  const view = clusterView([
    aCiliumAgent('testnode', `quay.io/cilium/cilium:${tag}`),
    aCiliumConfig(config),
    ...objects,
  ]);
  const pod = view.pods.find((p: Pod) => p.nodeName === 'testnode');
  return { view, settings: ciliumAgentOn(view, pod, undefined)!.settings };
};

const NO_KPR = { 'kube-proxy-replacement': 'false' };

/** Drift of a vector's maps dump, as `edits` leave it, on an agent of `tag` with `config`. */
const vectorDrift = (
  v: string,
  tag: string,
  config: Record<string, string>,
  ...edits: [RegExp, string][]
) => {
  const view = clusterView([
    aCiliumAgent('testnode', `quay.io/cilium/cilium:${tag}`),
    aCiliumConfig(config),
    ...setup(v).docs,
  ]);
  const agent = ciliumAgentOn(view, view.pods[0], undefined)!;
  return ciliumDrift({
    node: 'testnode',
    expected: expectedCilium(view, NODE, agent.settings),
    table: parseCilium(edited(v, ...edits), 'maps.txt'),
    scoped: false,
    mapExpectations: {
      services: view.services,
      nodePortAddresses: [],
      options: agent.settings,
      known: knownMapFlags(agent),
    },
  });
};

describe('enable-session-affinity, a flag 1.19 removed', () => {
  const affinity = (tag: string, config: Record<string, string> = {}) =>
    settingsAt(tag, { ...NO_KPR, ...config }).settings.sessionAffinity;

  it('turns ClientIP affinity off through 1.18; from 1.19 a leftover key changes nothing', () => {
    const off = { 'enable-session-affinity': 'false' };
    assert.equal(affinity('v1.18.10', off), false);
    assert.equal(affinity('v1.19.0', off), true);
  });
  it('is off by default through 1.17 (daemon_main.go), on in 1.18 (pkg/kpr)', () => {
    assert.equal(affinity('v1.17.4'), false);
    assert.equal(affinity('v1.18.0'), true);
    assert.equal(affinity('v1.17.4', { 'enable-session-affinity': 'True' }), true);
  });
  it('is read as Go reads a boolean: "0", "False" and "" are off', () => {
    for (const value of ['0', 'False', 'FALSE', ''])
      assert.equal(affinity('v1.18.10', { 'enable-session-affinity': value }), false, value);
  });
  it('kube-proxy replacement turns it on whatever the option says (NewKPRConfig)', () => {
    const kpr = { 'kube-proxy-replacement': 'true', 'enable-session-affinity': 'false' };
    assert.equal(affinity('v1.18.10', kpr), true);
    assert.equal(affinity('v1.17.4', kpr), true);
  });
});

describe('a ClientIP Service with session affinity off (1.18 without kube-proxy replacement)', () => {
  const svc = aService('ns/web', { ports: [['http', 80]], affinity: 42 });
  const slice = anEndpointSlice('ns/web', ['10.244.1.1'], [['http', 80]]);
  const entry = (config: Record<string, string>) => {
    const { view, settings } = settingsAt('v1.18.10', { ...NO_KPR, ...config }, [svc, slice]);
    const frontends = expectedCilium(view, NODE, settings);
    const e = expectedMaps(frontends, {
      services: view.services,
      nodePortAddresses: [],
      options: settings,
    })[0]!;
    return { flags: e.flags, timeout: e.affinitySeconds, affinity: e.affinity.map((b) => b.ip) };
  };

  it('keeps the flag (NewSvcFlag), but gets no timeout nor affinity map (upsertMaster)', () => {
    assert.deepEqual(entry({ 'enable-session-affinity': 'false' }), {
      flags: ['sessionAffinity', 'non-routable'],
      timeout: undefined,
      affinity: [],
    });
    assert.deepEqual(entry({}), {
      flags: ['sessionAffinity', 'non-routable'],
      timeout: 42,
      affinity: ['10.244.1.1'],
    });
  });

  it("drift: the vector's entry without its timeout and affinity map is what the agent holds", () => {
    const d = vectorDrift(
      '03-v118-clusterip-session-affinity',
      'v1.18.10',
      { ...NO_KPR, 'enable-session-affinity': 'false' },
      [/^AFF: .*\n/m, ''],
      [/AFFTimeout=42/, 'AFFTimeout=0'],
    );
    assert.deepEqual(d.findings, []);
    // the affinity map is none the agent writes, not one the dump left out
    assert.deepEqual(d.notRead ?? [], []);
  });
});
