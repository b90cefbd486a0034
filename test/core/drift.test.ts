// Drift per fault: the expected rules of a small cluster, changed the way nodes go wrong, must
// give the finding that names the fault (and nothing louder); the scenario snapshots and the
// v1.15 demo must give what their READMEs say.
//
// IP conventions (kube-proxy's proxier_test.go): Pod IPs 10.180.0.0/16 in the cluster CIDR
// 10.0.0.0/8, ClusterIPs 172.30.0.0/16, node test-node 192.168.0.2 (Pods 10.180.0.0/24), other
// node 192.168.0.3 (Pods 10.180.1.0/24), load balancer 5.6.7.8, source range 203.0.113.0/25.
import { evidenceText } from '../../src/core/findings/evidence.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { endpointChain, kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import {
  driftFinding,
  NOT_FORWARDED,
  SEVERITY,
  type DriftId,
  judgedOnNode,
  severityOf,
  unsupportedMode,
  type DriftFinding,
} from '../../src/core/dataplane/drift.js';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import {
  expectedRules,
  expectedSave,
  type ExpectOptions,
} from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from '../support/builders.js';
import { allModes } from '../support/modes.js';

/** A finding as the node that computed it says of its lines: held by its rules, or written by
 * kube-proxy, as `holds` and `expects` answer (NodeAnalysis decides them on a real node). */
const lined = (
  f: DriftFinding,
  holds: (line: string) => boolean,
  expects: (line: string) => boolean,
): DriftFinding => ({
  ...f,
  drift: {
    ...f.drift,
    onNode: {
      expected: f.drift.expected.map(holds),
      actual: f.drift.actual.map(holds),
      written: f.drift.actual.map(expects),
    },
  },
});

const NODE = 'test-node';
const objects: KubeObject[] = [
  aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
  aNode('other-node', '192.168.0.3', '10.180.1.0/24'),
  aKubeProxyConfig('clusterCIDR: 10.0.0.0/8\n'),
  aService('ns1/web', { clusterIP: '172.30.0.41' }),
  anEndpointSlice('ns1/web', ['10.180.0.1', ['10.180.1.2', { node: 'other-node' }], '10.180.0.3']),
  aService('ns1/local', {
    type: 'NodePort',
    clusterIP: '172.30.0.42',
    externalTrafficPolicy: 'Local',
    ports: [['p80', 80, 'TCP', 3001]],
  }),
  anEndpointSlice('ns1/local', [
    ['10.180.0.4', { node: NODE }],
    ['10.180.1.4', { node: 'other-node' }],
  ]),
  aService('ns1/lb', {
    type: 'LoadBalancer',
    clusterIP: '172.30.0.43',
    ports: [['p80', 80, 'TCP', 3002]],
    loadBalancerIPs: ['5.6.7.8'],
    sourceRanges: ['203.0.113.0/25'],
    affinity: 10800,
  }),
  anEndpointSlice('ns1/lb', ['10.180.0.5']),
  aService('ns1/empty', { clusterIP: '172.30.0.44' }),
];
const view = clusterView(objects);
const clean = expectedSave(expectedRules(view, NODE, { randomFully: true }));

function drift(text: string, v = view, o: ExpectOptions = {}) {
  const rs = parseIptables(text, { file: 'test' });
  return nodeDrift({
    node: NODE,
    source: 'test',
    expected: expectedRules(v, NODE, { ...optionsFromDump(rs), ...o }),
    actual: rs,
    view: v,
  });
}
const ids = (fs: DriftFinding[]) =>
  fs.map((f) => `${severityOf(f)} ${f.id}${f.service ? ` ${f.service}` : ''}`);

const WEB = 'ns1/web:p80';
const SVC = kubeProxyChain('KUBE-SVC', WEB, 'tcp');
const LOCAL = 'ns1/local:p80';
const LB = 'ns1/lb:p80';
const SEP = (name: string, ep: string) => endpointChain(name, 'tcp', ep);

/** Removes the lines containing all of `parts`, or replaces text, in the clean dump. */
const without = (...parts: string[]) =>
  clean
    .split('\n')
    .filter((l) => !(l.startsWith('-A ') && parts.every((p) => l.includes(p))))
    .join('\n');
const swap = (from: string | RegExp, to: string) => {
  const out = clean.replace(from, to);
  assert.notEqual(out, clean, `${from} not in the clean dump`);
  return out;
};

