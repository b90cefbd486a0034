// A node whose Cilium agent does a full kube-proxy replacement while kube-proxy's Pod runs there
// too (or its rules were left): the agent's socket LB (forced on by the replacement: 1.20's
// pkg/kpr NewKPRConfig) and its programs at the devices take each packet to a frontend it holds
// before netfilter, so the agent's table is the node's dataplane and kube-proxy's state is said
// with cilium-kube-proxy-rules. Made of bundled pieces of one cluster:
// snapshots/nodeport-local-no-endpoint (kube-proxy's Pods and iptables dumps) with the Cilium
// 1.18.6 agent Pods, cilium-config and vm-12-11-centos's status (KubeProxyReplacement: True) of
// snapshots/cilium-stale-backend; the agent's table (db/show frontends) is written by hand as
// Cilium 1.18 lists it for these objects, as in beside-kube-proxy.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { driftAnswer } from '../../../src/core/dataplane/drift.js';
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
const WEB_NODE_PORT = /^0\.0\.0\.0:30081\//;
/** kube-proxy's entry jumps from nat PREROUTING and OUTPUT: without them nothing enters its rules. */
const KP_HOOKS = /^-A (PREROUTING|OUTPUT) .*-j KUBE-SERVICES/;

const name = (o: KubeObject) => (o.metadata as { name: string }).name;
const without = (text: string, line: RegExp | undefined) =>
  line
    ? text
        .split('\n')
        .filter((l) => !line.test(l))
        .join('\n')
    : text;

async function scenario(
  o: {
    /** Where the replacement is read: the agent's recorded status, or cilium-config alone. */
    from?: 'status' | 'config';
    /** No kube-proxy Pod in the API: its rules are left from before. */
    noKubeProxyPod?: boolean;
    agentLacks?: RegExp;
    kubeProxyLacks?: RegExp;
  } = {},
): Promise<Analysis> {
  return new Analysis(await scenarioFacts(o), { code: allModes });
}

async function scenarioFacts(o: Parameters<typeof scenario>[0] = {}): Promise<Facts> {
  const base = await readSnapshot('snapshots/nodeport-local-no-endpoint');
  const cilium = await readSnapshot('snapshots/cilium-stale-backend');
  const agents = cilium.objects.filter((x) => x.kind === 'Pod' && name(x).startsWith('cilium-'));
  const config = cilium.objects.find((x) => x.kind === 'ConfigMap' && name(x) === 'cilium-config')!;
  const data = { ...(config['data'] as Record<string, string>), 'kube-proxy-replacement': 'true' };
  const objects = base.objects.filter(
    (x) => !(o.noKubeProxyPod && x.kind === 'Pod' && name(x).startsWith('kube-proxy-')),
  );
  const own = base.nodes[NODE]!;
  return {
    ...base,
    objects: [...objects, ...agents, { ...config, data }],
    nodes: {
      ...base.nodes,
      [NODE]: {
        ...own,
        'iptables-save': without(own['iptables-save']!, o.kubeProxyLacks),
        ...((o.from ?? 'status') === 'status'
          ? { 'cilium-status': cilium.nodes[NODE]!['cilium-status']! }
          : {}),
        'cilium-frontends': without(FRONTENDS, o.agentLacks),
      },
    },
  };
}

const said = (fs: { id: string; status: string; info?: boolean }[]) =>
  fs.map((f) => `${f.id} ${f.info ? 'info' : f.status}`);

