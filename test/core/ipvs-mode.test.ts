// IPVS mode: what kube-proxy programs (virtual servers, real servers, kube-ipvs0, ipsets) from the
// objects, the drift of a node's state from it, and kube-proxy's ipsets read back from the real
// ipset (a network namespace of our own: its sets are its own).
import { evidenceText } from '../../src/core/findings/evidence.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { hairpinCheck } from '../../src/core/checks/hairpin.js';
import { trafficPolicyCheck } from '../../src/core/checks/traffic-policy/traffic-policy.js';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { ipvsDrift } from '../../src/core/dataplane/ipvs/drift/drift.js';
import {
  expectedIpvs,
  ipsetSaveLines,
  ipvsadmSaveLines,
  type ExpectedIpvs,
} from '../../src/core/dataplane/ipvs/expected/expected.js';
import { parseIpsets } from '../../src/core/dataplane/ipvs/read/ipset.js';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { Facts } from '../../src/core/model.js';
import { traceAnswer } from '../../src/core/dataplane/trace/answer.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from '../support/builders.js';
import { skipWithout } from '../support/skip.js';
import { ids, run } from './checks/builders.js';
import { unavailableText } from '../../src/core/nodes/drift-unavailable.js';
import type { ServiceListScope } from '../../src/core/facts/service-list-scope.js';
import { allModes } from '../support/modes.js';

const NODE = 'node-a';
const OBJECTS = [
  aNode(NODE, '192.0.2.11', '10.244.0.0/24'),
  aNode('node-b', '192.0.2.12', '10.244.1.0/24'),
  aKubeProxyConfig('mode: ipvs\nclusterCIDR: 10.244.0.0/16\nipvs:\n  scheduler: wrr\n'),
  aService('shop/web', {
    type: 'LoadBalancer',
    clusterIP: '10.96.0.20',
    ports: [['http', 80, 'TCP', 30080]],
    externalIPs: ['192.0.2.11', '203.0.113.5'],
    loadBalancerIPs: ['198.51.100.7'],
    sourceRanges: ['192.0.2.0/24'],
    externalTrafficPolicy: 'Local',
    healthCheckNodePort: 32000,
    affinity: 600,
  }),
  anEndpointSlice(
    'shop/web',
    [
      ['10.244.0.5', { node: NODE }],
      ['10.244.1.6', { node: 'node-b' }],
    ],
    [['http', 8080]],
  ),
  aService('shop/sctp', {
    clusterIP: '10.96.0.30',
    type: 'NodePort',
    ports: [['s', 9000, 'SCTP', 30900]],
  }),
  anEndpointSlice('shop/sctp', ['10.244.1.9'], [['s', 9000, 'SCTP']]),
];
const view = clusterView(OBJECTS);
// the node's own addresses; kube-ipvs0's are not among them
const OWN = ['192.0.2.11', '10.244.0.1', '127.0.0.1'];
const want = expectedIpvs(expectedRules(view, NODE), { scheduler: 'wrr', nodeAddresses: OWN });
const vs = (address: string, protocol = 'tcp') =>
  want.virtualServers.find((v) => v.address === address && v.protocol === protocol);

