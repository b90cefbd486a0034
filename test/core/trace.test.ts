// The packet walk, in kube-proxy's tracer style: tables of {source, destination, protocol,
// outcomes, masquerade}. The seed's four ways to reach a Service (the demo cluster) on
// the demo and on the node-port scenario, then the matches one by one on small dumps.
//
// IP conventions (the demo cluster): nodes vm-12-7-centos 10.0.12.7 (Pods 10.244.0.0/24, cni0
// 10.244.0.1) and vm-12-11-centos 10.0.12.11 (Pods 10.244.1.0/24); Pod CIDR 10.244.0.0/16;
// nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80 (vm-12-7-centos), 10.244.1.7:80 (vm-12-11-centos);
// kube-dns 10.1.0.10 -> CoreDNS 10.244.0.2, 10.244.1.2; clients outside 203.0.113.0/24.
// Small dumps: node 192.0.2.10, Pods 10.244.0.0/16, Services 10.96.0.0/16.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { tracePacket } from '../../src/core/dataplane/iptables/trace/trace.js';
import { traceAnswer } from '../../src/core/dataplane/trace/answer.js';
import {
  nodeNetwork,
  type TracePacket,
  type TraceResult,
} from '../../src/core/dataplane/trace/trace.js';

async function walker(dir: string, node: string) {
  const facts = await readSnapshot(`snapshots/${dir}`);
  const rs = parseIptables(facts.nodes[node]!['iptables-save']!);
  const net = nodeNetwork(
    clusterView(facts.objects).nodes.find((n) => n.name === node),
    facts.nodes[node]!['ip-addr'],
  );
  return (p: TracePacket) => tracePacket(rs, net, p);
}

/** Outcomes as [destination, probability, masquerade], sorted by destination. */
const outcomes = (r: TraceResult) =>
  r.outcomes
    .map((o) => [o.destination, Math.round(o.probability * 1000) / 1000, o.masquerade] as const)
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

/** One walk to the demo's nginx-svc ClusterIP and the outcomes it must have. */
interface Row {
  what: string;
  src: string;
  port: number | undefined;
  protocol: TracePacket['protocol'];
  fromHost: boolean;
  want: (readonly [string | null, number, boolean])[];
}

