// Where each of the agent's settings was read: a status that does not print a setting's line
// gives it no source; cilium-config's key does where it is set, else the setting is not read
// (Cilium's default), and every output that states it says so, never "from the status".
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ciliumAgentOn as agentOf } from '../../../src/core/dataplane/cilium/agent/agent.js';
import { settingsSaid, sourceText } from '../../../src/core/dataplane/cilium/agent/provenance.js';
import { ViewIndex } from '../../../src/core/kube/view-index.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import type { KubeObject } from '../../../src/core/model.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { traceCiliumPacket } from '../../../src/core/dataplane/cilium/trace.js';
import { aCiliumAgent } from '../../support/builders.js';
import { allModes } from '../../support/modes.js';

const STATUS = readFileSync(
  new URL(
    '../../../snapshots/cilium-stale-backend/nodes/vm-12-7-centos/cilium-status.txt',
    import.meta.url,
  ),
  'utf8',
);
/** The status without the lines of `fields` (an older or a trimmed status). */
const without = (...fields: string[]) =>
  STATUS.split('\n')
    .filter((l) => !fields.some((f) => l.trimStart().startsWith(`${f}:`)))
    .join('\n');
const pod = aCiliumAgent('n1', 'quay.io/cilium/cilium:v1.18.6@sha256:1');
const config = (data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cilium-config', namespace: 'kube-system' },
  data,
});
const agentWith = (objects: KubeObject[], status: string | undefined) => {
  const view = clusterView([pod, ...objects]);
  return agentOf(view, new ViewIndex(view).ciliumAgentPod('n1'), status)!;
};

