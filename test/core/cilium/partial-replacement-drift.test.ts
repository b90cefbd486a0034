// A partial kube-proxy replacement, end to end for NodePort: on a Cilium node (no kube-proxy Pod)
// the agent is expected to hold the frontends of the kinds it serves and no others, and the kinds
// it leaves to kube-proxy are said to have nothing known to serve them; on a node with a
// kube-proxy Pod beside the agent, kube-proxy's missing node port rule is no drift where the
// agent serves node ports, and still one where it leaves them to kube-proxy.
//
// IP conventions: web is a NodePort Service (ClusterIP 10.96.0.50, node port 30080), its Pods
// 10.244.0.5 (node-a) and 10.244.1.6 (node-b); kube-dns 10.96.0.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import { aCiliumAgent } from '../../support/builders.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import {
  aService,
  ciliumCluster,
  dumpFor,
  facts,
  kubeProxy,
  replace,
  run,
} from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const NODE_PORT = aService({
  spec: {
    type: 'NodePort',
    ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }],
  },
});
const NP = { 'enable-node-port': 'true' };

/** The cluster with web a NodePort Service and agents of 1.14.19 set by `config`. */
const cluster = (config: Record<string, string>) =>
  ['node-a', 'node-b'].reduce(
    (objects, node) =>
      replace(
        objects,
        'Pod',
        `cilium-${node}`,
        aCiliumAgent(node, 'quay.io/cilium/cilium:v1.14.19'),
      ),
    replace(
      ciliumCluster({ 'kube-proxy-replacement': 'partial', ...config }),
      'Service',
      'web',
      NODE_PORT,
    ),
  );

const HEAD = 'ID   Frontend              Service Type    Backend';
const BACKENDS =
  '1 => 10.244.0.5:8080/TCP (active)\n                                           2 => 10.244.1.6:8080/TCP (active)';
/** `cilium service list` with web's ClusterIP, and its NodePort where `nodePort`. */
const serviceList = (nodePort: boolean) =>
  [
    HEAD,
    `1    10.96.0.50:80/TCP     ClusterIP       ${BACKENDS}`,
    '2    10.96.0.10:53/UDP     ClusterIP       1 => 10.244.0.2:53/UDP (active)',
    ...(nodePort ? [`3    0.0.0.0:30080/TCP     NodePort        ${BACKENDS}`] : []),
    '',
  ].join('\n');

const ciliumNode = (config: Record<string, string>, nodePort: boolean) =>
  new Analysis(
    facts(cluster(config), { 'node-b': { 'cilium-service-list': serviceList(nodePort) } }),
    { code: allModes },
  );
const ids = (fs: { id: string; status: string }[]) => fs.map((f) => `${f.id} ${f.status}`);

describe('a partial replacement on a Cilium node (no kube-proxy Pod)', () => {
  // before: NodePort was read as kube-proxy replacement off (mode iptables, assumed)
  it('NodePort left to kube-proxy: no NodePort frontend expected, nothing known serves it', () => {
    const a = ciliumNode({}, false);
    assert.equal(a.state('node-b').mode.value, 'cilium');
    const d = a.node('node-b').drift();
    assert.deepEqual(ids(d.findings), ['cilium-left-to-kube-proxy warn']);
    const f = d.findings[0]!;
    assert.equal(f.service, 'default/web:http');
    assert.match(
      f.title,
      /^default\/web:http's NodePort node port 30080\/TCP is left to kube-proxy, which does not run on node-b$/,
    );
    assert.deepEqual(
      f.evidence.map((e) => e.kind),
      ['read', 'read'],
    );
    assert.match(
      f.evidence[0]!.text,
      /leaves NodePort, LoadBalancer, externalIPs, HostPort to kube-proxy/,
    );
    // no NodePort frontend is expected of the agent
    assert.ok(
      !a
        .node('node-b')
        .ciliumExpected()!
        .some((x) => x.type === 'NodePort'),
    );
  });

  it('the Rules step warns of it on node-b and passes nothing of web there', () => {
    const f = facts(cluster({}), { 'node-b': { 'cilium-service-list': serviceList(false) } });
    const found = run(rulesCheck, f).filter(
      (x) => x.node === 'node-b' || x.nodes?.includes('node-b'),
    );
    const said = ids(found);
    assert.ok(said.includes('cilium-left-to-kube-proxy warn'), said.join(', '));
    assert.ok(!said.some((i) => i.startsWith('rules-match')), said.join(', '));
  });

  it('NodePort served (enable-node-port): its frontend expected, and missing where not listed', () => {
    assert.deepEqual(ids(ciliumNode(NP, true).node('node-b').drift().findings), []);
    const missing = ids(ciliumNode(NP, false).node('node-b').drift().findings);
    assert.deepEqual(missing, ['cilium-frontend-missing fail']);
  });
});

describe('a partial replacement beside a kube-proxy Pod', () => {
  /** node-b's drift: kube-proxy's dump there without web's node port rule. */
  const drift = (config: Record<string, string>) => {
    const objects = [...cluster(config), ...kubeProxy()];
    const dump = dumpFor(objects, 'node-b')
      .split('\n')
      .filter((l) => !/-A KUBE-NODEPORTS .*--dport 30080/.test(l))
      .join('\n');
    const a = new Analysis(facts(objects, { 'node-b': { 'iptables-save': dump } }), {
      code: allModes,
    });
    assert.equal(a.state('node-b').mode.value, 'iptables');
    return a.node('node-b').drift();
  };

  // before: nodeport-missing failed the node, though Cilium's agent serves its node ports
  it("the agent serves node ports: kube-proxy's missing rule is a note, no drift", () => {
    const d = drift(NP);
    assert.deepEqual(ids(d.findings), []);
    assert.equal(d.drifted, false);
    const note = d.notes?.find((n) => n.id === 'nodeport-missing');
    assert.match(
      note?.explanation ?? '',
      /Cilium's agent there serves node ports ahead of kube-proxy's rules/,
    );
    assert.ok(note!.evidence.some((e) => e.kind === 'read' && /from|ConfigMap/.test(e.text)));
  });

  it("the agent leaves node ports to kube-proxy: kube-proxy's missing rule is drift", () => {
    const d = drift({});
    assert.deepEqual(ids(d.findings), ['nodeport-missing fail']);
    assert.equal(d.drifted, true);
  });
});

describe('expect on a partial replacement', () => {
  it('says what the agent leaves to kube-proxy, with its source', () => {
    const a = ciliumNode({}, false);
    const agent = a.state('node-b').cilium!;
    const text = expectedCiliumText(a.node('node-b').ciliumExpected()!, [], {
      node: 'node-b',
      agent: 'kube-system/cilium-node-b',
      settings: '',
      replacement: agent.replacement!,
    });
    assert.match(
      text,
      /# note: partial kube-proxy replacement \(partial\): Cilium handles ClusterIP; leaves NodePort, LoadBalancer, externalIPs, HostPort to kube-proxy \(ConfigMap kube-system\/cilium-config kube-proxy-replacement\): frontends of the kinds it leaves are kube-proxy's, none in the tables below/,
    );
    assert.ok(!/30080/.test(text), text);
  });
});