describe('the four ways to a Service on the demo (vm-12-7-centos, kube-proxy v1.15 rules)', () => {
  const rows: Row[] = [
    {
      what: 'Pod -> Service -> Pod on the other node: not masqueraded',
      src: '10.244.0.2',
      port: 8080,
      protocol: 'tcp',
      fromHost: false,
      want: [
        ['10.244.0.3:80', 0.5, false],
        ['10.244.1.7:80', 0.5, false],
      ],
    },
    {
      what: 'Pod -> its own Service -> itself (hairpin): masqueraded',
      src: '10.244.0.3',
      port: 8080,
      protocol: 'tcp',
      fromHost: false,
      want: [
        ['10.244.0.3:80', 0.5, true],
        ['10.244.1.7:80', 0.5, false],
      ],
    },
    {
      what: 'a process on the node -> Service: masqueraded (source outside the Pod CIDR)',
      src: '10.0.12.7',
      port: 8080,
      protocol: 'tcp',
      fromHost: true,
      want: [
        ['10.244.0.3:80', 0.5, true],
        ['10.244.1.7:80', 0.5, true],
      ],
    },
    {
      what: 'ping to the ClusterIP: no rule matched, routed unchanged',
      src: '10.244.0.2',
      port: undefined,
      protocol: 'icmp',
      fromHost: false,
      want: [[null, 1, true]],
    },
    {
      what: 'the ClusterIP on a port the Service does not have',
      src: '10.244.0.2',
      port: 80,
      protocol: 'tcp',
      fromHost: false,
      want: [[null, 1, true]],
    },
  ];
  for (const { what, src, port, protocol, fromHost, want } of rows) {
    it(what, async () => {
      const walk = await walker('nginx-svc', 'vm-12-7-centos');
      const r = walk({ src, dst: '10.1.190.219', dport: port, protocol, fromHost });
      assert.deepEqual(outcomes(r), want);
    });
  }

  it('walks the hairpin path rule by rule: mark, DNAT, forward accepted on the mark, MASQUERADE', async () => {
    const walk = await walker('nginx-svc', 'vm-12-7-centos');
    const hairpin = walk({
      src: '10.244.0.3',
      dst: '10.1.190.219',
      dport: 8080,
      protocol: 'tcp',
      fromHost: false,
    }).outcomes.find((o) => o.masquerade)!;
    assert.deepEqual(
      hairpin.rules.map((m) => `${m.table} ${m.chain}: ${m.effect}`),
      [
        'nat PREROUTING: jump KUBE-SERVICES',
        'nat KUBE-SERVICES: jump KUBE-SVC-ELCM5PCEQWBTUJ2I',
        'nat KUBE-SVC-ELCM5PCEQWBTUJ2I: 50% branch, jump KUBE-SEP-SMDVMBZNJPO5AA7R',
        'nat KUBE-SEP-SMDVMBZNJPO5AA7R: jump KUBE-MARK-MASQ',
        'nat KUBE-MARK-MASQ: mark is now 0x4000',
        'nat KUBE-SEP-SMDVMBZNJPO5AA7R: DNAT to 10.244.0.3:80',
        'filter FORWARD: jump KUBE-FORWARD',
        'filter KUBE-FORWARD: ACCEPT',
        'nat POSTROUTING: jump KUBE-POSTROUTING',
        'nat KUBE-POSTROUTING: MASQUERADE',
      ],
    );
    assert.equal(
      hairpin.rules[3]!.rule,
      '-A KUBE-SEP-SMDVMBZNJPO5AA7R -s 10.244.0.3/32 -j KUBE-MARK-MASQ',
    );
    assert.equal(hairpin.delivery, 'forward');
  });

  it('passes over docker and flannel rules like any other', async () => {
    const walk = await walker('nginx-svc', 'vm-12-7-centos');
    const r = walk({
      src: '10.244.0.2',
      dst: '10.1.190.219',
      dport: 8080,
      protocol: 'tcp',
      fromHost: false,
    });
    const chains = r.outcomes[1]!.rules.map((m) => m.chain);
    assert.ok(chains.includes('DOCKER-USER') && chains.includes('DOCKER-ISOLATION-STAGE-1'));
    assert.equal(
      r.outcomes[1]!.rules.at(-1)!.rule,
      '-A POSTROUTING -s 10.244.0.0/16 -d 10.244.0.0/16 -j RETURN',
    );
  });

  it('spreads DNS over both CoreDNS Pods for udp', async () => {
    const walk = await walker('nginx-svc', 'vm-12-7-centos');
    const r = walk({
      src: '10.244.0.3',
      dst: '10.1.0.10',
      dport: 53,
      protocol: 'udp',
      fromHost: false,
    });
    assert.deepEqual(outcomes(r), [
      ['10.244.0.2:53', 0.5, false],
      ['10.244.1.2:53', 0.5, false],
    ]);
  });
});

describe('node ports (the nodeport-local-no-endpoint scenario, current kube-proxy rules)', () => {
  const rows: {
    what: string;
    node: string;
    src: string;
    dst: string;
    port: number;
    fromHost: boolean;
    want: (readonly [string | null, number, boolean])[];
  }[] = [
    {
      what: 'outside -> node port (externalTrafficPolicy Cluster): masqueraded, either Pod',
      node: 'vm-12-11-centos',
      src: '203.0.113.50',
      dst: '10.0.12.11',
      port: 30081,
      fromHost: false,
      want: [
        ['10.244.0.5:8080', 0.5, true],
        ['10.244.1.5:8080', 0.5, true],
      ],
    },
    {
      what: 'outside -> node port (Local) on the node with the Pod: client IP kept',
      node: 'vm-12-7-centos',
      src: '203.0.113.50',
      dst: '10.0.12.7',
      port: 30080,
      fromHost: false,
      want: [['10.244.0.3:80', 1, false]],
    },
    {
      what: 'outside -> node port (Local) on a node without a local Pod: dropped',
      node: 'vm-12-11-centos',
      src: '203.0.113.50',
      dst: '10.0.12.11',
      port: 30080,
      fromHost: false,
      want: [['DROP', 1, false]],
    },
    {
      what: 'the node itself -> its node port (Local): short-circuited to every endpoint, masqueraded',
      node: 'vm-12-11-centos',
      src: '10.0.12.11',
      dst: '10.0.12.11',
      port: 30080,
      fromHost: true,
      want: [['10.244.0.3:80', 1, true]],
    },
    {
      what: 'a Pod on that node -> its node port (Local): short-circuited, Pod source kept',
      node: 'vm-12-11-centos',
      src: '10.244.1.2',
      dst: '10.0.12.11',
      port: 30080,
      fromHost: false,
      want: [['10.244.0.3:80', 1, false]],
    },
  ];
  for (const { what, node, src, dst, port, fromHost, want } of rows) {
    it(what, async () => {
      const walk = await walker('nodeport-local-no-endpoint', node);
      assert.deepEqual(outcomes(walk({ src, dst, dport: port, protocol: 'tcp', fromHost })), want);
    });
  }

  it('the drop happens in filter KUBE-EXTERNAL-SERVICES, after KUBE-EXT found nothing for outside traffic', async () => {
    const walk = await walker('nodeport-local-no-endpoint', 'vm-12-11-centos');
    const o = walk({
      src: '203.0.113.50',
      dst: '10.0.12.11',
      dport: 30080,
      protocol: 'tcp',
      fromHost: false,
    }).outcomes[0]!;
    assert.deepEqual([o.verdict, o.delivery], ['DROP', 'local']);
    assert.match(
      o.rules.at(-1)!.rule,
      /^-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "default\/nginx-svc:http has no local endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 30080 -j DROP$/,
    );
  });
});

