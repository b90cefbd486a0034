// A Service port changed in the API, the node's rules not: kube-proxy names a Service port's
// chains by its ServicePortName (no port in it), so the rules for the port it replaced still lead
// into them. Drift must name those rules as what the node does, not say the chains are unused.
//
// IP conventions (kube-proxy's proxier_test.go): Pod IPs 10.180.0.0/16 in the cluster CIDR
// 10.0.0.0/8, ClusterIPs 172.30.0.0/16, node test-node 192.168.0.2 (Pods 10.180.0.0/24), load
// balancer 5.6.7.8.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import { expectedRules, expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from '../support/builders.js';
import { allModes } from '../support/modes.js';

const NODE = 'test-node';
const LB = 'ns1/lb:p80';
const SVC = kubeProxyChain('KUBE-SVC', LB, 'tcp');

/** The cluster with ns1/lb at `port` (node port `nodePort`), its cluster IP `clusterIP`. */
const viewAt = (port: number, nodePort: number, clusterIP = '172.30.0.43') =>
  clusterView([
    aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
    aKubeProxyConfig('clusterCIDR: 10.0.0.0/8\n'),
    aService('ns1/lb', {
      type: 'LoadBalancer',
      clusterIP,
      ports: [['p80', port, 'TCP', nodePort]],
      loadBalancerIPs: ['5.6.7.8'],
    }),
    anEndpointSlice('ns1/lb', ['10.180.0.5']),
  ]);

/** The rules kube-proxy wrote for port 80 (node port 3002), compared with the API's `view`. */
function driftAgainst(view: ReturnType<typeof viewAt>) {
  const before = expectedSave(expectedRules(viewAt(80, 3002), NODE, { randomFully: true }));
  const rs = parseIptables(before, { file: 'test' });
  const d = nodeDrift({
    node: NODE,
    source: 'test',
    expected: expectedRules(view, NODE, optionsFromDump(rs)),
    actual: rs,
    view,
  });
  return { d };
}

describe('drift after a Service port change', () => {
  it("names the cluster IP rule for the port it replaced, which still jumps to the port's chain", () => {
    const { d } = driftAgainst(viewAt(8080, 3002));
    const f = d.findings.find((x) => x.title.startsWith('the cluster IP rule'))!;
    assert.equal(f.id, 'service-rules-missing');
    assert.equal(
      f.title,
      'the cluster IP rule is for 172.30.0.43:80/tcp, not 172.30.0.43:8080/tcp',
    );
    // no dump line in the words: nodes with the same stale port say the same, one finding
    assert.match(f.explanation, new RegExp(`sends 172\\.30\\.0\\.43:80/tcp to ${SVC}`));
    assert.doesNotMatch(f.explanation, /nothing jumps to it/);
    // the rule that jumps there is what the node has: first among the lines shown
    assert.match(
      f.drift.actual[0]!,
      new RegExp(`^-t nat -A KUBE-SERVICES -d 172\\.30\\.0\\.43/32 .*--dport 80 -j ${SVC}$`),
    );
    assert.ok(f.drift.expected.some((l) => l.includes('--dport 8080 -j ' + SVC)));
    assert.match(f.explanation, /\(a port change kube-proxy has not applied: .*hold no port/);
  });

  it('says an address change, not a port change, where the Service was created again with a new cluster IP', () => {
    const { d } = driftAgainst(viewAt(80, 3002, '172.30.0.99'));
    const f = d.findings.find((x) => x.title.startsWith('the cluster IP rule'))!;
    assert.equal(f.title, 'the cluster IP rule is for 172.30.0.43:80/tcp, not 172.30.0.99:80/tcp');
    assert.match(
      f.explanation,
      /\(an address change kube-proxy has not applied: .*hold no address: a Service deleted and created again, which gets a new cluster IP/,
    );
    assert.doesNotMatch(f.explanation, /port change/);
    const both = driftAgainst(viewAt(8080, 3002, '172.30.0.99')).d.findings.find((x) =>
      x.title.startsWith('the cluster IP rule'),
    )!;
    assert.match(both.explanation, /\(an address and port change kube-proxy has not applied/);
  });

  it('does not say nothing jumps to a chain its external chain jumps to', () => {
    const view = viewAt(80, 3002);
    const rs = parseIptables(
      expectedSave(expectedRules(view, NODE, { randomFully: true }))
        .split('\n')
        .filter((l) => !l.includes(`"${LB} cluster IP" -m tcp --dport 80 -j ${SVC}`))
        .join('\n'),
    );
    const d = nodeDrift({
      node: NODE,
      source: 'test',
      expected: expectedRules(view, NODE, optionsFromDump(rs)),
      actual: rs,
      view,
    });
    const f = d.findings.find((x) => x.id === 'service-rules-missing')!;
    assert.match(f.explanation, /kube-proxy on this node has not written this Service\.$/);
  });

  it('names the load-balancer IP rule and the node port rule that lead there from another port', () => {
    const { d } = driftAgainst(viewAt(8080, 3005));
    const lb = d.findings.find((x) => x.title.startsWith('no rule for the load-balancer IP'))!;
    assert.match(
      lb.explanation,
      /; it sends 5\.6\.7\.8:80\/tcp into the Service port's chains instead/,
    );
    assert.ok(lb.drift.actual.some((l) => /-d 5\.6\.7\.8\/32 .*--dport 80 /.test(l)));
    const np = d.findings.find((x) => x.id === 'nodeport-missing')!;
    assert.match(
      np.explanation,
      /; it sends node port 3002\/tcp into the Service port's chains instead/,
    );
    assert.ok(np.drift.actual.some((l) => /-A KUBE-NODEPORTS .*--dport 3002 /.test(l)));
  });
});

describe('a port change on every node', () => {
  it('is one finding for the nodes alike (the dump line is in the evidence, not the words)', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const svc = facts.objects.find(
      (o) => o.kind === 'Service' && o.metadata?.name === 'nginx-svc',
    ) as unknown as { spec: { ports: { port: number }[] } };
    svc.spec.ports[0]!.port = 9090;
    const r = diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const stale = r.steps
      .find((s) => s.id === 'rules')!
      .findings.filter((f) => f.id === 'service-rules-missing');
    assert.deepEqual(
      stale.map((f) => f.nodes),
      [['vm-12-11-centos', 'vm-12-7-centos']],
    );
    assert.match(stale[0]!.title, /the cluster IP rule is for 10\.1\.190\.219:8080\/tcp/);
  });
});
