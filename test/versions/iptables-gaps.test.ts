// The iptables-mode gaps the release vectors showed, one case a line: the localhost node-ports
// jump, a source range written the long way, --random-fully by release, a Service chain or a
// jump target missing from the dump, and a node that recorded only its ip6tables-save.
// IP conventions (kube-proxy's proxier_test.go): Pod CIDR 10.0.0.0/8, Service CIDR
// 172.30.0.0/16, node test-node 192.168.0.2, source range 203.0.113.0/25.
import { severityOf } from '../../src/core/dataplane/drift.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pickNodes } from '../../src/cluster/facts-source.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { endpointChain, kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import {
  expectedRules,
  expectedSave,
  type ExpectOptions,
} from '../../src/core/dataplane/kube-proxy/expected.js';
import { recordedFamily } from '../../src/core/facts/facts.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from '../support/builders.js';
import { allModes } from '../support/modes.js';

const NODE = 'test-node';
const WEB = 'ns1/web:p80';
const objects = (conf = '') => [
  aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
  aKubeProxyConfig(`clusterCIDR: 10.0.0.0/8\n${conf}`),
  aService('ns1/web', { clusterIP: '172.30.0.41' }),
  anEndpointSlice('ns1/web', ['10.180.0.1', '10.180.0.2', '10.180.0.3']),
  aService('ns1/np', {
    type: 'NodePort',
    clusterIP: '172.30.0.42',
    ports: [['p80', 80, 'TCP', 3001]],
  }),
  anEndpointSlice('ns1/np', ['10.180.0.4']),
  aService('ns1/lb', {
    type: 'LoadBalancer',
    clusterIP: '172.30.0.43',
    ports: [['p80', 80, 'TCP', 3002]],
    loadBalancerIPs: ['5.6.7.8'],
    sourceRanges: ['203.0.113.000/25'],
  }),
  anEndpointSlice('ns1/lb', ['10.180.0.5']),
];
const save = (conf = '', o: ExpectOptions = {}) =>
  expectedSave(expectedRules(clusterView(objects(conf)), NODE, o));
const NODEPORTS_LOCALHOST =
  '-A KUBE-SERVICES -d 127.0.0.1/32 -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -j KUBE-NODEPORTS';

describe('expect: what each release writes, where the vectors showed gaps', () => {
  const cases: [string, string, ExpectOptions, RegExp | string, boolean][] = [
    // what, ConfigMap lines, options, a line of the output, present?
    [
      'localhost node ports, 127.0.0.1 among nodePortAddresses',
      'nodePortAddresses: [192.168.0.0/24, 127.0.0.1/32]\n',
      {},
      NODEPORTS_LOCALHOST,
      true,
    ],
    [
      'no localhost node ports when iptables.localhostNodePorts is off',
      'nodePortAddresses: [192.168.0.0/24, 127.0.0.1/32]\niptables:\n  localhostNodePorts: false\n',
      {},
      NODEPORTS_LOCALHOST,
      false,
    ],
    [
      'no localhost jump when nodePortAddresses leaves loopback out',
      'nodePortAddresses: [192.168.0.0/24]\n',
      {},
      NODEPORTS_LOCALHOST,
      false,
    ],
    [
      'a source range written the long way keeps its firewall chain',
      '',
      {},
      /^-A KUBE-FW-\S+ -s 203\.0\.113\.0\/25 .* -j KUBE-EXT-/m,
      true,
    ],
    [
      '1.37 masquerades --random-fully whatever is known',
      '',
      { release: { minor: 37 } },
      /-j MASQUERADE --random-fully$/m,
      true,
    ],
    [
      '1.37 on a node whose rules lack it: still written, 1.37 writes it whatever iptables has',
      '',
      { release: { minor: 37 }, randomFully: false },
      /-j MASQUERADE --random-fully$/m,
      true,
    ],
    [
      '… and said so',
      '',
      { release: { minor: 37 }, randomFully: false },
      /# note: MASQUERADE --random-fully written though the node's rules \(or --no-random-fully\) lack it: kube-proxy v1\.37/,
      true,
    ],
    [
      '1.37: nothing assumed',
      '',
      { release: { minor: 37 } },
      /# note: MASQUERADE --random-fully assumed/,
      false,
    ],
    [
      "1.36 without the node's rules: --random-fully assumed, said",
      '',
      { release: { minor: 36 } },
      /# note: MASQUERADE --random-fully assumed: kube-proxy v1\.36/,
      true,
    ],
    [
      '1.36 on a node whose rules lack it',
      '',
      { release: { minor: 36 }, randomFully: false },
      /-j MASQUERADE --random-fully/,
      false,
    ],
  ];
  for (const [what, conf, o, line, present] of cases)
    it(what, () => {
      const text = save(conf, o);
      const found = typeof line === 'string' ? text.split('\n').includes(line) : line.test(text);
      assert.equal(found, present, text);
    });
});

describe('drift: a chain the dump does not hold', () => {
  const view = clusterView(objects());
  const clean = save();
  const SVC = kubeProxyChain('KUBE-SVC', WEB, 'tcp');
  const SEP = endpointChain(WEB, 'tcp', '10.180.0.2:80');
  const drift = (text: string) => {
    const rs = parseIptables(text, { file: 'test' });
    const exp = expectedRules(view, NODE, optionsFromDump(rs));
    return nodeDrift({ node: NODE, source: 'test', expected: exp, actual: rs, view }).findings.map(
      (f) => `${severityOf(f)} ${f.id}${f.service ? ` ${f.service}` : ''}`,
    );
  };
  const dropping = (...prefixes: string[]) =>
    clean
      .split('\n')
      .filter((l) => !prefixes.some((p) => l.startsWith(p)))
      .join('\n');

  it('the clean dump: nothing', () => assert.deepEqual(drift(clean), []));
  it('a KUBE-SVC chain gone (declaration and rules) while KUBE-SERVICES jumps to it', () =>
    assert.deepEqual(drift(dropping(`:${SVC} `, `-A ${SVC} `)), [
      `error service-chain-missing ${WEB}`,
    ]));
  it('a KUBE-SVC chain emptied', () =>
    assert.deepEqual(drift(dropping(`-A ${SVC} `)), [`error service-chain-missing ${WEB}`]));
  it('a KUBE-SEP chain gone while KUBE-SVC jumps to it: one finding, of the Service port', () =>
    assert.deepEqual(drift(dropping(`:${SEP} `, `-A ${SEP} `)), [
      `error jump-target-missing ${WEB}`,
    ]));
});

describe('a node that recorded only its ip6tables-save', () => {
  it('is a node with rules: drift, rules and trace read its IPv6 rules', async () => {
    const facts = await readSnapshot('snapshots/dual-stack-ipv6-rules-missing');
    delete facts.nodes['vm-12-7-centos']!['iptables-save'];
    assert.equal(recordedFamily(facts, 'vm-12-7-centos'), 'IPv6');
    assert.deepEqual(pickNodes(facts, 'test', { node: 'vm-12-7-centos' }, 'recorded rules'), [
      'vm-12-7-centos',
    ]);
    const node = new Analysis(facts, { code: allModes }).node('vm-12-7-centos', undefined, 'IPv6');
    assert.equal(node.drift().family, 'IPv6');
    assert.ok(node.trees()!.services.some((s) => s.name === 'default/nginx-svc:http'));
  });
});
