// The Cilium agent on a node as kdebug decides it: its settings from what the agent itself said
// (cilium-dbg status --verbose, observed) before its ConfigMap (read) before Cilium's defaults.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ciliumAgentOn as agentOf } from '../../../src/core/dataplane/cilium/agent/agent.js';
import { fromStatus } from '../../../src/core/dataplane/cilium/agent/status.js';
import { knownMapFlags } from '../../../src/core/dataplane/cilium/agent/comparable.js';
import { ViewIndex } from '../../../src/core/kube/view-index.js';
import { clusterView, type ClusterView } from '../../../src/core/kube/objects.js';
import type { KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent } from '../../support/builders.js';

const STATUS = readFileSync(
  new URL(
    '../../../snapshots/cilium-stale-backend/nodes/vm-12-7-centos/cilium-status.txt',
    import.meta.url,
  ),
  'utf8',
);
const agent = { ...aCiliumAgent('n1', 'quay.io/cilium/cilium:v1.16.5@sha256:1') };
const config = (data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cilium-config', namespace: 'kube-system' },
  data,
});

// the agent on `node` as a node's state finds it: its Pod by the view's index
const ciliumAgentOn = (view: ClusterView, node: string, status: string | undefined) =>
  agentOf(view, new ViewIndex(view).ciliumAgentPod(node), status);

