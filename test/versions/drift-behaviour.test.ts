// A dump spelled by a release kdebug does not model (the demo's kube-proxy v1.15) is compared
// by behaviour: its spelling is one folded info per node, and each edit below is found once,
// by the semantic checks where they see it and by the packet walk where only it does.
// IP conventions (the demo snapshot): Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16,
// nodes 10.0.12.7 and 10.0.12.11; nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80, 10.244.1.7:80.
import { severityOf } from '../../src/core/dataplane/drift.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import {
  behaviourDiffers,
  behaviourKeys,
  portsMeeting,
  sharedRules,
  wantedRules,
} from '../../src/core/dataplane/iptables/drift/behaviour/behaviour.js';
import type { DiffLine } from '../../src/core/dataplane/iptables/drift/behaviour/by-behaviour.js';
import { OLDEST_MODELLED } from '../../src/core/dataplane/kube-proxy/releases.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { expectedSave } from '../../src/core/dataplane/iptables/save.js';
import { aService, anEndpointSlice } from '../support/builders.js';
import {
  clusterDump,
  clusterObjects,
  NODE as BENCH_NODE,
  olderSpelling,
} from '../bench/cluster-dump.js';
import { allModes } from '../support/modes.js';

const NODE = 'vm-12-7-centos';
const SVC = 'default/nginx-svc:http';
const facts = await readSnapshot('snapshots/nginx-svc');
const dump = facts.nodes[NODE]!['iptables-save']!;

const cases: [string, (s: string) => string, string[]][] = [
  ['the dump as recorded', (s) => s, []],
  [
    'the cluster-IP jump only for one source network',
    (s) =>
      s.replace(
        '-A KUBE-SERVICES -d 10.1.190.219/32',
        '-A KUBE-SERVICES -s 192.168.0.0/16 -d 10.1.190.219/32',
      ),
    [`warning rule-behaviour-differs ${SVC}`],
  ],
  [
    'an endpoint DNAT for udp in a tcp Service',
    (s) =>
      s.replace(
        '-A KUBE-SEP-FNO4E6JYD7EGUHTP -p tcp -m tcp -j DNAT',
        '-A KUBE-SEP-FNO4E6JYD7EGUHTP -p udp -m udp -j DNAT',
      ),
    [`warning rule-behaviour-differs ${SVC}`],
  ],
  [
    'every source masqueraded (the semantic check, not twice)',
    (s) =>
      s.replace(
        '-A KUBE-SERVICES ! -s 10.244.0.0/16 -d 10.1.190.219/32',
        '-A KUBE-SERVICES -d 10.1.190.219/32',
      ),
    [`warning masquerade-differs ${SVC}`],
  ],
  [
    'an endpoint DNAT to another port',
    (s) => s.replace('--to-destination 10.244.1.7:80', '--to-destination 10.244.1.7:81'),
    [`error endpoint-stale ${SVC}`, `warning endpoint-missing ${SVC}`],
  ],
];

describe('drift of a dump by an unmodelled release: by behaviour, spelling folded', () => {
  for (const [name, edit, want] of cases)
    it(`${name}: ${want.join(', ') || 'nothing wrong'}`, () => {
      const fx = structuredClone(facts);
      fx.nodes[NODE]!['iptables-save'] = edit(dump);
      const d = new Analysis(fx, { code: allModes }).node(NODE).drift();
      const worse = d.findings.filter((f) => severityOf(f) !== 'info');
      assert.deepEqual(
        worse.map((f) => `${severityOf(f)} ${f.id} ${f.service ?? ''}`),
        want,
      );
      const info = d.findings.filter((f) => severityOf(f) === 'info');
      assert.deepEqual(
        info.map((f) => f.id),
        ['rule-text-differs'],
      );
      assert.equal(info[0]!.service, undefined);
    });

  it('names the release the caller gives, and the range kdebug models', () => {
    const rs = parseIptables(dump);
    const view = new Analysis(facts, { code: allModes }).view;
    const exp = expectedRules(view, NODE, { ...optionsFromDump(rs), release: { minor: 15 } });
    const d = nodeDrift({ node: NODE, source: 'test', expected: exp, actual: rs, view });
    assert.deepEqual(
      d.findings.map((f) => f.title),
      ['written as kube-proxy v1.15 writes it; kdebug models 1.30-1.37: compared by behaviour'],
    );
    assert.match(exp.notes.join('\n'), /v1\.15 is not a modelled release/);
  });
});