describe('IPVS mode: what kube-proxy programs on a node', () => {
  const cases = [
    // address, protocol, kind, real servers, persistence
    { address: '10.96.0.20:80', kind: 'cluster-ip', real: ['10.244.0.5:8080', '10.244.1.6:8080'] },
    { address: '203.0.113.5:80', kind: 'external-ip', real: ['10.244.0.5:8080'] },
    { address: '198.51.100.7:80', kind: 'load-balancer', real: ['10.244.0.5:8080'] },
    { address: '192.0.2.11:30080', kind: 'node-port', real: ['10.244.0.5:8080'] },
    { address: '10.244.0.1:30080', kind: 'node-port', real: ['10.244.0.5:8080'] },
  ];
  for (const c of cases)
    it(`${c.kind} ${c.address}: Local policy applies to external entries only`, () => {
      const v = vs(c.address);
      assert.ok(v, `no virtual server ${c.address}`);
      assert.equal(v.kind, c.kind);
      assert.deepEqual(v.realServers, c.real);
      assert.equal(v.scheduler, 'wrr');
      assert.equal(v.persistent, 600);
    });

  it('no node port on loopback, nor on an address it was not given', () => {
    assert.equal(vs('127.0.0.1:30080'), undefined);
    assert.equal(vs('192.0.2.12:30080'), undefined);
  });

  it('binds cluster, external and load-balancer IPs to kube-ipvs0, but not a node address', () => {
    assert.deepEqual(want.bound.sort(), [
      '10.96.0.20',
      '10.96.0.30',
      '198.51.100.7',
      '203.0.113.5',
    ]);
  });

  it('fills the ipsets kube-proxy matches in its iptables rules', () => {
    const set = (name: string) => want.ipsets.get(name)?.sort();
    assert.deepEqual(set('KUBE-LOOP-BACK'), ['10.244.0.5,tcp:8080,10.244.0.5']);
    assert.deepEqual(set('KUBE-CLUSTER-IP'), ['10.96.0.20,tcp:80', '10.96.0.30,sctp:9000']);
    assert.deepEqual(set('KUBE-EXTERNAL-IP-LOCAL'), ['192.0.2.11,tcp:80', '203.0.113.5,tcp:80']);
    assert.equal(set('KUBE-EXTERNAL-IP'), undefined);
    assert.deepEqual(set('KUBE-LOAD-BALANCER-LOCAL'), ['198.51.100.7,tcp:80']);
    assert.deepEqual(set('KUBE-LOAD-BALANCER-SOURCE-CIDR'), ['198.51.100.7,tcp:80,192.0.2.0/24']);
    // the node's own address is in the source range: it may reach the load balancer
    assert.deepEqual(set('KUBE-LOAD-BALANCER-SOURCE-IP'), ['198.51.100.7,tcp:80,198.51.100.7']);
    assert.deepEqual(set('KUBE-NODE-PORT-TCP'), ['30080']);
    assert.deepEqual(set('KUBE-NODE-PORT-LOCAL-TCP'), ['30080']);
    // SCTP node ports are kept per node address
    assert.deepEqual(set('KUBE-NODE-PORT-SCTP-HASH'), [
      '10.244.0.1,sctp:30900',
      '192.0.2.11,sctp:30900',
    ]);
    assert.deepEqual(set('KUBE-HEALTH-CHECK-NODE-PORT'), ['32000']);
    assert.equal(vs('192.0.2.11:30900', 'sctp')?.realServers[0], '10.244.1.9:9000');
  });
});

/** The node's state as kube-proxy would leave it, read back as kdebug reads a node. */
const asRead = (e: ExpectedIpvs) => ({
  table: parseIpvs(`${ipvsadmSaveLines(e).join('\n')}\n`, 'ipvsadm-save.txt'),
  ipsets: parseIpsets(`${ipsetSaveLines(e).join('\n')}\n`, 'ipset-save.txt'),
  bound: new Set(e.bound),
});
const driftOf = (read: ReturnType<typeof asRead>) =>
  ipvsDrift({
    node: NODE,
    source: 'ipvsadm-save.txt',
    expected: want,
    ...read,
    localEndpoints: new Set(['10.244.0.5:8080']),
    scoped: false,
    listed: { kind: 'none' },
  }).findings.map((f) => `${f.id} ${f.title}`);