describe('drift', () => {
  it('finds nothing at all in the rules kube-proxy would write', () => {
    const d = drift(clean);
    assert.deepEqual(d.findings, []);
    assert.equal(d.servicePorts, 4);
  });

  const faults: [string, string, string[]][] = [
    // what, the dump, the findings (severity, id, Service port) it must give
    [
      'a DNAT to a Pod that is gone',
      swap(/10\.180\.1\.2/g, '10.180.1.9'),
      [`error endpoint-stale ${WEB}`, `warning endpoint-missing ${WEB}`],
    ],
    [
      'an endpoint with no KUBE-SEP jump',
      without(`-j ${SEP(WEB, '10.180.0.3:80')}`),
      [`warning endpoint-missing ${WEB}`],
    ],
    [
      // the chain is still there: only the jump is gone, so the last share leaves KUBE-SVC
      'the last endpoint jump gone, its KUBE-SEP chain left',
      without(`-j ${SEP(WEB, '10.180.1.2:80')}`),
      [`error service-chain-falls-through ${WEB}`],
    ],
    [
      'a last jump that does not take every packet',
      swap(
        new RegExp(`(-A ${SVC} -m comment --comment "ns1/web:p80 -> 10\\.180\\.1\\.2:80") -j`),
        '$1 -m statistic --mode random --probability 0.50000000000 -j',
      ),
      [`error service-chain-falls-through ${WEB}`],
    ],
    [
      'an endpoint chain without its DNAT (it returns: the next jump takes its share)',
      without(`-A ${SEP(WEB, '10.180.0.3:80')}`, '-j DNAT'),
      [`warning endpoint-dnat-missing ${WEB}`],
    ],
    [
      'the last endpoint chain without its DNAT',
      without(`-A ${SEP(WEB, '10.180.1.2:80')}`, '-j DNAT'),
      [`error service-chain-falls-through ${WEB}`, `warning endpoint-dnat-missing ${WEB}`],
    ],
    [
      'probabilities that give uneven shares',
      swap('--probability 0.33333333349', '--probability 0.50000000000'),
      [`warning weights-uneven ${WEB}`],
    ],
    [
      'no cluster IP rule (kube-proxy never wrote the Service)',
      without('"ns1/web:p80 cluster IP"', '-A KUBE-SERVICES'),
      [`error service-rules-missing ${WEB}`],
    ],
    [
      'a cluster IP rule to a chain that does not exist',
      swap(`-m tcp --dport 80 -j ${SVC}`, '-m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA'),
      [`error service-chain-missing ${WEB}`],
    ],
    [
      'no masquerade rule for cluster IP traffic',
      without(`-A ${SVC} ! -s`),
      [`warning masquerade-missing ${WEB}`],
    ],
    [
      'no hairpin masquerade',
      without(`-A ${SEP(WEB, '10.180.0.1:80')} -s`),
      [`warning masquerade-missing ${WEB}`],
    ],
    [
      'no node port rule',
      without('-A KUBE-NODEPORTS', '--dport 3001'),
      [`error nodeport-missing ${LOCAL}`],
    ],
    [
      'externalTrafficPolicy Local sent to every node',
      swap(
        `-A ${kubeProxyChain('KUBE-EXT', LOCAL, 'tcp')} -j ${kubeProxyChain('KUBE-SVL', LOCAL, 'tcp')}`,
        `-A ${kubeProxyChain('KUBE-EXT', LOCAL, 'tcp')} -j ${kubeProxyChain('KUBE-SVC', LOCAL, 'tcp')}`,
      ),
      [`error local-policy-wrong ${LOCAL}`],
    ],
    [
      'no REJECT for a Service without endpoints',
      without('"ns1/empty:p80 has no endpoints"'),
      [`warning no-endpoints-reject-missing ns1/empty:p80`],
    ],
    [
      'loadBalancerSourceRanges not enforced',
      without('-A KUBE-PROXY-FIREWALL'),
      [`warning firewall-missing ${LB}`],
    ],
    ['no session affinity', without('--rcheck'), [`warning affinity-wrong ${LB}`]],
    [
      'no jump from PREROUTING',
      without('-A PREROUTING', '-j KUBE-SERVICES'),
      ['error entry-jump-missing'],
    ],
    [
      'marked packets not masqueraded',
      without('-A KUBE-POSTROUTING', 'MASQUERADE'),
      ['warning masquerade-missing'],
    ],
    [
      'leftover chains',
      clean
        .replace(
          ':KUBE-SERVICES - [0:0]',
          ':KUBE-SERVICES - [0:0]\n:KUBE-SVC-ZZZZZZZZZZZZZZZZ - [0:0]',
        )
        .replace('COMMIT\n*nat', 'COMMIT\n*nat')
        .replace(
          /(-A KUBE-SERVICES [^\n]*\n)(?![\s\S]*-A KUBE-SERVICES)/,
          '$1-A KUBE-SVC-ZZZZZZZZZZZZZZZZ -m comment --comment "ns9/gone:http -> 10.180.0.99:80" -j KUBE-MARK-MASQ\n',
        ),
      ['warning orphan-chain ns9/gone:http'],
    ],
  ];
  for (const [what, dump, want] of faults) {
    it(`names ${want[0]} for ${what}`, () => {
      assert.deepEqual(ids(drift(dump).findings.filter((f) => severityOf(f) !== 'info')), want);
    });
  }

  const spelling: [string, string][] = [
    [
      'a probability spelled otherwise but equal after quantisation (round(p * 2^31))',
      swap('--probability 0.33333333349', '--probability 0.33333333333'),
    ],
    [
      "old kube-proxy's %0.5f probability",
      swap('--probability 0.33333333349', '--probability 0.33332000021'),
    ],
    [
      'no comments on the KUBE-SEP rules',
      clean.replace(/(-A KUBE-SEP-\S+ .*?) -m comment --comment "[^"]*"/g, '$1'),
    ],
    ['the Services in another order in KUBE-SERVICES', reorderServices(clean)],
  ];
  for (const [what, dump] of spelling) {
    it(`reports only rule-text-differs (info) for ${what}`, () => {
      const d = drift(dump);
      assert.ok(d.findings.length > 0 || what.includes('order'), 'something reported');
      assert.deepEqual(
        d.findings.filter((f) => f.id !== 'rule-text-differs'),
        [],
      );
      assert.ok(d.findings.every((f) => severityOf(f) === 'info'));
    });
  }

  it("shows a shared chain's rule spelled otherwise, as both lines, on the Service port it belongs to", () => {
    const line = clean.split('\n').find((l) => l.includes('"ns1/web:p80 cluster IP"'))!;
    const other = line.replace('-d 172.30.0.41/32', '-d 172.30.0.41');
    const d = drift(clean.replace(line, other));
    assert.deepEqual(ids(d.findings), [`info rule-text-differs ${WEB}`]);
    assert.deepEqual(d.findings[0]!.drift.expected, [`-t nat ${line}`]);
    assert.deepEqual(d.findings[0]!.drift.actual, [`-t nat ${other}`]);
  });

  it('says what the stale endpoint is and what to do, with the rule lines as evidence', () => {
    const d = drift(swap(/10\.180\.1\.2/g, '10.180.1.9'));
    const stale = d.findings.find((f) => f.id === 'endpoint-stale')!;
    assert.equal(
      stale.explanation,
      `node ${NODE} still sends 33.3% of ${WEB} to 10.180.1.9:80, a Pod that no longer exists: those connections time out.`,
    );
    assert.ok(
      stale.drift.actual.some(
        (l) => l.startsWith(`-t nat -A ${SVC} `) && l.includes('10.180.1.9:80'),
      ),
    );
    assert.ok(stale.drift.expected.every((l) => l.startsWith(`-t nat -A ${SVC} `)));
    assert.match(stale.advice!, /kube-proxy on test-node has not applied/);
    // the node holds what the finding shows it has: those lines are a difference, - and +
    const held = new Set(stale.drift.actual);
    const f = judgedOnNode(
      lined(
        stale,
        (l) => held.has(l),
        () => false,
      ),
      'nodes/test-node/iptables-save.txt',
    );
    assert.deepEqual([f.id, f.status, f.node, f.service], ['endpoint-stale', 'fail', NODE, WEB]);
    const text = f.evidence.map(evidenceText);
    assert.ok(text.some((e) => e.startsWith('+ -t nat') && e.includes('10.180.1.9:80')));
    assert.ok(text.some((e) => e.startsWith('- expected: -t nat')));
    assert.ok(f.evidence.filter((e) => e.diff === 'missing').every((e) => e.kind === 'computed'));
    // a line the node has that kube-proxy also writes (elsewhere in its answer): unmarked, never '+'
    const written = judgedOnNode(
      lined(
        stale,
        (l) => held.has(l),
        () => true,
      ),
      'nodes/test-node/iptables-save.txt',
    );
    assert.ok(!written.evidence.some((e) => e.diff === 'unexpected'));
    assert.ok(written.evidence.some((e) => e.diff === 'same' && held.has(e.text)));
    // an actual the node's rules do not hold as a line (a place, a count) is said as it is
    const said = judgedOnNode(
      lined(
        stale,
        () => false,
        () => false,
      ),
      'nodes/test-node/iptables-save.txt',
    );
    assert.ok(said.evidence.some((e) => !e.diff && e.text.startsWith('actual:   -t nat')));
  });

  it('a dump without comments: an address sent to KUBE-EXT is found as the external or load-balancer IP it is', () => {
    const v = clusterView([
      ...objects,
      aService('ns1/ext', { clusterIP: '172.30.0.45', externalIPs: ['198.51.100.7'] }),
      anEndpointSlice('ns1/ext', ['10.180.0.6']),
      aService('ns1/lb2', {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.46',
        ports: [['p80', 80, 'TCP', 3003]],
        loadBalancerIPs: ['5.6.7.9'],
      }),
      anEndpointSlice('ns1/lb2', ['10.180.0.7']),
    ]);
    const bare = expectedSave(expectedRules(v, NODE, { randomFully: true }))
      .split('\n')
      .map((l) =>
        l.startsWith('-A KUBE-SERVICES ') ? l.replace(/ -m comment --comment "[^"]*"/, '') : l,
      )
      .join('\n');
    const d = drift(bare, v);
    assert.deepEqual(
      d.findings.filter((f) => f.id === 'service-rules-missing').map((f) => f.service),
      [],
    );
  });

  it('collapses one masquerade difference on every Service port into one node finding', () => {
    const d = drift(clean.replaceAll('! -s 10.0.0.0/8', '! -s 10.244.0.0/16'));
    assert.deepEqual(ids(d.findings.filter((f) => severityOf(f) !== 'info')), [
      'warning masquerade-differs',
    ]);
    assert.match(
      d.findings[0]!.explanation,
      /"! -s 10\.244\.0\.0\/16", but the kube-proxy configuration .* says "! -s 10\.0\.0\.0\/8"/,
    );
  });

  it('explains (as a note, not drift) a node dropping externalTrafficPolicy Local traffic without a local endpoint', () => {
    const v = clusterView([
      ...objects.filter((o) => o.metadata?.name !== 'local-abcde'),
      anEndpointSlice('ns1/local', [['10.180.1.4', { node: 'other-node' }]]),
    ]);
    const d = drift(expectedSave(expectedRules(v, NODE, { randomFully: true })), v);
    assert.deepEqual(d.findings, []);
    assert.deepEqual(
      d.notes?.map((n) => [n.id, n.service]),
      [['local-policy-drop', LOCAL]],
    );
    assert.match(
      d.notes![0]!.explanation,
      /drops traffic arriving here for node port 3001, as designed; only other-node answers/,
    );
  });

  it('reads knobs from the dump: random-fully, nfacct, tcp_be_liberal', () => {
    assert.deepEqual(optionsFromDump(parseIptables(clean)), {
      randomFully: true,
      nfacct: false,
      conntrackTcpBeLiberal: false,
    });
    const plain = expectedSave(
      // v1.36: 1.37 writes --random-fully whatever the knob says
      expectedRules(view, NODE, {
        randomFully: false,
        nfacct: true,
        conntrackTcpBeLiberal: true,
        release: { minor: 36 },
      }),
    );
    assert.deepEqual(optionsFromDump(parseIptables(plain)), {
      randomFully: false,
      nfacct: true,
      conntrackTcpBeLiberal: true,
    });
    assert.equal(drift(plain, view, { release: { minor: 36 } }).findings.length, 0);
  });

  it('refuses kube-proxy modes it does not model', () => {
    assert.equal(unsupportedMode('iptables'), undefined);
    assert.equal(unsupportedMode('ipvs'), undefined); // its virtual servers are compared
    assert.equal(unsupportedMode('nftables'), undefined); // its table is compared
    assert.match(unsupportedMode('userspace')!, /userspace mode/);
    assert.match(unsupportedMode('kernelspace')!, /kernelspace mode/);
  });
});

