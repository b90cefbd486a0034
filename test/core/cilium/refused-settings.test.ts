// An agent whose release refuses cilium-config as read (both acceleration keys set, to different
// values: every release stops at start), not ready, no status answered, its listing read: it ran,
// on an earlier configuration kdebug did not read. What only cilium-config says (socket LB and
// hostns-only, the no-backend response, external ClusterIPs, the forwarding mode, the NodePort
// devices, the source-range check) comes from the agent's own listing, else is said not known:
// never a verdict from the refused value.
//
// IP conventions: node-b 192.0.2.11 (Pods 10.244.1.0/24); web's ClusterIP 10.96.0.50, its Pods
// 10.244.0.5 and 10.244.1.6; 203.0.113.9 is a client outside the cluster.
import assert from 'node:assert/strict';
import { settingsSaid } from '../../../src/core/dataplane/cilium/agent/provenance.js';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { reachabilityCheck } from '../../../src/core/checks/reachability/reachability.js';
import type { TracePacket } from '../../../src/core/dataplane/trace/trace.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import { ciliumCluster, facts, run } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const REFUSED = { 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'disabled' };
const NOT_KNOWN = /not known: cilium-config as read is refused/;
const OUTSIDE_ASSUMED =
  "203.0.113.9 is no Pod read, no node's address and in no Pod range read (10.244.1.0/24, 10.244.0.0/24): walked as a client outside the cluster, coming in at the node's device";
const FRONTENDS = [
  'Address            Type       ServiceName  PortName  Backends                                  Status',
  '10.96.0.50:80/TCP  ClusterIP  default/web  http      10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP  Done',
  '',
].join('\n');
/** web's BPF entries, the Service's own row flagged `flags`, with `backends` rows. */
const bpf = (flags: string, backends = ['10.244.0.5:8080', '10.244.1.6:8080']) =>
  [
    'SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)',
    `10.96.0.50:80/TCP (0)   0.0.0.0:0 (2) (0) [${flags}]`,
    ...backends.map((b, i) => `10.96.0.50:80/TCP (${i + 1})   ${b}/TCP (2) (${i + 1})`),
    '',
  ].join('\n');
/** node-b's agent with cilium-config `config`, refused where `refused`, listing `listed`. */
const nodeB = (config: Record<string, string>, listed: Record<string, string>, refused = true) =>
  new Analysis(
    facts(ciliumCluster({ ...(refused ? REFUSED : {}), ...config }), { 'node-b': listed }),
    { code: allModes },
  );
const walk = (a: Analysis, p: Partial<TracePacket> = {}) =>
  a.node('node-b').trace({
    src: '192.0.2.11',
    dst: '10.96.0.50',
    dport: 80,
    protocol: 'tcp',
    fromHost: true,
    ...p,
  });

