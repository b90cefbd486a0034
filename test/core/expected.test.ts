// The rules kube-proxy (1.28+) writes, per Service shape, in kube-proxy's own test style:
// Services and EndpointSlices in, the exact iptables-save lines of each Service port out.
//
// IP conventions (those of kube-proxy's proxier_test.go): Pod IPs 10.180.0.0/16 inside the
// cluster CIDR 10.0.0.0/8, ClusterIPs 172.30.0.0/16, node test-node 192.168.0.2 (Pods
// 10.180.0.0/24), other node 192.168.0.3, external IPs 192.168.99.0/24, load-balancer IPs
// 1.2.3.4 and 5.6.7.8, clients 203.0.113.0/24 with the source range 203.0.113.0/25.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointChain, kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import {
  categorize,
  portEndpoints,
  savedProbability,
} from '../../src/core/dataplane/kube-proxy/endpoints.js';
import {
  expectedRules,
  expectedSave,
  type ExpectOptions,
  type ExpectedRules,
} from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import {
  aKubeProxyConfig,
  aNode,
  aService,
  anEndpointSlice,
  type EndpointSpec,
} from '../support/builders.js';

const NODE = 'test-node';
const base = (conf = 'clusterCIDR: 10.0.0.0/8\n') => [
  aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
  aNode('other-node', '192.168.0.3', '10.180.1.0/24'),
  aKubeProxyConfig(conf),
];
// v1.36: the last release that writes MASQUERADE --random-fully only where iptables has it, so
// that the knob is the test's (1.37 writes it always)
const rulesFor = (objects: KubeObject[], o: ExpectOptions = {}, conf?: string) =>
  expectedRules(clusterView([...base(conf), ...objects]), NODE, {
    randomFully: false,
    release: { minor: 36 },
    ...o,
  });

/** The nat and filter lines of one Service port. */
function lines(exp: ExpectedRules, name: string) {
  const sp = exp.servicePorts.find((s) => s.name === name);
  assert.ok(sp, `no Service port ${name} in ${exp.servicePorts.map((s) => s.name).join(', ')}`);
  return { nat: sp.nat.map((l) => l.text), filter: sp.filter.map((l) => l.text) };
}

const N = 'ns1/svc1:p80';
const SVC = kubeProxyChain('KUBE-SVC', N, 'tcp');
const SVL = kubeProxyChain('KUBE-SVL', N, 'tcp');
const EXT = kubeProxyChain('KUBE-EXT', N, 'tcp');
const FW = kubeProxyChain('KUBE-FW', N, 'tcp');
const SEP = (ep: string, name = N, proto = 'tcp') => endpointChain(name, proto, ep);
const local = (ip: string): EndpointSpec => [ip, { node: NODE }];
const remote = (ip: string): EndpointSpec => [ip, { node: 'other-node' }];

const clusterIPRule = (chain = SVC) =>
  `-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment "${N} cluster IP" -m tcp --dport 80 -j ${chain}`;
const masq = (chain = SVC) =>
  `-A ${chain} ! -s 10.0.0.0/8 -d 172.30.0.41/32 -p tcp -m comment --comment "${N} cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`;
const jump = (chain: string, ep: string, p?: string) =>
  `-A ${chain} -m comment --comment "${N} -> ${ep}" ${p ? `-m statistic --mode random --probability ${p} ` : ''}-j ${SEP(ep)}`;
const sep = (ep: string) => [
  `-A ${SEP(ep)} -s ${ep.split(':')[0]}/32 -m comment --comment "${N}" -j KUBE-MARK-MASQ`,
  `-A ${SEP(ep)} -p tcp -m comment --comment "${N}" -m tcp -j DNAT --to-destination ${ep}`,
];