describe('a drift finding', () => {
  const at = { node: 'n1', source: 'nodes/n1/iptables-save.txt' };
  it('is a Finding whose status says its severity, a note an info pass', () => {
    const said = { title: 't', message: 'm' };
    for (const [id, severity, status] of [
      ['endpoint-stale', 'error', 'fail'],
      ['endpoint-missing', 'warning', 'warn'],
      ['table-not-captured', 'info', 'pass'],
    ] as const) {
      const f = driftFinding(id, said, at);
      assert.deepEqual(
        [f.status, severityOf(f), f.explanation, f.node],
        [status, severity, 'm', 'n1'],
      );
    }
    const note = driftFinding('endpoint-stale', said, at, 'info');
    assert.deepEqual([note.status, note.info, severityOf(note)], ['pass', true, 'info']);
  });

  it('has for evidence what its check read on the node, or that the node holds none of it', () => {
    const held = driftFinding(
      'endpoint-stale',
      { title: 't', message: 'm', expected: ['-A X -j Y'], actual: ['-A X -j Z'] },
      at,
    );
    assert.deepEqual(
      held.evidence.map((e) => [e.kind, e.text, e.node, e.source]),
      [['observed', '-A X -j Z', 'n1', at.source]],
    );
    const none = driftFinding(
      'service-rules-missing',
      { title: 't', message: 'm', expected: ['-A X -j Y'] },
      at,
    );
    assert.deepEqual(
      none.evidence.map((e) => e.text),
      [`${at.source}: none of these`],
    );
    assert.deepEqual(
      driftFinding('table-not-captured', { title: 't', message: 'm' }, at).evidence,
      [],
    );
    // what it read from the API besides is kept where the node's lines are judged again
    const api = { kind: 'read' as const, text: 'spec.x: 1', object: 'Service ns/a' };
    const note = driftFinding(
      'table-not-captured',
      { title: 't', message: 'm', evidence: [api] },
      at,
      'info',
    );
    const judgedNote = judgedOnNode(
      lined(
        note,
        () => false,
        () => false,
      ),
      at.source,
    );
    assert.deepEqual([judgedNote.evidence, judgedNote.status], [[api], 'pass']);
  });
});

