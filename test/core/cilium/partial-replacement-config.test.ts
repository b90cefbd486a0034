// A partial kube-proxy replacement where no status of the agent was recorded: cilium-config's
// kube-proxy-replacement and per-feature keys read as the agent's release reads them. Facts from
// Cilium's own source: daemon/cmd/kube_proxy_replacement.go (1.13 takes strict, partial, disabled;
// 1.14 and 1.15 add true and false, "false" and "partial" keeping the keys as set; 1.16 and 1.17
// take true and false only), daemon_main.go's defaults (1.13: "partial", enable-host-port on;
// 1.14 on: "false", off), finishKubeProxyReplacementInit/disableNodePort (no NodePort, no host
// port), 1.18's pkg/kpr (true or false, the keys deprecated but read), 1.19's (a boolean, no
// keys).
//
// IP conventions: node-b 192.168.0.11 (twoNodes); web is a NodePort Service (node port 30080).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { aCiliumAgent } from '../../support/builders.js';
import { ciliumCluster, facts, kubeProxy, replace } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

/** node-b's state with an agent of `tag` and cilium-config `config`, no status recorded. */
const stateAt = (tag: string, config: Record<string, string>, withKubeProxy = false) => {
  const objects = replace(
    ciliumCluster(config),
    'Pod',
    'cilium-node-b',
    aCiliumAgent('node-b', `quay.io/cilium/cilium:${tag}`),
  );
  return new Analysis(facts([...objects, ...(withKubeProxy ? kubeProxy() : [])]), {
    code: allModes,
  }).state('node-b');
};

const NP = { 'enable-node-port': 'true' };

describe('a partial kube-proxy replacement from cilium-config alone', () => {
  const ALL = ['ClusterIP', 'NodePort', 'LoadBalancer', 'externalIPs', 'HostPort'];
  const BUT_HOST_PORT = ['ClusterIP', 'NodePort', 'LoadBalancer', 'externalIPs'];
  const cases: [string, Record<string, string>, string[] | undefined][] = [
    // 1.13: enable-host-port on by default
    ['v1.13.18', { 'kube-proxy-replacement': 'partial', ...NP }, ALL],
    ['v1.13.18', { 'kube-proxy-replacement': 'partial' }, ['ClusterIP']],
    // 1.14 and 1.15: "partial" and "false" keep the keys as set, host port off by default
    ['v1.14.19', { 'kube-proxy-replacement': 'partial', ...NP }, BUT_HOST_PORT],
    ['v1.15.19', { 'kube-proxy-replacement': 'false', ...NP, 'enable-host-port': 'true' }, ALL],
    ['v1.16.19', { 'kube-proxy-replacement': 'false', ...NP }, BUT_HOST_PORT],
    ['v1.18.6', { 'kube-proxy-replacement': 'false', ...NP, 'enable-host-port': 'true' }, ALL],
    // host port without NodePort is turned off (disableNodePort)
    [
      'v1.14.19',
      { 'kube-proxy-replacement': 'partial', 'enable-host-port': 'true' },
      ['ClusterIP'],
    ],
    // a boolean as viper reads it: "True" is true, "yes" false
    [
      'v1.15.19',
      { 'kube-proxy-replacement': 'partial', 'enable-node-port': 'True' },
      BUT_HOST_PORT,
    ],
    ['v1.15.19', { 'kube-proxy-replacement': 'partial', 'enable-node-port': 'yes' }, ['ClusterIP']],
    // values the release does not take as partial: none said
    ['v1.16.19', { 'kube-proxy-replacement': 'partial', ...NP }, undefined],
    ['v1.13.18', { 'kube-proxy-replacement': 'false', ...NP }, undefined],
    ['v1.14.19', { 'kube-proxy-replacement': 'disabled', ...NP }, undefined],
    ['v1.14.19', { 'kube-proxy-replacement': 'strict', ...NP }, undefined],
    // 1.19 reads no enable-node-port: false is no replacement
    ['v1.19.7', { 'kube-proxy-replacement': 'false', ...NP }, undefined],
    // "false" with NodePort off serves the ClusterIP only, as no replacement does
    ['v1.16.19', { 'kube-proxy-replacement': 'false' }, undefined],
  ];
  for (const [tag, config, handles] of cases)
    it(`${tag} ${JSON.stringify(config)}: ${handles ? handles.join(', ') : 'none'}`, () => {
      const r = stateAt(tag, config).cilium?.replacement;
      if (!handles) return assert.equal(r, undefined, JSON.stringify(r));
      assert.deepEqual(r?.handles, handles);
      assert.deepEqual(
        r?.leaves,
        ALL.filter((k) => !handles.includes(k)),
      );
      assert.equal(r?.from, 'cilium-config');
    });

  // before: cilium-config's "partial" was read as off: with no kube-proxy Pod the node was
  // kube-proxy's iptables mode, assumed, and NodePort frontends were not expected of Cilium
  it('no kube-proxy Pod: mode cilium, read from cilium-config, naming what it handles and leaves', () => {
    const s = stateAt('v1.14.19', { 'kube-proxy-replacement': 'partial', ...NP });
    assert.equal(s.mode.value, 'cilium');
    assert.equal(s.mode.evidence.kind, 'read');
    assert.match(
      s.mode.evidence.text,
      /^node-b: cilium \(partial kube-proxy replacement \(partial\): Cilium handles ClusterIP, NodePort, LoadBalancer, externalIPs; leaves HostPort to kube-proxy, and no kube-proxy Pod there; from ConfigMap kube-system\/cilium-config kube-proxy-replacement and enable-node-port\)$/,
    );
    assert.deepEqual([s.cilium?.settings.nodePort, s.cilium?.settings.hostPort], [true, false]);
  });

  // before: mode cilium, its node ports said to have nothing serving them
  it("no kube-proxy Pod, but kube-proxy's own answer observed there: kube-proxy's mode", () => {
    const objects = replace(
      ciliumCluster({ 'kube-proxy-replacement': 'partial', ...NP }),
      'Pod',
      'cilium-node-b',
      aCiliumAgent('node-b', 'quay.io/cilium/cilium:v1.14.19'),
    );
    const s = new Analysis(facts(objects, { 'node-b': { 'proxy-mode': 'iptables' } }), {
      code: allModes,
    }).state('node-b');
    assert.equal(s.mode.value, 'iptables');
    assert.equal(s.mode.evidence.kind, 'observed');
    assert.deepEqual(s.cilium?.replacement?.leaves, ['HostPort']);
  });

  it('beside a kube-proxy Pod: its mode stays, the agent carries what it handles', () => {
    const s = stateAt('v1.16.19', { 'kube-proxy-replacement': 'false', ...NP }, true);
    assert.notEqual(s.mode.value, 'cilium');
    assert.deepEqual(s.cilium?.replacement?.leaves, ['HostPort']);
  });

  it('before 1.13, "probe": the kernel decides the kinds, said not known', () => {
    const s = stateAt('v1.12.19', { 'kube-proxy-replacement': 'probe', ...NP });
    assert.equal(s.mode.value, 'cilium');
    assert.match(
      s.mode.evidence.text,
      /\(probe\), the kinds it handles not known \(the kernel's probes/,
    );
    assert.equal(s.cilium?.settings.nodePort, undefined);
  });
});
