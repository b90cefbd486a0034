// A rule kube-proxy does not write, put in its shared chains, is judged by where it sends each
// Service port's packets (walked), on a modelled release and an unmodelled one alike.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { severityOf, type DriftFinding } from '../../src/core/dataplane/drift.js';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import { expectedRules, expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { clusterView, type ClusterView } from '../../src/core/kube/objects.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from '../support/builders.js';

const NODE = 'test-node';
const view = clusterView([
  aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
  aKubeProxyConfig('clusterCIDR: 10.0.0.0/8\n'),
  aService('ns1/web', { clusterIP: '172.30.0.41' }),
  anEndpointSlice('ns1/web', ['10.180.0.1', '10.180.0.3']),
  aService('ns1/api', { clusterIP: '172.30.0.42' }),
  anEndpointSlice('ns1/api', ['10.180.0.4']),
  aService('ns1/empty', { clusterIP: '172.30.0.44' }),
  aService('ns1/far', { clusterIP: '172.30.9.9' }),
  anEndpointSlice('ns1/far', ['10.180.0.5']),
]);
const clean = expectedSave(expectedRules(view, NODE, { randomFully: true }));

function drift(text: string, v: ClusterView = view, node = NODE) {
  const rs = parseIptables(text, { file: 'test' });
  return nodeDrift({
    node,
    source: 'test',
    expected: expectedRules(v, node, optionsFromDump(rs)),
    actual: rs,
    view: v,
  });
}
const ids = (fs: DriftFinding[]) =>
  fs.map((f) => `${severityOf(f)} ${f.id}${f.service ? ` ${f.service}` : ''}`);

/** The dump with `rule` first in `table`'s KUBE-SERVICES. */
function first(dump: string, table: string, rule: string): string {
  const at = dump.indexOf('\n-A KUBE-SERVICES ', dump.indexOf(`*${table}`)) + 1;
  assert.ok(at > 0, `no ${table} KUBE-SERVICES rule`);
  return `${dump.slice(0, at)}${rule}\n${dump.slice(at)}`;
}

describe('drift: a rule kube-proxy does not write in its shared chains', () => {
  it('names a nat RETURN that keeps Service ports from their endpoints, an error', () => {
    const rule = '-A KUBE-SERVICES -d 172.30.0.0/24 -p tcp -j RETURN';
    const dump = first(clean, 'nat', rule);
    const d = drift(dump);
    assert.deepEqual(ids(d.findings), ['error service-traffic-diverted']);
    const f = d.findings[0]!;
    assert.deepEqual(f.drift.actual, [`-t nat ${rule}`]);
    const line = dump.split('\n').indexOf(rule) + 1;
    assert.match(
      f.title,
      new RegExp(`nat KUBE-SERVICES \\(line ${line}\\) catches 2 Service ports`),
    );
    // the Service without endpoints is refused in filter all the same; far is outside the range
    assert.match(f.explanation, /ns1\/api:p80, ns1\/web:p80: .* never reach the endpoints/);
  });

  it('names a filter RETURN that lets a Service without endpoints go unrefused, a warning', () => {
    const d = drift(first(clean, 'filter', '-A KUBE-SERVICES -d 172.30.0.0/16 -p tcp -j RETURN'));
    assert.deepEqual(ids(d.findings), ['warning no-endpoints-reject-missing ns1/empty:p80']);
    assert.match(
      d.findings[0]!.explanation,
      /-> unchanged where kube-proxy sends it 100% -> REJECT/,
    );
  });

  it('leaves a rule no packet of a Service port meets as spelling', () => {
    // filter sees the packet after its DNAT: a DROP of web's cluster IP there drops nothing
    const rule = '-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m tcp --dport 80 -j DROP';
    const d = drift(first(clean, 'filter', rule));
    assert.deepEqual(ids(d.findings), ['info rule-text-differs ns1/web:p80']);
  });

  it('names the rule on a release kdebug does not model, its ports walked no more', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const node = 'vm-12-7-centos';
    const dump = facts.nodes[node]!['iptables-save']!;
    const d = drift(
      first(dump, 'nat', '-A KUBE-SERVICES -d 10.1.0.0/16 -p tcp -j RETURN'),
      clusterView(facts.objects),
      node,
    );
    const errors = d.findings.filter((f) => f.id === 'service-traffic-diverted');
    assert.equal(errors.length, 1, ids(d.findings).join('\n'));
    assert.match(errors[0]!.explanation, /default\/nginx-svc:http/);
    assert.ok(
      !d.findings.some((f) => f.id === 'rule-behaviour-differs'),
      ids(d.findings).join('\n'),
    );
  });

  it('says a node port kube-proxy drops for no local endpoint is accepted, not "no endpoints"', () => {
    const local = clusterView([
      aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
      aNode('other', '192.168.0.3', '10.180.1.0/24'),
      aKubeProxyConfig('clusterCIDR: 10.0.0.0/8\n'),
      aService('ns1/lb', {
        clusterIP: '172.30.0.43',
        type: 'NodePort',
        externalTrafficPolicy: 'Local',
        ports: [['p80', 80, 'TCP', 30080]],
      }),
      anEndpointSlice('ns1/lb', [['10.180.1.5', { node: 'other' }]]),
    ]);
    const dump = expectedSave(expectedRules(local, NODE, { randomFully: true }));
    const rule = '-A KUBE-EXTERNAL-SERVICES -p tcp -m tcp --dport 30080 -j ACCEPT';
    const at = dump.indexOf('\n-A KUBE-EXTERNAL-SERVICES ', dump.indexOf('*filter')) + 1;
    const d = drift(`${dump.slice(0, at)}${rule}\n${dump.slice(at)}`, local);
    assert.deepEqual(ids(d.findings), ['warning no-endpoints-reject-missing ns1/lb:p80']);
    const said = d.findings[0]!.explanation;
    assert.doesNotMatch(said, /the Service has no endpoints/);
    assert.match(
      said,
      /the node port's packets, which kube-proxy drops because this node runs none of its endpoints \(externalTrafficPolicy: Local\), are accepted instead/,
    );
    // the node port is no longer dropped here: no note says it is
    assert.deepEqual(
      (d.notes ?? []).map((n) => n.id),
      [],
    );
  });
});