describe('the Cilium agent on a node', () => {
  it('reads its status: kube-proxy replacement, socket LB, selection, mode, affinity, release', () => {
    assert.deepEqual(fromStatus(STATUS), {
      kubeProxyReplacement: true,
      replacementMode: 'True',
      // its details' Services list: every kind enabled
      services: {
        ClusterIP: true,
        NodePort: true,
        LoadBalancer: true,
        externalIPs: true,
        HostPort: true,
      },
      socketLB: true,
      hostnsOnly: false,
      forwarding: 'snat',
      algorithm: 'random',
      sessionAffinity: true,
      nodePortRange: [30000, 32767],
      version: 'v1.18.6',
      podCIDRs: ['10.244.0.0/24'],
      fields: {
        kubeProxyReplacement: 'KubeProxyReplacement',
        socketLB: 'Socket LB',
        hostnsOnly: 'Socket LB Coverage',
        forwarding: 'Mode',
        algorithm: 'Backend Selection',
        sessionAffinity: 'Session Affinity',
        nodePortRange: 'Services: NodePort',
      },
    });
    const hostns = STATUS.replace(
      'Socket LB Coverage:     Full',
      'Socket LB Coverage:     Hostns-only',
    )
      .replace(
        'Backend Selection:      Random',
        'Backend Selection:      Maglev (Table Size: 16381)',
      )
      .replace('Mode:                   SNAT', 'Mode:                   DSR');
    assert.deepEqual(
      [fromStatus(hostns).hostnsOnly, fromStatus(hostns).algorithm, fromStatus(hostns).forwarding],
      [true, 'maglev', 'dsr'],
    );
  });

  it("its status first (observed), then its ConfigMap (read), then Cilium's defaults (assumed)", () => {
    const view = clusterView([
      agent,
      config({ 'kube-proxy-replacement': 'true', 'bpf-lb-algorithm': 'maglev' }),
    ]);
    const said = ciliumAgentOn(view, 'n1', STATUS)!;
    assert.deepEqual(said.sources.algorithm, { from: 'status', field: 'Backend Selection' });
    assert.equal(said.settings.algorithm, 'random');
    assert.equal(said.version, 'v1.18.6');
    const read = ciliumAgentOn(view, 'n1', undefined)!;
    assert.deepEqual(
      [read.sources.algorithm, read.settings.algorithm, read.replacesKubeProxy, read.version],
      [{ from: 'cilium-config', key: 'bpf-lb-algorithm' }, 'maglev', true, 'v1.16.5'],
    );
    const assumed = ciliumAgentOn(clusterView([agent]), 'n1', undefined)!;
    assert.deepEqual(
      [assumed.sources.kubeProxyReplacement.from, assumed.replacesKubeProxy],
      ['not read', false],
    );
    // kube-proxy replacement off, or partial (before 1.14): kube-proxy still programs Services
    for (const v of ['false', 'partial', 'disabled'])
      assert.equal(
        ciliumAgentOn(
          clusterView([agent, config({ 'kube-proxy-replacement': v })]),
          'n1',
          undefined,
        )!.replacesKubeProxy,
        false,
      );
    assert.equal(ciliumAgentOn(clusterView([agent]), 'n2', undefined), undefined);
  });

  it('its NodePort range: said, else node-port-range as the agent splits it, else the default', () => {
    const on = (data: Record<string, string>, status?: string) =>
      ciliumAgentOn(clusterView([agent, config(data)]), 'n1', status)!.settings.nodePortRange;
    assert.deepEqual(on({}), [30000, 32767]);
    assert.deepEqual(on({ 'node-port-range': '20000,22767' }), [20000, 22767]);
    assert.deepEqual(on({ 'node-port-range': '20000 22767' }), [20000, 22767]);
    // ones the agent would not start with: the default, as the agent does not run to say
    for (const bad of ['20000, 22767', '20000', '2,1', '20000,70000'])
      assert.deepEqual(on({ 'node-port-range': bad }), [30000, 32767], bad);
    const said = STATUS.replace('Enabled (Range: 30000-32767)', 'Enabled (Range: 40000-41000)');
    assert.deepEqual(on({ 'node-port-range': '20000,22767' }, said), [40000, 41000]);
  });

  it('drops LoadBalancer frontends conflicting with NodePorts from 1.20 (cilium#45314)', () => {
    const on = (image: string) =>
      ciliumAgentOn(
        clusterView([aCiliumAgent('n1', `quay.io/cilium/cilium:${image}`)]),
        'n1',
        undefined,
      )!.settings.nodePortConflicts;
    assert.deepEqual(['v1.18.6', 'v1.19.3', 'v1.20.0', 'v1.20.2'].map(on), [
      false,
      false,
      true,
      true,
    ]);
    assert.equal(
      ciliumAgentOn(clusterView([agent]), 'n1', undefined)!.settings.nodePortConflicts,
      false,
    );
  });

  it('the frontend types source ranges guard by its release, and the annotations it honours', () => {
    const on = (image: string, data: Record<string, string> = {}) =>
      ciliumAgentOn(
        clusterView([aCiliumAgent('n1', `quay.io/cilium/cilium:${image}`), config(data)]),
        'n1',
        undefined,
      )!.settings;
    // 1.18.0 to 1.18.5 guarded every frontend of the Service (cilium#42351)
    assert.equal(on('v1.18.5').sourceRangeTypes, 'all');
    assert.deepEqual(on('v1.18.6').sourceRangeTypes, ['LoadBalancer']);
    assert.deepEqual(on('v1.20.2').sourceRangeTypes, ['LoadBalancer', 'ExternalIPs']);
    assert.equal(
      on('v1.19.1', { 'bpf-lb-source-range-all-types': 'true' }).sourceRangeTypes,
      'all',
    );
    const annotated = on('v1.18.6', {
      'bpf-lb-mode-annotation': 'true',
      'bpf-lb-algorithm-annotation': 'true',
    });
    assert.deepEqual([annotated.forwardingAnnotation, annotated.algorithmAnnotation], [true, true]);
    assert.deepEqual(
      [on('v1.18.6').forwardingAnnotation, on('v1.18.6').algorithmAnnotation],
      [false, false],
    );
  });

  it('the map flags drift compares: the settings read, not assumed, and the releases that write them', () => {
    const known = (image: string, data?: Record<string, string>) =>
      knownMapFlags(
        ciliumAgentOn(
          clusterView([
            aCiliumAgent('n1', `quay.io/cilium/cilium:${image}`),
            ...(data ? [config(data)] : []),
          ]),
          'n1',
          undefined,
        )!,
      );
    const all = {
      forwarding: true,
      algorithm: true,
      sourceRangeDeny: true,
      flags: true,
      sourceRangeTypes: true,
      wildcards: true,
    };
    assert.deepEqual(known('v1.18.0', {}), all);
    // no cilium-config: the mode, the algorithm, the types guarded and the annotations honoured
    // are assumed
    assert.deepEqual(known('v1.18.0'), {
      ...all,
      forwarding: false,
      algorithm: false,
      sourceRangeTypes: false,
      wildcards: false,
    });
    // hybrid wrote no dsr flag before 1.18.5 (ToSVCForwardingMode knew dsr and snat only)
    assert.equal(known('v1.18.4', { 'bpf-lb-mode': 'hybrid' }).forwarding, false);
    assert.equal(known('v1.18.5', { 'bpf-lb-mode': 'hybrid' }).forwarding, true);
    assert.equal(known('v1.19.0', { 'bpf-lb-mode': 'hybrid' }).forwarding, true);
    assert.deepEqual(known('v1.16.5', {}), {
      ...all,
      forwarding: false,
      sourceRangeDeny: false,
      flags: false,
    });
    // 1.17's default control plane writes Local on fewer frontend types than 1.18
    assert.equal(known('v1.17.4', {}).flags, false);
  });
});