describe('matches and targets, on small dumps', () => {
  const net = {
    localAddresses: ['192.0.2.10'],
    interfaces: [
      { name: 'eth0', cidrs: ['192.0.2.10/24'] },
      { name: 'cni0', cidrs: ['10.244.0.1/24'] },
    ],
    defaultInterface: 'eth0',
  };
  const walk = (nat: string, filter: string, p: Partial<TracePacket>) =>
    tracePacket(
      parseIptables(`*nat\n${nat.trim()}\nCOMMIT\n*filter\n${filter.trim()}\nCOMMIT\n`),
      net,
      {
        src: '10.244.0.5',
        dst: '10.96.0.1',
        dport: 80,
        protocol: 'tcp',
        fromHost: false,
        ...p,
      },
    );
  const dnat = (ip: string) => `-j DNAT --to-destination ${ip}`;
  const summary = (r: TraceResult) =>
    r.outcomes.map((o) =>
      `${o.destination} ${Math.round(o.probability * 100)}% ${o.masquerade ? 'masq' : ''}`.trim(),
    );

  const cases: {
    what: string;
    nat: string;
    filter: string;
    packet: Partial<TracePacket>;
    want: string[];
  }[] = [
    {
      what: 'a negated source: ! -s the Pod CIDR misses a Pod',
      nat: ':PREROUTING ACCEPT [0:0]\n-A PREROUTING ! -s 10.244.0.0/16 ' + dnat('1.1.1.1:1'),
      filter: '',
      packet: {},
      want: ['null 100%'],
    },
    {
      what: 'a negated source matches the node',
      nat:
        ':OUTPUT ACCEPT [0:0]\n-A OUTPUT ! -s 10.244.0.0/16 -p tcp -m tcp --dport 80 ' +
        dnat('1.1.1.1:1'),
      filter: '',
      packet: { src: '192.0.2.10', fromHost: true },
      want: ['1.1.1.1:1 100%'],
    },
    {
      what: 'protocol and port must both match',
      nat: ':PREROUTING ACCEPT [0:0]\n-A PREROUTING -p udp -m udp --dport 80 ' + dnat('1.1.1.1:1'),
      filter: '',
      packet: {},
      want: ['null 100%'],
    },
    {
      what: 'port ranges and multiport',
      nat:
        ':PREROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp -m multiport --dports 53,70:90 ' +
        dnat('1.1.1.1:1'),
      filter: '',
      packet: {},
      want: ['1.1.1.1:1 100%'],
    },
    {
      what: 'a chain jump returns to the next rule; goto does not',
      nat:
        ':PREROUTING ACCEPT [0:0]\n:A - [0:0]\n:B - [0:0]\n-A PREROUTING -j A\n-A PREROUTING ' +
        dnat('2.2.2.2:2') +
        '\n-A A -g B\n-A A ' +
        dnat('3.3.3.3:3') +
        '\n-A B -j RETURN',
      filter: '',
      packet: {},
      want: ['2.2.2.2:2 100%'],
    },
    {
      what: 'statistic random splits, the rest falls through',
      nat:
        ':PREROUTING ACCEPT [0:0]\n-A PREROUTING -m statistic --mode random --probability 0.25000000000 ' +
        dnat('1.1.1.1:1'),
      filter: '',
      packet: {},
      want: ['1.1.1.1:1 25%', 'null 75%'],
    },
    {
      what: 'a MARK then a mark match',
      nat: ':PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A PREROUTING -j MARK --set-xmark 0x4000/0x4000\n-A POSTROUTING -m mark --mark 0x4000/0x4000 -j MASQUERADE',
      filter: '',
      packet: {},
      want: ['null 100% masq'],
    },
    {
      what: 'REJECT in filter',
      nat: '',
      filter:
        ':FORWARD ACCEPT [0:0]\n-A FORWARD -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable',
      packet: {},
      want: ['REJECT 100%'],
    },
    {
      what: 'a built-in chain policy of DROP',
      nat: '',
      filter: ':FORWARD DROP [0:0]\n-A FORWARD -s 10.245.0.0/16 -j ACCEPT',
      packet: {},
      want: ['DROP 100%'],
    },
    {
      what: 'conntrack state: a first packet is NEW, and DNAT once DNATed',
      nat: ':PREROUTING ACCEPT [0:0]\n-A PREROUTING ' + dnat('10.244.0.9:8080'),
      filter:
        ':FORWARD ACCEPT [0:0]\n-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j DROP\n-A FORWARD -m conntrack ! --ctstate DNAT -j DROP',
      packet: {},
      want: ['10.244.0.9:8080 100%'],
    },
    {
      what: "addrtype LOCAL: the node's own address",
      nat:
        ':PREROUTING ACCEPT [0:0]\n-A PREROUTING -m addrtype --dst-type LOCAL ' + dnat('1.1.1.1:1'),
      filter: '',
      packet: { dst: '192.0.2.10' },
      want: ['1.1.1.1:1 100%'],
    },
    {
      what: 'interfaces from the addresses: a Pod arrives on cni0',
      nat: ':PREROUTING ACCEPT [0:0]\n-A PREROUTING -i cni0 ' + dnat('1.1.1.1:1'),
      filter: '',
      packet: {},
      want: ['1.1.1.1:1 100%'],
    },
  ];
  for (const { what, nat, filter, packet: p, want } of cases)
    it(what, () => assert.deepEqual(summary(walk(nat, filter, p)), want));

  it('notes the assumptions it rests on: session affinity lists, ipsets', () => {
    const r = walk(
      ':PREROUTING ACCEPT [0:0]\n-A PREROUTING -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-X --mask 255.255.255.255 --rsource ' +
        dnat('1.1.1.1:1') +
        '\n-A PREROUTING -m set --match-set KUBE-CLUSTER-IP dst,dst ' +
        dnat('2.2.2.2:2'),
      '',
      {},
    );
    assert.deepEqual(summary(r), ['null 100%']);
    assert.deepEqual(r.outcomes[0]!.assumptions, [
      'no earlier connection from this client in the recent list KUBE-SEP-X (session affinity starts fresh)',
      'the packet is not in ipset KUBE-CLUSTER-IP (ipset contents are not in the dump)',
    ]);
  });

  it('rejects an address that is not an IP address with a readable error', () => {
    assert.throws(
      () => walk('', '', { dst: 'fd00::g' }),
      /destination "fd00::g" is not an IP address/,
    );
  });
});

