import assert from 'node:assert/strict';
import { dualStackKubeProxy } from '../../support/dual-stack-release.js';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import { describe, it } from 'node:test';
import { reachabilityCheck } from '../../../src/core/checks/reachability/reachability.js';
import { diagnose } from '../../../src/core/diagnose.js';
import { reportText } from '../../../src/output/text.js';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { expectedRules, expectedSave } from '../../../src/core/dataplane/kube-proxy/expected.js';
import { expectedNftScript } from '../../../src/core/dataplane/nftables/expected/expected.js';
import { clusterView, serviceCIDRs } from '../../../src/core/kube/objects.js';
import type { Facts } from '../../../src/core/model.js';
import {
  aService,
  anEndpointSlice,
  dumpFor,
  facts,
  healthy,
  ids,
  probeOut as p,
  replace,
  run,
  TARGET,
} from './builders.js';
import { allModes } from '../../support/modes.js';
import { aCiliumAgent } from '../../support/builders.js';

const VIP = '10.96.0.50';
const IP_ADDR = 'lo UNKNOWN 127.0.0.1/8\neth0 UP 192.0.2.10/24\ncni0 UP 10.244.0.1/24\n';
/** node-a's recorded outputs: its rules and addresses, and these probes. */
const nodeA = (probes: Record<string, string>) => ({
  'node-a': { 'iptables-save': dumpFor(healthy(), 'node-a'), 'ip-addr': IP_ADDR, ...probes },
});
const allOk = {
  [`tcp-connect_${VIP}_80`]: p.tcpOk(VIP, 80),
  'tcp-connect_10.244.0.5_8080': p.tcpOk('10.244.0.5', 8080),
  'tcp-connect_10.244.1.6_8080': p.tcpOk('10.244.1.6', 8080),
  [`icmp-echo_${VIP}`]: p.pingLost(VIP),
};

/** The demo made dual-stack: an IPv6 cluster IP, slice, node address and ip6tables dump. */
async function dualStack(): Promise<Facts> {
  const facts = await readSnapshot('snapshots/nginx-svc');
  for (const o of facts.objects) {
    if (o.kind === 'Service' && o.metadata?.name === 'nginx-svc') {
      const spec = o['spec'] as { clusterIPs: string[]; ipFamilies: string[] };
      spec.clusterIPs = ['10.1.190.219', 'fd00:10:96::be'];
      spec.ipFamilies = ['IPv4', 'IPv6'];
    }
    if (o.kind === 'Node') {
      const addresses = (o['status'] as { addresses: { address: string; type: string }[] })
        .addresses;
      const v4 = addresses.find((a) => a.type === 'InternalIP')!.address;
      addresses.push({ address: `fd00:10:0:12::${v4.split('.')[3]}`, type: 'InternalIP' });
    }
  }
  const v4 = facts.objects.find(
    (o) => o.kind === 'EndpointSlice' && o.metadata?.name?.startsWith('nginx-svc'),
  )!;
  const v6 = structuredClone(v4);
  v6.metadata = { ...v6.metadata, name: 'nginx-svc-v6' };
  v6['addressType'] = 'IPv6';
  for (const [n, e] of (v6['endpoints'] as { addresses: string[] }[]).entries())
    e.addresses = [`fd00:10:244:${n}::7`];
  facts.objects.push(v6);
  dualStackKubeProxy(facts.objects);
  for (const node of Object.keys(facts.nodes)) {
    const exp = new Analysis(facts, { code: allModes })
      .node(node)
      .expected(undefined, { family: 'IPv6' });
    facts.nodes[node]!['ip6tables-save'] = expectedSave(exp);
  }
  return facts;
}

