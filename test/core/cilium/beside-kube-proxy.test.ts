// A node where kube-proxy and a Cilium agent with a partial kube-proxy replacement both program
// Services, made of bundled pieces of one cluster: snapshots/nodeport-local-no-endpoint (kube-proxy
// in iptables mode, its dumps; default/web a NodePort 30081 with a Pod on each node, nginx-svc a
// NodePort 30080 with externalTrafficPolicy Local and its Pod on vm-12-7-centos only) with the
// Cilium 1.18.6 agent Pods and cilium-config of snapshots/cilium-stale-backend (the same cluster),
// that config set to kube-proxy-replacement: false with enable-node-port: true (1.18 keeps the
// per-feature keys for "false": pkg/kpr), so the agent serves ClusterIP, NodePort, LoadBalancer and
// externalIPs ahead of kube-proxy's rules. vm-12-11-centos's agent table (db/show frontends) is
// written by hand below as Cilium 1.18 lists it for these objects: each NodePort on the wildcard
// 0.0.0.0, nginx-svc's twice (its external scope with this node's endpoints, none; its internal
// scope "/i" with all, as its traffic policies differ), the ClusterIPs with every endpoint.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { driftAnswer, type NodeDrift } from '../../../src/core/dataplane/drift.js';
import { driftDoc, driftText } from '../../../src/output/drift.js';
import type { Facts, KubeObject } from '../../../src/core/model.js';
import type { TracePacket } from '../../../src/core/dataplane/trace/trace.js';
import { assertMatchesSchema } from '../../support/schema.js';
import { allModes } from '../../support/modes.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { run } from '../checks/builders.js';

const NODE = 'vm-12-11-centos';
const FRONTENDS = [
  'Address                 Type        ServiceName            PortName   Backends                                   Status',
  '0.0.0.0:30080/TCP       NodePort    default/nginx-svc      http                                                  Done',
  '0.0.0.0:30080/TCP/i     NodePort    default/nginx-svc      http       10.244.0.3:80/TCP                          Done',
  '0.0.0.0:30081/TCP       NodePort    default/web            http       10.244.0.5:8080/TCP, 10.244.1.5:8080/TCP   Done',
  '10.1.0.1:443/TCP        ClusterIP   default/kubernetes     https      10.0.12.7:6443/TCP                         Done',
  '10.1.0.10:53/TCP        ClusterIP   kube-system/kube-dns   dns-tcp    10.244.0.2:53/TCP, 10.244.1.2:53/TCP       Done',
  '10.1.0.10:53/UDP        ClusterIP   kube-system/kube-dns   dns        10.244.0.2:53/UDP, 10.244.1.2:53/UDP       Done',
  '10.1.0.10:9153/TCP      ClusterIP   kube-system/kube-dns   metrics    10.244.0.2:9153/TCP, 10.244.1.2:9153/TCP   Done',
  '10.1.190.219:8080/TCP   ClusterIP   default/nginx-svc      http       10.244.0.3:80/TCP                          Done',
  '10.1.23.45:80/TCP       ClusterIP   default/web            http       10.244.0.5:8080/TCP, 10.244.1.5:8080/TCP   Done',
  '',
].join('\n');
/** web's NodePort row, the fault made on the agent's table. */
const WEB_NODE_PORT = /^0\.0\.0\.0:30081\//;
/** kube-proxy's jump to web's node port, and to kube-dns's dns ClusterIP: faults made on its dump. */
const KP_WEB_NODE_PORT = /^-A KUBE-NODEPORTS .*--dport 30081 /;
const KP_DNS_CLUSTER_IP =
  /^-A KUBE-SERVICES -d 10\.1\.0\.10\/32 -p udp .*"kube-system\/kube-dns:dns cluster IP"/;

const name = (o: KubeObject) => (o.metadata as { name: string }).name;
const without = (text: string, line: RegExp | undefined) =>
  line
    ? text
        .split('\n')
        .filter((l) => !line.test(l))
        .join('\n')
    : text;

/** The scenario, the agent's table without the rows `agentLacks` matches and kube-proxy's dump
 * without the lines `kubeProxyLacks` matches; cilium-config's keys as `config` sets them. */
async function scenario(
  o: {
    agentLacks?: RegExp;
    kubeProxyLacks?: RegExp;
    config?: Record<string, string | undefined>;
    image?: string;
    listing?: string;
    /** No listing of the agent's table recorded. */
    noTable?: boolean;
    /** The agent's recorded `status --verbose`. */
    status?: string;
  } = {},
): Promise<Analysis> {
  return new Analysis(await scenarioFacts(o), { code: allModes });
}