describe('drift in large-cluster mode (per-endpoint rules sampled)', () => {
  const ips = Array.from({ length: 1200 }, (_, i) => `10.180.${i >> 8}.${i & 255}`);
  const big = clusterView([
    ...objects.slice(0, 3),
    aService('ns1/big'),
    anEndpointSlice('ns1/big', ips),
  ]);
  const text = expectedSave(expectedRules(big, NODE, { randomFully: true }));
  const BIG = 'ns1/big:p80';

  it('finds nothing in exact rules', () => assert.deepEqual(drift(text, big).findings, []));

  it('still checks every endpoint semantically', () => {
    const d = drift(text.replaceAll('10.180.2.100:80', '10.180.9.100:80'), big);
    assert.deepEqual(ids(d.findings.filter((f) => severityOf(f) !== 'info')), [
      `error endpoint-stale ${BIG}`,
      `warning endpoint-missing ${BIG}`,
    ]);
  });

  it('notices spelling in the sampled endpoint and then compares the port in full', () => {
    const first = endpointChain(BIG, 'tcp', '10.180.0.0:80');
    const d = drift(
      text.replace(
        `-A ${first} -p tcp -m tcp -j DNAT`,
        `-A ${first} -p tcp -m tcp -m comment --comment "x" -j DNAT`,
      ),
      big,
    );
    assert.deepEqual(ids(d.findings), [`info rule-text-differs ${BIG}`]);
  });
});

