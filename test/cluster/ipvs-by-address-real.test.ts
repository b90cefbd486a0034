// One Service's IPVS state read by address (kdebug svc), against what the real kube-proxy v1.37
// programmed in IPVS mode on a real kernel (test/fixtures/releases/37/ipvs, recorded in the IPVS
// VM): collect() runs through a transport that answers each node command with what the VM
// printed for that very command (its whole listings in ipvs/, every virtual server by its
// address and every ipset entry tested in ipvs-vm/targeted/), and for every Service of the recording
// the diagnosis read by address is the one read whole, from far fewer bytes; a read by address
// that fails, or prints what cannot stand for its own, falls back to the whole listing, said.
// IP conventions: the recording's (Service CIDR 10.96.0.0/16, Pods 10.244.0.0/16, node-a
// 192.0.2.21); its cluster's kube-proxy ConfigMap is set to mode ipvs, as node-a ran.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandStem, type NodeCommand, type NodeResult } from '../../src/cluster/cluster.js';
import { collect, diagnosisCommands } from '../../src/cluster/collect.js';
import { KubeCluster } from '../../src/cluster/kube-cluster.js';
import { typedCommand } from '../../src/cluster/nodes/commands.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { diagnose } from '../../src/core/diagnose.js';
import { clusterView, type Service } from '../../src/core/kube/objects.js';
import {
  shownStatus,
  shownStepStatus,
  type Facts,
  type KubeObject,
  type Report,
} from '../../src/core/model.js';
import type { TracePacket, TraceResult } from '../../src/core/dataplane/trace/trace.js';
import { ROOT } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { allModes } from '../support/modes.js';

const RECORDING = join(ROOT, 'test/fixtures/releases/37/ipvs');
const NODE = 'node-a';
const NODE_IP = '192.0.2.21';

/** What the VM printed for each read by address, by the command as typed. */
function targeted(): Map<string, Pick<NodeResult, 'stdout' | 'stderr' | 'exitCode'>> {
  const dir = `${RECORDING}-vm/targeted`;
  const read = (n: string, ext: string) => readFileSync(join(dir, `${n}.${ext}`), 'utf8');
  return new Map(
    read('index', 'tsv')
      .trim()
      .split('\n')
      .map((l) => l.split('\t') as [string, string])
      .map(([n, typed]) => [
        typed,
        { stdout: read(n, 'txt'), stderr: read(n, 'stderr'), exitCode: Number(read(n, 'rc')) },
      ]),
  );
}

/** The cluster as node-a ran it: kube-proxy's ConfigMap in IPVS mode. */
const inIpvsMode = (objects: KubeObject[]): KubeObject[] =>
  objects.map((o) => {
    const data = (o as { data?: Record<string, string> }).data;
    return o.kind === 'ConfigMap' && o.metadata?.name === 'kube-proxy' && data?.['config.conf']
      ? {
          ...o,
          data: {
            ...data,
            'config.conf': data['config.conf'].replace(/^mode: .*$/m, 'mode: ipvs'),
          },
        }
      : o;
  });

/** What a walk ends in, for comparing two readings of the same state. */
const outcomes = (t: TraceResult) =>
  t.outcomes
    .map((o) => `${o.verdict} ${o.destination} ${o.probability.toFixed(4)} masq=${o.masquerade}`)
    .sort();

/** The packets a Service's answer is about: to each of its addresses and node ports, from a Pod. */
const packets = (svc: Service): TracePacket[] =>
  svc.ports.flatMap((p) =>
    [
      ...svc.clusterIPs.filter((ip) => !ip.includes(':')).map((ip) => [ip, p.port] as const),
      ...[...svc.externalIPs, ...svc.loadBalancerIPs].map((ip) => [ip, p.port] as const),
      ...(p.nodePort ? [[NODE_IP, p.nodePort] as const] : []),
    ].map(([dst, dport]) => ({
      src: '10.244.1.77',
      dst,
      dport,
      protocol: p.protocol.toLowerCase() as TracePacket['protocol'],
      fromHost: false,
    })),
  );

/** The diagnosis as a person reads its marks: each step's mark and its findings' ids and marks. */
const marks = (r: Report) =>
  r.steps.map(
    (s) => `${s.id} ${s.status}: ${s.findings.map((f) => `${f.id} ${f.status}`).join(', ')}`,
  );

