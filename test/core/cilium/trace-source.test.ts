// Where the Cilium walk takes a packet from (cilium/trace-source.ts): a Pod read from the API, an
// address in a Pod range (the agent's IPAM as its status says it, a Node's spec.podCIDRs,
// cilium-config's cluster pool), the node's own address, another node's (whose own agent may have
// translated a ClusterIP already), or none of these; each but a Pod read said as an assumption. Before, any address no Pod
// read had came "from outside the node", and a ClusterIP was dropped for it, nothing assumed.
//
// IP conventions: node-a 192.0.2.10 (Pods 10.244.0.0/24), node-b 192.0.2.11 (Pods
// 10.244.1.0/24); web's ClusterIP 10.96.0.50, its Pods 10.244.0.5 and 10.244.1.6; 203.0.113.9
// is a client outside the cluster.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import type { TracePacket } from '../../../src/core/dataplane/trace/trace.js';
import { ciliumCluster, facts } from '../checks/builders.js';
import { kdebug } from '../../support/cli.js';
import { allModes } from '../../support/modes.js';

const FRONTENDS = [
  'Address            Type       ServiceName  PortName  Backends                                  Status',
  '10.96.0.50:80/TCP  ClusterIP  default/web  http      10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP  Done',
  '',
].join('\n');
/** The socket LB settings the walk of a Pod's or a host's packet rests on, read: none taken as
 * Cilium's default (setting-sources.test.ts says that one). */
const SOCKET_LB = { 'bpf-lb-sock': 'true', 'bpf-lb-sock-hostns-only': 'false' };
/** node-b's walk of a packet from `src` to web's ClusterIP, cilium-config `config`. */
const walk = (src: string, config: Record<string, string> = {}, p: Partial<TracePacket> = {}) =>
  new Analysis(
    facts(ciliumCluster({ ...SOCKET_LB, ...config }), {
      'node-b': { 'cilium-frontends': FRONTENDS },
    }),
    { code: allModes },
  )
    .node('node-b')
    .trace({ src, dst: '10.96.0.50', dport: 80, protocol: 'tcp', fromHost: false, ...p });
const POD_HOOK = "the socket hook (connect/sendmsg) in the Pod's namespace";
const translated = (r: ReturnType<typeof walk>) =>
  r.outcomes.map((o) => o.destination).sort((a, b) => (a ?? '').localeCompare(b ?? ''));
const assumed = (r: ReturnType<typeof walk>) => [
  ...new Set(r.outcomes.flatMap((o) => o.assumptions)),
];

describe('the Cilium walk: where the packet comes from', () => {
  it("an address in the node's Pod range no Pod has: walked as a Pod there, said", () => {
    const r = walk('10.244.1.5');
    // before: at the node's device, DROP (a ClusterIP is non-routable from outside), nothing assumed
    assert.equal(r.enters, POD_HOOK);
    assert.deepEqual(translated(r), ['10.244.0.5:8080', '10.244.1.6:8080']);
    assert.deepEqual(assumed(r), [
      "10.244.1.5 is in node node-b's Pod range (10.244.1.0/24, Node spec.podCIDRs) and no Pod read has it: walked as a Pod there",
    ]);
    // a Pod read: the same hook, nothing assumed
    const pod = walk('10.244.1.6');
    assert.equal(pod.enters, POD_HOOK);
    assert.deepEqual(assumed(pod), []);
  });

  it("another node's Pod range, and the cluster's pool: walked as a Pod, which range said", () => {
    assert.match(
      assumed(walk('10.244.0.77')).join(),
      /^10\.244\.0\.77 is in node node-a's Pod range \(10\.244\.0\.0\/24, Node spec\.podCIDRs\) and no Pod read has it: walked as a Pod sending from this node/,
    );
    const pool = walk('10.244.7.9', { 'cluster-pool-ipv4-cidr': '10.244.0.0/16' });
    assert.equal(pool.enters, POD_HOOK);
    assert.deepEqual(assumed(pool), [
      "10.244.7.9 is in the cluster's Pod range (10.244.0.0/16, ConfigMap kube-system/cilium-config cluster-pool-ipv4-cidr) and no Pod read has it: walked as a Pod of node node-b",
    ]);
  });

  it("the node's own address: walked as the host, its socket hook as the settings allow", () => {
    const r = walk('192.0.2.11', { 'bpf-lb-sock': 'true', 'bpf-lb-sock-hostns-only': 'true' });
    assert.equal(r.enters, 'the socket hook (connect/sendmsg) of the host');
    assert.equal(r.packet.fromHost, true);
    assert.deepEqual(translated(r), ['10.244.0.5:8080', '10.244.1.6:8080']);
    assert.match(
      assumed(r).join(),
      /^192\.0\.2\.11 is an address of node node-b: walked as sent by a process on it/,
    );
    // socket LB off: the host device on the way out
    assert.equal(
      walk('192.0.2.11', { 'bpf-lb-sock': 'false' }).enters,
      'the host device on the way out',
    );
  });

  it('an unknown address comes from the network, as a client outside the cluster, assumed', () => {
    const outside = walk('203.0.113.9');
    assert.deepEqual(
      outside.outcomes.map((o) => o.verdict),
      ['DROP'],
    );
    // the ClusterIP's drop rests on bpf-lb-external-clusterip, which cilium-config does not set
    assert.deepEqual(assumed(outside), [
      "203.0.113.9 is no Pod read, no node's address and in no Pod range read (10.244.1.0/24, 10.244.0.0/24): walked as a client outside the cluster, coming in at the node's device",
      "bpf-lb-external-clusterip not read (Cilium's default: off): walked with that default; on, the ClusterIP answers from outside",
    ]);
  });
});