describe('IPv6: the ip6tables rules of the dual-stack scenario (nginx-svc fd00:10:96::be:8080)', () => {
  async function walker6(node: string) {
    const facts = await readSnapshot('snapshots/dual-stack-ipv6-rules-missing');
    const rs = parseIptables(facts.nodes[node]!['ip6tables-save']!);
    const net = nodeNetwork(
      clusterView(facts.objects).nodes.find((n) => n.name === node),
      facts.nodes[node]!['ip-addr'],
    );
    return (p: TracePacket) => tracePacket(rs, net, p);
  }
  const rows: Row[] = [
    {
      what: 'a Pod to the ClusterIP: half to each endpoint, [ip]:port, its own endpoint masqueraded',
      src: 'fd00:10:244::3',
      port: 8080,
      protocol: 'tcp',
      fromHost: false,
      want: [
        ['[fd00:10:244::3]:80', 0.5, true],
        ['[fd00:10:244:1::7]:80', 0.5, false],
      ],
    },
    {
      what: 'a client outside the cluster: masqueraded to every endpoint (not from the Pod network)',
      src: '2001:db8:9::1',
      port: 8080,
      protocol: 'tcp',
      fromHost: false,
      want: [
        ['[fd00:10:244::3]:80', 0.5, true],
        ['[fd00:10:244:1::7]:80', 0.5, true],
      ],
    },
    {
      what: 'another port of the ClusterIP: no rule, routed unchanged',
      src: 'fd00:10:244::3',
      port: 80,
      protocol: 'tcp',
      fromHost: false,
      want: [[null, 1, false]],
    },
    {
      what: 'ping: no rule matches icmp',
      src: 'fd00:10:244::3',
      port: undefined,
      protocol: 'icmp',
      fromHost: false,
      want: [[null, 1, false]],
    },
  ];
  for (const r of rows)
    it(r.what, async () => {
      const walk = await walker6('vm-12-7-centos');
      const got = walk({
        src: r.src,
        dst: 'fd00:10:96::be',
        dport: r.port,
        protocol: r.protocol,
        fromHost: r.fromHost,
      });
      assert.deepEqual(outcomes(got), r.want);
    });

  it('the node whose IPv6 rules lack the Service routes the packet unchanged', async () => {
    const walk = await walker6('vm-12-11-centos');
    const got = walk({
      src: 'fd00:10:244:1::7',
      dst: 'fd00:10:96::be',
      dport: 8080,
      protocol: 'tcp',
      fromHost: false,
    });
    assert.deepEqual(outcomes(got), [[null, 1, false]]);
  });

  it('an IPv4 packet never matches an IPv6 rule, nor the other way round', async () => {
    const walk = await walker6('vm-12-7-centos');
    const got = walk({
      src: '10.244.0.3',
      dst: '10.1.190.219',
      dport: 8080,
      protocol: 'tcp',
      fromHost: false,
    });
    assert.deepEqual(outcomes(got), [[null, 1, false]]);
  });
});