describe("one Service's IPVS state read by address, against the real kube-proxy's (IPVS VM)", () => {
  let whole: Facts;
  let fake: FakeApi;
  const answers = targeted();
  before(async () => {
    whole = await readSnapshot(RECORDING);
    fake = await startFakeApi({ objects: inIpvsMode(whole.objects) });
  });
  after(async () => {
    await fake?.close();
  });

  /** collect() for one Service on node-a, by address (or whole); `answer` may replace a reply. */
  async function read(
    svc: Service,
    o: {
      byAddress: boolean;
      ran?: string[];
      unrecorded?: string[];
      answer?: (c: NodeCommand, r: NodeResult) => NodeResult;
      /** The node's whole listings, where not the recording's. */
      recorded?: Record<string, string>;
    },
  ): Promise<Facts> {
    const recorded = o.recorded ?? whole.nodes[NODE]!;
    const cluster = await KubeCluster.connect({
      kubeconfig: fake.kubeconfig({ namespace: 'default' }),
      env: {},
      transport: () => ({
        run: async (_node, c: NodeCommand) => {
          o.ran?.push(typedCommand(c).join(' '));
          const vm = answers.get(typedCommand(c).join(' '));
          const stem = commandStem(c);
          const r: NodeResult = vm
            ? { ...vm, via: 'test' }
            : stem in recorded
              ? { stdout: recorded[stem]!, stderr: '', exitCode: 0, via: 'test' }
              : { stdout: '', stderr: '', exitCode: null, error: 'not in this test', via: 'test' };
          if (!vm && (c.kind === 'ipvs-service' || c.kind === 'ipset-test'))
            o.unrecorded?.push(typedCommand(c).join(' '));
          return o.answer ? o.answer(c, r) : r;
        },
      }),
    });
    const target = { namespace: svc.namespace, service: svc.name };
    return collect(cluster, target, {
      nodes: [NODE],
      nodeCommands: (f) =>
        diagnosisCommands(f, target, o.byAddress, new Analysis(f, { code: allModes })),
      ...(o.byAddress ? { rulesOf: { namespace: svc.namespace, name: svc.name } } : {}),
    });
  }

  const services = () =>
    clusterView(whole.objects).services.filter((s) => !s.headless && s.type !== 'ExternalName');

  it('gives every Service the same diagnosis as the whole listing, reading only its own virtual servers and ipset entries', async () => {
    assert.ok(services().length >= 14, `${services().length} Services in the recording`);
    for (const svc of services()) {
      const ran: string[] = [];
      const unrecorded: string[] = [];
      const facts = await read(svc, { byAddress: true, ran, unrecorded });
      const full = await read(svc, { byAddress: false });
      assert.deepEqual(unrecorded, [], `${svc.name}: reads the VM did not record`);
      assert.ok(
        !ran.some((c) => c === 'ipvsadm-save -n' || c.startsWith('ipset list')),
        ran.join('\n'),
      );
      const n = new Analysis(facts, { code: allModes }).node(NODE);
      const by = n.ipvsReadByAddress();
      assert.ok(
        by && by.virtualServers > 0 && by.entries! > 0,
        `${svc.name}: ${JSON.stringify(by)}`,
      );
      // the same packet walks to each of its addresses and ports, node ports included
      const wholeNode = new Analysis(full, { code: allModes }).node(NODE);
      for (const p of packets(svc))
        assert.deepEqual(
          outcomes(n.trace(p)),
          outcomes(wholeNode.trace(p)),
          `${svc.name} ${p.dst}:${p.dport}`,
        );
      const target = { namespace: svc.namespace, service: svc.name };
      const byAddress = diagnose(facts, target, { code: allModes });
      assert.deepEqual(
        marks(byAddress),
        marks(diagnose(full, target, { code: allModes })),
        svc.name,
      );
      // the real kube-proxy's state has no drift, and the step says how it was read
      const rules = byAddress.steps.find((s) => s.id === 'rules')!;
      assert.equal(rules.status, 'pass', `${svc.name}: ${marks(byAddress).join('\n')}`);
      assert.match(
        rules.findings.map((f) => f.explanation ?? '').join('\n'),
        /read this Service's IPVS state by address/,
      );
    }
  });

  const named = (name: string) => services().find((s) => s.name === name)!;
  const typed = (c: NodeCommand) => typedCommand(c).join(' ');
  const rulesText = (facts: Facts, svc: Service) =>
    diagnose(facts, { namespace: svc.namespace, service: svc.name }, { code: allModes })
      .steps.find((s) => s.id === 'rules')!
      .findings.map((f) => f.explanation ?? '')
      .join('\n');

  it("finds a virtual server deleted and a loop-back entry gone as the whole listing does, in ipvsadm's and ipset's own words", async () => {
    const svc = named('kitchen');
    const vip = `${svc.clusterIPs[0]}:80`;
    // ipvsadm's and ipset's answers where they are not there, as the VM printed them
    const noSuchService = answers.get('ipvsadm -Ln -u 10.96.0.1:443')!;
    assert.equal(noSuchService.stderr, 'No such service\n');
    // one of its endpoints' loop-back entries, as its read by address tests it
    const ran: string[] = [];
    await read(svc, { byAddress: true, ran });
    const loopBack = ran.find((k) => /^ipset test KUBE-LOOP-BACK \S+,tcp:\d+,/.test(k))!;
    const entry = loopBack.split(' ')[3]!;
    const notInSet = answers.get('ipset test KUBE-CLUSTER-IP 10.96.0.1,udp:443')!;
    assert.match(notInSet.stderr, /^10\.96\.0\.1,udp:443 is NOT in set KUBE-CLUSTER-IP\.$/m);
    const facts = await read(svc, {
      byAddress: true,
      answer: (c, r) =>
        typed(c) === `ipvsadm -Ln -t ${vip}`
          ? { ...noSuchService, via: 'test' }
          : typed(c) === loopBack
            ? { ...notInSet, stderr: `${entry} is NOT in set KUBE-LOOP-BACK.\n`, via: 'test' }
            : r,
    });
    // the same node state, read whole
    const recorded = { ...whole.nodes[NODE]! };
    recorded['ipvsadm-save'] = recorded['ipvsadm-save']!.split('\n')
      .filter((l) => !l.includes(` -t ${vip} `) && !l.endsWith(` -t ${vip}`))
      .join('\n');
    recorded['ipset-save'] = recorded['ipset-save']!.split('\n')
      .filter((l) => l !== `add KUBE-LOOP-BACK ${entry}`)
      .join('\n');
    const full = await read(svc, { byAddress: false, recorded });
    const target = { namespace: svc.namespace, service: svc.name };
    const got = diagnose(facts, target, { code: allModes });
    assert.deepEqual(marks(got), marks(diagnose(full, target, { code: allModes })));
    const ids = got.steps.flatMap((s) =>
      s.findings.filter((f) => f.status === 'fail' || f.status === 'warn').map((f) => f.id),
    );
    assert.ok(ids.includes('service-rules-missing'), ids.join(' '));
    assert.ok(ids.includes('hairpin-masquerade-missing'), ids.join(' '));
    const evidence = got.steps.flatMap((s) =>
      s.findings.flatMap((f) => f.evidence.map((e) => e.text)),
    );
    assert.ok(
      evidence.some((t) => t.includes(`${entry} is NOT in set KUBE-LOOP-BACK.`)),
      evidence.join('\n'),
    );
  });

  it('reads the whole listing where a read by address fails, and says why', async () => {
    const svc = named('node-port');
    const ran: string[] = [];
    const facts = await read(svc, {
      byAddress: true,
      ran,
      answer: (c, r) =>
        c.kind === 'ipvs-service' && c.ip === svc.clusterIPs[0]
          ? { stdout: '', stderr: 'sudo: a password is required\n', exitCode: 1, via: 'test' }
          : r,
    });
    assert.ok(ran.includes('ipvsadm-save -n'), ran.join('\n'));
    assert.ok(!Object.keys(facts.nodes[NODE]!).some((s) => s.startsWith('ipvsadm-Ln_')));
    // the failure is read again whole: no longer a loss
    const errors = (facts.meta['nodeErrors'] ?? []) as { command: string }[];
    assert.deepEqual(
      errors.filter((e) => e.command.startsWith('ipvsadm')),
      [],
    );
    const n = new Analysis(facts, { code: allModes }).node(NODE);
    assert.equal(n.ipvsReadByAddress()?.virtualServers, undefined);
    assert.equal(n.ipvs()?.source, `nodes/${NODE}/ipvsadm-save.txt`);
    assert.match(
      rulesText(facts, svc),
      new RegExp(
        `the whole dump instead of this Service's rules alone \\(.*\\) on node-a: ipvsadm -Ln -t ${svc.clusterIPs[0]!.replaceAll('.', '\\.')}:80: sudo: a password is required\\.`,
      ),
    );
    // the whole state, its ipsets too: compared with the whole listing, not left out
    assert.ok(ran.includes('ipset list -o save'), ran.join('\n'));
    assert.ok(n.drift([svc]).tables?.includes('ipset'));
  });

  it('reads the whole listing where what a read by address printed is not its own virtual server', async () => {
    const svc = named('cluster-ip');
    const other = answers.get(`ipvsadm -Ln -t ${named('lb').clusterIPs[0]}:80`)!;
    const facts = await read(svc, {
      byAddress: true,
      answer: (c, r) => (c.kind === 'ipvs-service' ? { ...other, via: 'test' } : r),
    });
    assert.equal(
      new Analysis(facts, { code: allModes }).node(NODE).ipvs()?.source,
      `nodes/${NODE}/ipvsadm-save.txt`,
    );
    assert.match(
      rulesText(facts, svc),
      /the whole dump instead of this Service's rules alone \(.*\) on node-a: ipvsadm -Ln -t \S+: \S+ lists TCP \S+, not TCP \S+ alone/,
    );
  });

  it("tests the ipset entries, and reads the sets whole where a test's answer is not ipset's", async () => {
    const svc = named('cluster-ip');
    const ran: string[] = [];
    const facts = await read(svc, {
      byAddress: true,
      ran,
      answer: (c, r) =>
        c.kind === 'ipset-test'
          ? {
              stdout: '',
              stderr: 'ipset v7.17: Kernel error received: Operation not permitted\n',
              exitCode: 1,
              via: 'test',
            }
          : r,
    });
    assert.ok(ran.includes('ipset list -o save'), ran.join('\n'));
    const n = new Analysis(facts, { code: allModes }).node(NODE);
    assert.deepEqual(n.ipvsReadByAddress(), { virtualServers: 1, ipsetsWhole: true });
    const text = rulesText(facts, svc);
    assert.match(
      text,
      /by address: its 1 virtual server \(ipvsadm -Ln -t\|-u\|--sctp-service IP:PORT\), and kube-proxy's ipsets whole; the node's other virtual servers were not read\./,
    );
    assert.match(
      text,
      /on node-a: ipset test KUBE-\S+ \S+: ipset v7\.17: Kernel error received: Operation not permitted\./,
    );
  });

  it('says a read by address missing from the facts not compared, neither there nor missing', async () => {
    const svc = named('node-port');
    const facts = await read(svc, { byAddress: true });
    const outputs = { ...facts.nodes[NODE]! };
    const vs = Object.keys(outputs).find((s) => s.startsWith(`ipvsadm-Ln_tcp_${NODE_IP}_`))!;
    const entry = Object.keys(outputs).find((s) => s.startsWith('ipset-test_KUBE-NODE-PORT-TCP'))!;
    delete outputs[vs];
    delete outputs[entry];
    const cut: Facts = { ...facts, nodes: { ...facts.nodes, [NODE]: outputs } };
    const rules = diagnose(
      cut,
      { namespace: svc.namespace, service: svc.name },
      { code: allModes },
    ).steps.find((s) => s.id === 'rules')!;
    const onNode = rules.findings.filter((f) => f.node === NODE);
    assert.deepEqual(
      onNode.filter((f) => f.status === 'fail' || f.status === 'warn').map((f) => f.id),
      [],
    );
    const skip = onNode.find((f) => f.id === 'rules-ipvs-not-observed');
    assert.equal(skip && shownStatus(skip), 'unobserved');
    assert.match(
      skip?.explanation ?? '',
      new RegExp(
        `2 reads by address of this Service's state were not recorded \\(nodes/node-a/${vs.replaceAll('.', '\\.')}\\.txt, nodes/node-a/${entry}\\.txt\\), so what they would read was not compared`,
      ),
    );
    assert.equal(shownStepStatus(rules), 'partial');
  });

  it("says a packet to another Service's virtual server was not read, rather than that none is there", async () => {
    const facts = await read(named('cluster-ip'), { byAddress: true });
    const lb = named('lb');
    const walk = new Analysis(facts, { code: allModes }).node(NODE).trace({
      src: '10.244.1.77',
      dst: lb.clusterIPs[0]!,
      dport: 80,
      protocol: 'tcp',
      fromHost: false,
    });
    const said = walk.outcomes.flatMap((o) => [...o.rules.map((r) => r.rule), ...o.assumptions]);
    assert.ok(
      said.some((t) => /not read \(only the Service's own were, by address\)/.test(t)),
      said.join('\n'),
    );
    assert.ok(!said.some((t) => /^no virtual server/.test(t)), said.join('\n'));
  });

  it("reads the whole listing where the node's addresses, which its node ports listen on, were not read", async () => {
    const svc = named('node-port');
    const ran: string[] = [];
    const facts = await read(svc, {
      byAddress: true,
      ran,
      answer: (c, r) =>
        c.kind === 'ip-addr'
          ? { stdout: '', stderr: '', exitCode: null, error: 'no debug Pod', via: 'test' }
          : r,
    });
    assert.ok(
      ran.includes('ipvsadm-save -n') && ran.includes('ipset list -o save'),
      ran.join('\n'),
    );
    assert.ok(!ran.some((c) => c.startsWith('ipvsadm -Ln ')), ran.join('\n'));
    assert.match(
      rulesText(facts, svc),
      /the whole dump instead of this Service's rules alone \(.*\) on node-a: IPVS: the node's addresses were not read \(ip -br addr\)/,
    );
  });
});
