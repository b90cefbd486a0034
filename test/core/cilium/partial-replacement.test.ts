// A Cilium 1.14 agent whose status says its kube-proxy replacement is "Partial" (and, before
// 1.13, "Probe"): it handles the ClusterIP and the kinds its status's Services list enables, and
// leaves the rest to kube-proxy (1.14's daemon/cmd/kube_proxy_replacement.go keeps
// enable-node-port and enable-host-port as set; pkg/client FormatStatusResponse prints the list).
// The status below is laid out as that printer lays it out.
//
// IP conventions: node-b 192.168.0.11 (twoNodes), its Pod range 10.244.1.0/24.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromStatus } from '../../../src/core/dataplane/cilium/agent/status.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { ciliumCluster, facts, kubeProxy } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const status = (mode: string, hostPort: string) =>
  [
    'KVStore:                 Ok   Disabled',
    `KubeProxyReplacement:    ${mode}   [eth0 192.168.0.11 (Direct Routing)]`,
    'Cilium:                  Ok   1.14.5 (v1.14.5-85db28be)',
    'KubeProxyReplacement Details:',
    `  Status:                 ${mode}`,
    '  Socket LB:              Enabled',
    '  Socket LB Tracing:      Enabled',
    '  Socket LB Coverage:     Full',
    '  Devices:                eth0 192.168.0.11 (Direct Routing)',
    '  Mode:                   SNAT',
    '  Backend Selection:      Random',
    '  Session Affinity:       Disabled',
    '  Graceful Termination:   Enabled',
    '  NAT46/64 Support:       Disabled',
    '  XDP Acceleration:       Disabled',
    '  Services:',
    '  - ClusterIP:      Enabled',
    '  - NodePort:       Enabled (Range: 30000-32767) ',
    '  - LoadBalancer:   Enabled ',
    '  - externalIPs:    Enabled ',
    `  - HostPort:       ${hostPort}`,
    '',
  ].join('\n');

describe('a partial kube-proxy replacement (Cilium 1.14 "Partial", before 1.13 "Probe")', () => {
  it('the status says the mode and the kinds enabled; the replacement is not full', () => {
    const said = fromStatus(status('Partial', 'Disabled'));
    assert.equal(said.replacementMode, 'Partial');
    assert.equal(said.kubeProxyReplacement, false);
    assert.deepEqual(said.services, {
      ClusterIP: true,
      NodePort: true,
      LoadBalancer: true,
      externalIPs: true,
      HostPort: false,
    });
  });

  // before: read as off, so with no kube-proxy Pod the node was kube-proxy's iptables mode, assumed
  for (const mode of ['Partial', 'Probe'])
    it(`${mode}, no kube-proxy Pod: mode cilium, saying what it handles and leaves, observed`, () => {
      const a = new Analysis(
        facts(ciliumCluster({ 'kube-proxy-replacement': 'partial' }), {
          'node-b': { 'cilium-status': status(mode, 'Disabled') },
        }),
        { code: allModes },
      );
      const s = a.state('node-b');
      assert.equal(s.mode.value, 'cilium');
      assert.equal(s.mode.evidence.kind, 'observed');
      assert.match(
        s.mode.evidence.text,
        new RegExp(
          `partial kube-proxy replacement \\(${mode}\\): Cilium handles ClusterIP, NodePort, LoadBalancer, externalIPs; leaves HostPort to kube-proxy, and no kube-proxy Pod there; from the status of agent kube-system/cilium-node-b`,
        ),
      );
      // NodePort enabled, HostPort not: the frontends it makes follow (1.14's ParseService)
      assert.deepEqual([s.cilium?.settings.nodePort, s.cilium?.settings.hostPort], [true, false]);
    });

  it("beside a kube-proxy Pod: kube-proxy's mode, the agent saying what it handles ahead of it", () => {
    const a = new Analysis(
      facts([...ciliumCluster({ 'kube-proxy-replacement': 'partial' }), ...kubeProxy()], {
        'node-b': { 'cilium-status': status('Partial', 'Enabled') },
      }),
      { code: allModes },
    );
    const s = a.state('node-b');
    assert.notEqual(s.mode.value, 'cilium');
    assert.deepEqual(s.cilium?.replacement?.handles, [
      'ClusterIP',
      'NodePort',
      'LoadBalancer',
      'externalIPs',
      'HostPort',
    ]);
    assert.deepEqual(s.cilium?.replacement?.leaves, []);
    assert.equal(s.cilium?.settings.nodePort, true);
  });

  // before: "False" was no replacement whatever its list enabled, so NodePort frontends were not
  // expected of a 1.16 agent run with kube-proxy-replacement false and enable-node-port true
  it('False with NodePort listed enabled (1.14 to 1.18): a partial replacement; all off: none', () => {
    const at = (hostPort: string, nodePort: string) =>
      new Analysis(
        facts(ciliumCluster({ 'kube-proxy-replacement': 'false' }), {
          'node-b': {
            'cilium-status': status('False', hostPort).replace(
              /- NodePort: {7}Enabled \(Range: 30000-32767\) /,
              `- NodePort:       ${nodePort}`,
            ),
          },
        }),
        { code: allModes },
      ).state('node-b');
    const s = at('Disabled', 'Enabled (Range: 30000-32767) ');
    assert.equal(s.mode.value, 'cilium');
    assert.deepEqual(s.cilium?.replacement?.leaves, ['HostPort']);
    assert.equal(s.cilium?.settings.nodePort, true);
    assert.equal(at('Disabled', 'Disabled').cilium?.replacement, undefined);
  });

  it('True and Strict are a full replacement: no partial one said', () => {
    for (const mode of ['True', 'Strict']) {
      const a = new Analysis(
        facts(ciliumCluster(), { 'node-b': { 'cilium-status': status(mode, 'Enabled') } }),
        { code: allModes },
      );
      assert.equal(a.state('node-b').mode.value, 'cilium');
      assert.equal(a.state('node-b').cilium?.replacement, undefined);
      assert.match(a.state('node-b').mode.evidence.text, /cilium \(kube-proxy replacement, from/);
    }
  });
});