describe('IPVS mode: drift', () => {
  it("finds nothing on kube-proxy's own state", () => {
    assert.deepEqual(driftOf(asRead(want)), []);
  });

  const faults: { what: string; edit: (r: ReturnType<typeof asRead>) => void; found: string }[] = [
    {
      what: 'a cluster IP virtual server deleted',
      edit: (r) =>
        (r.table.services = r.table.services.filter((s) => s.address !== '10.96.0.20:80')),
      found: 'service-rules-missing no virtual server TCP 10.96.0.20:80',
    },
    {
      what: 'a node port virtual server deleted',
      edit: (r) =>
        (r.table.services = r.table.services.filter((s) => s.address !== '192.0.2.11:30080')),
      found: 'nodeport-missing no virtual server TCP 192.0.2.11:30080',
    },
    {
      what: 'a ready endpoint at weight 0',
      edit: (r) =>
        (r.table.services.find((s) => s.address === '10.96.0.20:80')!.realServers[0]!.weight = 0),
      found: 'real-server-weight-zero 10.96.0.20:80: real server 10.244.0.5:8080 at weight 0',
    },
    {
      what: 'a remote endpoint behind a Local policy',
      edit: (r) =>
        r.table.services
          .find((s) => s.address === '203.0.113.5:80')!
          .realServers.push({ address: '10.244.1.6:8080', forward: 'Masq', weight: 1, line: 99 }),
      found: 'local-policy-wrong 203.0.113.5:80: 10.244.1.6:8080 is not on node-a',
    },
    {
      what: 'persistence lost',
      edit: (r) => delete r.table.services.find((s) => s.address === '10.96.0.20:80')!.persistent,
      found: 'affinity-wrong 10.96.0.20:80: persistence off, expected 600',
    },
    {
      what: 'the cluster IP taken off kube-ipvs0',
      edit: (r) => r.bound.delete('10.96.0.20'),
      found: 'vip-not-on-kube-ipvs0 10.96.0.20 not on kube-ipvs0',
    },
    {
      what: 'a KUBE-CLUSTER-IP entry deleted',
      edit: (r) => r.ipsets.get('KUBE-CLUSTER-IP')!.entries.delete('10.96.0.30,sctp:9000'),
      found: 'ipset-entry-missing KUBE-CLUSTER-IP: 10.96.0.30,sctp:9000 missing',
    },
  ];
  for (const f of faults)
    it(f.what, () => {
      const read = asRead(want);
      f.edit(read);
      assert.deepEqual(driftOf(read), [f.found]);
    });

  // a virtual server names no Service: left over only where the whole Service list was read
  const leftOver = (e: ExpectedIpvs, listed: ServiceListScope) => {
    const read = asRead(e);
    read.table.services.push({
      protocol: 'udp',
      address: '10.96.0.99:53',
      scheduler: 'rr',
      realServers: [],
      line: 50,
    });
    const d = ipvsDrift({
      node: NODE,
      source: 'ipvsadm-save.txt',
      expected: e,
      ...read,
      localEndpoints: new Set(['10.244.0.5:8080']),
      scoped: false,
      listed,
    });
    return d.findings.map((f) => `${f.id} ${f.title}`);
  };
  it("a virtual server no Service needs, every namespace's Service list read: left over", () => {
    const all = clusterView([
      ...OBJECTS,
      aService('default/kubernetes', { clusterIP: '10.96.0.1' }),
    ]);
    const e = expectedIpvs(expectedRules(all, NODE), { scheduler: 'wrr', nodeAddresses: OWN });
    assert.deepEqual(leftOver(e, { kind: 'all' }), [
      'orphan-chain virtual server UDP 10.96.0.99:53 is left over',
    ]);
  });
  it("a virtual server of a Service not captured (one Service's or one namespace's capture): not called left over", () => {
    assert.deepEqual(leftOver(want, { kind: 'none' }), []);
    assert.deepEqual(leftOver(want, { kind: 'namespace', namespace: 'default' }), []);
  });

  it("cites kube-ipvs0's addresses where they were read, ip -br addr, not the virtual servers", () => {
    const read = asRead(want);
    read.bound.delete('10.96.0.20');
    const f = ipvsDrift({
      node: NODE,
      source: 'ipvsadm-save.txt',
      expected: want,
      ...read,
      localEndpoints: new Set(['10.244.0.5:8080']),
      scoped: false,
      listed: { kind: 'none' },
    }).findings.find((x) => x.id === 'vip-not-on-kube-ipvs0')!;
    assert.deepEqual(
      f.evidence.map((e) => [evidenceText(e), e.source]),
      [[`nodes/${NODE}/ip-addr.txt: none of these`, `nodes/${NODE}/ip-addr.txt`]],
    );
  });

  it("names the cluster IP's virtual server at a port no Service port has, not as a leftover (a port change)", () => {
    const read = asRead(want);
    read.table.services.find((s) => s.address === '10.96.0.20:80')!.address = '10.96.0.20:8080';
    const found = ipvsDrift({
      node: NODE,
      source: 'ipvsadm-save.txt',
      expected: want,
      ...read,
      localEndpoints: new Set(['10.244.0.5:8080']),
      scoped: false,
      listed: { kind: 'none' },
    }).findings;
    assert.deepEqual(
      found.map((f) => f.id),
      ['service-rules-missing'],
    );
    assert.match(
      found[0]!.explanation,
      /It has one at 10\.96\.0\.20:8080, a port of this cluster IP no current Service port has/,
    );
    assert.match(found[0]!.drift.actual[0]!, /^ipvsadm-save\.txt:\d+: -A -t 10\.96\.0\.20:8080 /);
  });

  it('two ports changed at once: each stale virtual server said with its own Service port where its real servers tell, else said not told', () => {
    /** shop/two at 10.96.0.40 with ports `ports`, its endpoint serving `targets`. */
    const two = (ports: [number, number], targets: [number, number]) =>
      expectedIpvs(
        expectedRules(
          clusterView([
            aNode(NODE, '192.0.2.11', '10.244.0.0/24'),
            aKubeProxyConfig('mode: ipvs\nclusterCIDR: 10.244.0.0/16\n'),
            aService('shop/two', {
              clusterIP: '10.96.0.40',
              ports: [
                ['http', ports[0]],
                ['https', ports[1]],
              ],
            }),
            anEndpointSlice(
              'shop/two',
              ['10.244.0.7'],
              [
                ['http', targets[0]],
                ['https', targets[1]],
              ],
            ),
          ]),
          NODE,
        ),
        { scheduler: 'rr', nodeAddresses: ['192.0.2.11'] },
      );
    const said = (before: ExpectedIpvs, now: ExpectedIpvs) =>
      ipvsDrift({
        node: NODE,
        source: 'ipvsadm-save.txt',
        expected: now,
        ...asRead(before),
        localEndpoints: new Set(),
        scoped: false,
        listed: { kind: 'none' },
      }).findings.map((f) => [f.title, f.explanation]);
    // the Service's ports and targets alike: 80 -> 8080, 443 -> 8443, now 81 and 444
    const told = said(two([80, 443], [8080, 8443]), two([81, 444], [8080, 8443]));
    assert.deepEqual(
      told.map(([t]) => t).filter((t) => t!.startsWith('no virtual server')),
      ['no virtual server TCP 10.96.0.40:81', 'no virtual server TCP 10.96.0.40:444'],
    );
    assert.match(
      told[0]![1]!,
      /It has one at 10\.96\.0\.40:80, .*with this Service port's real servers/,
    );
    assert.doesNotMatch(told[0]![1]!, /:443/);
    assert.match(told[1]![1]!, /It has one at 10\.96\.0\.40:443, /);
    assert.doesNotMatch(told[1]![1]!, /:80\b/);
    // both ports' targets the same: their real servers do not tell them apart
    const untold = said(two([80, 443], [8080, 8080]), two([81, 444], [8080, 8080]));
    const missing = untold.filter(([t]) => t!.startsWith('no virtual server'));
    assert.equal(missing.length, 2);
    for (const [, explanation] of missing)
      assert.match(
        explanation!,
        /virtual servers at 10\.96\.0\.40:80, 10\.96\.0\.40:443, .*which of them was this Service port's, the listing cannot tell/,
      );
  });

  it('an endpoint kube-proxy drains (weight 0, no longer an endpoint) is a note, not drift', () => {
    const read = asRead(want);
    read.table.services
      .find((s) => s.address === '10.96.0.20:80')!
      .realServers.push({ address: '10.244.1.99:8080', forward: 'Masq', weight: 0, line: 98 });
    const d = ipvsDrift({
      node: NODE,
      source: 's',
      expected: want,
      ...read,
      localEndpoints: new Set(),
      scoped: true,
      listed: { kind: 'none' },
    });
    assert.deepEqual(d.findings, []);
    assert.deepEqual(
      d.notes?.map((n) => n.title),
      ['10.96.0.20:80: 10.244.1.99:8080 draining (weight 0)'],
    );
    // what the node has is shown as its line, in ipvsadm-save's words, and where it was read
    assert.deepEqual(d.notes?.[0]?.drift.actual, [
      's:98: -a -t 10.96.0.20:80 -r 10.244.1.99:8080 -m -w 0',
    ]);
  });
});

