// What kdebug did not observe, it neither passes nor blames: the demo snapshot with one source
// of evidence blinded at a time (a probe tool missing on every node).
import { dualStackKubeProxy } from '../../support/dual-stack-release.js';
import { severityOf } from '../../../src/core/dataplane/drift.js';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { diagnose, probePlan } from '../../../src/core/diagnose.js';
import { commandStem } from '../../../src/core/nodes/commands.js';
import { shownStepStatus, type Facts, type Report } from '../../../src/core/model.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { expectedSave } from '../../../src/core/dataplane/kube-proxy/expected.js';
import { reportText } from '../../../src/output/text.js';
import { allModes } from '../../support/modes.js';

/** One node's drift, as `kdebug drift` computes it (a fresh analysis: the tests edit the facts). */
const driftOf = (facts: Facts, node: string) =>
  new Analysis(facts, { code: allModes }).node(node).drift();

const TARGET = { namespace: 'default', service: 'nginx-svc' };
const NO_TOOL = {
  'tcp-connect': 'neither nc nor bash on this node\nkdebug-probe tcp-connect tool=none exit=127\n',
  'icmp-echo': 'ping: command not found\nkdebug-probe icmp-echo tool=none exit=127\n',
  'dns-lookup':
    'neither dig nor nslookup on this node\nkdebug-probe dns-lookup tool=none exit=127\n',
};

/** The demo's facts with every recorded probe of one kind replaced by "the tool is missing". */
async function blinded(kind: keyof typeof NO_TOOL): Promise<Facts> {
  const facts = await readSnapshot('snapshots/nginx-svc');
  for (const outputs of Object.values(facts.nodes))
    for (const stem of Object.keys(outputs))
      if (stem.startsWith(`${kind}_`)) outputs[stem] = NO_TOOL[kind];
  return facts;
}
const step = (r: Report, id: string) => r.steps.find((s) => s.id === id)!;
const ids = (r: Report, id: string) => step(r, id).findings.map((f) => `${f.id}:${f.status}`);

describe('blinded evidence is not observed, never a pass or a fail', () => {
  it('no nc or bash: neither the ClusterIP nor the endpoints pass or fail', async () => {
    const r = diagnose(await blinded('tcp-connect'), TARGET, { code: allModes });
    const reach = ids(r, 'reachability');
    assert.ok(
      !reach.some((x) => /^(clusterip|endpoints?)-(reachable|unreachable)/.test(x)),
      reach.join(' '),
    );
    assert.ok(reach.includes('probe-not-observed:skip'), reach.join(' '));
    assert.equal(step(r, 'reachability').status, 'skip');
    const f = step(r, 'reachability').findings.find((x) => x.id === 'probe-not-observed')!;
    assert.match(
      f.explanation,
      /neither nc nor bash on this node.*kdebug.s default debug image does/,
    );
    assert.deepEqual(r.unobserved, [
      'Reachability: ClusterIP 10.1.190.219:8080: not observed on vm-12-11-centos and vm-12-7-centos',
      'Reachability: the endpoints: not observed on vm-12-11-centos and vm-12-7-centos',
    ]);
  });

  it('no ping: the ping explanation does not claim ping got no answer', async () => {
    const r = diagnose(await blinded('icmp-echo'), TARGET, { code: allModes });
    const ping = step(r, 'reachability').findings.find((f) => f.id === 'ping-clusterip-explained')!;
    assert.doesNotMatch(ping.title, /gets no answer|answers/);
    assert.ok(!ping.evidence.map(evidenceText).some((e) => /ping .*no reply/.test(e)));
  });

  it('no dig or nslookup: no wrong DNS answer, the lookup is not observed', async () => {
    const r = diagnose(await blinded('dns-lookup'), TARGET, { code: allModes });
    const dns = ids(r, 'dns');
    assert.ok(!dns.some((x) => x.startsWith('dns-answer-')), dns.join(' '));
    assert.ok(dns.includes('dns-lookup-not-observed:skip'), dns.join(' '));
    assert.notEqual(r.status, 'fail');
    assert.ok(
      r.unobserved?.some((u) => u.startsWith('DNS: lookup of nginx-svc.default.svc.cluster.local')),
    );
  });

  it('/metrics without the sync metrics: kube-proxy-synced is not observed, not passed', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.nodes['vm-12-7-centos']!['proxy-metrics'] = '# HELP go_goroutines\ngo_goroutines 42\n';
    facts.nodes['vm-12-11-centos']!['proxy-metrics'] =
      'kubeproxy_sync_proxy_rules_last_timestamp_seconds 1.7e9\nkubeproxy_sync_proxy_rules_last_queued_timestamp_seconds 1.7e9\n';
    const r = diagnose(facts, TARGET, { code: allModes });
    const kp = ids(r, 'kube-proxy');
    assert.ok(kp.includes('kube-proxy-sync-not-observed:skip'), kp.join(' '));
    assert.ok(kp.includes('kube-proxy-synced:pass'), 'the node that has the metrics is observed');
    const f = step(r, 'kube-proxy').findings.find((x) => x.id === 'kube-proxy-sync-not-observed')!;
    assert.equal(f.node, 'vm-12-7-centos');
  });

  it('the demo as recorded has nothing unobserved', async () => {
    const r = diagnose(await readSnapshot('snapshots/nginx-svc'), TARGET, { code: allModes });
    assert.deepEqual(r.unobserved ?? [], []);
  });
});

