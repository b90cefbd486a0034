// An agent refusing cilium-config as read runs, if it does, on an earlier configuration kdebug did
// not read: the health server's options, node-port-range and bpf-lb-source-range-all-types are not
// known, as kube-proxy replacement is not (agent.ts notKnown); and the kube-proxy step's evidence
// says the replacement it quotes is from that refused config, not observed in force.
//
// IP conventions: node-b's agent, release 1.18.6 (the builders' image); 31000 is a port inside
// the refused config's node-port-range and outside the default one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import {
  healthServerUnknown,
  knownMapFlags,
} from '../../../src/core/dataplane/cilium/agent/comparable.js';
import { nodePortConflict } from '../../../src/core/dataplane/cilium/agent/node-port-range.js';
import { kubeProxyCheck } from '../../../src/core/checks/kube-proxy/kube-proxy.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import { ciliumCluster, facts, run } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const REFUSED = { 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'disabled' };
const CONFIG = {
  'kube-proxy-replacement': 'true',
  'enable-health-check-nodeport': 'true',
  'node-port-range': '31000,31100',
  'bpf-lb-source-range-all-types': 'true',
};
/** node-b's agent: cilium-config as `config`, refused where `refused`. */
const agentOf = (config: Record<string, string>, refused = true) =>
  new Analysis(facts(ciliumCluster({ ...(refused ? REFUSED : {}), ...config })), {
    code: allModes,
  }).state('node-b').cilium!;

describe('settings a refused cilium-config gives are not known', () => {
  it('the health server, the NodePort range and the source-range types are among them', () => {
    const taken = agentOf(CONFIG, false);
    assert.equal(taken.settings.sourceRangeTypes, 'all');
    assert.equal(knownMapFlags(taken).sourceRangeTypes, true);
    const agent = agentOf(CONFIG);
    for (const s of [
      'healthCheckNodePort',
      'healthCheckLoadBalancerIP',
      'nodePortRange',
      'sourceRangeTypes',
    ] as const)
      assert.ok(agent.settings.notKnown.includes(s), s);
    // the release's own types only: which others the agent guards is not known
    assert.notEqual(agent.settings.sourceRangeTypes, 'all');
    assert.equal(knownMapFlags(agent).sourceRangeTypes, false);
  });

  it("the health server's frontends are not compared, its options not known", () => {
    // taken, the health server is off (enable-health-check-loadbalancer-ip unset): compared
    assert.equal(healthServerUnknown(agentOf(CONFIG, false)), undefined);
    // before: compared, as the refused config's options say
    assert.match(
      healthServerUnknown(agentOf(CONFIG)) ?? '',
      /enable-health-check-nodeport and enable-health-check-loadbalancer-ip, each not known: cilium-config as read is refused/,
    );
  });

  it("expect says the health server's frontends are not in its tables, and why", () => {
    const text = (refused: boolean) =>
      expectedCiliumText([], [], {
        node: 'node-b',
        agent: 'kube-system/cilium-node-b',
        settings: 'ConfigMap kube-system/cilium-config',
        notKnown: agentOf(CONFIG, refused).settings.notKnown,
      });
    assert.doesNotMatch(text(false), /health server/);
    assert.match(
      text(true),
      /^# note: the health server's frontends on LoadBalancer IPs \(enable-health-check-nodeport, enable-health-check-loadbalancer-ip\) not known: cilium-config as read is refused, .*; none is in the tables below$/m,
    );
  });

  it("the refused range decides no LoadBalancer frontend's conflict with a NodePort", () => {
    const node = { name: 'node-b', labels: {}, nodePortAddresses: ['192.0.2.11'] };
    const fe = { ip: '192.0.2.11', port: 31000, type: 'LoadBalancer' as const };
    const options = (a: ReturnType<typeof agentOf>) => ({ ...a.settings, nodePortConflicts: true });
    assert.equal(nodePortConflict(fe, node, options(agentOf(CONFIG, false))), true);
    // before: dropped, as the refused range holds its port
    assert.equal(nodePortConflict(fe, node, options(agentOf(CONFIG))), false);
  });
});

describe("the kube-proxy step on a refused cilium-config's kube-proxy-replacement", () => {
  const evidence = (refused: boolean) =>
    run(kubeProxyCheck, facts(ciliumCluster({ ...(refused ? REFUSED : {}), ...CONFIG })))
      .find((f) => f.id === 'kube-proxy-replaced')!
      .evidence.map((e) => e.text);

  it('says the value is from a config the agents refuse, not observed in force', () => {
    assert.ok(evidence(false).includes('ConfigMap cilium-config: kube-proxy-replacement: true'));
    assert.ok(
      evidence(true).includes(
        'ConfigMap cilium-config: kube-proxy-replacement: true, from a cilium-config 2 agents refuse (kube-system/cilium-node-a and kube-system/cilium-node-b): not observed in force',
      ),
      JSON.stringify(evidence(true)),
    );
  });

  it('is not a pass: the replacement is not observed in force, and says how to observe it', () => {
    const f = run(kubeProxyCheck, facts(ciliumCluster({ ...REFUSED, ...CONFIG }))).find(
      (x) => x.id === 'kube-proxy-replaced',
    )!;
    assert.equal(f.status, 'skip');
    assert.match(f.explanation, /refuse the cilium-config/);
    assert.match(String(f.next && JSON.stringify(f.next)), /cilium-dbg.*status/);
  });
});
