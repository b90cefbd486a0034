// An agent refusing cilium-config as read (both acceleration keys set, to different values), not
// ready, no status answered, its listing read: it ran on an earlier configuration, so whether it
// replaces kube-proxy is not known, whatever the refused config's kube-proxy-replacement says.
// The frontends only the replacement makes (NodePort; before 1.19 LoadBalancer and ExternalIPs
// too) are compared where the agent lists them, and not compared, said, where it does not; expect
// says them apart; the mode line says why.
//
// IP conventions: node-b 192.0.2.11; web is a NodePort Service (ClusterIP 10.96.0.50, node port
// 30080), its Pods 10.244.0.5 and 10.244.1.6; 10.244.1.99 is a Pod that is gone.
import assert from 'node:assert/strict';
import { settingsSaid } from '../../../src/core/dataplane/cilium/agent/provenance.js';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { expectedCiliumText } from '../../../src/core/dataplane/cilium/expected/render.js';
import { aService, ciliumCluster, facts, replace } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const REFUSED = { 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'disabled' };
const BACKENDS = '10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP';
const HEAD =
  'Address            Type       ServiceName  PortName  Backends                                  Status';
const CLUSTER_IP = `10.96.0.50:80/TCP  ClusterIP  default/web  http      ${BACKENDS}  Done`;
/** db/show frontends with web's ClusterIP, and its NodePort backed by `nodePort` where given. */
const frontends = (nodePort?: string) =>
  [
    HEAD,
    CLUSTER_IP,
    '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns  10.244.0.2:53/UDP  Done',
    ...(nodePort ? [`0.0.0.0:30080/TCP  NodePort   default/web  http      ${nodePort}  Done`] : []),
    '',
  ].join('\n');
const NODE_PORT = aService({
  spec: {
    type: 'NodePort',
    ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }],
  },
});
/** node-b's analysis: cilium-config's kube-proxy-replacement `kpr`, refused where `refused`. */
const nodeB = (kpr: string, listing: string, refused = true) =>
  new Analysis(
    facts(
      replace(
        ciliumCluster({ ...(refused ? REFUSED : {}), 'kube-proxy-replacement': kpr }),
        'Service',
        'web',
        NODE_PORT,
      ),
      { 'node-b': { 'cilium-frontends': listing } },
    ),
    { code: allModes },
  );
const serious = (a: Analysis) =>
  a
    .node('node-b')
    .drift()
    .findings.filter((f) => !f.info)
    .map((f) => f.id);
const NOT_COMPARED = 'table-not-captured';

describe('drift on an agent refusing cilium-config: kube-proxy replacement not known', () => {
  it('a NodePort frontend it does not list is not compared, said, never missing', () => {
    // taken: the config's replacement on, the NodePort is missing
    assert.deepEqual(serious(nodeB('true', frontends(), false)), ['cilium-frontend-missing']);
    const d = nodeB('true', frontends()).node('node-b').drift();
    // before: cilium-frontend-missing, from the refused config's kube-proxy-replacement
    assert.deepEqual(
      d.findings.filter((f) => !f.info).map((f) => f.id),
      [],
    );
    const note = d.notRead?.find(
      (n) => n.id === NOT_COMPARED && /kube-proxy replacement/.test(n.title),
    );
    assert.ok(note, JSON.stringify(d.notRead));
    assert.match(
      note.explanation,
      /lists none of 0\.0\.0\.0:30080\/TCP: it makes them only with kube-proxy replacement, which is not known: cilium-config as read is refused/,
    );
  });

  it('a NodePort frontend it lists is what it holds: its backends compared', () => {
    // before: with the refused config's replacement off, "frontend ... not in the objects"
    assert.deepEqual(serious(nodeB('false', frontends(BACKENDS))), []);
    assert.deepEqual(
      serious(nodeB('false', frontends('10.244.0.5:8080/TCP, 10.244.1.99:8080/TCP'))),
      ['cilium-backend-stale', 'cilium-backend-missing'],
    );
  });
});

describe('expect and the mode line on an agent refusing cilium-config', () => {
  const expectText = (a: Analysis) => {
    const agent = a.state('node-b').cilium!;
    const node = a.node('node-b');
    return expectedCiliumText(node.ciliumExpected() ?? [], node.ciliumMaps() ?? [], {
      node: 'node-b',
      agent: 'kube-system/cilium-node-b',
      settings: settingsSaid(agent),
      ...(agent.refused ? { refused: agent.refused } : {}),
      notKnown: agent.settings.notKnown,
    });
  };

  it('expect writes the ClusterIP and says the NodePort apart, with why', () => {
    const taken = expectText(nodeB('true', frontends(), false));
    assert.match(taken, /^0\.0\.0\.0:30080\/TCP +NodePort +default\/web/m);
    const text = expectText(nodeB('true', frontends()));
    // before: the NodePort row, as the refused config's replacement makes it
    assert.doesNotMatch(text, /^0\.0\.0\.0:30080/m);
    assert.match(text, /^10\.96\.0\.50:80\/TCP +ClusterIP +default\/web/m);
    assert.match(
      text,
      /^# note: kube-proxy replacement not known: cilium-config as read is refused, .*; the agent makes these only with it, so they are not in the tables below: 0\.0\.0\.0:30080\/TCP NodePort default\/web -> 10\.244\.0\.5:8080\/TCP, 10\.244\.1\.6:8080\/TCP$/m,
    );
  });

  it('the mode line says the replacement not known, and why', () => {
    assert.equal(
      nodeB('true', frontends(), false).state('node-b').mode.evidence.text,
      'node-b: cilium (kube-proxy replacement, from ConfigMap kube-system/cilium-config kube-proxy-replacement)',
    );
    const mode = nodeB('false', frontends()).state('node-b').mode;
    // before: the refused config's "false" made it kube-proxy's iptables, assumed
    assert.equal(mode.value, 'cilium');
    assert.match(
      mode.evidence.text,
      /^node-b: cilium \(its agent kube-system\/cilium-node-b and no kube-proxy Pod there; kube-proxy replacement not known: cilium-config as read is refused/,
    );
  });
});