describe('a table that was not captured', () => {
  it('a nat-only dump: filter rules are not compared, and drift says so, not "missing"', async () => {
    const facts = await readSnapshot('snapshots/selector-typo');
    for (const outputs of Object.values(facts.nodes)) {
      const save = outputs['iptables-save']!;
      outputs['iptables-save'] = save.slice(
        save.indexOf('*nat'),
        save.indexOf('COMMIT', save.indexOf('*nat')) + 7,
      );
    }
    const whole = driftOf(await readSnapshot('snapshots/selector-typo'), 'vm-12-7-centos');
    assert.ok(whole.findings.length === 0 || whole.findings.every((f) => severityOf(f) === 'info'));
    const d = driftOf(facts, 'vm-12-7-centos');
    assert.deepEqual(d.tables, ['nat']);
    assert.deepEqual(
      d.findings.filter((f) => severityOf(f) !== 'info').map((f) => f.id),
      [],
    );
    const note = d.notRead!.find((n) => n.id === 'table-not-captured')!;
    assert.match(
      note.explanation,
      /no filter table .* not compared; not checked: no REJECT rule for 10\.1\.190\.219:8080\/tcp/,
    );
    const r = diagnose(facts, TARGET, { code: allModes });
    assert.ok(
      !step(r, 'rules').findings.some(
        (f) => f.id === 'no-endpoints-reject-missing' || f.id === 'entry-jump-missing',
      ),
    );
  });
});

describe('nodes without data', () => {
  it("a snapshot without one node's dump names that node in the Rules step", async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    delete facts.nodes['vm-12-11-centos']!['iptables-save'];
    const r = diagnose(facts, TARGET, { code: allModes });
    const f = step(r, 'rules').findings.find((x) => x.id === 'rules-not-observed')!;
    assert.equal(f.node, 'vm-12-11-centos');
    assert.match(f.title, /^vm-12-11-centos: rules not observed$/);
    assert.ok(r.unobserved!.includes('Rules: vm-12-11-centos: rules not observed'));
    // the pass speaks for the node it read, and the step's mark is not a bare ✓
    assert.ok(
      step(r, 'rules').findings.some(
        (x) => x.id === 'rules-match' && /^1 of 2 nodes: /.test(x.title),
      ),
    );
    assert.equal(shownStepStatus(step(r, 'rules')), 'partial');
  });

  it("one node's probe of the ClusterIP lost: Reachability passes for the other node only, and its step line says which was not probed", async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    delete facts.nodes['vm-12-11-centos']!['tcp-connect_10.1.190.219_8080'];
    const r = diagnose(facts, TARGET, { code: allModes });
    const reach = step(r, 'reachability');
    const pass = reach.findings.find((f) => f.id === 'clusterip-reachable')!;
    assert.equal(pass.title, 'ClusterIP 10.1.190.219:8080 answers from vm-12-7-centos');
    const blind = reach.findings.find((f) => f.id === 'probe-not-observed')!;
    assert.equal(blind.title, 'ClusterIP 10.1.190.219:8080 not probed from vm-12-11-centos');
    assert.deepEqual(
      blind.evidence.map((e) => [e.kind, e.node, e.text]),
      [['not-observed', 'vm-12-11-centos', '10.1.190.219:8080: not probed from vm-12-11-centos']],
    );
    assert.equal(shownStepStatus(reach), 'partial');
    const line = reportText(r, { color: false, width: 200 })
      .split('\n')
      .find((l) => / 8 Reachability/.test(l))!;
    assert.match(
      line,
      /^ ◐ {2}8 Reachability +ClusterIP 10\.1\.190\.219:8080 answers from vm-12-7-centos; ClusterIP 10\.1\.190\.219:8080 not probed from vm-12-11-centos \(--verbose explains\)$/,
    );
  });

  it('a node that was read but ran no lookup: DNS is not a bare ✓ (headless)', async () => {
    const r = diagnose(
      await readSnapshot('snapshots/headless'),
      {
        namespace: 'default',
        service: 'nginx-headless',
      },
      { code: allModes },
    );
    const dns = step(r, 'dns');
    assert.equal(shownStepStatus(dns), 'partial');
    assert.deepEqual(
      dns.findings
        .filter((f) => f.id === 'dns-lookup-not-observed')
        .map((f) => [f.status, f.title]),
      [
        [
          'skip',
          'A lookup of nginx-headless.default.svc.cluster.local not recorded on vm-12-11-centos',
        ],
      ],
    );
    // SRV records are never looked up by kdebug: not claimed missing
    assert.ok(!dns.findings.some((f) => /_tcp\./.test(f.title) && f.status === 'skip'));
  });

  it('a Windows node: no Linux verdicts about it, said as such', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.objects.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'win-1', labels: { 'kubernetes.io/os': 'windows' } },
      status: {
        nodeInfo: { operatingSystem: 'windows', kubeProxyVersion: 'v1.15.0' },
        addresses: [{ type: 'InternalIP', address: '10.0.12.20' }],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
    const r = diagnose(facts, TARGET, { code: allModes });
    const win = r.steps.flatMap((s) => s.findings).filter((f) => f.node === 'win-1');
    assert.deepEqual(
      win.map((f) => `${f.id}:${f.status}`),
      // what policy Cluster does there is not observed either: said, no verdict
      ['rules-not-linux:skip', 'traffic-policy-not-observed:skip'],
    );
    assert.match(win[0]!.explanation, /kernelspace mode \(HNS/);
    assert.ok(!step(r, 'kube-proxy').findings.some((f) => f.id === 'proxy-mode-differs'));
  });
});