describe('drift on the snapshots', () => {
  const cases: [string, string, string[], string[]][] = [
    // snapshot, node, findings that count, notes
    [
      'stale-endpoint',
      'vm-12-11-centos',
      [
        'error endpoint-stale default/nginx-svc:http',
        'warning endpoint-missing default/nginx-svc:http',
      ],
      [],
    ],
    ['stale-endpoint', 'vm-12-7-centos', [], []],
    [
      'missing-service-rules',
      'vm-12-11-centos',
      ['error service-rules-missing default/nginx-svc:http'],
      [],
    ],
    ['missing-service-rules', 'vm-12-7-centos', [], []],
    ['nodeport-local-no-endpoint', 'vm-12-11-centos', [], ['local-policy-drop']],
    ['nodeport-local-no-endpoint', 'vm-12-7-centos', [], []],
    ['orphan-chains', 'vm-12-7-centos', ['warning orphan-chain default/old-web:http'], []],
    ['orphan-chains', 'vm-12-11-centos', [], []],
    // the demo: kube-proxy v1.15 rules that route correctly: spelling only
    ['nginx-svc', 'vm-12-7-centos', [], []],
    ['nginx-svc', 'vm-12-11-centos', [], []],
  ];
  for (const [dir, node, want, notes] of cases) {
    it(`${dir} ${node}: ${want.length ? want.join(', ') : 'no drift'}`, async () => {
      const facts = await readSnapshot(`snapshots/${dir}`);
      const d = new Analysis(facts, { code: allModes }).node(node).drift();
      assert.deepEqual(ids(d.findings.filter((f) => severityOf(f) !== 'info')), want);
      assert.deepEqual(d.notes?.map((n) => n.id) ?? [], notes);
      if (dir !== 'nginx-svc')
        assert.deepEqual(
          d.findings.filter((f) => severityOf(f) === 'info'),
          [],
          'current kube-proxy: spelled exactly',
        );
    });
  }

  it('the v1.15 demo: every Service port routes as expected, spelled as an older kube-proxy writes', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const d = new Analysis(facts, { code: allModes }).node('vm-12-7-centos').drift();
    assert.match(d.writtenBy!, /masquerade rules in KUBE-SERVICES \(v1\.20 or earlier\)/);
    // the spelling of 5 Service ports and the node's own chains, folded into one line
    assert.deepEqual(
      d.findings.map((f) => `${severityOf(f)} ${f.id} ${f.service ?? '(node)'}`),
      ['info rule-text-differs (node)'],
    );
    assert.match(d.findings[0]!.title, /compared by behaviour/);
    assert.match(d.findings[0]!.explanation, /of 5 Service ports/);
  });
});