describe("a full Cilium replacement beside kube-proxy's Pod: the agent is the node's dataplane", () => {
  // before: the kube-proxy Pod kept the node in iptables mode and only its rules were compared
  for (const from of ['status', 'config'] as const)
    it(`mode cilium, saying kube-proxy's Pod runs there after the agent (replacement from its ${from})`, async () => {
      const state = (await scenario({ from })).state(NODE);
      assert.equal(state.mode.value, 'cilium');
      assert.match(
        state.mode.evidence.text,
        /^vm-12-11-centos: cilium \(kube-proxy replacement, from .*; kube-proxy's Pod kube-system\/kube-proxy-n2jtl runs there too, after the agent\)$/,
      );
    });

  it("the agent's table is compared; kube-proxy's rules are said, hooked: a warning", async () => {
    const d = (await scenario()).node(NODE).drift();
    assert.equal(d.mode, 'cilium');
    assert.equal(d.source, `nodes/${NODE}/cilium-frontends.txt`);
    assert.deepEqual(said(d.findings), ['cilium-kube-proxy-rules warn']);
    const f = d.findings[0]!;
    assert.match(
      f.title,
      /^kube-proxy's iptables-mode rules beside Cilium's kube-proxy replacement: 6 Service ports of 4 Services$/,
    );
    assert.match(
      f.explanation,
      /runs a full kube-proxy replacement on vm-12-11-centos \(from .*\), yet the node holds kube-proxy's iptables-mode rules .* in nodes\/vm-12-11-centos\/iptables-save\.txt, and kube-proxy's Pod kube-system\/kube-proxy-n2jtl runs there and keeps them written\. .*They are hooked \(2 entries at nat prerouting and output\): they translate only what the agent passes/,
    );
    // the hooks, as the dump holds them, are its evidence
    assert.ok(
      f.drift.actual.some((l) => /-A PREROUTING .*-j KUBE-SERVICES/.test(l)),
      f.drift.actual.join('\n'),
    );
    assert.match(f.advice ?? '', /delete kube-proxy's DaemonSet/);
    const doc = driftDoc(driftAnswer('t', [d], []));
    assert.equal(doc.findings[0]!.id, 'cilium-kube-proxy-rules');
    assertMatchesSchema(doc);
  });

  it("a frontend the agent lacks is the agent's error, beside kube-proxy's warning", async () => {
    const d = (await scenario({ agentLacks: WEB_NODE_PORT })).node(NODE).drift();
    assert.deepEqual(said(d.findings).sort(), [
      'cilium-frontend-missing fail',
      'cilium-kube-proxy-rules warn',
    ]);
    assert.equal(d.drifted, true);
    assert.match(driftText(driftAnswer('t', [d], [])), /cilium-kube-proxy-rules/);
  });

  it('rules nothing enters: information only', async () => {
    const d = (await scenario({ kubeProxyLacks: KP_HOOKS })).node(NODE).drift();
    assert.deepEqual(said(d.findings), ['cilium-kube-proxy-rules info']);
    assert.match(d.findings[0]!.explanation, /Nothing enters them/);
    assert.equal(d.drifted, false);
  });

  it('no kube-proxy Pod, its rules left: said left, its cleanup next', async () => {
    const a = await scenario({ noKubeProxyPod: true });
    assert.equal(a.state(NODE).mode.value, 'cilium');
    const f = a
      .node(NODE)
      .drift()
      .findings.find((x) => x.id === 'cilium-kube-proxy-rules');
    assert.match(
      f?.explanation ?? '',
      /no kube-proxy Pod runs there: they were left from before the replacement/,
    );
    assert.deepEqual(f!.next?.argv.slice(-2), ['kube-proxy', '--cleanup']);
  });

  it("the Rules step carries the warning, never rules-match on kube-proxy's rules", async () => {
    const all = run(rulesCheck, await scenarioFacts());
    const found = all.filter((x) => x.node === NODE || x.nodes?.includes(NODE));
    assert.ok(
      found.some((x) => x.id === 'cilium-kube-proxy-rules' && x.status === 'warn'),
      found.map((x) => `${x.id} ${x.status}`).join(', '),
    );
  });
});

describe("trace beside kube-proxy's rules: the agent first, kube-proxy's rules for what it passes", () => {
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

  it("a Pod's ClusterIP packet: the agent's", async () => {
    const { tables: t, r } = tables(await scenario(), POD);
    assert.deepEqual(t, ['cilium']);
    assert.match(
      r.notes[0]!,
      /^Cilium's agent takes this packet before kube-proxy's rules see it \(full kube-proxy replacement\)/,
    );
  });

  // before: the agent's walk said the packet is not load-balanced, though kube-proxy's rules DNAT it
  it("a node port the agent lacks, from outside: kube-proxy's rules translate it", async () => {
    const { tables: t, r } = tables(await scenario({ agentLacks: WEB_NODE_PORT }), OUTSIDE);
    assert.ok(!t.includes('cilium') && t.includes('nat'), t.join(', '));
    assert.match(r.notes[0]!, /holds no frontend for 10\.0\.12\.11:30081\/TCP/);
    assert.deepEqual(r.outcomes.map((o) => o.destination).sort(), [
      '10.244.0.5:8080',
      '10.244.1.5:8080',
    ]);
  });
});