describe('IPVS mode through the analysis', () => {
  const facts = (outputs: Record<string, string>): Facts => ({
    objects: OBJECTS,
    nodes: { [NODE]: outputs },
    meta: { capturedAt: '2026-12-01T00:00:00Z', kdebugVersion: 'test' },
  });
  const state = asRead(want);
  const outputs = {
    'proxy-mode': 'ipvs',
    'ipvsadm-save': `${ipvsadmSaveLines(want).join('\n')}\n`,
    'ipset-save': `${ipsetSaveLines(want).join('\n')}\n`,
    'ip-addr': `lo UNKNOWN 127.0.0.1/8\neth0 UP 192.0.2.11/24\ncni0 UP 10.244.0.1/24\nkube-ipvs0 DOWN ${[...state.bound].map((ip) => `${ip}/32`).join(' ')}\n`,
  };

  it('reads the node in IPVS mode: trees named by the objects, no drift', () => {
    const n = new Analysis(facts(outputs), { code: allModes }).node(NODE);
    assert.equal(n.dataplane()?.mode, 'ipvs');
    const web = n.trees()!.services.find((t) => t.name === 'shop/web:http');
    assert.equal(web?.clusterIP, '10.96.0.20');
    assert.deepEqual(web?.nodePorts, [30080]);
    // this node's endpoint is in KUBE-LOOP-BACK: masqueraded when it reaches itself
    assert.deepEqual(
      web?.endpoints.map((e) => e.hairpinMasquerade),
      [true, null],
    );
    assert.deepEqual(
      web?.endpoints.map((e) => [e.address, e.probability]),
      [
        ['10.244.0.5:8080', 0.5],
        ['10.244.1.6:8080', 0.5],
      ],
    );
    assert.deepEqual(n.drift().findings, []);
  });

  it('says what was not read: without ipvsadm-save no drift, without ipset-save no ipsets compared', () => {
    const { 'ipvsadm-save': _, ...noServers } = outputs;
    const why = new Analysis(facts(noServers), { code: allModes }).node(NODE).driftUnavailable();
    assert.equal(why?.kind, 'state-not-read');
    assert.match(
      unavailableText(NODE, why!),
      /IPVS mode and its virtual servers \(ipvsadm-save -n\) were not read/,
    );
    const { 'ipset-save': __, ...noSets } = outputs;
    assert.deepEqual(new Analysis(facts(noSets), { code: allModes }).node(NODE).drift().tables, [
      'ipvs',
      'kube-ipvs0',
    ]);
    // ipsets that do not read leave the virtual servers compared, and say why
    const badSets = { ...outputs, 'ipset-save': 'add KUBE-NOPE 1.2.3.4\n' };
    const d = new Analysis(facts(badSets), { code: allModes }).node(NODE).drift();
    assert.deepEqual([d.tables, d.findings], [['ipvs', 'kube-ipvs0'], []]);
    assert.match(
      d.notRead?.[0]?.explanation ?? '',
      /ipset-save\.txt:1: read as an ipvsadm or ipset listing: an entry of a set not created before/,
    );
  });
});