describe('the evidence of a finding on a v1.15 node (the demo, one rule deleted)', () => {
  const node = 'vm-12-7-centos';
  async function finding(edit: (dump: string) => string) {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.nodes[node]!['iptables-save'] = edit(facts.nodes[node]!['iptables-save']!);
    const na = new Analysis(facts, { code: allModes }).node(node);
    const d = na.driftOnNode().findings.find((f) => severityOf(f) !== 'info')!;
    const judged = judgedOnNode(d, 'test');
    return { id: d.id, lines: judged.evidence.filter((e) => e.diff).map(evidenceText) };
  }

  it('the Service chain without its last jump: that jump alone lacking, the rest held as v1.15 spells it', async () => {
    const f = await finding((t) =>
      t.replace(/^-A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-\S+\n/m, ''),
    );
    assert.equal(f.id, 'service-chain-falls-through');
    assert.deepEqual(
      f.lines.filter((l) => l.startsWith('-')),
      [
        '- expected: -t nat -A KUBE-SVC-ELCM5PCEQWBTUJ2I -m comment --comment "default/nginx-svc:http -> 10.244.1.7:80" -j KUBE-SEP-FNO4E6JYD7EGUHTP',
      ],
    );
    // the masquerade rule where v1.15 writes it, before the jump in KUBE-SERVICES
    assert.ok(
      f.lines.some((l) =>
        /^\s+-t nat -A KUBE-SERVICES ! -s 10\.244\.0\.0\/16 .* -j KUBE-MARK-MASQ$/.test(l),
      ),
      f.lines.join('\n'),
    );
    assert.deepEqual(
      f.lines.filter((l) => l.startsWith('+')),
      [],
    );
  });

  it('an endpoint chain without its DNAT: the DNAT alone lacking', async () => {
    const f = await finding((t) =>
      t.replace(/^-A KUBE-SEP-SMDVMBZNJPO5AA7R -p tcp .*-j DNAT .*\n/m, ''),
    );
    assert.equal(f.id, 'endpoint-dnat-missing');
    assert.deepEqual(
      f.lines.filter((l) => !/^\s/.test(l)).map((l) => l.replace(/ -m comment.*/, '')),
      ['- expected: -t nat -A KUBE-SEP-SMDVMBZNJPO5AA7R -p tcp'],
    );
  });
});