describe("the Cilium agent's release, compared by its numbers", () => {
  const agentOf = (image: string, status?: string) =>
    ciliumAgentOn(
      clusterView([
        aCiliumAgent('n1', `quay.io/cilium/cilium:${image}@sha256:1`),
        config({ 'bpf-lb-mode': 'hybrid' }),
      ]),
      'n1',
      status,
    )!;

  it('1.18.5 is the last release that guarded every frontend type, and the first whose hybrid writes dsr (cilium#43056)', () => {
    const at = (image: string) => {
      const a = agentOf(image);
      return [a.settings.sourceRangeTypes, knownMapFlags(a).forwarding];
    };
    assert.deepEqual(at('v1.18.4'), ['all', false]);
    assert.deepEqual(at('v1.18.5'), ['all', true]);
    assert.deepEqual(at('v1.18.6'), [['LoadBalancer'], true]);
    // without the v, and with a suffix: the same release
    assert.deepEqual(at('1.18.4'), ['all', false]);
    assert.deepEqual(at('v1.18.6-rc.1'), [['LoadBalancer'], true]);
    assert.deepEqual(at('v1.18.5-rc.1'), ['all', true]);
    // 1.18.50 is no 1.18.5
    assert.deepEqual(at('v1.18.50'), [['LoadBalancer'], true]);
  });

  it('keeps the release as said, its numbers parsed once; a tag naming no release leaves it unknown', () => {
    const rc = agentOf('v1.18.0-rc.1');
    assert.equal(rc.version, 'v1.18.0-rc.1');
    assert.deepEqual(rc.release, { text: 'v1.18.0', major: 1, minor: 18, patch: 0 });
    // the status's release before the image's
    const status = 'Cilium:                  Ok   1.14.2 (v1.14.2-a6748946)\n';
    assert.deepEqual(agentOf('v1.18.6', status).release?.text, 'v1.14.2');
    for (const tag of ['latest', 'v1.18', 'v1.18.x']) {
      const a = agentOf(tag);
      assert.deepEqual(
        [a.version, a.release, knownMapFlags(a).flags],
        [undefined, undefined, false],
        tag,
      );
    }
  });
});

describe('real published cilium status --verbose (test/fixtures/cilium/pastes)', () => {
  const read = (name: string) =>
    fromStatus(
      readFileSync(new URL(`../../fixtures/cilium/pastes/${name}.txt`, import.meta.url), 'utf8'),
    );
  it('1.15.0-rc.1, whole: the replacement, its mode, selection, affinity, NodePort range and release', () => {
    assert.deepEqual(read('cilium-status-verbose-1150rc1'), {
      kubeProxyReplacement: true,
      replacementMode: 'True',
      // its details' Services list: every kind enabled
      services: {
        ClusterIP: true,
        NodePort: true,
        LoadBalancer: true,
        externalIPs: true,
        HostPort: true,
      },
      socketLB: true,
      hostnsOnly: false,
      forwarding: 'snat',
      algorithm: 'random',
      sessionAffinity: true,
      nodePortRange: [30000, 32767],
      version: 'v1.15.0-rc.1',
      // the Pod range its IPAM allocates from on the node (the walk's senders)
      podCIDRs: ['10.0.1.0/24'],
      fields: {
        kubeProxyReplacement: 'KubeProxyReplacement',
        socketLB: 'Socket LB',
        hostnsOnly: 'Socket LB Coverage',
        forwarding: 'Mode',
        algorithm: 'Backend Selection',
        sessionAffinity: 'Session Affinity',
        nodePortRange: 'Services: NodePort',
      },
    });
  });
  it('the standalone-gateway guide quotes only the details: their Status says the replacement', () => {
    assert.deepEqual(read('cilium-status-verbose-standalone-docs'), {
      kubeProxyReplacement: false,
      // a partial replacement; the quote elides its Services list, so no kind is said
      replacementMode: 'Partial',
      socketLB: true,
      forwarding: 'snat',
      algorithm: 'maglev',
      sessionAffinity: false,
      // a standalone gateway follows no Kubernetes API: its status says so, not Ok
      unhealthy: ['Kubernetes: Disabled'],
      // no coverage line and no NodePort range: those settings are not the status's
      fields: {
        kubeProxyReplacement: 'KubeProxyReplacement Details: Status',
        socketLB: 'Socket LB',
        forwarding: 'Mode',
        algorithm: 'Backend Selection',
        sessionAffinity: 'Session Affinity',
      },
    });
  });
});