async function scenarioFacts(o: Parameters<typeof scenario>[0] = {}): Promise<Facts> {
  const base = await readSnapshot('snapshots/nodeport-local-no-endpoint');
  const cilium = await readSnapshot('snapshots/cilium-stale-backend');
  const agents = cilium.objects
    .filter((x) => x.kind === 'Pod' && name(x).startsWith('cilium-'))
    .map((p) => (o.image ? withImage(p, o.image) : p));
  const config = cilium.objects.find((x) => x.kind === 'ConfigMap' && name(x) === 'cilium-config')!;
  const set = {
    ...(config['data'] as Record<string, string>),
    'kube-proxy-replacement': 'false',
    'enable-node-port': 'true',
    ...o.config,
  };
  // a key set to undefined is a key cilium-config lacks
  const data = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined));
  const own = base.nodes[NODE]!;
  const facts: Facts = {
    ...base,
    objects: [...base.objects, ...agents, { ...config, data }],
    nodes: {
      ...base.nodes,
      [NODE]: {
        ...own,
        'iptables-save': without(own['iptables-save']!, o.kubeProxyLacks),
        ...(o.status ? { 'cilium-status': o.status } : {}),
        ...(o.noTable
          ? {}
          : o.listing
            ? { 'cilium-service-list': o.listing }
            : { 'cilium-frontends': without(FRONTENDS, o.agentLacks) }),
      },
    },
  };
  return facts;
}

function withImage(pod: KubeObject, image: string): KubeObject {
  const spec = pod['spec'] as { containers: { name: string; image: string }[] };
  return { ...pod, spec: { ...spec, containers: spec.containers.map((c) => ({ ...c, image })) } };
}

const said = (fs: { id: string; status: string; drift: { component?: string } }[]) =>
  fs.map((f) => `${f.id} ${f.status} ${f.drift.component ?? '-'}`);