describe("kube-proxy's configuration not read", () => {
  it('no kube-proxy ConfigMap: no masquerade-differs on a healthy cluster, a note instead', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.objects = facts.objects.filter(
      (o) => !(o.kind === 'ConfigMap' && o.metadata?.name === 'kube-proxy'),
    );
    const r = diagnose(facts, TARGET, { code: allModes });
    assert.ok(
      !r.steps
        .flatMap((s) => s.findings)
        .some((f) => f.id === 'masquerade-differs' && f.status !== 'pass'),
    );
    assert.notEqual(r.status, 'fail');
    const d = driftOf(facts, 'vm-12-7-centos');
    assert.deepEqual(
      d.findings.filter((f) => severityOf(f) !== 'info').map((f) => f.id),
      [],
    );
    const note = d.notes!.find((n) => n.id === 'masquerade-differs')!;
    assert.match(
      note.explanation,
      /read no kube-proxy configuration .* every Service port masquerades on "! -s 10\.244\.0\.0\/16"/,
    );
  });
});

describe('kube-proxy not running', () => {
  it('a /proxyMode answer from a crash-looping kube-proxy is stale, never a ✓', async () => {
    const r = diagnose(await readSnapshot('snapshots/stale-endpoint'), TARGET, { code: allModes });
    const kp = step(r, 'kube-proxy').findings;
    const stale = kp.find((f) => f.id === 'proxy-mode-not-observed')!;
    assert.equal(stale.status, 'skip');
    assert.match(
      stale.title,
      /^proxy mode not observed on 1 node: kube-proxy is not running on vm-12-11-centos$/,
    );
    const mode = kp.find((f) => f.id === 'proxy-mode')!;
    assert.equal(mode.title, 'iptables mode on 1 node', 'only the running kube-proxy counts');
    assert.ok(!mode.evidence.map(evidenceText).some((e) => e.startsWith('vm-12-11-centos')));
  });
});

describe('objects not captured', () => {
  it('a hand-made snapshot without Pods: "Pods not captured", never "matches no Pods"', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.objects = facts.objects.filter((o) => o.kind !== 'Pod');
    const r = diagnose(facts, TARGET, { code: allModes });
    const all = r.steps.flatMap((s) => s.findings.map((f) => `${s.id}/${f.id}:${f.status}`));
    assert.ok(all.includes('selector/pods-not-observed:skip'), all.join(' '));
    assert.ok(all.includes('ports/pods-not-observed:skip'), all.join(' '));
    assert.ok(
      !all.some((x) => /selector-matches-no-pods|endpoint-pod-gone/.test(x)),
      all.join(' '),
    );
    assert.deepEqual(
      r.steps.filter((s) => s.status === 'fail').map((s) => s.id),
      [],
    );
  });
});