describe('drift by behaviour on many ports alike: one walk tells for ports the same but for their names', () => {
  // 60 Services of a few shapes, as kube-proxy v1.20 spells them (test/bench/cluster-dump.ts)
  const shape = { services: 60, endpoints: 3 };
  const clean = olderSpelling(clusterDump(shape, { minor: OLDEST_MODELLED }));
  const view = clusterView(clusterObjects(shape));
  const drift = (dump: string) =>
    nodeDrift({
      node: BENCH_NODE,
      source: 'test',
      expected: expectedRules(view, BENCH_NODE, { release: { minor: 20 } }),
      actual: parseIptables(dump),
      view,
    }).findings.map((f) => `${severityOf(f)} ${f.id} ${f.service ?? ''}`.trim());
  // only for one source network: a walk sees it, no semantic check does
  const narrowed = (dump: string, vip: string, match = '-s 192.168.0.0/16') =>
    dump.replace(`-A KUBE-SERVICES -d ${vip}/32`, `-A KUBE-SERVICES ${match} -d ${vip}/32`);
  const jumpOf = (dump: string, vip: string) =>
    dump.split('\n').find((l) => l.startsWith(`-A KUBE-SERVICES -d ${vip}/32`))!;

  it('the clean dump: one folded info', () =>
    assert.deepEqual(drift(clean), ['info rule-text-differs']));

  it('one port of a shape three others share, narrowed: found on that port alone', () =>
    assert.deepEqual(drift(narrowed(clean, '172.30.0.23')), [
      'warning rule-behaviour-differs ns23/svc-23:http',
      'info rule-text-differs',
    ]));

  it('two ports of one shape narrowed the same way: each found, by its own walk', () =>
    assert.deepEqual(drift(narrowed(narrowed(clean, '172.30.0.13'), '172.30.0.23')), [
      'warning rule-behaviour-differs ns13/svc-13:http',
      'warning rule-behaviour-differs ns23/svc-23:http',
      'info rule-text-differs',
    ]));

  it("matches that are not the port's own stay as written: a harmless one and a narrowing one are told apart", () => {
    assert.deepEqual(
      drift(narrowed(narrowed(clean, '172.30.0.13', '-s 0.0.0.0/0'), '172.30.0.23')),
      ['warning rule-behaviour-differs ns23/svc-23:http', 'info rule-text-differs'],
    );
    assert.deepEqual(
      drift(
        narrowed(
          narrowed(clean, '172.30.0.13', '! -s 203.0.113.0/24'),
          '172.30.0.23',
          '! -s 10.0.0.0/8',
        ),
      ),
      ['warning rule-behaviour-differs ns23/svc-23:http', 'info rule-text-differs'],
    );
  });

  it("another port's rule that catches this port's packets first: found on this port", () => {
    // svc-33's jump, copied with svc-23's address before svc-23's own
    const own = jumpOf(clean, '172.30.0.23');
    const stolen = jumpOf(clean, '172.30.0.33').replace('172.30.0.33/32', '172.30.0.23/32');
    assert.ok(own && stolen);
    assert.deepEqual(
      drift(clean.replace(own, `${stolen}\n${own}`)).filter((f) => f.includes('svc-23')),
      ['warning rule-behaviour-differs ns23/svc-23:http'],
    );
  });

  it("an extra rule harmless at one port's chain end, and first in another's: found on the second", () => {
    const svcChain = (vip: string) => / -j (KUBE-SVC-\S+)/.exec(jumpOf(clean, vip))![1]!;
    const lines = clean.split('\n');
    const a = svcChain('172.30.0.13');
    const b = svcChain('172.30.0.23');
    // after its last jump (one no packet passes) the DROP is never reached; before its first,
    // every packet meets it
    const last = lines.findLastIndex((l) => l.startsWith(`-A ${a} `));
    lines.splice(last + 1, 0, `-A ${a} -j DROP`);
    const first = lines.findIndex((l) => l.startsWith(`-A ${b} `));
    lines.splice(first, 0, `-A ${b} -j DROP`);
    // the DROP takes what kube-proxy would deliver: an error, whatever rule drops it
    assert.deepEqual(drift(lines.join('\n')), [
      'error service-traffic-diverted ns23/svc-23:http',
      'info rule-text-differs',
    ]);
  });

  it('a rule for every destination inserted among the jumps: one finding, as many ports as a walk of each finds', () => {
    const lines = clean.split('\n');
    lines.splice(lines.indexOf(jumpOf(clean, '172.30.0.23')), 0, '-A KUBE-SERVICES -p tcp -j DROP');
    const dump = lines.join('\n');
    // every port walked on its own, no key shared: the ports whose packets now go elsewhere
    const exp = expectedRules(view, BENCH_NODE, { release: { minor: 20 } });
    const actual = parseIptables(dump);
    const whole = wantedRules(exp, actual);
    const walked = exp.servicePorts
      .filter((sp) => behaviourDiffers(exp, whole, actual, sp).length > 0)
      .map((sp) => sp.name);
    assert.ok(walked.includes('ns23/svc-23:http') && !walked.includes('ns13/svc-13:http'));
    // one finding names the rule and as many ports as the walks find, none walked again
    const found = nodeDrift({
      node: BENCH_NODE,
      source: 'test',
      expected: exp,
      actual,
      view,
    }).findings.filter((f) => f.id !== 'rule-text-differs');
    assert.deepEqual(
      found.map((f) => [f.id, f.drift.actual, /catches (\d+) Service ports/.exec(f.title)?.[1]]),
      [
        [
          'service-traffic-diverted',
          ['-t nat -A KUBE-SERVICES -p tcp -j DROP'],
          `${walked.length}`,
        ],
      ],
    );
  });

  it("a port's packets walk through its own part of kube-proxy's rules as through all of them", () => {
    const exp = expectedRules(view, BENCH_NODE, { release: { minor: 20 } });
    const meeting = portsMeeting(exp);
    const own = jumpOf(clean, '172.30.0.23');
    const stolen = jumpOf(clean, '172.30.0.33').replace('172.30.0.33/32', '172.30.0.23/32');
    for (const dump of [
      clean,
      narrowed(clean, '172.30.0.13'),
      clean.replace(own, `${stolen}\n${own}`),
    ]) {
      const actual = parseIptables(dump);
      const whole = wantedRules(exp, actual);
      let differ = 0;
      for (const sp of exp.servicePorts) {
        const part = behaviourDiffers(exp, wantedRules(exp, actual, meeting(sp)), actual, sp);
        assert.deepEqual(part, behaviourDiffers(exp, whole, actual, sp), sp.name);
        differ += part.length;
      }
      assert.equal(differ > 0, dump !== clean);
    }
  });

  it("a port on the node's own address meets the node port of its port number", () => {
    // bare-metal external IPs: a Service on the node's address, port 30080; another's node port
    const objects = clusterObjects(shape);
    const nodeIP = clusterView(objects).nodes.find((n) => n.name === BENCH_NODE)!.ips[0]!;
    const more = clusterView([
      ...objects,
      aService('ns99/on-node', {
        clusterIP: '172.30.9.1',
        externalIPs: [nodeIP],
        ports: [['p', 30080]],
      }),
      anEndpointSlice('ns99/on-node', [['10.128.9.1', { node: BENCH_NODE }]], [['p', 30080]]),
      aService('ns99/by-port', {
        clusterIP: '172.30.9.2',
        type: 'NodePort',
        ports: [['p', 80, 'TCP', 30080]],
      }),
      anEndpointSlice('ns99/by-port', [['10.128.9.2', { node: BENCH_NODE }]], [['p', 80]]),
    ]);
    const exp = expectedRules(more, BENCH_NODE, { release: { minor: 20 } });
    const actual = parseIptables(expectedSave(expectedRules(more, BENCH_NODE)));
    const meeting = portsMeeting(exp);
    const whole = wantedRules(exp, actual);
    for (const name of ['ns99/on-node:p', 'ns99/by-port:p']) {
      const sp = exp.servicePorts.find((p) => p.name === name)!;
      assert.deepEqual(
        meeting(sp)
          .map((p) => p.name)
          .sort(),
        ['ns99/by-port:p', 'ns99/on-node:p'],
      );
      assert.deepEqual(
        behaviourDiffers(exp, wantedRules(exp, actual, meeting(sp)), actual, sp),
        behaviourDiffers(exp, whole, actual, sp),
      );
    }
  });

  it('ports alike share a key; a port whose rules, differences or shared rules differ does not', () => {
    const exp = expectedRules(view, BENCH_NODE, { release: { minor: 20 } });
    const port = (n: number) => exp.servicePorts.find((p) => p.name === `ns${n}/svc-${n}:http`)!;
    const none = { expected: [] as DiffLine[], actual: [] as DiffLine[] };
    const shared = sharedRules(parseIptables(clean));
    const actual = parseIptables(clean);
    const rulesOf = (table: string, chain: string) => {
      const t = actual.table(table);
      return t?.chain(chain)?.ruleIds.map((id) => t.text(id)) ?? [];
    };
    const keyOf = behaviourKeys(exp, shared, rulesOf);
    const key = (n: number, d = none, k = keyOf) => k(port(n), d);
    assert.ok(key(13) !== undefined);
    assert.equal(key(13), key(23));
    assert.notEqual(key(13), key(16)); // a NodePort
    assert.notEqual(
      key(13),
      key(23, {
        expected: [],
        actual: [
          { table: 'nat', chain: 'KUBE-SERVICES', text: '-A KUBE-SERVICES -s 192.168.0.0/16' },
        ],
      }),
    );
    // a rule for a range of destinations may meet ports of one shape differently: no key at all
    const ranged = behaviourKeys(
      exp,
      sharedRules(
        parseIptables(
          clean.replace(/\nCOMMIT/, '\n-A KUBE-SERVICES -d 172.30.0.0/24 -j DROP\nCOMMIT'),
        ),
      ),
      rulesOf,
    );
    assert.equal(key(13, none, ranged), undefined);
  });
});