const hasIpset =
  spawnSync('ipset', ['--version']).status === 0 &&
  spawnSync('unshare', ['--version']).status === 0;
const ns = (script: string, input = '') =>
  spawnSync('unshare', ['-n', 'sh', '-c', script], { input, encoding: 'utf8' });

describe(
  'kube-proxy ipsets in the real ipset',
  skipWithout(hasIpset ? '' : 'ipset or unshare is not installed'),
  () => {
    const v6svc = aService('shop/v6', { clusterIP: 'fd00:10:96::14' });
    Object.assign(v6svc['spec'] as object, {
      clusterIPs: ['fd00:10:96::14'],
      ipFamilies: ['IPv6'],
    });
    const v6 = expectedIpvs(
      expectedRules(clusterView([...OBJECTS.slice(0, 3), v6svc]), NODE, { family: 'IPv6' }),
    );

    for (const [family, e] of [
      ['IPv4', want],
      ['IPv6', v6],
    ] as const)
      it(`${family}: what expect prints loads with ipset restore, and ipset's own listings read back the same`, () => {
        const save = ns('ipset restore && ipset list -o save', `${ipsetSaveLines(e).join('\n')}\n`);
        assert.equal(save.status, 0, save.stderr);
        const plain = ns('ipset restore && ipset list', `${ipsetSaveLines(e).join('\n')}\n`);
        assert.equal(plain.status, 0, plain.stderr);
        for (const text of [save.stdout, plain.stdout]) {
          const read = parseIpsets(text, 'ipset');
          for (const [name, entries] of e.ipsets)
            assert.deepEqual(
              [...(read.get(name)?.entries ?? [])].sort(),
              [...entries].sort(),
              name,
            );
        }
        if (family === 'IPv6')
          assert.ok(e.ipsets.get('KUBE-6-CLUSTER-IP')?.includes('fd00:10:96::14,tcp:80'));
      });
  },
);