describe('dual-stack, on the API side', () => {
  it('two Pods with an IPv4 and an IPv6 address each are two endpoints; Endpoints agree', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const v4 = facts.objects.find(
      (o) => o.kind === 'EndpointSlice' && o.metadata?.name?.startsWith('nginx-svc'),
    )!;
    const six: Record<string, string> = {
      '10.244.0.3': 'fd00:10:244::3',
      '10.244.1.7': 'fd00:10:244:1::7',
    };
    const v6 = JSON.parse(JSON.stringify(v4)) as typeof v4 & {
      endpoints: { addresses: string[] }[];
    };
    v6['addressType'] = 'IPv6';
    v6.metadata!.name = `${v4.metadata!.name}-v6`;
    for (const e of v6.endpoints) e.addresses = [six[e.addresses[0]!]!];
    facts.objects.push(v6);
    // dual-stack Pods hold an address in each family
    for (const p of facts.objects.filter((o) => o.kind === 'Pod')) {
      const status = p['status'] as { podIP?: string; podIPs?: { ip: string }[] };
      const ip6 = status.podIP && six[status.podIP];
      if (ip6) status.podIPs = [{ ip: status.podIP! }, { ip: ip6 }];
    }
    const r = diagnose(facts, TARGET, { code: allModes });
    const eps = step(r, 'endpoints').findings;
    assert.equal(
      eps.find((f) => f.id === 'endpoints-ready')!.title,
      '8080/TCP: 2 of 2 endpoints ready (IPv4 and IPv6)',
    );
    assert.ok(!eps.some((f) => f.id === 'endpoints-disagree'), eps.map((f) => f.id).join(' '));
  });

  /** The demo with nginx-svc dual-stack: an IPv6 cluster IP and an IPv6 slice beside the IPv4 one. */
  async function dualStack(): Promise<Facts> {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const svc = facts.objects.find(
      (o) => o.kind === 'Service' && o.metadata?.name === 'nginx-svc',
    )!;
    const spec = svc['spec'] as { clusterIPs: string[]; ipFamilies: string[] };
    spec.clusterIPs = ['10.1.190.219', 'fd00:10:96::be'];
    spec.ipFamilies = ['IPv4', 'IPv6'];
    const v4 = facts.objects.find(
      (o) => o.kind === 'EndpointSlice' && o.metadata?.name?.startsWith('nginx-svc'),
    )!;
    const v6 = structuredClone(v4);
    v6.metadata = { ...v6.metadata, name: 'nginx-svc-v6' };
    v6['addressType'] = 'IPv6';
    for (const [n, e] of (v6['endpoints'] as { addresses: string[] }[]).entries())
      e.addresses = [`fd00:10:244:${n}::7`];
    facts.objects.push(v6);
    dualStackKubeProxy(facts.objects);
    return facts;
  }

  it('an IPv6 cluster IP without ip6tables dumps: not observed on each node, and the IPv4 judgement stays', async () => {
    const r = diagnose(await dualStack(), TARGET, { code: allModes });
    assert.deepEqual(ids(r, 'rules'), [
      'rules-match:pass',
      'rules-release-disagrees:warn',
      'rules-ipv6-not-observed:skip',
    ]); // v1.21.14 read, v1.15-spelled rules
    // and Hairpin does not pass over the IPv6 endpoints it could not check
    assert.deepEqual(r.unobserved, [
      // the demo looked up and probed IPv4 only: the IPv6 half is said not to be seen
      'DNS: AAAA lookup of nginx-svc.default.svc.cluster.local not recorded on vm-12-11-centos and vm-12-7-centos',
      'Rules: IPv6: rules for fd00:10:96::be not read on vm-12-11-centos and vm-12-7-centos',
      // nor is the IPv6 cluster IP said to answer, nor its endpoints
      'Reachability: IPv6: ClusterIP [fd00:10:96::be]:8080 not probed from vm-12-11-centos and vm-12-7-centos',
      'Reachability: 2 endpoints not probed from vm-12-11-centos and vm-12-7-centos',
      // in the order of their canonical IPv6 addresses (fd00:10:244:1::7 sorts before fd00:10:244::7)
      'Hairpin: hairpin of nginx-55fc968d9-4pddn (IPv6) and nginx-55fc968d9-kh24k (IPv6) not checked',
    ]);
    assert.match(step(r, 'rules').findings[0]!.title, /^IPv4: 2 nodes: /);
    // IPv4 only: nothing said about IPv6, nor of families
    const plain = diagnose(await readSnapshot('snapshots/nginx-svc'), TARGET, { code: allModes });
    assert.deepEqual(ids(plain, 'rules'), ['rules-match:pass']);
    assert.match(step(plain, 'rules').findings[0]!.title, /^2 nodes: /);
  });

  it('probes and DNS per family: both ClusterIPs probed, an AAAA lookup; the family that fails is named', async () => {
    const facts = await dualStack();
    const plan = probePlan(facts, TARGET, { code: allModes }).map((p) => commandStem(p));
    assert.ok(plan.includes('tcp-connect_fd00:10:96::be_8080'), plan.join(' '));
    assert.ok(
      plan.includes('dns-lookup_AAAA_nginx-svc.default.svc.cluster.local_10.1.0.10'),
      plan.join(' '),
    );
    const node = 'vm-12-7-centos';
    const outputs = facts.nodes[node]!;
    outputs['dns-lookup_AAAA_nginx-svc.default.svc.cluster.local_10.1.0.10'] =
      ';; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 1\n;; ANSWER SECTION:\nnginx-svc.default.svc.cluster.local. 30 IN AAAA fd00:10:96::be\n\nkdebug-probe dns-lookup tool=dig exit=0\n';
    outputs['tcp-connect_fd00:10:96::be_8080'] =
      'nc: connect to fd00:10:96::be port 8080 (tcp) timed out: Operation now in progress\nkdebug-probe tcp-connect tool=nc exit=1\n';
    const r = diagnose(facts, TARGET, { code: allModes });
    const dns = step(r, 'dns').findings.map((f) => `${f.id}:${f.status} ${f.title}`);
    assert.ok(
      dns.includes(
        'dns-answer-ok:pass vm-12-7-centos: nginx-svc.default.svc.cluster.local AAAA -> fd00:10:96::be',
      ),
      dns.join('\n'),
    );
    const reach = step(r, 'reachability').findings.map((f) => `${f.id}:${f.status} ${f.title}`);
    assert.ok(
      reach.some((t) =>
        t.startsWith('clusterip-reachable:pass IPv4: ClusterIP 10.1.190.219:8080 answers'),
      ),
      reach.join('\n'),
    );
    assert.ok(
      reach.some((t) =>
        t.startsWith('clusterip-unreachable:fail IPv6: ClusterIP [fd00:10:96::be]:8080: '),
      ),
      reach.join('\n'),
    );
    assert.equal(step(r, 'reachability').status, 'fail');
  });

  it('an IPv6-only Service is compared in IPv6 only, as an IPv4 one is in IPv4', async () => {
    const facts = await dualStack();
    const svc = facts.objects.find(
      (o) => o.kind === 'Service' && o.metadata?.name === 'nginx-svc',
    )!;
    const spec = svc['spec'] as { clusterIP: string; clusterIPs: string[]; ipFamilies: string[] };
    spec.clusterIP = 'fd00:10:96::be';
    spec.clusterIPs = ['fd00:10:96::be'];
    spec.ipFamilies = ['IPv6'];
    for (const node of Object.keys(facts.nodes)) {
      const exp = new Analysis(facts, { code: allModes })
        .node(node)
        .expected(undefined, { family: 'IPv6' });
      facts.nodes[node]!['ip6tables-save'] = expectedSave(exp);
    }
    const r = diagnose(facts, TARGET, { code: allModes });
    assert.deepEqual(
      step(r, 'rules').findings.map((f) => `${f.id}:${f.status} ${f.title}`),
      ['rules-match:pass IPv6: 2 nodes: 8080/TCP -> 2 endpoints, as expected'],
    );
  });

  it('with ip6tables dumps: the IPv6 half compared on each node, and a fault found in that family only', async () => {
    const facts = await dualStack();
    // each node's ip6tables-save as the IPv6 proxier writes it (the lab proves expect against the real one)
    for (const node of Object.keys(facts.nodes)) {
      const exp = new Analysis(facts, { code: allModes })
        .node(node)
        .expected(undefined, { family: 'IPv6' });
      facts.nodes[node]!['ip6tables-save'] = expectedSave(exp);
    }
    const good = diagnose(facts, TARGET, { code: allModes });
    assert.deepEqual(ids(good, 'rules'), [
      'rules-match:pass',
      'rules-release-disagrees:warn',
      'rules-match:pass',
    ]);
    assert.deepEqual(
      step(good, 'rules').findings.map((f) => f.title),
      [
        'IPv4: 2 nodes: 8080/TCP -> 2 endpoints, as expected',
        'IPv4: 2 nodes (vm-12-11-centos, vm-12-7-centos): kube-proxy v1.21.14 read, rules spelled as v1.19 or earlier writes them',
        'IPv6: 2 nodes: 8080/TCP -> 2 endpoints, as expected',
      ],
    );
    // the IPv6 rules are all there; only the IPv6 half was never looked up nor probed
    assert.deepEqual(good.unobserved, [
      'DNS: AAAA lookup of nginx-svc.default.svc.cluster.local not recorded on vm-12-11-centos and vm-12-7-centos',
      'Reachability: IPv6: ClusterIP [fd00:10:96::be]:8080 not probed from vm-12-11-centos and vm-12-7-centos',
      'Reachability: 2 endpoints not probed from vm-12-11-centos and vm-12-7-centos',
    ]);
    // one endpoint's IPv6 DNAT gone on one node (new Facts: an analysis is kept per Facts)
    const node = 'vm-12-7-centos';
    const dump = facts.nodes[node]!['ip6tables-save']!;
    const cut = dump
      .split('\n')
      .filter((l) => !l.includes('-j DNAT --to-destination [fd00:10:244::7]:80'))
      .join('\n');
    assert.notEqual(cut, dump);
    const bad = diagnose(
      {
        ...facts,
        nodes: { ...facts.nodes, [node]: { ...facts.nodes[node], 'ip6tables-save': cut } },
      },
      TARGET,
      { code: allModes },
    );
    const rules = step(bad, 'rules').findings;
    // (the scenario's release disagreement is IPv4's and both nodes': not this fault)
    const faults = rules.filter(
      (f) => (f.status === 'warn' || f.status === 'fail') && f.id !== 'rules-release-disagrees',
    );
    assert.ok(faults.length > 0, rules.map((f) => `${f.id}:${f.status} ${f.title}`).join('\n'));
    for (const f of faults) {
      assert.equal(f.node, node);
      assert.match(f.title, /^IPv6: /);
    }
    assert.ok(rules.some((f) => f.title === 'IPv4: 2 nodes: 8080/TCP -> 2 endpoints, as expected'));
    assert.ok(rules.some((f) => /^IPv6: 1 node: /.test(f.title)));
  });
});

