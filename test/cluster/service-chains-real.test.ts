// One Service's chains read by name (kdebug svc on a large cluster), against the real iptables:
// the rules the real kube-proxy v1.37 wrote in the lab (test/fixtures/releases/37/iptables) are
// loaded into a network namespace of this test's own, collect() reads them through a transport
// that runs each command's real argv there, and for every Service of the recording the chains
// read give the same answer as the whole dump: the same packet walks, no drift, no chain called
// missing that was only not read; and they read only that Service's chains and the entry ones
// (kube-proxy's filter chains by name as well).
// IP conventions: the recording's (Service CIDR 10.96.0.0/16, Pods 10.244.0.0/16); nothing
// leaves the namespace.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandStem, type NodeCommand } from '../../src/cluster/cluster.js';
import { collect, diagnosisCommands } from '../../src/cluster/collect.js';
import { KubeCluster } from '../../src/cluster/kube-cluster.js';
import { nodeArgv } from '../../src/cluster/nodes/commands.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { diagnose } from '../../src/core/diagnose.js';
import { ENTRY_CHAINS, FILTER_CHAINS } from '../../src/core/dataplane/iptables/service-chains.js';
import { clusterView, type Service } from '../../src/core/kube/objects.js';
import type { Facts } from '../../src/core/model.js';
import type { TracePacket } from '../../src/core/dataplane/trace/trace.js';
import { ROOT } from '../support/cli.js';
import { startFakeApi, type FakeApi } from '../support/fake-api/server.js';
import { realIptablesMissing } from '../support/real-iptables.js';
import { skipWithout } from '../support/skip.js';
import { allModes } from '../support/modes.js';

const RECORDING = join(ROOT, 'test/fixtures/releases/37/iptables');
const NODE = 'node-a';
const ns = `kd-chains-${process.pid}`;
const missing = realIptablesMissing();

/** What a walk ends in, for comparing two readings of the same rules. */
const outcomes = (a: Analysis, packet: TracePacket) =>
  a
    .node(NODE)
    .trace(packet)
    .outcomes.map(
      (o) => `${o.verdict} ${o.destination} ${o.probability.toFixed(4)} masq=${o.masquerade}`,
    )
    .sort();

/** The packets a Service's answer is about: to each of its addresses and ports, from a Pod. */
const packets = (svc: Service): TracePacket[] =>
  [
    ...svc.clusterIPs.filter((ip) => !ip.includes(':')),
    ...svc.externalIPs,
    ...svc.loadBalancerIPs,
  ].flatMap((dst) =>
    svc.ports.map((p) => ({
      src: '10.244.1.77',
      dst,
      dport: p.port,
      protocol: p.protocol.toLowerCase() as TracePacket['protocol'],
      fromHost: false,
    })),
  );