describe('IPVS mode in the steps', () => {
  const SNAPSHOT = 'snapshots/ipvs-stale-real-server';
  const NGINX = { namespace: 'default', service: 'nginx-svc' };
  const edited = async (node: string, stem: string, edit: (text: string) => string) => {
    const f = await readSnapshot(SNAPSHOT);
    const outputs = { ...f.nodes[node]! };
    outputs[stem] = edit(outputs[stem]!);
    return { ...f, nodes: { ...f.nodes, [node]: outputs } };
  };

  it("Hairpin: each endpoint checked in its node's KUBE-LOOP-BACK, the stale node's gap included", async () => {
    const f = await readSnapshot(SNAPSHOT);
    // vm-12-11-centos has not synced: its set lacks the new endpoint 10.244.1.8, which the Rules
    // step reports as ipset-entry-missing; the Hairpin step must not pass over it
    const found = run(hairpinCheck, f, {}, NGINX);
    assert.deepEqual(ids(found), ['hairpin-masquerade-missing:fail']);
    assert.equal(found[0]!.node, 'vm-12-11-centos');
    assert.ok(
      found[0]!.evidence
        .map(evidenceText)
        .includes(
          'nodes/vm-12-11-centos/ipset-save.txt: KUBE-LOOP-BACK lacks 10.244.1.8,tcp:80,10.244.1.8',
        ),
      found[0]!.evidence.map(evidenceText).join('\n'),
    );
    // the endpoint on the synced node is masqueraded
    const synced = await edited('vm-12-11-centos', 'ipset-save', (t) =>
      t.replace(
        'add KUBE-LOOP-BACK 10.244.1.7,tcp:80,10.244.1.7',
        'add KUBE-LOOP-BACK 10.244.1.8,tcp:80,10.244.1.8',
      ),
    );
    const [ok] = run(hairpinCheck, synced, {}, NGINX);
    assert.equal(ok?.id, 'hairpin-masquerade-present');
    assert.ok(
      ok.evidence
        .map(evidenceText)
        .includes(
          'nodes/vm-12-7-centos/ipset-save.txt: KUBE-LOOP-BACK holds 10.244.0.3,tcp:80,10.244.0.3',
        ),
    );
  });

  for (const [what, stem, edit, says] of [
    [
      'the entry',
      'ipset-save',
      (t: string) => t.replace('add KUBE-LOOP-BACK 10.244.0.3,tcp:80,10.244.0.3\n', ''),
      /the set lacks that entry/,
    ],
    [
      'the rule',
      'iptables-save',
      (t: string) => t.replace(/^.*--match-set KUBE-LOOP-BACK.*\n/m, ''),
      /no such masquerade rule/,
    ],
  ] as const)
    it(`Hairpin: without ${what} a Pod sent to itself hangs`, async () => {
      const found = run(hairpinCheck, await edited('vm-12-7-centos', stem, edit), {}, NGINX);
      const here = found.filter((x) => x.node === 'vm-12-7-centos');
      assert.deepEqual(ids(here), ['hairpin-masquerade-missing:fail']);
      assert.match(here[0]!.explanation, says);
    });

  it('Traffic policy: a node without a local endpoint sends to the others unmasqueraded, it drops nothing', () => {
    // node-c runs no Pod of web
    const objects = [...OBJECTS, aNode('node-c', '192.0.2.13', '10.244.2.0/24')];
    const outputsOf = (node: string, own: string[]) => {
      const e = expectedIpvs(expectedRules(clusterView(objects), node), { nodeAddresses: own });
      return {
        'proxy-mode': 'ipvs',
        'ipvsadm-save': `${ipvsadmSaveLines(e).join('\n')}\n`,
        'ip-addr': `eth0 UP ${own[0]}/24\nkube-ipvs0 DOWN ${e.bound.map((ip) => `${ip}/32`).join(' ')}\n`,
      };
    };
    const f: Facts = {
      objects,
      nodes: {
        [NODE]: outputsOf(NODE, ['192.0.2.11']),
        'node-c': outputsOf('node-c', ['192.0.2.13']),
      },
      meta: {},
    };
    const found = run(trafficPolicyCheck, f, {}, { namespace: 'shop', service: 'web' });
    const local = found.find((x) => x.id === 'no-local-endpoint')!;
    assert.match(local.title, /node-c has no local endpoint/);
    assert.match(
      local.explanation,
      /\(IPVS mode\) sends .* to endpoints on other nodes without masquerading/,
    );
    assert.ok(
      local.evidence
        .map(evidenceText)
        .some((e) =>
          /^nodes\/node-c\/ipvsadm-save\.txt:\d+: virtual server TCP 192\.0\.2\.13:30080 -> 10\.244\.0\.5:8080, 10\.244\.1\.6:8080$/.test(
            e,
          ),
        ),
      local.evidence.map(evidenceText).join('\n'),
    );
  });
});