describe("kube-proxy's own reading of the API objects", () => {
  it('addresses written with leading zeros are read as kube-proxy reads them: no false drift', async () => {
    const { clusterView } = await import('../../../src/core/kube/objects.js');
    const facts = await readSnapshot('snapshots/nginx-svc');
    const svc = facts.objects.find(
      (o) => o.kind === 'Service' && o.metadata?.name === 'nginx-svc',
    )!;
    const spec = svc['spec'] as { clusterIP: string; clusterIPs?: string[] };
    spec.clusterIP = '010.01.190.219';
    spec.clusterIPs = ['010.01.190.219'];
    const slice = facts.objects.find(
      (o) => o.kind === 'EndpointSlice' && o.metadata?.name?.startsWith('nginx-svc'),
    )!;
    for (const e of slice['endpoints'] as { addresses: string[] }[])
      e.addresses = e.addresses.map((a) => (a === '10.244.0.3' ? '10.244.000.003' : `::ffff:${a}`));
    const view = clusterView(facts.objects);
    assert.equal(view.services.find((s) => s.name === 'nginx-svc')!.clusterIP, '10.1.190.219');
    for (const node of ['vm-12-7-centos', 'vm-12-11-centos']) {
      const d = driftOf(facts, node);
      assert.deepEqual(
        d.findings.filter((f) => severityOf(f) !== 'info').map((f) => f.id),
        [],
        node,
      );
    }
  });
});