describe(
  "one Service's chains read by name from the real iptables",
  skipWithout(missing && `${missing} (needs root, iproute2 and iptables)`),
  () => {
    let whole: Facts;
    let fake: FakeApi;
    const ran: string[] = [];
    before(async () => {
      whole = await readSnapshot(RECORDING);
      const dump = whole.nodes[NODE]!['iptables-save']!;
      execFileSync('ip', ['netns', 'add', ns]);
      // kube-proxy counts dropped invalid packets in an nfacct object it creates first
      for (const name of new Set([...dump.matchAll(/--nfacct-name +(\S+)/g)].map((m) => m[1]!)))
        execFileSync('ip', ['netns', 'exec', ns, 'nfacct', 'add', name]);
      execFileSync('ip', ['netns', 'exec', ns, 'iptables-nft-restore'], { input: dump });
      fake = await startFakeApi({ objects: whole.objects });
    });
    after(async () => {
      spawnSync('ip', ['netns', 'del', ns]);
      await fake?.close();
    });

    /** collect() for one Service, its node commands run for real in the namespace (rules only). */
    async function byName(
      svc: Service,
      wholeBelow = 0,
      refuse?: (c: NodeCommand) => boolean,
    ): Promise<Facts> {
      const cluster = await KubeCluster.connect({
        kubeconfig: fake.kubeconfig({ namespace: 'default' }),
        env: {},
        transport: () => ({
          run: async (_node, c: NodeCommand) => {
            ran.push(commandStem(c));
            const rules = /tables|proc-net/.test(c.kind);
            if (refuse?.(c))
              return {
                stdout: '',
                stderr: 'sudo: a password is required',
                exitCode: 1,
                via: 'test',
              };
            if (!rules)
              return {
                stdout: '',
                stderr: '',
                exitCode: null,
                error: 'not in this test',
                via: 'test',
              };
            const argv = nodeArgv(c, { kind: 'host', sudo: false });
            const r = spawnSync('ip', ['netns', 'exec', ns, ...argv], { encoding: 'utf8' });
            return { stdout: r.stdout, stderr: r.stderr, exitCode: r.status, via: 'test' };
          },
        }),
      });
      const target = { namespace: svc.namespace, service: svc.name };
      return collect(cluster, target, {
        nodes: [NODE],
        nodeCommands: (f) =>
          diagnosisCommands(f, target, true, new Analysis(f, { code: allModes })),
        // the recording's table is small: read by name all the same (a large cluster's way)
        rulesOf: { namespace: svc.namespace, name: svc.name, wholeBelow },
      });
    }

    it('gives every Service the same walks as the whole dump, with no drift and nothing called missing', async () => {
      const view = clusterView(whole.objects);
      const full = new Analysis(whole, { code: allModes });
      const services = view.services.filter((s) => !s.headless && s.type !== 'ExternalName');
      assert.ok(services.length >= 12, `${services.length} Services in the recording`);
      for (const svc of services) {
        const facts = await byName(svc);
        const read = new Analysis(facts, { code: allModes });
        const n = read.node(NODE);
        assert.ok(n.chainsRead(), `${svc.name}: read by name`);
        for (const p of packets(svc))
          assert.deepEqual(outcomes(read, p), outcomes(full, p), `${svc.name} ${p.dst}:${p.dport}`);
        const scope = [svc];
        assert.deepEqual(
          n.drift().findings.map((f) => f.id),
          full
            .node(NODE)
            .drift(scope)
            .findings.map((f) => f.id),
          svc.name,
        );
        assert.deepEqual(
          n.drift().findings,
          [],
          `${svc.name}: the real kube-proxy's rules have no drift`,
        );
      }
    });

    it("reads only the entry chains and the Service's own, far fewer bytes than the whole table", async () => {
      const view = clusterView(whole.objects);
      const svc = view.services.find((s) => s.namespace === 'matrix' && s.name === 'node-port')!;
      ran.length = 0;
      const facts = await byName(svc);
      const read = new Set(new Analysis(facts, { code: allModes }).node(NODE).chainsRead());
      /** A Service's chains in the whole dump: its port chains and its endpoints'. */
      const chainsOf = (services: Service[]) =>
        new Analysis(whole, { code: allModes })
          .node(NODE)
          .trees(services)!
          .services.flatMap((t) =>
            [
              ...Object.values(t.chains),
              ...[...t.endpoints, ...(t.localEndpoints ?? [])].map((e) => e.chain),
            ].filter((c): c is string => c !== undefined),
          );
      const own = chainsOf([svc]);
      assert.ok(own.length >= 4, own.join(' '));
      for (const chain of own) assert.ok(read.has(chain), `${chain} read`);
      const others = chainsOf(view.services.filter((s) => s !== svc));
      assert.deepEqual(
        others.filter((c) => read.has(c)),
        [],
        "no other Service's chain is read",
      );
      for (const chain of ENTRY_CHAINS) assert.ok(read.has(chain), `${chain} read`);
      assert.ok(!ran.includes('iptables-save'), 'the whole dump was not read');
      // kube-proxy's filter chains by name too: the whole filter table is not read either
      assert.ok(!ran.some((s) => s.includes('save-filter')), ran.join(' '));
      const filter = new Analysis(facts, { code: allModes }).node(NODE).chainsRead('filter');
      for (const chain of FILTER_CHAINS) assert.ok(filter?.has(chain), `filter ${chain} read`);
      // the entry chains keep node-port's rules and those of no Service, and say how many not
      const services = Object.entries(facts.nodes[NODE]!).find(
        ([stem]) => stem === 'iptables-nft-nat-S_KUBE-SERVICES',
      )?.[1];
      assert.ok(services?.includes('matrix/node-port'), services);
      // of the other Services' rules one of each kind stays (the signs of kube-proxy's mode)
      const otherRules = (services ?? '')
        .split('\n')
        .filter((l) => /--comment "?[a-z0-9-]+\//.test(l) && !l.includes('matrix/node-port'));
      const kinds = otherRules.map((l) => / -j (KUBE-[A-Z]+(?:-[A-Z]+)?)/.exec(l)?.[1]);
      assert.equal(new Set(kinds).size, kinds.length, otherRules.join('\n'));
      assert.match(services ?? '', /-j KUBE-NODEPORTS/, 'the node ports jump kept');
      const notKept = facts.meta['entryRulesNotKept'] as Record<string, Record<string, number>>;
      assert.ok((notKept[NODE]?.['KUBE-SERVICES'] ?? 0) >= 10, JSON.stringify(notKept));
      const bytes = Object.values(facts.nodes[NODE]!).reduce((n, t) => n + t.length, 0);
      const wholeBytes =
        whole.nodes[NODE]!['iptables-save']!.length +
        whole.nodes[NODE]!['iptables-nft-save-nat']!.length;
      assert.ok(bytes * 4 < wholeBytes, `${bytes} bytes read by name, ${wholeBytes} whole`);
    });

    it("follows a chain hooked in by hand before kube-proxy's: its DNAT shows in the walk as in the whole dump", async () => {
      const view = clusterView(whole.objects);
      const svc = view.services.find((s) => s.namespace === 'matrix' && s.name === 'cluster-ip')!;
      const ip = svc.clusterIPs[0]!;
      const port = svc.ports[0]!.port;
      const inNs = (...args: string[]) => execFileSync('ip', ['netns', 'exec', ns, ...args]);
      inNs('iptables-nft', '-t', 'nat', '-N', 'MY-REDIRECT');
      inNs('iptables-nft', '-t', 'nat', '-I', 'PREROUTING', '1', '-j', 'MY-REDIRECT');
      inNs(
        'iptables-nft',
        ...['-t', 'nat', '-A', 'MY-REDIRECT', '-d', `${ip}/32`, '-p', 'tcp', '--dport', `${port}`],
        ...['-j', 'DNAT', '--to-destination', '10.244.9.9:8080'],
      );
      const now = structuredClone(whole);
      now.nodes[NODE]!['iptables-save'] = execFileSync(
        'ip',
        ['netns', 'exec', ns, 'iptables-nft-save'],
        { encoding: 'utf8' },
      );
      const facts = await byName(svc);
      assert.ok(
        new Analysis(facts, { code: allModes }).node(NODE).chainsRead()!.has('MY-REDIRECT'),
      );
      const packet = packets(svc)[0]!;
      const walked = outcomes(new Analysis(facts, { code: allModes }), packet);
      assert.deepEqual(walked, outcomes(new Analysis(now, { code: allModes }), packet));
      assert.match(walked.join('\n'), /10\.244\.9\.9:8080/);
    });

    it('reads the whole dump where a chain read by name is refused, and says why', async () => {
      const view = clusterView(whole.objects);
      const svc = view.services.find((s) => s.namespace === 'matrix' && s.name === 'node-port')!;
      const facts = await byName(
        svc,
        0,
        (c) => c.kind === 'iptables-chain' && c.chain.startsWith('KUBE-SVC-'),
      );
      const n = new Analysis(facts, { code: allModes }).node(NODE);
      assert.equal(n.chainsRead(), undefined);
      assert.deepEqual(n.drift([svc]).findings, []);
      // said on the node whatever its rules hold: a note of its own, with the failed read
      const note = diagnose(
        facts,
        { namespace: svc.namespace, service: svc.name },
        { code: allModes },
      )
        .steps.flatMap((s) => s.findings)
        .find((f) => f.id === 'rules-read-whole');
      assert.equal(note?.node, NODE);
      assert.match(
        note?.explanation ?? '',
        /the whole dump instead of this Service's rules alone \(its chains by name, its virtual servers and ipset entries by address\) on node-a: iptables-nft -t nat -S KUBE-SVC-\w+: sudo: a password is required\./,
      );
    });

    it('reads a small table whole: one read costs less than a dozen by name', async () => {
      const view = clusterView(whole.objects);
      const svc = view.services.find((s) => s.namespace === 'matrix' && s.name === 'node-port')!;
      const facts = await byName(svc, 1000);
      const n = new Analysis(facts, { code: allModes }).node(NODE);
      assert.equal(n.chainsRead(), undefined);
      assert.equal(n.rules()?.source, `nodes/${NODE}/iptables-nft-save.txt`);
      assert.deepEqual(n.drift([svc]).findings, []);
    });
  },
);