describe('reachability step', () => {
  const cases: { name: string; probes: Record<string, string>; want: string[] }[] = [
    {
      name: 'everything answers, ping does not',
      probes: allOk,
      want: [
        'clusterip-reachable:pass',
        'endpoints-reachable:pass',
        'ping-clusterip-explained:pass',
      ],
    },
    {
      name: 'one Pod refuses on the targetPort',
      probes: { ...allOk, 'tcp-connect_10.244.1.6_8080': p.tcpRefused('10.244.1.6', 8080) },
      want: [
        'clusterip-reachable:pass',
        'endpoint-unreachable:fail',
        'ping-clusterip-explained:pass',
      ],
    },
    {
      name: 'the Pods answer, the ClusterIP times out',
      probes: { ...allOk, [`tcp-connect_${VIP}_80`]: p.tcpTimeout() },
      want: [
        'clusterip-unreachable:fail',
        'endpoints-reachable:pass',
        'ping-clusterip-explained:pass',
      ],
    },
    {
      name: 'no probes recorded',
      probes: {},
      want: ['probes-not-recorded:skip', 'ping-clusterip-explained:skip'],
    },
  ];
  for (const c of cases)
    it(c.name, () =>
      assert.deepEqual(ids(run(reachabilityCheck, facts(healthy(), nodeA(c.probes)))), c.want),
    );

  it("names the node a probe ran from, as every probe finding does; the endpoint's node is in the text", () => {
    const probes = { ...allOk, 'tcp-connect_10.244.1.6_8080': p.tcpRefused('10.244.1.6', 8080) };
    const f = run(reachabilityCheck, facts(healthy(), nodeA(probes))).find(
      (x) => x.id === 'endpoint-unreachable',
    )!;
    assert.equal(f.node, 'node-a');
    assert.match(f.explanation, /Pod web-2 on node-b/);
  });

  it('tells two ports of one number apart by protocol (dns 53/UDP, dns-tcp 53/TCP)', () => {
    const ports = [
      { name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 },
      { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 5353 },
    ];
    const udp = anEndpointSlice({ portName: 'dns', port: 5353, protocol: 'UDP' });
    const tcp = anEndpointSlice({ portName: 'dns-tcp', port: 5353, protocol: 'TCP' });
    const objects = [
      ...replace(healthy(), 'Service', 'web', aService({ spec: { ports } })).filter(
        (o) => o.kind !== 'EndpointSlice',
      ),
      udp,
      { ...tcp, metadata: { ...tcp.metadata, name: 'web-fghij' } },
    ];
    // node-a probed, but none of these addresses: each is said not probed, once per protocol
    const titles = run(
      reachabilityCheck,
      facts(objects, nodeA({ [`icmp-echo_${VIP}`]: p.pingLost(VIP) })),
    )
      .filter((f) => f.id === 'probe-not-observed')
      .map((f) => f.title);
    assert.deepEqual(titles, [
      `ClusterIP ${VIP}:53/UDP not probed from node-a`,
      '2 endpoints of 53/UDP not probed from node-a',
      `ClusterIP ${VIP}:53/TCP not probed from node-a`,
      '2 endpoints of 53/TCP not probed from node-a',
    ]);
  });

  it('counts endpoints, not probes, when several nodes probed them', () => {
    const twoNodes = {
      ...nodeA(allOk),
      'node-b': { 'iptables-save': dumpFor(healthy(), 'node-b'), 'ip-addr': IP_ADDR, ...allOk },
    };
    const found = run(reachabilityCheck, facts(healthy(), twoNodes));
    const reached = found.find((f) => f.id === 'endpoints-reachable')!;
    assert.equal(reached.title, '2 endpoints answer directly on the targetPort');
    assert.equal(reached.evidence.length, 4);
  });

  it('proves ping-vs-curl in iptables mode with the packet walk', () => {
    const f = run(reachabilityCheck, facts(healthy(), nodeA(allOk))).find(
      (x) => x.id === 'ping-clusterip-explained',
    )!;
    assert.equal(
      f.title,
      `ping ${VIP} gets no answer, curl ${VIP}:80 connects: normal in iptables mode`,
    );
    assert.equal(f.info, true);
    assert.match(f.explanation, /no interface owns a ClusterIP/);
    assert.ok(
      f.evidence.map(evidenceText).includes(`node-a: no interface holds ${VIP} (ip -br addr)`),
      f.evidence.map(evidenceText).join('\n'),
    );
    assert.ok(
      f.evidence
        .map(evidenceText)
        .includes(
          `walked: on node-a, icmp 192.0.2.10 -> ${VIP}: no rule matched it: routed unchanged`,
        ),
      f.evidence.map(evidenceText).join('\n'),
    );
    assert.ok(
      f.evidence
        .map(evidenceText)
        .some((e) =>
          e.startsWith(
            `walked: on node-a, tcp 192.0.2.10 -> ${VIP}:80: 50% DNAT to 10.244.0.5:8080`,
          ),
        ),
      f.evidence.map(evidenceText).join('\n'),
    );
  });

  it("names each port's own protocol in iptables mode (tcp 80 and udp 53, never tcp 53)", () => {
    const ports = [
      { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
      { name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 },
    ];
    const objects = replace(healthy(), 'Service', 'web', aService({ spec: { ports } }));
    const f = run(reachabilityCheck, facts(objects, nodeA({}))).find(
      (x) => x.id === 'ping-clusterip-explained',
    )!;
    assert.match(f.explanation, /match only its protocol and port \(tcp port 80, udp port 53\)/);
  });

  it('explains an answered ping in IPVS mode: the node owns the address', () => {
    const nodes = {
      'node-a': {
        'proxy-mode': 'ipvs',
        'ip-addr': `${IP_ADDR}kube-ipvs0 DOWN ${VIP}/32 10.96.0.10/32\n`,
        [`icmp-echo_${VIP}`]: p.pingOk(VIP),
      },
    };
    const f = run(reachabilityCheck, facts(healthy(), nodes)).find(
      (x) => x.id === 'ping-clusterip-explained',
    )!;
    assert.equal(f.title, `ping ${VIP} answers: in IPVS mode the node itself answers a ping`);
    assert.ok(
      f.evidence.map(evidenceText).includes(`node-a: ${VIP} is bound to kube-ipvs0 (ip -br addr)`),
    );
  });

  it('explains a ping in IPVS mode from the state alone as no pass, and never as answered by a node whose interfaces lack the address', () => {
    const nodes = {
      'node-a': { 'proxy-mode': 'ipvs', 'ip-addr': `${IP_ADDR}kube-ipvs0 DOWN 10.96.0.10/32\n` },
    };
    const f = run(reachabilityCheck, facts(healthy(), nodes)).find(
      (x) => x.id === 'ping-clusterip-explained',
    )!;
    assert.equal(f.status, 'skip');
    assert.equal(
      f.title,
      `ping ${VIP}: in IPVS mode a node answers a ping itself only where ${VIP} is on kube-ipvs0, not on node node-a`,
    );
    assert.match(f.explanation, /node node-a no interface holds .* so that node would not answer/);
  });

  it('explains the immediate rejection in nftables mode', () => {
    const f = run(
      reachabilityCheck,
      facts(healthy(), { 'node-a': { 'proxy-mode': 'nftables' } }),
    ).find((x) => x.id === 'ping-clusterip-explained')!;
    assert.match(f.explanation, /rejects any packet for one that is not for a Service port/);
  });

  it('is pending while the probes run', () => {
    assert.deepEqual(
      ids(run(reachabilityCheck, facts(healthy()), { collecting: { nodes: true } })),
      ['pending:pending'],
    );
  });

  it('probes only the endpoints of a headless Service', () => {
    const objects = replace(
      healthy(),
      'Service',
      'web',
      aService({ spec: { clusterIP: 'None', clusterIPs: ['None'] } }),
    );
    assert.deepEqual(ids(run(reachabilityCheck, facts(objects, nodeA(allOk)))), [
      'endpoints-reachable:pass',
    ]);
  });

  it('a refused ClusterIP behind a refusing Pod is a consequence, not a second failure', () => {
    const probes = {
      ...allOk,
      [`tcp-connect_${VIP}_80`]: p.tcpRefused(VIP, 80),
      'tcp-connect_10.244.0.5_8080': p.tcpRefused('10.244.0.5', 8080),
      'tcp-connect_10.244.1.6_8080': p.tcpRefused('10.244.1.6', 8080),
    };
    const step = diagnose(facts(healthy(), nodeA(probes)), TARGET, { code: allModes }).steps.find(
      (s) => s.id === 'reachability',
    )!;
    assert.deepEqual(ids(step.findings), [
      'clusterip-unreachable:warn',
      'endpoint-unreachable:fail',
      'endpoint-unreachable:fail',
      'ping-clusterip-explained:pass',
    ]);
    assert.match(
      step.findings[0]!.explanation,
      /The rules on node-a DNAT it to the Service's endpoints, and the Pod refused it/,
    );
  });

  // the API lists no endpoint, node-a's rules (written before) still DNAT: the rules are what the
  // packets meet, so they, not the API, say what happens to a connection
  const sliceGone = () => healthy().filter((o) => o.kind !== 'EndpointSlice');
  it('says what the rules do to a refused connection, not what the API implies', () => {
    const probes = { [`tcp-connect_${VIP}_80`]: p.tcpRefused(VIP, 80) };
    const [f] = run(reachabilityCheck, facts(sliceGone(), nodeA(probes)));
    assert.equal(f!.id, 'clusterip-unreachable');
    assert.match(f!.explanation, /The rules on node-a DNAT it to the Service's endpoints/);
    assert.doesNotMatch(f!.explanation, /REJECT rule/);
    assert.ok(
      f!.evidence.map(evidenceText).some((e) => e.startsWith(`walked: on node-a, tcp`)),
      f!.evidence.map(evidenceText).join('\n'),
    );
    // no rules read: both ways are said, neither claimed
    const [blind] = run(
      reachabilityCheck,
      facts(sliceGone(), { 'node-a': { 'proxy-mode': 'iptables', ...probes } }),
    );
    assert.match(blind!.explanation, /either kube-proxy forwarded it .* or rejected it itself/);
    assert.match(blind!.explanation, /The rules on node-a were not read to say which/);
  });

  it('explains ping beside what the rules and probes show, never a rejection they contradict', () => {
    const f = run(reachabilityCheck, facts(sliceGone(), nodeA(allOk))).find(
      (x) => x.id === 'ping-clusterip-explained',
    )!;
    assert.match(f.explanation, new RegExp(`A TCP packet to ${VIP}:80 is DNATed to a Pod`));
    assert.doesNotMatch(f.explanation, /rejected right now/);
  });
});

describe('reachability step: nodes in different proxy modes', () => {
  // node-a says nftables (its table not read), node-b iptables with its rules
  const nodes = {
    'node-a': { 'proxy-mode': 'nftables', [`icmp-echo_${VIP}`]: p.pingLost(VIP) },
    'node-b': {
      'proxy-mode': 'iptables',
      'iptables-save': dumpFor(healthy(), 'node-b'),
      [`icmp-echo_${VIP}`]: p.pingLost(VIP),
    },
  };
  it("explains ping per mode, each beside its own nodes' evidence", () => {
    const pings = run(reachabilityCheck, facts(healthy(), nodes)).filter(
      (x) => x.id === 'ping-clusterip-explained',
    );
    assert.deepEqual(
      pings.map((f) => [f.node, f.title]),
      [
        [
          'node-a',
          `node-a: ping ${VIP} gets no answer: in nftables mode other ports are rejected at once`,
        ],
        ['node-b', `node-b: ping ${VIP} gets no answer: normal in iptables mode`],
      ],
    );
    const [nft, ipt] = pings.map((f) => f.evidence.map(evidenceText));
    assert.ok(
      nft!.every((e) => !e.includes('node-b')),
      nft!.join('\n'),
    );
    assert.ok(
      ipt!.every((e) => !e.includes('node-a')),
      ipt!.join('\n'),
    );
    // a ping that timed out is not the ICMP error nftables mode gives: said, not contradicted
    assert.match(pings[0]!.explanation, /The ping recorded here got no reply at all/);
  });

  it('explains ping on a Cilium node and a kube-proxy node each in its own mode, never Cilium for both', () => {
    const mixed = facts([...healthy(), aCiliumAgent('node-a')], {
      'node-a': {
        'cilium-status': 'KubeProxyReplacement:    True   [eth0]\n',
        [`icmp-echo_${VIP}`]: p.pingLost(VIP),
      },
      'node-b': nodes['node-b'],
    });
    const pings = run(reachabilityCheck, mixed).filter((x) => x.id === 'ping-clusterip-explained');
    assert.deepEqual(
      pings.map((f) => [f.node, f.title]),
      [
        [
          'node-a',
          `node-a: ping ${VIP} gets no answer: Cilium does not load-balance ICMP, and nothing owns a Service address`,
        ],
        ['node-b', `node-b: ping ${VIP} gets no answer: normal in iptables mode`],
      ],
    );
  });

  it('explains ping in the mode of the node whose state it shows, naming it where another node is in another mode', () => {
    // node-b's iptables is observed; node-a's mode is the ConfigMap's nftables, not observed
    const configured = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-proxy', namespace: 'kube-system' },
      data: { 'config.conf': 'kind: KubeProxyConfiguration\nmode: "nftables"\n' },
    };
    const one = facts([...healthy(), configured], {
      'node-a': { [`icmp-echo_${VIP}`]: p.pingLost(VIP) },
      'node-b': nodes['node-b'],
    });
    const pings = run(reachabilityCheck, one).filter((x) => x.id === 'ping-clusterip-explained');
    assert.deepEqual(
      pings.map((f) => f.title),
      [`node-b: ping ${VIP} gets no answer: normal in iptables mode`],
    );
    assert.match(
      pings[0]!.explanation,
      /This is node-b's mode, iptables, whose state is shown; the node state puts node-a in nftables mode\.$/,
    );
    // all in one mode: no node named
    const alike = run(reachabilityCheck, facts(healthy(), { 'node-b': nodes['node-b'] })).filter(
      (x) => x.id === 'ping-clusterip-explained',
    );
    assert.deepEqual(
      alike.map((f) => f.title),
      [`ping ${VIP} gets no answer: normal in iptables mode`],
    );
  });

  it("says the cluster mixed, not the first node's mode", () => {
    const report = diagnose(facts(healthy(), nodes), TARGET, { code: allModes });
    assert.equal(report.service?.proxyMode, 'mixed');
    assert.match(reportText(report).split('\n')[2]!, /kube-proxy modes mixed$/);
  });
});

describe('reachability step: NetworkPolicies', () => {
  const policy = (podSelector: Record<string, unknown>, policyTypes?: string[]) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'only-frontend', namespace: 'default' },
    spec: {
      podSelector,
      ...(policyTypes ? { policyTypes } : {}),
      ingress: [
        { from: [{ podSelector: { matchLabels: { app: 'frontend' } } }] } as Record<
          string,
          unknown
        >,
      ],
    },
  });
  const cases: {
    name: string;
    selector: Record<string, unknown>;
    types?: string[];
    applies: boolean;
  }[] = [
    {
      name: 'selecting the Pods by label',
      selector: { matchLabels: { app: 'web' } },
      applies: true,
    },
    { name: 'selecting every Pod of the namespace', selector: {}, applies: true },
    { name: 'selecting other Pods', selector: { matchLabels: { app: 'db' } }, applies: false },
    { name: 'egress only', selector: {}, types: ['Egress'], applies: false },
  ];
  for (const c of cases)
    it(c.name, () => {
      const found = run(
        reachabilityCheck,
        facts([...healthy(), policy(c.selector, c.types)], nodeA(allOk)),
      );
      assert.equal(
        found.some((f) => f.id === 'network-policy-applies'),
        c.applies,
      );
    });

  // web: Service port 80, its Pods' port 8080; a policy matches the port on the Pod
  for (const [port, says] of [
    [
      80,
      /ingress\[0\]: TCP\/80 from .* \(the Service's port: a policy matches the Pods' port, 8080 \(http\)\)$/,
    ],
    [9090, /ingress\[0\]: TCP\/9090 from .* \(not the Pods' port, 8080 \(http\)\)$/],
  ] as const)
    it(`a rule naming port ${port}, not the Pods' 8080, admits nothing, and its line says why`, () => {
      const named = policy({ matchLabels: { app: 'web' } });
      named.spec.ingress[0] = { ...named.spec.ingress[0]!, ports: [{ protocol: 'TCP', port }] };
      const f = run(reachabilityCheck, facts([...healthy(), named], nodeA(allOk))).find(
        (x) => x.id === 'network-policy-applies',
      )!;
      assert.equal(f.status, 'warn');
      assert.ok(
        f.evidence.some((e) => says.test(e.text)),
        f.evidence.map((e) => e.text).join('\n'),
      );
      assert.equal(/Name the Pods' port/.test(f.explanation), port === 80);
    });

  it('names the policy when a Pod does not answer', () => {
    const probes = { ...allOk, 'tcp-connect_10.244.1.6_8080': p.tcpTimeout() };
    const f = run(
      reachabilityCheck,
      facts([...healthy(), policy({ matchLabels: { app: 'web' } })], nodeA(probes)),
    ).find((x) => x.id === 'endpoint-unreachable')!;
    assert.match(f.explanation, /NetworkPolicy only-frontend selects this Pod/);
  });

  it("walks a refused IPv6 connection through the node's IPv6 rules, from its IPv6 address", async () => {
    const facts = await dualStack();
    facts.nodes['vm-12-7-centos']!['tcp-connect_fd00:10:96::be_8080'] =
      'nc: connect to fd00:10:96::be port 8080 (tcp) failed: Connection refused\nkdebug-probe tcp-connect tool=nc exit=1\n';
    const all = diagnose(
      facts,
      { namespace: 'default', service: 'nginx-svc' },
      { code: allModes },
    ).steps.find((s) => s.id === 'reachability')!.findings;
    const f = all.find((x) => x.id === 'clusterip-unreachable' && x.title.startsWith('IPv6'));
    assert.ok(f, all.map((x) => `${x.id} ${x.title}`).join('\n'));
    assert.match(f.explanation, /The rules on vm-12-7-centos DNAT it to the Service's endpoints/);
    const walked = f.evidence.map(evidenceText).filter((e) => e.startsWith('walked:'));
    assert.equal(walked.length, 1, f.evidence.map(evidenceText).join('\n'));
    assert.match(
      walked[0]!,
      /^walked: on vm-12-7-centos, tcp fd00:10:0:12::7 -> \[fd00:10:96::be\]:8080: 50% DNAT to /,
    );
  });

  it("another node's missing rules are not the cause of a refusal where the rules DNAT it", async () => {
    const facts = await dualStack();
    const other = facts.nodes['vm-12-11-centos']!;
    other['ip6tables-save'] = other['ip6tables-save']!.split('\n')
      .filter((l) => !l.includes('nginx-svc'))
      .join('\n');
    facts.nodes['vm-12-7-centos']!['tcp-connect_fd00:10:96::be_8080'] =
      'nc: connect to fd00:10:96::be port 8080 (tcp) failed: Connection refused\nkdebug-probe tcp-connect tool=nc exit=1\n';
    const r = diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const missing = r.steps
      .flatMap((x) => x.findings)
      .find((x) => x.id === 'service-rules-missing');
    assert.equal(missing?.node, 'vm-12-11-centos');
    const f = r.steps
      .find((x) => x.id === 'reachability')!
      .findings.find((x) => x.id === 'clusterip-unreachable' && x.title.startsWith('IPv6'))!;
    assert.match(f.explanation, /The rules on vm-12-7-centos DNAT it/);
    assert.doesNotMatch(f.explanation, /follows from service-rules-missing/);
  });

  it('words an IPVS rejection as the walk shows it: a virtual server without real servers', () => {
    const probes = { [`tcp-connect_${VIP}_80`]: p.tcpRefused(VIP, 80) };
    const nodes = {
      'node-a': {
        'proxy-mode': 'ipvs',
        'ipvsadm-save': `-A -t ${VIP}:80 -s rr\n`,
        'ip-addr': `${IP_ADDR}kube-ipvs0 DOWN ${VIP}/32\n`,
        ...probes,
      },
    };
    const f = run(reachabilityCheck, facts(healthy(), nodes)).find(
      (x) => x.id === 'clusterip-unreachable',
    )!;
    assert.match(
      f.explanation,
      new RegExp(
        `refused at once, by the IPVS virtual server TCP ${VIP}:80 on node-a, which has no real server`,
      ),
    );
    assert.doesNotMatch(f.explanation, /REJECT rule|without ready endpoints/);
  });

  it('explains IPVS ping as recorded: no reply, a refused connection, never the opposite', () => {
    const nodes = {
      'node-a': {
        'proxy-mode': 'ipvs',
        'ipvsadm-save': `-A -t ${VIP}:80 -s rr\n`,
        'ip-addr': `${IP_ADDR}kube-ipvs0 DOWN ${VIP}/32\n`,
        [`icmp-echo_${VIP}`]: p.pingLost(VIP),
        [`tcp-connect_${VIP}_80`]: p.tcpRefused(VIP, 80),
      },
    };
    const f = run(reachabilityCheck, facts(healthy(), nodes)).find(
      (x) => x.id === 'ping-clusterip-explained',
    )!;
    assert.equal(
      f.title,
      `ping ${VIP} gets no answer: unusual in IPVS mode, where the node answers a ping itself`,
    );
    assert.match(f.explanation, /The ping recorded here got no reply/);
    assert.match(f.explanation, new RegExp(`curl ${VIP}:80 is refused right now`));
    assert.doesNotMatch(f.explanation, /the node owns|to an endpoint:/);
  });
});

describe('reachability step: a ClusterIP timeout the report rules its usual causes out of', () => {
  const timedOut = async () => {
    const f = await readSnapshot('snapshots/nginx-svc');
    f.nodes['vm-12-7-centos']!['tcp-connect_10.1.190.219_8080'] =
      'nc: connect to 10.1.190.219 port 8080 (tcp) timed out: Operation now in progress\nkdebug-probe tcp-connect tool=nc exit=1\n';
    return diagnose(f, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
  };

  it('says what remains where the rules passed and the endpoints answer directly from the node, and suggests no trace of the DNAT that passed', async () => {
    const r = await timedOut();
    const all = r.steps.flatMap((s) => s.findings);
    assert.equal(all.find((f) => f.id === 'rules-match')?.status, 'pass');
    const f = all.find((x) => x.id === 'clusterip-unreachable')!;
    assert.doesNotMatch(f.explanation, /Either the node has no rule for it/);
    assert.doesNotMatch(f.explanation, /compare that node's rules/);
    assert.match(f.explanation, /neither usual cause fits/);
    assert.match(f.explanation, /conntrack state on vm-12-7-centos/);
    assert.match(f.explanation, /NetworkPolicy/);
    assert.match(f.explanation, /the probe itself/);
    const ev = f.evidence.map(evidenceText);
    assert.ok(ev.includes('vm-12-7-centos: TCP connect 10.244.0.3:80: connected'), ev.join('\n'));
    assert.ok(!f.next!.argv.includes('trace'), f.next!.argv.join(' '));
    assert.deepEqual(f.next!.argv.slice(-6), [
      'conntrack',
      '-L',
      '-p',
      'tcp',
      '-d',
      '10.1.190.219',
    ]);
  });

  /** The Reachability step's ClusterIP failure of this family. */
  const unreachable = (r: ReturnType<typeof diagnose>, family: 'IPv4' | 'IPv6') =>
    r.steps
      .find((s) => s.id === 'reachability')!
      .findings.find((x) => x.id === 'clusterip-unreachable' && x.title.startsWith(family))!;

  it('rules out the causes of an IPv6 timeout by the IPv6 rules the Rules step passed, not the IPv4 ones', async () => {
    const facts = await dualStack();
    const node = facts.nodes['vm-12-7-centos']!;
    node['tcp-connect_fd00:10:96::be_8080'] = p.tcpTimeout();
    const passed = unreachable(
      diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes }),
      'IPv6',
    );
    assert.match(passed.explanation, /neither usual cause fits/);
    // its IPv6 rules for the Service gone, its IPv4 ones as expected: nothing is ruled out
    node['ip6tables-save'] = node['ip6tables-save']!.split('\n')
      .filter((l) => !l.includes('nginx-svc'))
      .join('\n');
    const r = diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const rules = r.steps.find((s) => s.id === 'rules')!.findings;
    assert.ok(rules.some((f) => f.id === 'rules-match' && f.title.startsWith('IPv4')));
    assert.doesNotMatch(unreachable(r, 'IPv6').explanation, /neither usual cause fits/);
  });

  it('rules out the causes of an IPv4 timeout on no IPv6 rules the Rules step passed', async () => {
    const facts = await dualStack();
    const node = facts.nodes['vm-12-7-centos']!;
    node['tcp-connect_10.1.190.219_8080'] = p.tcpTimeout();
    node['iptables-save'] = node['iptables-save']!.split('\n')
      .filter((l) => !l.includes('nginx-svc'))
      .join('\n');
    const r = diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const rules = r.steps.find((s) => s.id === 'rules')!.findings;
    assert.ok(rules.some((f) => f.id === 'rules-match' && f.title.startsWith('IPv6')));
    assert.doesNotMatch(unreachable(r, 'IPv4').explanation, /neither usual cause fits/);
  });

  it('rules out the causes on every node the Rules step passed as one, not only the first (nftables)', () => {
    const objects = healthy();
    const view = clusterView(objects);
    const node = (n: string, probes: Record<string, string>) => ({
      'proxy-mode': 'nftables',
      'nft-ip-kube-proxy': expectedNftScript(expectedRules(view, n), serviceCIDRs(view)).join('\n'),
      'ip-addr': IP_ADDR,
      'tcp-connect_10.244.0.5_8080': p.tcpOk('10.244.0.5', 8080),
      'tcp-connect_10.244.1.6_8080': p.tcpOk('10.244.1.6', 8080),
      ...probes,
    });
    const r = diagnose(
      facts(objects, {
        'node-a': node('node-a', { [`tcp-connect_${VIP}_80`]: p.tcpOk(VIP, 80) }),
        'node-b': node('node-b', { [`tcp-connect_${VIP}_80`]: p.tcpTimeout() }),
      }),
      TARGET,
      { code: allModes },
    );
    const match = r.steps.flatMap((s) => s.findings).find((f) => f.id === 'rules-match');
    assert.deepEqual(match?.nodes, ['node-a', 'node-b']);
    const f = r.steps.flatMap((s) => s.findings).find((x) => x.id === 'clusterip-unreachable')!;
    assert.equal(f.node, 'node-b');
    assert.match(f.explanation, /the Rules step read the rules of node-b for it as expected/);
  });

  it("titles the ping explanation after the recorded connects: never 'connects' beside a node's timeout", async () => {
    const r = await timedOut();
    const f = r.steps.flatMap((s) => s.findings).find((x) => x.id === 'ping-clusterip-explained')!;
    assert.match(f.title, /curl 10\.1\.190\.219:8080 connects from vm-12-11-centos only: /);
  });
});