describe("kube-proxy's configuration, from what kube-proxy runs with", () => {
  interface ProxyPod {
    spec: { volumes: { configMap: { name: string } }[]; containers: { command: string[] }[] };
  }
  interface Named {
    metadata: { name: string };
  }
  const withPod = async (change: (pod: ProxyPod, cm: Named) => void) => {
    const { clusterView, kubeProxyConfigOf } = await import('../../../src/core/kube/objects.js');
    const facts = await readSnapshot('snapshots/nginx-svc');
    const pods = facts.objects.filter(
      (o) => o.kind === 'Pod' && o.metadata?.name?.startsWith('kube-proxy-'),
    );
    const cm = facts.objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata?.name === 'kube-proxy',
    )!;
    for (const p of pods) change(p as unknown as ProxyPod, cm as unknown as Named);
    return kubeProxyConfigOf(clusterView(facts.objects));
  };

  it('the ConfigMap its Pod mounts, whatever its name', async () => {
    const c = await withPod((pod, cm) => {
      cm.metadata.name = 'proxy-settings';
      pod.spec.volumes[0]!.configMap.name = 'proxy-settings';
    });
    assert.match(c.source, /^ConfigMap kube-system\/proxy-settings/);
    assert.equal(c.clusterCIDR, '10.244.0.0/16');
  });

  it('its command-line flags over the file', async () => {
    const c = await withPod((pod, cm) => {
      cm.metadata.name = 'unrelated';
      pod.spec.containers[0]!.command = [
        'kube-proxy',
        '--proxy-mode=ipvs',
        '--cluster-cidr',
        '10.42.0.0/16',
        '--masquerade-all',
      ];
    });
    assert.deepEqual([c.mode, c.clusterCIDR, c.masqueradeAll], ['ipvs', '10.42.0.0/16', true]);
    assert.match(c.source, /the flags of Pod kube-system\/kube-proxy-/);
  });
});