describe('expected rules per Service shape', () => {
  const cases: { name: string; objects: KubeObject[]; nat: string[]; filter?: string[] }[] = [
    {
      name: 'ClusterIP with one endpoint',
      objects: [aService('ns1/svc1'), anEndpointSlice('ns1/svc1', ['10.180.0.1'])],
      nat: [clusterIPRule(), masq(), jump(SVC, '10.180.0.1:80'), ...sep('10.180.0.1:80')],
    },
    {
      name: 'ClusterIP with three endpoints, sorted as strings, chained 1/3, 1/2, rest',
      objects: [
        aService('ns1/svc1'),
        anEndpointSlice('ns1/svc1', ['10.180.0.2', '10.180.0.10', '10.180.0.1']),
      ],
      // as strings "10.180.0.10:80" < "10.180.0.1:80" ('0' < ':')
      nat: [
        clusterIPRule(),
        masq(),
        jump(SVC, '10.180.0.10:80', '0.33333333349'),
        jump(SVC, '10.180.0.1:80', '0.50000000000'),
        jump(SVC, '10.180.0.2:80'),
        ...sep('10.180.0.10:80'),
        ...sep('10.180.0.1:80'),
        ...sep('10.180.0.2:80'),
      ],
    },
    {
      name: 'NodePort, externalTrafficPolicy Cluster: masquerade everything external',
      objects: [
        aService('ns1/svc1', { type: 'NodePort', ports: [['p80', 80, 'TCP', 3001]] }),
        anEndpointSlice('ns1/svc1', [remote('10.180.1.1')]),
      ],
      nat: [
        clusterIPRule(),
        `-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 3001 -j ${EXT}`,
        `-A ${EXT} -m comment --comment "masquerade traffic for ${N} external destinations" -j KUBE-MARK-MASQ`,
        `-A ${EXT} -j ${SVC}`,
        masq(),
        jump(SVC, '10.180.1.1:80'),
        ...sep('10.180.1.1:80'),
      ],
    },
    {
      name: 'NodePort, externalTrafficPolicy Local, with a local endpoint: external traffic to KUBE-SVL',
      objects: [
        aService('ns1/svc1', {
          type: 'NodePort',
          externalTrafficPolicy: 'Local',
          ports: [['p80', 80, 'TCP', 3001]],
        }),
        anEndpointSlice('ns1/svc1', [local('10.180.0.1'), remote('10.180.1.1')]),
      ],
      nat: [
        clusterIPRule(),
        `-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 3001 -j ${EXT}`,
        `-A ${EXT} -s 10.0.0.0/8 -m comment --comment "pod traffic for ${N} external destinations" -j ${SVC}`,
        `-A ${EXT} -m comment --comment "masquerade LOCAL traffic for ${N} external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
        `-A ${EXT} -m comment --comment "route LOCAL traffic for ${N} external destinations" -m addrtype --src-type LOCAL -j ${SVC}`,
        `-A ${EXT} -j ${SVL}`,
        masq(),
        jump(SVC, '10.180.0.1:80', '0.50000000000'),
        jump(SVC, '10.180.1.1:80'),
        jump(SVL, '10.180.0.1:80'),
        ...sep('10.180.0.1:80'),
        ...sep('10.180.1.1:80'),
      ],
    },
    {
      name: 'externalTrafficPolicy Local without a local endpoint: no jump out of KUBE-EXT, DROP in filter',
      objects: [
        aService('ns1/svc1', {
          type: 'NodePort',
          externalTrafficPolicy: 'Local',
          ports: [['p80', 80, 'TCP', 3001]],
        }),
        anEndpointSlice('ns1/svc1', [remote('10.180.1.1')]),
      ],
      nat: [
        clusterIPRule(),
        `-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 3001 -j ${EXT}`,
        `-A ${EXT} -s 10.0.0.0/8 -m comment --comment "pod traffic for ${N} external destinations" -j ${SVC}`,
        `-A ${EXT} -m comment --comment "masquerade LOCAL traffic for ${N} external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
        `-A ${EXT} -m comment --comment "route LOCAL traffic for ${N} external destinations" -m addrtype --src-type LOCAL -j ${SVC}`,
        masq(),
        jump(SVC, '10.180.1.1:80'),
        ...sep('10.180.1.1:80'),
      ],
      filter: [
        `-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "${N} has no local endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 3001 -j DROP`,
      ],
    },
    {
      name: 'LoadBalancer with source ranges and ClientIP affinity (kube-proxy test ns5/svc5)',
      objects: [
        aService('ns1/svc1', {
          type: 'LoadBalancer',
          ports: [['p80', 80, 'TCP', 3002]],
          loadBalancerIPs: ['5.6.7.8'],
          sourceRanges: [' 203.0.113.0/25'],
          affinity: 10800,
          healthCheckNodePort: 30000,
        }),
        anEndpointSlice('ns1/svc1', ['10.180.0.3']),
      ],
      nat: [
        clusterIPRule(),
        `-A KUBE-SERVICES -d 5.6.7.8/32 -p tcp -m comment --comment "${N} loadbalancer IP" -m tcp --dport 80 -j ${FW}`,
        `-A KUBE-NODEPORTS -p tcp -m comment --comment "${N}" -m tcp --dport 3002 -j ${EXT}`,
        `-A ${EXT} -m comment --comment "masquerade traffic for ${N} external destinations" -j KUBE-MARK-MASQ`,
        `-A ${EXT} -j ${SVC}`,
        `-A ${FW} -s 203.0.113.0/25 -m comment --comment "${N} loadbalancer IP" -j ${EXT}`,
        `-A ${FW} -m comment --comment "other traffic to ${N} will be dropped by KUBE-PROXY-FIREWALL"`,
        masq(),
        `-A ${SVC} -m comment --comment "${N} -> 10.180.0.3:80" -m recent --rcheck --seconds 10800 --reap --name ${SEP('10.180.0.3:80')} --mask 255.255.255.255 --rsource -j ${SEP('10.180.0.3:80')}`,
        jump(SVC, '10.180.0.3:80'),
        `-A ${SEP('10.180.0.3:80')} -s 10.180.0.3/32 -m comment --comment "${N}" -j KUBE-MARK-MASQ`,
        `-A ${SEP('10.180.0.3:80')} -p tcp -m comment --comment "${N}" -m recent --set --name ${SEP('10.180.0.3:80')} --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.180.0.3:80`,
      ],
      // a health check node port only for externalTrafficPolicy Local
      filter: [
        `-A KUBE-PROXY-FIREWALL -d 5.6.7.8/32 -p tcp -m comment --comment "${N} traffic not accepted by ${FW}" -m tcp --dport 80 -j DROP`,
      ],
    },
    {
      name: 'externalIPs on a ClusterIP Service are external traffic',
      objects: [
        aService('ns1/svc1', { externalIPs: ['192.168.99.33'] }),
        anEndpointSlice('ns1/svc1', ['10.180.0.4']),
      ],
      nat: [
        clusterIPRule(),
        `-A KUBE-SERVICES -d 192.168.99.33/32 -p tcp -m comment --comment "${N} external IP" -m tcp --dport 80 -j ${EXT}`,
        `-A ${EXT} -m comment --comment "masquerade traffic for ${N} external destinations" -j KUBE-MARK-MASQ`,
        `-A ${EXT} -j ${SVC}`,
        masq(),
        jump(SVC, '10.180.0.4:80'),
        ...sep('10.180.0.4:80'),
      ],
    },
    {
      name: 'internalTrafficPolicy Local: cluster IP to KUBE-SVL, no KUBE-SVC at all',
      objects: [
        aService('ns1/svc1', { internalTrafficPolicy: 'Local' }),
        anEndpointSlice('ns1/svc1', [local('10.180.0.1'), remote('10.180.1.1')]),
      ],
      nat: [clusterIPRule(SVL), masq(SVL), jump(SVL, '10.180.0.1:80'), ...sep('10.180.0.1:80')],
    },
    {
      name: 'internalTrafficPolicy Local without a local endpoint: DROP, not REJECT',
      objects: [
        aService('ns1/svc1', { internalTrafficPolicy: 'Local' }),
        anEndpointSlice('ns1/svc1', [remote('10.180.1.1')]),
      ],
      nat: [],
      filter: [
        `-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment "${N} has no local endpoints" -m tcp --dport 80 -j DROP`,
      ],
    },
    {
      name: 'no endpoints: REJECT for the cluster IP, external IP, load-balancer IP and node port',
      objects: [
        aService('ns1/svc1', {
          type: 'LoadBalancer',
          ports: [['p80', 80, 'TCP', 3001]],
          externalIPs: ['192.168.99.11'],
          loadBalancerIPs: ['1.2.3.4'],
        }),
        anEndpointSlice('ns1/svc1', [['10.180.0.1', { ready: false, serving: false }]]),
      ],
      nat: [],
      filter: [
        `-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment "${N} has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
        `-A KUBE-EXTERNAL-SERVICES -d 192.168.99.11/32 -p tcp -m comment --comment "${N} has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
        `-A KUBE-EXTERNAL-SERVICES -d 1.2.3.4/32 -p tcp -m comment --comment "${N} has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
        `-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "${N} has no endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 3001 -j REJECT --reject-with icmp-port-unreachable`,
      ],
    },
    {
      name: 'only terminating endpoints: the serving ones are used, the others never',
      objects: [
        aService('ns1/svc1'),
        anEndpointSlice('ns1/svc1', [
          ['10.180.0.1', { ready: false, serving: true, terminating: true }],
          ['10.180.0.2', { ready: false, serving: false, terminating: true }],
        ]),
      ],
      nat: [clusterIPRule(), masq(), jump(SVC, '10.180.0.1:80'), ...sep('10.180.0.1:80')],
    },
    {
      name: 'a terminating endpoint is not used while a ready one exists',
      objects: [
        aService('ns1/svc1'),
        anEndpointSlice('ns1/svc1', [
          '10.180.0.1',
          ['10.180.0.2', { ready: false, serving: true, terminating: true }],
        ]),
      ],
      nat: [clusterIPRule(), masq(), jump(SVC, '10.180.0.1:80'), ...sep('10.180.0.1:80')],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = lines(rulesFor(c.objects), N);
      assert.deepEqual(got.nat, c.nat);
      assert.deepEqual(got.filter, c.filter ?? []);
    });
  }

  it('gives every port of a multi-port Service its own chains, with udp and sctp spelled alike', () => {
    const exp = rulesFor([
      aService('ns3/dns', {
        clusterIP: '172.30.0.10',
        ports: [
          ['dns', 53, 'UDP'],
          ['dns-tcp', 53, 'TCP'],
          ['diameter', 3868, 'SCTP'],
        ],
      }),
      anEndpointSlice(
        'ns3/dns',
        ['10.180.0.5'],
        [
          ['dns', 53, 'UDP'],
          ['dns-tcp', 53, 'TCP'],
          ['diameter', 3868, 'SCTP'],
        ],
      ),
    ]);
    assert.deepEqual(
      exp.servicePorts.map((s) => [s.name, s.protocol, s.chains.svc]),
      [
        ['ns3/dns:diameter', 'sctp', kubeProxyChain('KUBE-SVC', 'ns3/dns:diameter', 'sctp')],
        ['ns3/dns:dns', 'udp', kubeProxyChain('KUBE-SVC', 'ns3/dns:dns', 'udp')],
        ['ns3/dns:dns-tcp', 'tcp', kubeProxyChain('KUBE-SVC', 'ns3/dns:dns-tcp', 'tcp')],
      ],
    );
    const udp = lines(exp, 'ns3/dns:dns').nat;
    const sepUdp = endpointChain('ns3/dns:dns', 'udp', '10.180.0.5:53');
    assert.equal(
      udp[0],
      `-A KUBE-SERVICES -d 172.30.0.10/32 -p udp -m comment --comment "ns3/dns:dns cluster IP" -m udp --dport 53 -j ${kubeProxyChain('KUBE-SVC', 'ns3/dns:dns', 'udp')}`,
    );
    assert.equal(
      udp.at(-1),
      `-A ${sepUdp} -p udp -m comment --comment "ns3/dns:dns" -m udp -j DNAT --to-destination 10.180.0.5:53`,
    );
    assert.match(
      lines(exp, 'ns3/dns:diameter').nat.at(-1)!,
      / -p sctp .* -m sctp -j DNAT --to-destination 10\.180\.0\.5:3868$/,
    );
  });

  it('drops comments from KUBE-SEP rules and SVC -> SEP jumps past 1000 endpoints (large-cluster mode)', () => {
    const ips = Array.from({ length: 1001 }, (_, i) => `10.180.${i >> 8}.${i & 255}`);
    const exp = rulesFor([aService('ns1/svc1'), anEndpointSlice('ns1/svc1', ips)]);
    assert.equal(exp.largeClusterMode, true);
    const got = lines(exp, N).nat;
    assert.equal(got[0], clusterIPRule()); // other comments stay
    assert.equal(got[1], masq());
    assert.match(
      got[2]!,
      new RegExp(
        `^-A ${SVC} -m statistic --mode random --probability 0\\.00099900085 -j KUBE-SEP-`,
      ),
    );
    assert.equal(
      got.filter((l) => l.includes('-m comment') && !l.includes('cluster IP')).length,
      0,
    );
    const first = got.find((l) => l.includes('-j DNAT'))!;
    assert.match(
      first,
      /^-A KUBE-SEP-\S+ -p tcp -m tcp -j DNAT --to-destination 10\.180\.0\.0:80$/,
    );
    assert.equal(
      rulesFor([aService('ns1/svc1'), anEndpointSlice('ns1/svc1', ips.slice(0, 1000))])
        .largeClusterMode,
      false,
    );
  });
});