describe('kube-proxy and a partial Cilium replacement on one node: both compared', () => {
  it("is kube-proxy's node (its Pod runs there), with the agent's replacement read", async () => {
    const a = await scenario();
    const state = a.state(NODE);
    assert.equal(state.mode.value, 'iptables');
    assert.deepEqual(state.cilium?.replacement?.handles, [
      'ClusterIP',
      'NodePort',
      'LoadBalancer',
      'externalIPs',
    ]);
  });

  // before: the agent's table was not compared at all where kube-proxy's mode was picked
  it("the agent's table agrees: no drift, and the drift says both were compared", async () => {
    const d = (await scenario()).node(NODE).drift();
    assert.equal(d.mode, 'iptables');
    assert.deepEqual(said(d.findings), []);
    assert.equal(d.drifted, false);
    assert.equal(d.ciliumBeside?.source, `nodes/${NODE}/cilium-frontends.txt`);
    assert.equal(d.ciliumBeside?.servicePorts, 6);
    assert.match(d.ciliumBeside!.replacement, /Cilium handles ClusterIP, NodePort/);
    const text = driftText(driftAnswer('t', [d], []));
    assert.match(text, /compared with what kube-proxy v1\.\d+ would write\n/);
    assert.match(
      text,
      /and \(nodes\/vm-12-11-centos\/cilium-frontends\.txt\) 6 Service ports with what Cilium's agent beside it should hold for the kinds it serves/,
    );
  });

  it("a NodePort frontend missing from the agent's table is Cilium's finding", async () => {
    const d = (await scenario({ agentLacks: WEB_NODE_PORT })).node(NODE).drift();
    assert.deepEqual(said(d.findings), ['cilium-frontend-missing fail cilium']);
    assert.equal(d.findings[0]!.service, 'default/web:http');
    assert.equal(d.drifted, true);
    const text = driftText(driftAnswer('t', [d], []));
    assert.match(text, /ERROR cilium-frontend-missing {2}default\/web:http {2}\(Cilium's agent\)/);
    const doc = driftDoc(driftAnswer('t', [d], []));
    assert.equal(doc.findings[0]!.component, 'cilium');
    assert.equal(doc.nodes[0]!.ciliumBeside?.read, 'table');
    assertMatchesSchema(doc);
  });

  // before: "connections to it are not load-balanced by Cilium on this node", the Cilium-only
  // sentence, where kube-proxy's rules take the packet the agent passes
  it('the missing frontend says which component lacks it and where its packets go', async () => {
    const d = (await scenario({ agentLacks: WEB_NODE_PORT })).node(NODE).drift();
    const f = d.findings[0]!;
    assert.match(
      f.explanation,
      /^Cilium's agent on vm-12-11-centos, beside kube-proxy there \(partial kube-proxy replacement \(false\): Cilium handles ClusterIP, NodePort, LoadBalancer, externalIPs; leaves HostPort to kube-proxy\), holds no NodePort frontend 0\.0\.0\.0:30081\/TCP for default\/web: a packet to it passes the agent untranslated to kube-proxy's rules, which hold it \(KUBE-NODEPORTS -> KUBE-EXT-CDGGSHYLG3RE2FKL\) and translate it/,
    );
    assert.doesNotMatch(f.explanation, /not load-balanced by Cilium/);
    const both = (await scenario({ agentLacks: WEB_NODE_PORT, kubeProxyLacks: KP_WEB_NODE_PORT }))
      .node(NODE)
      .drift();
    const missing = both.findings.find((x) => x.id === 'cilium-frontend-missing')!;
    assert.match(
      missing.explanation,
      /passes the agent untranslated to kube-proxy's rules, which hold no rule for it either: connections to it are not load-balanced on this node/,
    );
  });

  it("kube-proxy's missing ClusterIP rule is kube-proxy's finding; its missing node port, a note", async () => {
    const dns = (await scenario({ kubeProxyLacks: KP_DNS_CLUSTER_IP })).node(NODE).drift();
    assert.ok(dns.findings.length > 0);
    assert.ok(
      dns.findings.every((f) => f.drift.component === 'kube-proxy' && !f.id.startsWith('cilium-')),
      said(dns.findings).join(', '),
    );
    assert.ok(dns.findings.some((f) => f.service === 'kube-system/kube-dns:dns'));
    const np = (await scenario({ kubeProxyLacks: KP_WEB_NODE_PORT })).node(NODE).drift();
    assert.deepEqual(said(np.findings), []);
    const note = np.notes?.find((n) => n.id === 'nodeport-missing');
    assert.equal(note?.drift.component, 'kube-proxy');
    assert.match(note!.explanation, /the agent's own table is compared beside them/);
  });

  it('both faults at once: each finding names its component', async () => {
    const a = await scenario({ agentLacks: WEB_NODE_PORT, kubeProxyLacks: KP_DNS_CLUSTER_IP });
    const d = a.node(NODE).drift();
    const by = new Set(d.findings.map((f) => f.drift.component));
    assert.deepEqual([...by].sort(), ['cilium', 'kube-proxy']);
    for (const f of d.findings)
      assert.equal(f.drift.component === 'cilium', f.id.startsWith('cilium-'), f.id);
  });
});

describe('trace on a node where both program Services: which one translates each packet', () => {
  const tables = (a: Analysis, p: TracePacket) => {
    const r = a.node(NODE).trace(p);
    return { tables: [...new Set(r.outcomes.flatMap((o) => o.rules.map((x) => x.table)))], r };
  };
  const OUTSIDE: TracePacket = {
    src: '203.0.113.9',
    dst: '10.0.12.11',
    dport: 30081,
    protocol: 'tcp',
    fromHost: false,
  };
  const POD: TracePacket = {
    src: '10.244.1.5',
    dst: '10.1.0.10',
    dport: 53,
    protocol: 'udp',
    fromHost: false,
  };

  it("a node port from outside: the agent's, at the device", async () => {
    const { tables: t, r } = tables(await scenario(), OUTSIDE);
    assert.deepEqual(t, ['cilium']);
    assert.match(r.notes[0]!, /^Cilium's agent takes this packet before kube-proxy's rules see it/);
    assert.deepEqual(r.outcomes.map((o) => o.destination).sort(), [
      '10.244.0.5:8080',
      '10.244.1.5:8080',
    ]);
  });

  it("a node port the agent lacks: kube-proxy's rules translate it", async () => {
    const { tables: t, r } = tables(await scenario({ agentLacks: WEB_NODE_PORT }), OUTSIDE);
    assert.ok(!t.includes('cilium') && t.includes('nat'), t.join(', '));
    assert.match(r.notes[0]!, /holds no frontend for 10\.0\.12\.11:30081\/TCP/);
  });

  it("a Pod's ClusterIP packet: the agent's", async () => {
    const { tables: t } = tables(await scenario(), POD);
    assert.deepEqual(t, ['cilium']);
  });

  // Cilium 1.15 "partial" with no per-feature key: the ClusterIP only (kube_proxy_replacement.go)
  it("an agent that leaves node ports: from outside, kube-proxy; a Pod's ClusterIP, the agent", async () => {
    const list = [
      'ID   Frontend              Service Type    Backend',
      '1    10.1.0.10:53/UDP      ClusterIP       1 => 10.244.0.2:53/UDP (active)',
      '                                           2 => 10.244.1.2:53/UDP (active)',
      '',
    ].join('\n');
    const a = await scenario({
      config: { 'kube-proxy-replacement': 'partial', 'enable-node-port': 'false' },
      image: 'quay.io/cilium/cilium:v1.15.19',
      listing: list,
    });
    assert.deepEqual(a.state(NODE).cilium?.replacement?.leaves, [
      'NodePort',
      'LoadBalancer',
      'externalIPs',
      'HostPort',
    ]);
    const outside = tables(a, OUTSIDE);
    assert.ok(!outside.tables.includes('cilium'), outside.tables.join(', '));
    assert.match(outside.r.notes[0]!, /load-balances nothing at the node's device/);
    assert.deepEqual(tables(a, POD).tables, ['cilium']);
  });
});

describe('kube-proxy beside an agent whose half was not read: said, neither passed nor failed', () => {
  const notes = (d: NodeDrift) => (d.notRead ?? []).filter((n) => n.drift.component === 'cilium');

  // before: kube-proxy's rules alone were compared and 'no drift' said, nothing of the agent
  it('a partial replacement whose table was not read: what it serves is said not compared', async () => {
    const a = await scenario({ noTable: true });
    const d = a.node(NODE).drift();
    assert.equal(d.ciliumBeside, undefined);
    const [n, ...more] = notes(d);
    assert.equal(more.length, 0);
    assert.equal(n!.id, 'table-not-captured');
    assert.match(
      n!.explanation,
      /serves ClusterIP, NodePort, LoadBalancer, externalIPs ahead of kube-proxy's rules .*its Service table \(cilium-dbg service list, db\/show frontends or bpf lb list\) was not read: only kube-proxy's rules were compared/,
    );
    const text = driftText(driftAnswer('t', [d], []));
    assert.match(text, /no drift in what was read/);
    assert.doesNotMatch(text, /Cilium's agent holds every frontend/);
  });

  it('a table recorded that does not read: its failure is why', async () => {
    const d = (await scenario({ listing: 'ID   Frontend\n1    not a frontend\n' }))
      .node(NODE)
      .drift();
    assert.match(notes(d)[0]?.explanation ?? '', /was not read: /);
  });

  it('its kube-proxy-replacement setting not read (no status, cilium-config without it): whether it serves anything is not known', async () => {
    const a = await scenario({
      config: { 'kube-proxy-replacement': undefined, 'enable-node-port': undefined },
    });
    assert.equal(a.state(NODE).cilium?.replacement, undefined);
    const d = a.node(NODE).drift();
    const [n] = notes(d);
    assert.match(
      n!.explanation,
      /its kube-proxy-replacement setting was not read \(Cilium's default: off\), so whether it serves any Service kind ahead of kube-proxy's rules is not known/,
    );
    assert.ok(n!.evidence.some((e) => e.kind === 'not-observed'));
    // the walk says it may not be the packet's path
    const r = a.node(NODE).trace({
      src: '10.244.1.5',
      dst: '10.1.0.10',
      dport: 53,
      protocol: 'udp',
      fromHost: false,
    });
    assert.match(
      r.notes[0]!,
      /this walk through kube-proxy's rules is the packet's path only where the agent does not take it first/,
    );
  });

  it('a replacement read as off (cilium-config kube-proxy-replacement: false, NodePort off): nothing to say', async () => {
    const d = (await scenario({ config: { 'enable-node-port': 'false' }, noTable: true }))
      .node(NODE)
      .drift();
    assert.deepEqual(notes(d), []);
  });

  it("the Rules step does not pass the node on kube-proxy's rules alone", async () => {
    const all = run(rulesCheck, await scenarioFacts({ noTable: true }));
    const match = all.find((f) => f.id === 'rules-match');
    // the other node (whose agent's table was not read either) is not matched
    assert.equal(match, undefined, match?.explanation);
    const found = all.filter((x) => x.node === NODE || x.nodes?.includes(NODE));
    const skip = found.find((f) => f.id === 'rules-not-observed');
    assert.equal(skip?.status, 'skip');
    assert.match(skip!.explanation, /beside kube-proxy was not compared \(it serves ClusterIP/);
  });
});