describe('/configz: what kube-proxy serves is what it runs with', () => {
  const configz = (clusterCIDR: string) =>
    JSON.stringify({
      'kubeproxy.config.k8s.io': { mode: 'iptables', clusterCIDR, iptables: { masqueradeBit: 14 } },
    });

  it('comes before the ConfigMap, per node, and a difference is observed drift', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.nodes['vm-12-7-centos']!['proxy-configz'] = configz('10.99.0.0/16');
    facts.nodes['vm-12-11-centos']!['proxy-configz'] = 'curl: (7) Failed to connect\n'; // not an answer
    const d = driftOf(facts, 'vm-12-7-centos');
    const f = d.findings.find((x) => x.id === 'masquerade-differs')!;
    assert.match(
      f.explanation,
      /masquerades cluster IP traffic .* "! -s 10\.244\.0\.0\/16".* says "! -s 10\.99\.0\.0\/16"/,
    );
    assert.match(f.explanation, /\/configz of kube-proxy on vm-12-7-centos/);
    // the other node has no readable answer: its ConfigMap is used, and agrees
    assert.deepEqual(
      driftOf(facts, 'vm-12-11-centos').findings.filter((x) => severityOf(x) !== 'info'),
      [],
    );
  });
});

describe('reads refused by RBAC', () => {
  it('the kube-dns Service not read is not a missing kube-dns', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.objects = facts.objects.filter(
      (o) => !(o.kind === 'Service' && o.metadata?.name === 'kube-dns'),
    );
    facts.meta['readErrors'] = [
      {
        what: 'Service kube-system/kube-dns',
        read: { resource: 'services', namespace: 'kube-system', name: 'kube-dns', addon: true },
        error: 'services "kube-dns" is forbidden: User "limited" cannot get resource "services"',
      },
    ];
    const r = diagnose(facts, TARGET, { code: allModes });
    const dns = ids(r, 'dns');
    assert.ok(dns.includes('coredns-not-observed:skip'), dns.join(' '));
    assert.ok(!dns.includes('coredns-unavailable:fail'));
    assert.ok(r.unobserved!.includes('DNS: the kube-dns Service was not read'));
    // the same facts without the refusal: the Service is missing, observed
    delete facts.meta['readErrors'];
    assert.ok(
      ids(diagnose(facts, TARGET, { code: allModes }), 'dns').includes('coredns-unavailable:fail'),
    );
  });
});

describe('Nodes not captured', () => {
  it('the Nodes refused: kube-proxy is not said to run on every node, and nothing fails for it', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.objects = facts.objects.filter((o) => o.kind !== 'Node');
    facts.meta['readErrors'] = [
      {
        what: 'Nodes',
        read: { resource: 'nodes' },
        error: 'nodes is forbidden: User "limited" cannot list resource "nodes"',
      },
    ];
    const r = diagnose(facts, TARGET, { code: allModes });
    const kp = step(r, 'kube-proxy').findings;
    assert.deepEqual(
      kp.slice(0, 2).map((f) => `${f.id}:${f.status}`),
      ['kube-proxy-running:pass', 'nodes-not-observed:skip'],
    );
    assert.doesNotMatch(kp[0]!.explanation ?? '', /every node/i);
    assert.match(kp[1]!.explanation ?? '', /nodes is forbidden/);
    assert.deepEqual(
      r.steps.filter((s) => s.status === 'fail').map((s) => s.id),
      [],
    );
    // with the Nodes read, no such finding
    const whole = diagnose(await readSnapshot('snapshots/nginx-svc'), TARGET, { code: allModes });
    assert.ok(!ids(whole, 'kube-proxy').includes('nodes-not-observed:skip'));
  });
});

