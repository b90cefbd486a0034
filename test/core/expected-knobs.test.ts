// What kube-proxy takes from the node rather than from the API objects, read from what was
// recorded on the node: its rules first, then /metrics and its version, else nothing assumed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeKnobs as knobsOf } from '../../src/core/dataplane/kube-proxy/knobs.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { resolveNode } from '../../src/core/nodes/state.js';
import { ViewIndex } from '../../src/core/kube/view-index.js';
import type { Ruleset } from '../../src/core/dataplane/iptables/read/parse.js';

const NODE = 'node-a';
const kubeProxyPod = (image: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    namespace: 'kube-system',
    name: 'kube-proxy-x1',
    labels: { 'k8s-app': 'kube-proxy' },
  },
  spec: { nodeName: NODE, containers: [{ name: 'kube-proxy', image }] },
  status: { phase: 'Running' },
});
const view = (...objects: KubeObject[]) => clusterView(objects);
/** The knobs of NODE, its state decided from these outputs and objects as a run decides it. */
function nodeKnobs(
  _node: string,
  outputs: Record<string, string> | undefined,
  rules?: Ruleset,
  v = view(),
) {
  const nodes: Facts['nodes'] = outputs ? { [NODE]: outputs } : {};
  const facts: Facts = { objects: [], nodes, meta: {} };
  const state = resolveNode(NODE, {
    facts,
    view: v,
    index: new ViewIndex(v),
    shownMode: () => undefined,
  });
  return knobsOf(state, outputs, rules);
}
const SYNC = 'kubeproxy_sync_proxy_rules_last_timestamp_seconds 1.7e9\n';

describe('node knobs: nfacct counters', () => {
  it('are read off the rules when the node has them, whatever else says', () => {
    const rules = parseIptables(
      [
        '*filter',
        ':KUBE-FORWARD - [0:0]',
        '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name  ct_state_invalid_dropped_pkts -j DROP',
        'COMMIT',
      ].join('\n'),
    );
    const k = nodeKnobs(NODE, { 'proxy-metrics': SYNC }, rules, view(kubeProxyPod('kp:v1.29.0')));
    assert.equal(k.options.nfacct, true);
    assert.deepEqual(k.nfacctNotes, []);
  });

  it('are present when /metrics reports the localhost node-ports counter', () => {
    const metrics = `${SYNC}kubeproxy_iptables_localhost_nodeports_accepted_packets_total 0\n`;
    const k = nodeKnobs(NODE, { 'proxy-metrics': metrics });
    assert.equal(k.options.nfacct, true);
    assert.deepEqual(k.nfacctNotes, []);
  });

  it("are absent when /metrics is kube-proxy's and reports no counter (HELP lines are not samples)", () => {
    const metrics = `${SYNC}# HELP kubeproxy_iptables_localhost_nodeports_accepted_packets_total Number\n`;
    const k = nodeKnobs(
      NODE,
      { 'proxy-metrics': metrics },
      undefined,
      view(kubeProxyPod('registry.k8s.io/kube-proxy:v1.33.1')),
    );
    assert.equal(k.options.nfacct, false);
  });

  it('follow the version of the kube-proxy image on the node when nothing else tells, and say so', () => {
    const recent = nodeKnobs(
      NODE,
      {},
      undefined,
      view(kubeProxyPod('registry.k8s.io/kube-proxy:v1.33.1')),
    );
    assert.equal(recent.options.nfacct, true);
    assert.match(recent.nfacctNotes.join('\n'), /assumed from kube-proxy v1\.33\.1 on node-a/);
    const old = nodeKnobs(
      NODE,
      {},
      undefined,
      view(kubeProxyPod('registry.k8s.io/kube-proxy:v1.30.4@sha256:ab')),
    );
    assert.equal(old.options.nfacct, false);
    assert.deepEqual(old.nfacctNotes, []);
  });

  it('follow the build info in /metrics when its version is all it tells', () => {
    const k = nodeKnobs(NODE, {
      'proxy-metrics': 'kubernetes_build_info{git_version="v1.31.2",major="1"} 1\n',
    });
    assert.equal(k.options.nfacct, true);
  });

  it('are not assumed when nothing about the node is known, with a note saying how to say', () => {
    const k = nodeKnobs(NODE, undefined);
    assert.equal(k.options.nfacct, false);
    assert.match(k.nfacctNotes.join('\n'), /version on node-a is unknown.*--nfacct/);
  });
});

describe('node knobs: configuration', () => {
  it('takes /configz as the configuration the node runs with', () => {
    const configz = JSON.stringify({
      'kubeproxy.config.k8s.io': { mode: 'iptables', clusterCIDR: '10.9.0.0/16' },
    });
    const k = nodeKnobs(NODE, { 'proxy-configz': configz });
    assert.equal(k.options.config?.clusterCIDR, '10.9.0.0/16');
    // an answer that is not kube-proxy's configuration leaves its defaults, said as assumed
    assert.equal(
      nodeKnobs(NODE, { 'proxy-configz': 'connection refused' }).options.config?.clusterCIDR,
      undefined,
    );
  });
});

describe('node knobs: the release', () => {
  it("is the node's own kube-proxy release, so expect writes what that release writes", () => {
    const k = nodeKnobs(
      NODE,
      {},
      undefined,
      view(kubeProxyPod('registry.k8s.io/kube-proxy:v1.33.1')),
    );
    assert.deepEqual(k.options.release, { minor: 33 });
    assert.deepEqual(k.notes, []);
  });

  it('is the newest modelled when the version is unknown, and the note says so', () => {
    const k = nodeKnobs(NODE, undefined);
    assert.equal(k.options.release, undefined);
    assert.match(k.notes.join('\n'), /version on node-a is unknown: written as kube-proxy v1\.37/);
  });
});