describe('trace on an agent refusing cilium-config, its listing read', () => {
  it('where a packet is translated: either hook, socket LB not known (the backends the same)', () => {
    const sock = { 'bpf-lb-sock': 'true', 'bpf-lb-sock-hostns-only': 'true' };
    const frontends = { 'cilium-frontends': FRONTENDS };
    // taken: the host's socket hook, and a Pod's interface (hostns-only)
    assert.equal(
      walk(nodeB(sock, frontends, false)).enters,
      'the socket hook (connect/sendmsg) of the host',
    );
    const pod = { src: '10.244.1.6', fromHost: false };
    assert.equal(walk(nodeB(sock, frontends, false), pod).enters, "the Pod's interface (tc)");
    // refused: before, the same two from the refused config
    const host = walk(nodeB(sock, frontends));
    assert.match(
      host.enters,
      /^the socket hook \(connect\/sendmsg\) of the host, or the host device on the way out \(bpf-lb-sock not known/,
    );
    assert.match(
      walk(nodeB(sock, frontends), pod).enters,
      /^the socket hook .* in the Pod's namespace, or the Pod's interface \(tc\) \(bpf-lb-sock and bpf-lb-sock-hostns-only not known/,
    );
    assert.deepEqual(host.outcomes.map((o) => o.destination).sort(), [
      '10.244.0.5:8080',
      '10.244.1.6:8080',
    ]);
  });

  it("no backend: Cilium's default (reject) assumed, not the refused config's drop", () => {
    const drop = { 'service-no-backend-response': 'drop', 'bpf-lb-sock': 'true' };
    const none = { 'cilium-bpf-lb-list': bpf('ClusterIP, non-routable', []) };
    assert.deepEqual(
      walk(nodeB(drop, none, false)).outcomes.map((o) => [o.verdict, o.assumptions]),
      [['DROP', []]],
    );
    const [o] = walk(nodeB(drop, none)).outcomes;
    // before: DROP, "service-no-backend-response=drop"
    assert.equal(o!.verdict, 'REJECT');
    assert.match(o!.rules[0]!.effect, NOT_KNOWN);
    assert.match(o!.assumptions.join(), /^service-no-backend-response is Cilium's default, reject/);
  });

  it('a ClusterIP from outside: the non-routable flag the agent listed, else the default assumed', () => {
    const external = { 'bpf-lb-external-clusterip': 'true' };
    const outside = { src: '203.0.113.9', fromHost: false };
    const listed = { 'cilium-bpf-lb-list': bpf('ClusterIP, non-routable') };
    // taken: routable, as the config says
    assert.equal(walk(nodeB(external, listed, false), outside).outcomes.length, 2);
    // refused: the agent's own entry says non-routable (before: translated, as the refused config says)
    const flagged = walk(nodeB(external, listed), outside).outcomes;
    // the one assumption: where the packet comes from, not the refused setting
    assert.deepEqual(
      flagged.map((o) => [o.verdict, o.assumptions]),
      [['DROP', [OUTSIDE_ASSUMED]]],
    );
    assert.match(
      flagged[0]!.rules[0]!.effect,
      /dropped \(its BPF map entry, nodes\/node-b\/cilium-bpf-lb-list\.txt:2, is non-routable\)/,
    );
    // the entry routable: translated, on the agent's word
    const routable = { 'cilium-bpf-lb-list': bpf('ClusterIP') };
    assert.equal(walk(nodeB({}, routable), outside).outcomes.length, 2);
    // no flags listed (db/show frontends): Cilium's default, off, assumed
    const unflagged = walk(nodeB(external, { 'cilium-frontends': FRONTENDS }), outside).outcomes;
    assert.deepEqual(
      unflagged.map((o) => o.verdict),
      ['DROP'],
    );
    assert.deepEqual(unflagged[0]!.assumptions.slice(0, 1), [OUTSIDE_ASSUMED]);
    assert.match(
      unflagged[0]!.assumptions.slice(1).join(),
      /^bpf-lb-external-clusterip is Cilium's default, off/,
    );
  });

  it("the ping explanation's walk says the no-backend response was assumed", () => {
    const drop = { 'service-no-backend-response': 'drop', 'bpf-lb-sock': 'true' };
    const none = bpf('ClusterIP, non-routable', []);
    const f = facts(ciliumCluster({ ...REFUSED, ...drop }), {
      'node-a': { 'cilium-bpf-lb-list': none },
      'node-b': { 'cilium-bpf-lb-list': none },
    });
    const ping = run(reachabilityCheck, f).find((x) => x.id === 'ping-clusterip-explained');
    const walked = ping?.evidence.map((e) => e.text).find((t) => t.includes('10.96.0.50:80'));
    // before: "on node-a, tcp 192.0.2.10 -> 10.96.0.50:80: DROP"
    assert.equal(
      walked,
      "on node-a, tcp 192.0.2.10 -> 10.96.0.50:80: REJECT (assumes: service-no-backend-response is Cilium's default, reject; the agent's own is not known, and drop leaves the client waiting for a timeout)",
    );
  });
});

describe('expect on an agent refusing cilium-config, its listing read', () => {
  /** expect's text for node-b, as the command gives it. */
  const expectText = (a: Analysis) => {
    const agent = a.state('node-b').cilium!;
    const node = a.node('node-b');
    return expectedCiliumText(node.ciliumExpected() ?? [], node.ciliumMaps() ?? [], {
      node: 'node-b',
      agent: 'kube-system/cilium-node-b',
      settings: settingsSaid(agent),
      ...(agent.nodePorts ? { nodePorts: agent.nodePorts } : {}),
      ...(agent.refused ? { refused: agent.refused } : {}),
      notKnown: agent.settings.notKnown,
    });
  };
  const config = { 'bpf-lb-mode': 'dsr', devices: 'eth1' };
  const frontends = { 'cilium-frontends': FRONTENDS };

  it("leaves out the flags the refused config's options decide, and says which", () => {
    const taken = expectText(nodeB(config, frontends, false));
    assert.match(
      taken,
      /^10\.96\.0\.50:80\/TCP \(0\) +0\.0\.0\.0:0 \(\d+\) \(0\) \[ClusterIP, non-routable, dsr\]$/m,
    );
    const text = expectText(nodeB(config, frontends));
    // before: [ClusterIP, non-routable, dsr], from the refused bpf-lb-mode
    assert.match(text, /^10\.96\.0\.50:80\/TCP \(0\) +0\.0\.0\.0:0 \(\d+\) \(0\) \[ClusterIP\]$/m);
    assert.match(
      text,
      /^# left out of the rows below, whether an entry carries them not known: cilium-config as read is refused, .*: non-routable \(bpf-lb-external-clusterip\), dsr \(bpf-lb-mode\)$/m,
    );
  });

  it('says the NodePort devices the refused config names are not known', () => {
    assert.match(
      expectText(nodeB(config, frontends, false)),
      /^# cilium-dbg bpf lb list \(NodePort devices eth1, their addresses not read, from ConfigMap/m,
    );
    const text = expectText(nodeB(config, frontends));
    // before: "NodePort devices eth1, from ConfigMap kube-system/cilium-config", the refused one
    assert.doesNotMatch(text, /eth1/);
    assert.match(
      text,
      /^# cilium-dbg bpf lb list \(NodePort devices and addresses not read \(no agent status recorded\) and those cilium-config names not known/m,
    );
  });
});