describe('EndpointSlices not captured', () => {
  it("the Service's slices refused: no 'no ready endpoints', no drift, no DNS outage", async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    facts.objects = facts.objects.filter((o) => o.kind !== 'EndpointSlice');
    const refused = (what: string, service: string, addon?: true) => ({
      what,
      read: { resource: 'endpointslices', namespace: service.split('/')[0], service, addon },
      error: 'access denied by RBAC: user "limited" cannot list endpointslices.discovery.k8s.io',
    });
    facts.meta['readErrors'] = [
      refused('EndpointSlices of default/nginx-svc', 'default/nginx-svc'),
      refused('EndpointSlices of kube-system/kube-dns', 'kube-system/kube-dns', true),
    ];
    const r = diagnose(facts, TARGET, { code: allModes });
    assert.deepEqual(ids(r, 'endpoints'), ['endpoints-not-observed:skip']);
    assert.ok(ids(r, 'rules').includes('rules-not-checked:skip'), ids(r, 'rules').join(' '));
    assert.ok(ids(r, 'dns').includes('coredns-not-observed:skip'), ids(r, 'dns').join(' '));
    assert.deepEqual(
      r.steps.filter((s) => s.status === 'fail').map((s) => s.id),
      [],
    );
    // the same facts without the refusals: no slice, observed, its ready Pods the root; a
    // warning, as kube-proxy v1.15 routes by the Endpoints, which list them
    delete facts.meta['readErrors'];
    assert.deepEqual(ids(diagnose(facts, TARGET, { code: allModes }), 'endpoints'), [
      'pod-missing-from-endpoints:warn',
      'no-ready-endpoints:warn',
    ]);
  });
});

describe('another proxy mode', () => {
  it('nftables mode on every node, its table not read: not observed (not an unreadable iptables dump)', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    for (const outputs of Object.values(facts.nodes)) {
      outputs['proxy-mode'] = 'nftables';
      outputs['iptables-save'] = '';
    }
    const r = diagnose(facts, TARGET, { code: allModes });
    // both nodes in the same condition: one finding naming both
    assert.deepEqual(ids(r, 'rules'), ['rules-nftables-not-observed:skip']);
    const [f] = step(r, 'rules').findings;
    assert.deepEqual(f!.nodes, Object.keys(facts.nodes).sort());
    assert.match(f!.title, /^2 nodes \(.+, .+\): nftables mode, its table ip kube-proxy not read$/);
    assert.equal(step(r, 'rules').status, 'skip');
    assert.equal(r.unobserved?.filter((u) => u.startsWith('Rules: ')).length, 1);
  });
});

describe('a node dump cut short', () => {
  it('is not compared: the step is partial, nothing past the cut is called missing, drift says why', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const node = 'vm-12-7-centos';
    const whole = facts.nodes[node]!['iptables-save']!;
    const lines = whole.split('\n');
    // cut inside the nat table, before the Service's KUBE-SERVICES rule: no COMMIT after it
    const at = lines.findIndex((l) => l.startsWith('-A KUBE-SERVICES'));
    facts.nodes[node]!['iptables-save'] = lines.slice(0, at).join('\n') + '\n';
    const r = diagnose(facts, TARGET, { code: allModes });
    const rules = r.steps.find((s) => s.id === 'rules')!;
    assert.ok(ids(r, 'rules').includes('rules-not-checked:skip'), ids(r, 'rules').join(' '));
    assert.deepEqual(
      rules.findings.filter((f) => f.node === node && f.status !== 'skip').map((f) => f.id),
      [],
    );
    assert.equal(shownStepStatus(rules), 'partial');
    assert.throws(
      () => new Analysis(facts, { code: allModes }).node(node).drift(),
      /iptables-save\.txt:\d+: the dump looks cut short after line \d+: table nat has no COMMIT, so it is not compared/,
    );
  });
});

describe('a part of a mode state not read', () => {
  it("IPVS without the node's ipsets: the match is partial, the ipsets not observed", async () => {
    const facts = await readSnapshot('snapshots/ipvs-stale-real-server');
    for (const outputs of Object.values(facts.nodes)) delete outputs['ipset-save'];
    const r = diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const rules = r.steps.find((s) => s.id === 'rules')!;
    const blind = rules.findings.filter((f) => f.id === 'rules-ipvs-not-observed');
    assert.ok(blind.length > 0, ids(r, 'rules').join(' '));
    assert.ok(
      blind.every((f) => f.status === 'skip' && /ipsets were not read/.test(f.explanation)),
    );
    assert.notEqual(shownStepStatus(rules), 'pass');
  });
});