// a ClusterIP from another node's own address: that node's agent translates it before it leaves
// (its socket hook with socket LB on), so it never reaches this node as ClusterIP traffic
describe("the Cilium walk from another node's address to a ClusterIP", () => {
  it("socket LB on there: translated at that node's socket hook, said, not dropped here", () => {
    const r = walk('192.0.2.10');
    // before: at this node's device, DROP (non-routable from outside), nothing assumed
    assert.equal(r.enters, "the socket hook (connect/sendmsg) of node node-a's host");
    assert.deepEqual(translated(r), ['10.244.0.5:8080', '10.244.1.6:8080']);
    assert.match(r.outcomes[0]!.rules[0]!.effect, /^translated on node node-a to backend/);
    assert.deepEqual(assumed(r), [
      "192.0.2.10 is an address of node node-a, whose agent kube-system/cilium-node-a (ConfigMap kube-system/cilium-config bpf-lb-sock and kube-proxy-replacement) has socket LB on (bpf-lb-sock): a process there connecting to 10.96.0.50:80 is translated by node-a's own socket hook, so the packet leaves node-a for a backend and never reaches this node as ClusterIP traffic; node-a's table was not read here, its backends are taken as this node's lists them",
    ]);
  });

  it('socket LB not set in cilium-config there: not known, walked as arriving (not the default said read)', () => {
    const r = new Analysis(
      facts(ciliumCluster({ 'kube-proxy-replacement': 'true' }), {
        'node-b': { 'cilium-frontends': FRONTENDS },
      }),
      { code: allModes },
    )
      .node('node-b')
      .trace({ src: '192.0.2.10', dst: '10.96.0.50', dport: 80, protocol: 'tcp', fromHost: false });
    assert.equal(r.enters, "the node's device (tc/XDP at ingress)");
    assert.match(
      assumed(r)[0]!,
      /whether its agent kube-system\/cilium-node-a \(ConfigMap kube-system\/cilium-config kube-proxy-replacement\) translates it \(bpf-lb-sock, kube-proxy-replacement\) is not known/,
    );
  });

  it('socket LB off there, kube-proxy replaced: translated on the way out of its host', () => {
    const r = walk('192.0.2.10', { 'bpf-lb-sock': 'false' });
    assert.equal(r.enters, "node node-a's host device on the way out");
    assert.deepEqual(translated(r), ['10.244.0.5:8080', '10.244.1.6:8080']);
  });

  it("that node's agent not read, or its settings refused: walked as arriving, said why", () => {
    const objects = ciliumCluster().filter(
      (o) => !(o.kind === 'Pod' && o.metadata?.name === 'cilium-node-a'),
    );
    const bare = new Analysis(facts(objects, { 'node-b': { 'cilium-frontends': FRONTENDS } }), {
      code: allModes,
    })
      .node('node-b')
      .trace({ src: '192.0.2.10', dst: '10.96.0.50', dport: 80, protocol: 'tcp', fromHost: false });
    assert.equal(bare.enters, "the node's device (tc/XDP at ingress)");
    assert.deepEqual(
      bare.outcomes.map((o) => o.verdict),
      ['DROP'],
    );
    assert.match(
      assumed(bare).join(),
      /^192\.0\.2\.10 is an address of node node-a, where no Cilium agent was read: walked as it arrives here, to 10\.96\.0\.50:80 unchanged/,
    );
    const refused = walk('192.0.2.10', {
      'bpf-lb-acceleration': 'native',
      'node-port-acceleration': 'disabled',
    });
    assert.match(
      assumed(refused)[0]!,
      /^192\.0\.2\.10 is an address of node node-a: whether its agent kube-system\/cilium-node-a \(bpf-lb-sock and kube-proxy-replacement not read\) translates it \(bpf-lb-sock, kube-proxy-replacement\) is not known; walked as it arrives here/,
    );
  });

  it("that node's own recorded status, not cilium-config, says how its host's packet leaves", () => {
    // node-a's agent says socket LB off; cilium-config (kube-proxy replacement on, bpf-lb-sock
    // unset) would have it on: each node's agent may run otherwise
    const status = (sock: string) =>
      [
        'KubeProxyReplacement:    True   [eth0   192.0.2.10 (Direct Routing)]',
        'KubeProxyReplacement Details:',
        '  Status:                 True',
        `  Socket LB:              ${sock}`,
      ].join('\n');
    const from = (config: Record<string, string>, sock: string) =>
      new Analysis(
        facts(ciliumCluster({ 'kube-proxy-replacement': 'true', ...config }), {
          'node-a': { 'cilium-status': status(sock) },
          'node-b': { 'cilium-frontends': FRONTENDS },
        }),
        { code: allModes },
      )
        .node('node-b')
        .trace({
          src: '192.0.2.10',
          dst: '10.96.0.50',
          dport: 80,
          protocol: 'tcp',
          fromHost: false,
        });
    const off = from({}, 'Disabled');
    // before: the socket hook, from cilium-config's kube-proxy replacement
    assert.equal(off.enters, "node node-a's host device on the way out");
    assert.match(
      assumed(off)[0]!,
      /^192\.0\.2\.10 is an address of node node-a, whose agent kube-system\/cilium-node-a \(its status's "Socket LB" and "KubeProxyReplacement" lines\) replaces kube-proxy with socket LB off/,
    );
    const on = from({ 'bpf-lb-sock': 'false' }, 'Enabled');
    assert.equal(on.enters, "the socket hook (connect/sendmsg) of node node-a's host");
  });

  it('kdebug trace -o json on the Cilium scenario says it in the outcomes', () => {
    const run = kdebug([
      'trace',
      '--snapshot',
      'snapshots/cilium-stale-backend',
      '--node',
      'vm-12-11-centos',
      '--src',
      '10.0.12.7',
      '--dst',
      '10.1.190.219:8080',
      '-o',
      'json',
    ]);
    const doc = JSON.parse(run.stdout) as {
      packet: { enters: string };
      outcomes: { verdict: string; assumptions: string[] }[];
    };
    assert.equal(
      doc.packet.enters,
      "the socket hook (connect/sendmsg) of node vm-12-7-centos's host",
    );
    assert.deepEqual(
      doc.outcomes.map((o) => o.verdict),
      ['ACCEPT', 'ACCEPT'],
    );
    assert.match(doc.outcomes[0]!.assumptions[0]!, /never reaches this node as ClusterIP traffic/);
  });
});

describe('kdebug trace on the Cilium scenario, from an address of the Pod range no Pod has', () => {
  it("walks it as a Pod of the node, the agent's IPAM range said, and finds the stale backend", () => {
    const run = kdebug([
      'trace',
      '--snapshot',
      'snapshots/cilium-stale-backend',
      '--node',
      'vm-12-11-centos',
      '--src',
      '10.244.1.5',
      '--dst',
      '10.1.190.219:8080',
      '-o',
      'json',
    ]);
    // exit 1 for the stale backend, as from the Pod 10.244.1.8 (before: for a 100% DROP)
    assert.equal(run.code, 1, run.stderr);
    const doc = JSON.parse(run.stdout) as {
      packet: { enters: string };
      outcomes: { probability: number; verdict: string; assumptions: string[] }[];
    };
    assert.equal(doc.packet.enters, POD_HOOK);
    assert.deepEqual(
      doc.outcomes.map((o) => [o.probability, o.verdict]),
      [
        [0.5, 'ACCEPT'],
        [0.5, 'ACCEPT'],
      ],
    );
    assert.deepEqual(doc.outcomes[0]!.assumptions, [
      "10.244.1.5 is in node vm-12-11-centos's Pod range (10.244.1.0/24, the IPAM line of agent kube-system/cilium-lk8wz's status) and no Pod read has it: walked as a Pod there",
    ]);
  });
});