/** The clean dump with its KUBE-SERVICES rules in reverse (Go's map order differs per sync). */
function reorderServices(text: string): string {
  const lines = text.split('\n');
  const nat = lines.indexOf('*nat');
  const idx = lines
    .map((l, i) =>
      i > nat && l.startsWith('-A KUBE-SERVICES ') && !l.includes('nodeports') ? i : -1,
    )
    .filter((i) => i >= 0);
  const reversed = idx.map((i) => lines[i]!).reverse();
  idx.forEach((i, k) => (lines[i] = reversed[k]!));
  return lines.join('\n');
}

describe("one Service's answer: drift of its ports and the node, not of every chain", () => {
  it('servicePortsOnly reports every finding but orphan chains and spelling, with the same trees', () => {
    // an orphan chain, a stale endpoint of web, and a rule spelled another way
    const text = clean
      .replace(
        ':KUBE-SERVICES - [0:0]',
        ':KUBE-SERVICES - [0:0]\n:KUBE-SVC-ZZZZZZZZZZZZZZZZ - [0:0]',
      )
      .replace(
        /(-A KUBE-SERVICES [^\n]*\n)(?![\s\S]*-A KUBE-SERVICES)/,
        '$1-A KUBE-SVC-ZZZZZZZZZZZZZZZZ -m comment --comment "ns9/gone:http -> 10.180.0.99:80" -j KUBE-MARK-MASQ\n',
      )
      .replace(
        /^-A KUBE-POSTROUTING -m mark ! --mark 0x4000\/0x4000 -j RETURN$/m,
        '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -m comment --comment "x" -j RETURN',
      )
      .replace(/10\.180\.0\.3/g, '10.180.0.9');
    const rs = parseIptables(text, { file: 'test' });
    const input = {
      node: NODE,
      source: 'test',
      expected: expectedRules(view, NODE, optionsFromDump(rs)),
      actual: rs,
      view,
    };
    const full = nodeDrift(input);
    const some = nodeDrift({ ...input, servicePortsOnly: true });
    const dropped = (f: DriftFinding) => f.id === 'orphan-chain' || f.id === 'rule-text-differs';
    assert.ok(
      full.findings.some((f) => f.id === 'orphan-chain'),
      ids(full.findings).join('\n'),
    );
    assert.ok(
      full.findings.some((f) => f.id === 'rule-text-differs'),
      ids(full.findings).join('\n'),
    );
    assert.ok(full.findings.some((f) => f.service === WEB && !dropped(f)));
    assert.deepEqual(
      some.findings,
      full.findings.filter((f) => !dropped(f)),
    );
    assert.deepEqual(some.notes, full.notes);
  });
});

describe('which drift ids mean the node does not forward a Service (NOT_FORWARDED)', () => {
  it('classifies every drift id, and only drift ids', () => {
    assert.deepEqual(Object.keys(NOT_FORWARDED).sort(), Object.keys(SEVERITY).sort());
  });

  it('holds every error-severity id', () => {
    for (const [id, severity] of Object.entries(SEVERITY) as [DriftId, string][]) {
      if (severity === 'error') assert.equal(NOT_FORWARDED[id], true, id);
    }
  });

  it('is the error ids and the warnings that leave an endpoint without its traffic', () => {
    const errors = (Object.keys(SEVERITY) as DriftId[]).filter((id) => SEVERITY[id] === 'error');
    const warnings: DriftId[] = [
      'endpoint-missing',
      'endpoint-dnat-missing',
      'rule-behaviour-differs',
      'endpoint-not-in-numgen',
      'real-server-weight-zero',
      'cilium-backend-missing',
      'cilium-traffic-policy-differs',
      'cilium-forwarding-differs',
      // a note in drift (intended), yet the node sends the Service to the policy's Pods instead
      'cilium-local-redirect',
      // nothing known serves the kind the agent leaves to kube-proxy on that node
      'cilium-left-to-kube-proxy',
    ];
    const marked = (Object.keys(NOT_FORWARDED) as DriftId[]).filter((id) => NOT_FORWARDED[id]);
    assert.deepEqual(marked.sort(), [...errors, ...warnings].sort());
  });
});