describe("each of the Cilium agent's settings, with where it was read", () => {
  it('a status without the Socket LB line: socket LB not read, the others from their lines', () => {
    const a = agentWith([], without('Socket LB'));
    assert.equal(a.sources.socketLB.from, 'not read');
    assert.deepEqual(a.sources.socketLB, {
      from: 'not read',
      assumed: "Cilium's default: on with kube-proxy replacement, off without",
    });
    assert.deepEqual(a.sources.algorithm, { from: 'status', field: 'Backend Selection' });
    assert.deepEqual(a.sources.kubeProxyReplacement, {
      from: 'status',
      field: 'KubeProxyReplacement',
    });
  });

  // one line a row: the status line left out, the cilium-config read, the source expected
  const cases: [string, string, Record<string, string>, string][] = [
    [
      'socketLB',
      'Socket LB',
      { 'bpf-lb-sock': 'false' },
      'ConfigMap kube-system/cilium-config bpf-lb-sock',
    ],
    ['hostnsOnly', 'Socket LB Coverage', {}, "not read (Cilium's default: off)"],
    [
      'hostnsOnly',
      'Socket LB Coverage',
      { 'bpf-lb-sock-hostns-only': 'true' },
      'ConfigMap kube-system/cilium-config bpf-lb-sock-hostns-only',
    ],
    ['algorithm', 'Backend Selection', {}, "not read (Cilium's default: random)"],
    [
      'algorithm',
      'Backend Selection',
      { 'bpf-lb-algorithm': 'maglev' },
      'ConfigMap kube-system/cilium-config bpf-lb-algorithm',
    ],
    [
      'algorithm',
      'Backend Selection',
      { 'node-port-algorithm': 'maglev' },
      'ConfigMap kube-system/cilium-config node-port-algorithm',
    ],
    ['forwarding', 'Mode', {}, "not read (Cilium's default: snat)"],
    [
      'forwarding',
      'Mode',
      { 'bpf-lb-mode': 'dsr' },
      'ConfigMap kube-system/cilium-config bpf-lb-mode',
    ],
    // kube-proxy replacement, said on, turns it on in 1.18
    ['sessionAffinity', 'Session Affinity', {}, 'kube-proxy replacement turns it on'],
    ['noBackend', 'none', {}, "not read (Cilium's default: reject, with ICMP port unreachable)"],
    [
      'noBackend',
      'none',
      { 'service-no-backend-response': 'drop' },
      'ConfigMap kube-system/cilium-config service-no-backend-response',
    ],
    ['nodePortRange', '- NodePort', {}, "not read (Cilium's default: 30000-32767)"],
    [
      'kubeProxyReplacement',
      'KubeProxyReplacement',
      { 'kube-proxy-replacement': 'true' },
      'ConfigMap kube-system/cilium-config kube-proxy-replacement',
    ],
    // no status line prints these: cilium-config's key, else the default, assumed
    ['externalClusterIP', 'none', {}, "not read (Cilium's default: off)"],
    [
      'externalClusterIP',
      'none',
      { 'bpf-lb-external-clusterip': 'true' },
      'ConfigMap kube-system/cilium-config bpf-lb-external-clusterip',
    ],
    [
      'sourceRangeCheck',
      'none',
      { 'enable-svc-source-range-check': 'false' },
      'ConfigMap kube-system/cilium-config enable-svc-source-range-check',
    ],
    [
      'sourceRangeCheck',
      'none',
      {},
      "not read (Cilium's default: on with kube-proxy replacement or enable-node-port, off without)",
    ],
    // 1.18.6 reads bpf-lb-source-range-all-types (1.18.0 to 1.18.5 checked every type)
    [
      'sourceRangeTypes',
      'none',
      {},
      "not read (Cilium's default: off, so LoadBalancer frontends only)",
    ],
    [
      'sourceRangeTypes',
      'none',
      { 'bpf-lb-source-range-all-types': 'true' },
      'ConfigMap kube-system/cilium-config bpf-lb-source-range-all-types',
    ],
    [
      'lbServiceIPAM',
      'none',
      { 'default-lb-service-ipam': 'none' },
      'ConfigMap kube-system/cilium-config default-lb-service-ipam',
    ],
    [
      'wildcardEntries',
      'none',
      {},
      "Cilium before 1.19 writes no wildcard entry (the option is 1.20's)",
    ],
  ];
  for (const [setting, line, data, want] of cases)
    it(`${setting}, its status without "${line}", cilium-config ${JSON.stringify(data)}: ${want}`, () => {
      // the details' Status line says kube-proxy replacement too: both left out
      const left = line === 'KubeProxyReplacement' ? ['KubeProxyReplacement', 'Status'] : [line];
      const a = agentWith([config(data)], without(...left));
      assert.equal(sourceText(a, a.sources[setting as keyof typeof a.sources]), want);
    });

  it("cilium-config read without a setting's key: that setting is not read, not cilium-config's", () => {
    const a = agentWith([config({ 'kube-proxy-replacement': 'true' })], undefined);
    assert.equal(a.sources.kubeProxyReplacement.from, 'cilium-config');
    assert.equal(a.sources.forwarding.from, 'not read');
    assert.equal(a.sources.socketLB.from, 'not read');
  });

  it("expect's header names each setting's own source", () => {
    const a = agentWith([config({ 'bpf-lb-mode': 'dsr' })], without('Mode', 'Socket LB'));
    const said = settingsSaid(a);
    assert.match(
      said,
      /kube-proxy-replacement, bpf-lb-sock-hostns-only, bpf-lb-algorithm, enable-session-affinity, node-port-range from the status of agent kube-system\/cilium-n1/,
    );
    assert.match(said, /bpf-lb-mode from ConfigMap kube-system\/cilium-config/);
    assert.match(
      said,
      /not read, so assumed: bpf-lb-sock \(Cilium's default: on with kube-proxy replacement, off without\)/,
    );
    assert.doesNotMatch(said, /bpf-lb-sock,[^;]*from the status/);
  });

  it('source-range checks in 1.18.0 to 1.18.5 and 1.19: the release decides, whatever cilium-config says', () => {
    const at = (tag: string) => {
      const p = aCiliumAgent('n1', `quay.io/cilium/cilium:${tag}@sha256:1`);
      const view = clusterView([
        p,
        config({
          'bpf-lb-source-range-all-types': 'false',
          'enable-svc-source-range-check': 'false',
        }),
      ]);
      return agentOf(view, new ViewIndex(view).ciliumAgentPod('n1'), undefined)!;
    };
    const early = at('v1.18.3');
    assert.equal(early.sources.sourceRangeTypes.from, 'release');
    assert.equal(early.settings.sourceRangeTypes, 'all');
    assert.equal(early.sources.sourceRangeCheck.from, 'cilium-config');
    const later = at('v1.19.1');
    assert.equal(later.sources.sourceRangeCheck.from, 'release');
    assert.equal(later.settings.sourceRangeCheck, true);
    assert.equal(later.sources.sourceRangeTypes.from, 'cilium-config');
  });

  it("the node's mode says kube-proxy replacement from cilium-config, not the status that lacks it", () => {
    const status = without('KubeProxyReplacement', 'Status');
    const facts = {
      objects: [pod, config({ 'kube-proxy-replacement': 'true' })],
      nodes: { n1: { 'cilium-status': status } },
      meta: {},
    };
    const mode = new Analysis(facts as never, { code: allModes }).state('n1').mode;
    assert.equal(mode.value, 'cilium');
    assert.equal(mode.from, 'objects');
    assert.equal(mode.evidence.kind, 'read');
    assert.match(
      mode.evidence.text,
      /from ConfigMap kube-system\/cilium-config kube-proxy-replacement/,
    );
    assert.doesNotMatch(mode.evidence.text, /status/);
  });

  // a ClusterIP with one backend, and one with none (IP conventions: Pods 10.0.0.0/24, Services
  // 10.96.0.0/16, the node 10.0.0.5)
  const table = parseCilium(
    'SERVICE ADDRESS           BACKEND ADDRESS (REVNAT_ID) (SLOT)\n' +
      '10.96.15.6:80/TCP (0)     0.0.0.0:0 (7) (0) [ClusterIP, non-routable]\n' +
      '10.96.15.6:80/TCP (1)     10.0.0.58:8080/TCP (7) (1)\n' +
      '10.96.15.7:80/TCP (0)     0.0.0.0:0 (8) (0) [ClusterIP, non-routable]\n',
    'p.txt',
  );
  const walk = (status: string | undefined, data: Record<string, string>, dst: string) => {
    const a = agentWith([config(data)], status);
    return traceCiliumPacket(
      table,
      { localAddresses: ['10.0.0.5'], interfaces: [] },
      { src: '10.0.0.9', dst, dport: 80, protocol: 'tcp', fromHost: false },
      { ...a.settings, podIPs: new Set(['10.0.0.9']), sources: { agent: a, of: a.sources } },
    ).outcomes;
  };

  it('a walk from a Pod, socket LB not in the status: its hook is said to rest on the default', () => {
    const [o] = walk(without('Socket LB'), {}, '10.96.15.6');
    assert.ok(
      o!.assumptions.some((x) =>
        x.startsWith("bpf-lb-sock not read (Cilium's default: on with kube-proxy replacement"),
      ),
      o!.assumptions.join('\n'),
    );
    // each said by its status: nothing assumed of them
    const [said] = walk(STATUS, {}, '10.96.15.6');
    assert.deepEqual(said!.assumptions, []);
  });

  it('a frontend without backends: the no-backend response from cilium-config, or the default said taken', () => {
    const [read] = walk(STATUS, { 'service-no-backend-response': 'drop' }, '10.96.15.7');
    assert.equal(read!.verdict, 'DROP');
    assert.match(
      read!.rules[0]!.effect,
      /service-no-backend-response=drop, from ConfigMap kube-system\/cilium-config service-no-backend-response/,
    );
    const [assumed] = walk(STATUS, {}, '10.96.15.7');
    assert.equal(assumed!.verdict, 'REJECT');
    assert.deepEqual(assumed!.assumptions, [
      "service-no-backend-response not read (Cilium's default: reject, with ICMP port unreachable): walked with that default",
    ]);
  });

  it('a ClusterIP from outside: bpf-lb-external-clusterip from cilium-config decides, said with its key', () => {
    const outside = (data: Record<string, string>) => {
      const a = agentWith([config(data)], STATUS);
      return traceCiliumPacket(
        table,
        { localAddresses: ['10.0.0.5'], interfaces: [] },
        { src: '203.0.113.9', dst: '10.96.15.6', dport: 80, protocol: 'tcp', fromHost: false },
        { ...a.settings, podIPs: new Set(), sources: { agent: a, of: a.sources } },
      ).outcomes;
    };
    const [off] = outside({ 'bpf-lb-external-clusterip': 'false' });
    assert.equal(off!.verdict, 'DROP');
    assert.match(
      off!.rules[0]!.effect,
      /bpf-lb-external-clusterip is off, from ConfigMap kube-system\/cilium-config bpf-lb-external-clusterip/,
    );
    assert.ok(!off!.assumptions.some((x) => x.startsWith('bpf-lb-external-clusterip')));
    // on: it answers from outside, whatever the map's non-routable flag of the listing says
    const [on] = outside({ 'bpf-lb-external-clusterip': 'true' });
    assert.notEqual(on!.verdict, 'DROP');
  });
});
