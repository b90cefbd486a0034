// The options 1.19 folded into kube-proxy replacement (pkg/kpr): enable-session-affinity and
// enable-svc-source-range-check, read from an agent of each release and carried through to the
// BPF map entries expected and drift.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ciliumAgentOn } from '../../../src/core/dataplane/cilium/agent/agent.js';
import { knownMapFlags } from '../../../src/core/dataplane/cilium/agent/comparable.js';
import { ciliumDrift } from '../../../src/core/dataplane/cilium/drift.js';
import { expectedCilium } from '../../../src/core/dataplane/cilium/expected/expected.js';
import { expectedMaps } from '../../../src/core/dataplane/cilium/maps/expected.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
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
    services: view.services.map((s) => `${s.namespace}/${s.name}`),
    scoped: false,
    listed: { kind: 'none' },
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

describe('enable-svc-source-range-check, a flag 1.19 removed', () => {
  const check = (tag: string, config: Record<string, string> = {}) =>
    settingsAt(tag, config).settings.sourceRangeCheck;
  const off = { 'enable-svc-source-range-check': 'false' };

  it('is on by default, and off where cilium-config turns it off, through 1.18', () => {
    assert.equal(check('v1.17.4'), true);
    assert.equal(check('v1.18.10'), true);
    assert.equal(check('v1.17.4', off), false);
    assert.equal(check('v1.18.10', { 'enable-svc-source-range-check': '0' }), false);
  });
  it('is off without NodePort: neither kube-proxy replacement nor enable-node-port', () => {
    assert.equal(check('v1.18.10', NO_KPR), false);
    assert.equal(check('v1.17.4', NO_KPR), false);
    assert.equal(check('v1.18.10', { ...NO_KPR, 'enable-node-port': 'true' }), true);
  });
  it('from 1.19 a leftover key changes nothing: the check is always on', () => {
    assert.equal(check('v1.19.0', off), true);
    assert.equal(check('v1.20.2', { ...NO_KPR, ...off }), true);
  });
});

describe("a LoadBalancer Service's source ranges with the check off", () => {
  const svc = aService('ns/web', {
    type: 'LoadBalancer',
    ports: [['http', 80, 'TCP', 30080]],
    loadBalancerIPs: ['198.51.100.7'],
    sourceRanges: ['10.0.0.0/8'],
  });
  const slice = anEndpointSlice('ns/web', ['10.244.1.1'], [['http', 80]]);
  const entry = (tag: string, config: Record<string, string> = {}) => {
    const { view, settings } = settingsAt(tag, config, [svc, slice]);
    const frontends = expectedCilium(view, NODE, settings);
    const e = expectedMaps(frontends, {
      services: view.services,
      nodePortAddresses: [],
      options: settings,
    }).find((x) => x.frontend.type === 'LoadBalancer')!;
    return { checks: e.flags.includes('check source-range'), map: e.sourceRanges };
  };
  const off = { 'enable-svc-source-range-check': 'false' };

  it('1.18 keeps the flag (GetSourceRangesEnabled) but writes no source-range map', () => {
    assert.deepEqual(entry('v1.18.10', off), { checks: true, map: undefined });
    assert.deepEqual(entry('v1.18.10'), { checks: true, map: ['10.0.0.0/8'] });
  });
  it("1.17's default control plane sets no flag either (checkLBSourceRange)", () => {
    assert.deepEqual(entry('v1.17.4', off), { checks: false, map: undefined });
  });
  it('1.19 and 1.20 check them whatever the key says', () => {
    assert.deepEqual(entry('v1.19.0', off), { checks: true, map: ['10.0.0.0/8'] });
    assert.deepEqual(entry('v1.20.2', off), { checks: true, map: ['10.0.0.0/8'] });
  });

  it("drift: the vector's entries without their source-range map are what the agent holds", () => {
    const d = vectorDrift('13-v118-lb-source-ranges-allow', 'v1.18.0', off, [
      /^SRCRANGE: .*\n/gm,
      '',
    ]);
    assert.deepEqual(d.findings, []);
    // the source-range map is none the agent writes, not one the dump left out
    assert.deepEqual(d.notRead ?? [], []);
  });
});