describe('IPVS mode: a packet walked', () => {
  const ipAddr = (bound: string[]) =>
    `lo UNKNOWN 127.0.0.1/8\neth0 UP 192.0.2.11/24\ncni0 UP 10.244.0.1/24\nkube-ipvs0 DOWN ${bound.map((ip) => `${ip}/32`).join(' ')}\n`;
  const analysis = (
    edit: (r: ReturnType<typeof asRead>) => void = () => {},
    outputs: Record<string, string> = {},
  ) => {
    const r = asRead(want);
    edit(r);
    const save = r.table.services.flatMap((s) => [
      `-A ${s.protocol === 'udp' ? '-u' : s.protocol === 'sctp' ? '--sctp-service' : '-t'} ${s.address} -s ${s.scheduler}`,
      ...s.realServers.map(
        (x) =>
          `-a ${s.protocol === 'udp' ? '-u' : s.protocol === 'sctp' ? '--sctp-service' : '-t'} ${s.address} -r ${x.address} -m -w ${x.weight}`,
      ),
    ]);
    const f: Facts = {
      objects: OBJECTS,
      nodes: {
        [NODE]: {
          'proxy-mode': 'ipvs',
          'ipvsadm-save': `${save.join('\n')}\n`,
          'ip-addr': ipAddr([...r.bound]),
          ...outputs,
        },
      },
      meta: {},
    };
    return new Analysis(f, { code: allModes });
  };
  const walk = (
    a: Analysis,
    dst: string,
    protocol: 'tcp' | 'icmp',
    dport?: number,
    src = '10.244.0.9',
  ) => {
    const result = a.node(NODE).trace({ src, dst, dport, protocol, fromHost: false });
    return { result, answer: traceAnswer(result, a.view, NODE) };
  };

  it('a connection to the cluster IP: each real server by its share, masqueraded from outside the Pod network', () => {
    const { result } = walk(analysis(), '10.96.0.20', 'tcp', 80, '198.51.100.1');
    assert.equal(result.enters, 'routing, then the IPVS virtual servers at local delivery');
    assert.deepEqual(
      result.outcomes.map((o) => [o.probability, o.dnat, o.masquerade, o.delivery]),
      [
        [0.5, '10.244.0.5:8080', true, 'forward'],
        [0.5, '10.244.1.6:8080', true, 'forward'],
      ],
    );
    const pod = walk(analysis(), '10.96.0.20', 'tcp', 80).result;
    assert.deepEqual(
      pod.outcomes.map((o) => o.masquerade),
      [false, false],
    );
  });

  it("masquerades by the clusterCIDR the node's kube-proxy serves on /configz, as the steps report it", () => {
    const configz = JSON.stringify({
      'kubeproxy.config.k8s.io': { mode: 'ipvs', clusterCIDR: '198.51.100.0/24' },
    });
    const a = analysis(undefined, { 'proxy-configz': configz });
    assert.equal(a.state(NODE).config.value.clusterCIDR, '198.51.100.0/24');
    const inside = walk(a, '10.96.0.20', 'tcp', 80, '198.51.100.1').result;
    assert.deepEqual(
      inside.outcomes.map((o) => o.masquerade),
      [false, false],
    );
    const outside = walk(a, '10.96.0.20', 'tcp', 80).result;
    assert.deepEqual(
      outside.outcomes.map((o) => o.masquerade),
      [true, true],
    );
  });

  it('a ping to the cluster IP: the node owns it (kube-ipvs0) and answers', () => {
    const { result, answer } = walk(analysis(), '10.96.0.20', 'icmp');
    assert.deepEqual(
      result.outcomes.map((o) => [o.destination, o.delivery]),
      [[null, 'local']],
    );
    assert.match(
      answer.unmatched ?? '',
      /answers the ping\. This is why ping to a ClusterIP answers in IPVS mode/,
    );
  });

  it('the cluster IP off kube-ipvs0: IPVS never sees it', () => {
    const a = analysis((r) => r.bound.delete('10.96.0.20'));
    const { result } = walk(a, '10.96.0.20', 'tcp', 80);
    assert.deepEqual(
      result.outcomes.map((o) => [o.destination, o.delivery]),
      [[null, 'forward']],
    );
    assert.match(result.outcomes[0]!.rules[0]!.rule, /is not an address of this node/);
  });

  it('a virtual server without real servers: refused at once', () => {
    const a = analysis(
      (r) => (r.table.services.find((s) => s.address === '10.96.0.20:80')!.realServers = []),
    );
    const { result, answer } = walk(a, '10.96.0.20', 'tcp', 80);
    assert.deepEqual(
      result.outcomes.map((o) => o.verdict),
      ['REJECT'],
    );
    assert.equal(answer.blocked, true);
  });

  it("a node port on the node's address: Local policy, this node's endpoint only", () => {
    const { result } = walk(analysis(), '192.0.2.11', 'tcp', 30080, '198.51.100.1');
    assert.deepEqual(
      result.outcomes.map((o) => o.dnat),
      ['10.244.0.5:8080'],
    );
  });
});

describe('IPVS mode: a node without ipvsadm-save', () => {
  it('reads `ipvsadm -Ln` instead (the listing ipvsadm prints), and compares it the same', () => {
    const listing = [
      'IP Virtual Server version 1.2.1 (size=4096)',
      'Prot LocalAddress:Port Scheduler Flags',
      '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
      ...want.virtualServers.flatMap((v) => [
        `${v.protocol.toUpperCase()}  ${v.address} ${v.scheduler} persistent ${v.persistent}`,
        ...v.realServers.map((r) => `  -> ${r.padEnd(28)} Masq    1      0          0`),
      ]),
    ].join('\n');
    const f: Facts = {
      objects: OBJECTS,
      nodes: { [NODE]: { 'proxy-mode': 'ipvs', 'ipvsadm-list': `${listing}\n` } },
      meta: {},
    };
    const n = new Analysis(f, { code: allModes }).node(NODE);
    assert.equal(n.ipvs()?.source, 'nodes/node-a/ipvsadm-list.txt');
    assert.deepEqual(
      n.drift().findings.map((x) => x.title),
      [],
    );
  });
});