describe('probabilities as iptables-save prints them', () => {
  const table: [number, string][] = [
    [2, '0.50000000000'],
    [3, '0.33333333349'],
    [4, '0.25000000000'],
    [5, '0.20000000019'],
    [6, '0.16666666651'],
    [10, '0.10000000009'],
    [10000, '0.00009999983'],
  ];
  for (const [n, saved] of table)
    it(`1/${n} -> ${saved}`, () => assert.equal(savedProbability(n), saved));
});

describe('masquerading from the kube-proxy configuration', () => {
  const objects = [aService('ns1/svc1'), anEndpointSlice('ns1/svc1', ['10.180.0.1'])];
  const cases: [string, string, string | undefined][] = [
    [
      'clusterCIDR (detectLocalMode ClusterCIDR)',
      'clusterCIDR: 10.0.0.0/8\n',
      `! -s 10.0.0.0/8 -d 172.30.0.41/32 -p tcp`,
    ],
    [
      'masqueradeAll',
      'clusterCIDR: 10.0.0.0/8\niptables:\n  masqueradeAll: true\n',
      `-d 172.30.0.41/32 -p tcp`,
    ],
    [
      "NodeCIDR: the node's Pod CIDR",
      'detectLocalMode: NodeCIDR\n',
      `! -s 10.180.0.0/24 -d 172.30.0.41/32 -p tcp`,
    ],
    [
      'BridgeInterface',
      'detectLocalMode: BridgeInterface\ndetectLocal:\n  bridgeInterface: cni0\n',
      `-d 172.30.0.41/32 ! -i cni0 -p tcp`,
    ],
    [
      'InterfaceNamePrefix',
      'detectLocalMode: InterfaceNamePrefix\ndetectLocal:\n  interfaceNamePrefix: veth\n',
      `-d 172.30.0.41/32 ! -i veth+ -p tcp`,
    ],
    ['no clusterCIDR: no masquerade rule', 'mode: ""\n', undefined],
  ];
  for (const [what, conf, spec] of cases) {
    it(what, () => {
      const got = lines(rulesFor(objects, {}, conf), N).nat;
      const rule = got.find((l) => l.endsWith('-j KUBE-MARK-MASQ') && l.startsWith(`-A ${SVC}`));
      if (spec === undefined) assert.equal(rule, undefined);
      else
        assert.equal(
          rule,
          `-A ${SVC} ${spec} -m comment --comment "${N} cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
        );
    });
  }

  it('adds -s VIP rules to the firewall chain when a source range holds the node IP', () => {
    const got = lines(
      rulesFor([
        aService('ns1/svc1', {
          type: 'LoadBalancer',
          loadBalancerIPs: ['5.6.7.8'],
          sourceRanges: ['192.168.0.0/24'],
        }),
        anEndpointSlice('ns1/svc1', ['10.180.0.1']),
      ]),
      N,
    ).nat.filter((l) => l.startsWith(`-A ${FW}`));
    assert.deepEqual(got, [
      `-A ${FW} -s 192.168.0.0/24 -m comment --comment "${N} loadbalancer IP" -j ${EXT}`,
      `-A ${FW} -s 5.6.7.8/32 -m comment --comment "${N} loadbalancer IP" -j ${EXT}`,
      `-A ${FW} -m comment --comment "other traffic to ${N} will be dropped by KUBE-PROXY-FIREWALL"`,
    ]);
  });
});

describe('the rules kube-proxy writes whatever the Services', () => {
  const fixed = (exp: ExpectedRules, table: 'nat' | 'filter', chain: string) =>
    exp.fixed[table].filter((l) => l.chain === chain).map((l) => l.text);

  it('KUBE-POSTROUTING, KUBE-MARK-MASQ and the node-ports rule, with the knobs', () => {
    const plain = rulesFor([]);
    assert.deepEqual(fixed(plain, 'nat', 'KUBE-POSTROUTING'), [
      '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE',
    ]);
    assert.deepEqual(fixed(plain, 'nat', 'KUBE-MARK-MASQ'), [
      '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
    ]);
    assert.deepEqual(fixed(plain, 'nat', 'KUBE-SERVICES'), [
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    ]);
    assert.match(
      fixed(rulesFor([], { randomFully: true }), 'nat', 'KUBE-POSTROUTING')[2]!,
      /-j MASQUERADE --random-fully$/,
    );
    const bit = rulesFor([], {}, 'clusterCIDR: 10.0.0.0/8\niptables:\n  masqueradeBit: 12\n');
    assert.deepEqual(fixed(bit, 'nat', 'KUBE-MARK-MASQ'), [
      '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x1000/0x1000',
    ]);
  });

  it('localhostNodePorts off: the node-ports rule skips 127.0.0.0/8 and there is no KUBE-FIREWALL rule', () => {
    const exp = rulesFor(
      [],
      {},
      'clusterCIDR: 10.0.0.0/8\niptables:\n  localhostNodePorts: false\n',
    );
    assert.match(
      fixed(exp, 'nat', 'KUBE-SERVICES')[0]!,
      /^-A KUBE-SERVICES ! -d 127\.0\.0\.0\/8 -m comment/,
    );
    assert.deepEqual(fixed(exp, 'filter', 'KUBE-FIREWALL'), []);
    assert.deepEqual(fixed(rulesFor([]), 'filter', 'KUBE-FIREWALL'), [
      '-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP',
    ]);
  });

  it('nodePortAddresses: one node-ports rule per node IP in the CIDRs, and no localhost node ports', () => {
    const exp = rulesFor(
      [],
      {},
      'clusterCIDR: 10.0.0.0/8\nnodePortAddresses: ["192.168.0.0/24"]\n',
    );
    assert.deepEqual(fixed(exp, 'nat', 'KUBE-SERVICES'), [
      '-A KUBE-SERVICES -d 192.168.0.2/32 -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -j KUBE-NODEPORTS',
    ]);
    assert.equal(exp.options.localhostNodePorts, false);
  });

  it('KUBE-FORWARD: the INVALID drop (with its nfacct counter when there is one) unless tcp_be_liberal', () => {
    assert.deepEqual(
      fixed(rulesFor([], { nfacct: true }), 'filter', 'KUBE-FORWARD')[0],
      '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name  ct_state_invalid_dropped_pkts -j DROP',
    );
    assert.equal(
      fixed(rulesFor([], { conntrackTcpBeLiberal: true }), 'filter', 'KUBE-FORWARD').length,
      2,
    );
  });

  it('renders a whole iptables-save: built-in chains, then its chains in name order, the node-ports rule last', () => {
    const text = expectedSave(
      rulesFor([aService('ns1/svc1'), anEndpointSlice('ns1/svc1', ['10.180.0.1'])]),
    );
    const nat = text.slice(text.indexOf('*nat'));
    const declared = nat
      .split('\n')
      .filter((l) => l.startsWith(':'))
      .map((l) => l.split(' ')[0]);
    assert.deepEqual(declared.slice(0, 4), [':PREROUTING', ':INPUT', ':OUTPUT', ':POSTROUTING']);
    assert.deepEqual(declared.slice(4), [...declared.slice(4)].sort());
    const services = nat.split('\n').filter((l) => l.startsWith('-A KUBE-SERVICES'));
    assert.match(services.at(-1)!, /kubernetes service nodeports/);
    assert.match(text, /^# kdebug expect: .* node test-node\n\*filter\n:INPUT ACCEPT \[0:0\]/);
  });
});

describe('endpoints as kube-proxy sees them (CategorizeEndpoints)', () => {
  const port = { name: 'p80', protocol: 'TCP' as const, port: 80, targetPort: 80 };
  const view = (eps: EndpointSpec[]) =>
    clusterView([anEndpointSlice('ns1/svc1', eps)]).endpointSlices;
  const addresses = (eps: { address: string }[]) => eps.map((e) => e.address);

  it('merges slices, keeps one copy of a duplicate (the local one) and sorts as strings', () => {
    const slices = [
      ...view(['10.180.0.9', remote('10.180.0.10')]),
      ...clusterView([anEndpointSlice('ns1/svc1', [local('10.180.0.10')], [['p80', 80]], 'fghij')])
        .endpointSlices,
    ];
    const eps = portEndpoints(slices, port, NODE);
    assert.deepEqual(addresses(eps), ['10.180.0.10:80', '10.180.0.9:80']);
    assert.equal(eps[0]!.local, true);
  });

  const cases: [
    string,
    EndpointSpec[],
    { cluster: boolean; local: boolean },
    string[],
    string[],
    boolean,
  ][] = [
    // what, endpoints, policies used, cluster set, local set, hasAny
    [
      'ready endpoints for both policies',
      [local('10.180.0.1'), remote('10.180.1.1')],
      { cluster: true, local: true },
      ['10.180.0.1:80', '10.180.1.1:80'],
      ['10.180.0.1:80'],
      true,
    ],
    [
      'no local endpoint',
      [remote('10.180.1.1')],
      { cluster: true, local: true },
      ['10.180.1.1:80'],
      [],
      true,
    ],
    [
      'local set falls back to serving terminating endpoints on its own',
      [
        remote('10.180.1.1'),
        ['10.180.0.1', { node: NODE, ready: false, serving: true, terminating: true }],
      ],
      { cluster: true, local: true },
      ['10.180.1.1:80'],
      ['10.180.0.1:80'],
      true,
    ],
    [
      'not serving, not ready: never used',
      [['10.180.0.1', { ready: false, serving: false, terminating: true }]],
      { cluster: true, local: false },
      [],
      [],
      false,
    ],
    [
      'local policy only: hasAny from endpoints anywhere',
      [remote('10.180.1.1')],
      { cluster: false, local: true },
      [],
      [],
      true,
    ],
  ];
  for (const [what, eps, uses, cluster, localSet, any] of cases) {
    it(what, () => {
      const cat = categorize(portEndpoints(view(eps), port, NODE), uses);
      assert.deepEqual(
        [addresses(cat.cluster), addresses(cat.local), cat.hasAny],
        [cluster, localSet, any],
      );
    });
  }
});