describe('the answer for a Service port whose chain the packet fell through', () => {
  it('says the chain it ended in and its share, not that kube-proxy never wrote the Service', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const node = 'vm-12-7-centos';
    const view = clusterView(facts.objects);
    // the Service chain's last jump gone, its KUBE-SEP chain left
    const dump = facts.nodes[node]!['iptables-save']!.replace(
      /^-A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-\S+\n/m,
      '',
    );
    const net = nodeNetwork(
      view.nodes.find((n) => n.name === node),
      facts.nodes[node]!['ip-addr'],
    );
    const p: TracePacket = {
      src: '10.244.0.5',
      dst: '10.1.190.219',
      dport: 8080,
      protocol: 'tcp',
      fromHost: false,
    };
    const answer = traceAnswer(tracePacket(parseIptables(dump), net, p), view, node);
    assert.match(
      answer.unmatched ?? '',
      /KUBE-SERVICES line \d+ takes the packet into KUBE-SVC-ELCM5PCEQWBTUJ2I, and it leaves KUBE-SVC-ELCM5PCEQWBTUJ2I unchanged: 50% of new connections fall through it/,
    );
    assert.doesNotMatch(answer.unmatched ?? '', /has not written this Service/);
    assert.equal(answer.unanswered, true);
  });
});

describe('the answer for a Service port whose rules the entry chain does not lead to', () => {
  // f17 of the r145 review: PREROUTING's jump to KUBE-SERVICES deleted, every Service rule left
  const answerFor = async (fromHost: boolean) => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const node = 'vm-12-7-centos';
    const view = clusterView(facts.objects);
    const dump = facts.nodes[node]!['iptables-save']!.replace(
      /^-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES\n/m,
      '',
    );
    const net = nodeNetwork(
      view.nodes.find((n) => n.name === node),
      facts.nodes[node]!['ip-addr'],
    );
    const p: TracePacket = {
      src: fromHost ? '10.0.12.7' : '10.244.0.5',
      dst: '10.1.190.219',
      dport: 8080,
      protocol: 'tcp',
      fromHost,
    };
    return traceAnswer(tracePacket(parseIptables(dump), net, p), view, node);
  };

  it('says PREROUTING does not jump to KUBE-SERVICES, not that kube-proxy never wrote the Service', async () => {
    const answer = await answerFor(false);
    assert.match(
      answer.unmatched ?? '',
      /^On node vm-12-7-centos, nat PREROUTING does not jump to KUBE-SERVICES: packets from Pods and the network never reach the Service's rules, which are there/,
    );
    assert.doesNotMatch(answer.unmatched ?? '', /has not written this Service/);
    assert.equal(answer.unanswered, true);
  });

  it("a process on the node still enters through OUTPUT's jump and is DNATed", async () => {
    const answer = await answerFor(true);
    assert.equal(answer.unmatched, undefined);
    assert.ok(answer.result.outcomes.every((o) => o.dnat !== undefined));
  });
});
