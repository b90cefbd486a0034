// kube-proxy's own packet-flow tables (test/fixtures/packet-flows/<release>/, transcribed from
// runPacketFlowTests in pkg/proxy/{iptables,nftables}/proxier_test.go): for every vector, the
// rules `kdebug expect` writes for that node and mode, walked by `kdebug trace`, take each
// packet where kube-proxy's tracer says: the same DNAT destinations, REJECT, DROP or nothing,
// and masquerade when it says so. A test that traces a fixed dump instead (TestTracePacket*)
// has that dump walked. Each case's rules are also loaded into the real iptables or nft and
// listed back as a node records them (iptables-save, nft -j), and walked as `kdebug trace`
// reads a node's. Conventions
// of the fake proxier: test/support/packet-flows.ts.
//
// What kube-proxy's tracers report, and how it is compared:
// - "output" is every DNAT destination the walk can reach (both tracers follow every branch of
//   a random choice), in rule order: kdebug's DNAT outcomes, in the order it gives them.
// - "REJECT" / "DROP": the packet is refused by a kube-proxy rule. kdebug's outcome is the same
//   verdict (a walk that splits refuses in every branch).
// - "ACCEPT" (the iptables tracer, a health-check node port's filter rule) and "": no DNAT and
//   nothing refused. kdebug says the packet goes on unchanged; an ACCEPT of kube-proxy's is
//   also asked of kdebug's walk (some rule of it accepted the packet).
// - masq: the iptables tracer says true once a rule jumps to KUBE-MARK-MASQ, the nftables one
//   once `masquerade` ran in nat-postrouting (after the mark). kdebug masquerades in POSTROUTING
//   where the mark is set, never for a refused packet (it reaches no POSTROUTING; every
//   refused row of kube-proxy's says false too). Compared as "some outcome is masqueraded"
//   (kube-proxy's tracers follow every branch, a hairpin endpoint's own mark included).
// - kdebug's outcomes also share the packet whole (their chances sum to 1), each DNAT
//   destination an equal share, as kube-proxy's random choice among them gives.
// - kube-proxy's tracers enter every packet at prerouting, even one from the node's own IP or
//   127.0.0.1 (the nftables one skips the output chains as "redundant with the prerouting
//   chains"): each row is walked so. A packet from an address of the node is walked again from
//   the output hook, as the kernel takes it, and must have the same answer: kube-proxy writes
//   the same Service rules in both. A fixed dump that is not what kube-proxy writes may tell
//   them apart: the case says which row and why (outputHookDiffers).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { tracePacket } from '../../src/core/dataplane/iptables/trace/trace.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { expectedSave } from '../../src/core/dataplane/iptables/save.js';
import { expectedNftText } from '../../src/core/dataplane/nftables/expected/expected.js';
import { parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { writes } from '../../src/core/dataplane/kube-proxy/releases.js';
import { traceNftPacket } from '../../src/core/dataplane/nftables/trace.js';
import type { TracePacket, TraceResult } from '../../src/core/dataplane/trace/trace.js';
import { clusterView, serviceCIDRs } from '../../src/core/kube/objects.js';
import {
  configOf,
  dumpOf,
  FAKE_NETWORK,
  flowFixtures,
  objectsOf,
  TEST_NODE_IPS,
  type FlowCase,
  type FlowFixture,
  type FlowRow,
} from '../support/packet-flows.js';
import { hasCommand } from '../support/skip.js';

/** Every release transcribed: its folder ("1.37") and minor. */
const RELEASES = readdirSync(new URL('../fixtures/packet-flows/', import.meta.url))
  .filter((d) => /^1\.\d+$/.test(d))
  .map((dir) => ({ dir, minor: Number(dir.split('.')[1]) }));

type Walker = (p: TracePacket) => TraceResult;

/** What `kdebug expect` prints for a case's node, in the fixture's mode. */
function expectText(f: FlowFixture, c: FlowCase, minor: number): string {
  const k = configOf(f, c);
  const view = clusterView(objectsOf(f, c));
  const exp = expectedRules(view, k.nodeName, {
    release: { minor },
    family: k.family,
    // the fake proxier has both nfacct counters from 1.31; its interfaces hold every test node IP
    nfacct: minor >= 31,
    interfaceAddresses: TEST_NODE_IPS,
  });
  if (f.mode === 'iptables') return expectedSave(exp);
  // the Service CIDRs the fake proxier is given (its serviceCIDRs field), at every release:
  // `kdebug expect` leaves them out before 1.33, whose kube-proxy watches no ServiceCIDR with its
  // default feature gates (watchedServiceCIDRs)
  return expectedNftText(exp, serviceCIDRs(view));
}

/** The walker of kdebug's expected rules for a case: what `kdebug expect` prints, read back as
 * `kdebug trace` reads a node's rules. */
function expectedWalker(f: FlowFixture, c: FlowCase, minor: number): Walker {
  const text = expectText(f, c, minor);
  if (f.mode === 'iptables') {
    const rs = parseIptables(text);
    return (p) => tracePacket(rs, FAKE_NETWORK, p);
  }
  const table = parseNftScript(text).tables[0]!;
  return (p) => traceNftPacket(table, FAKE_NETWORK, p);
}

/** The rules kdebug expect writes for some cases of one mode, each loaded into the real
 * iptables or nft of one network namespace of their own (replacing the one before) and listed
 * back as a node records them (`iptables-save`, `nft -j list table`), read as `kdebug trace`
 * reads a node's; undefined where the tools or root are missing. */
function realWalkers(
  mode: FlowFixture['mode'],
  cases: { text: string; family: 'IPv4' | 'IPv6' }[],
): (Walker | undefined)[] {
  if (!REAL[mode] || cases.length === 0) return cases.map(() => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-flows-'));
  const load = (i: number, family: 'IPv4' | 'IPv6') => {
    if (mode === 'nftables')
      return `nft flush ruleset && nft -f ${i}.in && nft -j list table ${family === 'IPv6' ? 'ip6' : 'ip'} kube-proxy > ${i}.out`;
    const ipt = family === 'IPv6' ? 'ip6tables' : 'iptables';
    return `${ipt}-restore < ${i}.in && ${ipt}-save > ${i}.out`;
  };
  try {
    const script = [
      // the nfacct counters kube-proxy's rules name from 1.31 (the fake proxier has them)
      ...(mode === 'iptables'
        ? ['nfacct add ct_state_invalid_dropped_pkts', 'nfacct add localhost_nps_accepted_pkts']
        : []),
      ...cases.map(({ text, family }, i) => {
        writeFileSync(join(dir, `${i}.in`), text);
        return `${load(i, family)} || exit 1`;
      }),
    ];
    const r = spawnSync('unshare', ['-n', 'sh', '-c', script.join('\n')], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    return cases.map((_, i) => {
      const out = readFileSync(join(dir, `${i}.out`), 'utf8');
      if (mode === 'iptables') {
        const rs = parseIptables(out);
        return (p: TracePacket) => tracePacket(rs, FAKE_NETWORK, p);
      }
      const table = parseNftJson(out).tables[0]!;
      return (p: TracePacket) => traceNftPacket(table, FAKE_NETWORK, p);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const loads = (cmd: string, input: string) =>
  spawnSync('unshare', ['-n', 'sh', '-c', cmd], { input }).status === 0;
const REAL = {
  nftables: hasCommand('nft') && hasCommand('unshare') && loads('nft -f -', 'add table ip t\n'),
  iptables:
    hasCommand('iptables-restore') &&
    hasCommand('nfacct') &&
    hasCommand('unshare') &&
    loads('iptables-restore', '*filter\nCOMMIT\n'),
};

/** The walker of a dump kube-proxy's test traces. */
function dumpWalker(f: FlowFixture, dir: string, file: string): Walker {
  const text = dumpOf(dir, f.mode, file);
  if (f.mode === 'iptables') {
    const rs = parseIptables(text);
    return (p) => tracePacket(rs, FAKE_NETWORK, p);
  }
  const table = parseNftScript(text).tables[0]!;
  return (p) => traceNftPacket(table, FAKE_NETWORK, p);
}

const LOCAL = new Set([...TEST_NODE_IPS, '127.0.0.1', '::1']);
/** The source is an address of the node: the kernel takes the packet through the output hook. */
const fromNode = (r: FlowRow) => LOCAL.has(r.sourceIP) || r.sourceIP.startsWith('127.');

/** The row's packet, from a process on the node or arriving (prerouting). */
const packetOf = (r: FlowRow, fromHost: boolean): TracePacket => ({
  src: r.sourceIP,
  dst: r.destIP,
  dport: r.destPort,
  protocol: (r.protocol ?? 'TCP').toLowerCase() as TracePacket['protocol'],
  fromHost,
});

/** kube-proxy's answer and kdebug's, in the same words: the outputs in order, masq, and whether
 * kdebug's outcomes share the packet as a random choice does. */
function compare(row: FlowRow, result: TraceResult) {
  const theirs = (row.output ?? '').split(', ').map((o) => (o === 'ACCEPT' ? '' : o));
  const outputs = [
    ...new Set(result.outcomes.map((o) => (o.verdict !== 'ACCEPT' ? o.verdict : (o.dnat ?? '')))),
  ];
  const ours = { output: outputs, masq: result.outcomes.some((o) => o.masquerade) };
  const total = result.outcomes.reduce((n, o) => n + o.probability, 0);
  const shares = new Map<string, number>();
  for (const o of result.outcomes)
    if (o.dnat) shares.set(o.dnat, (shares.get(o.dnat) ?? 0) + o.probability);
  // the outcomes share the whole packet, every destination an equal share of its DNATs
  const shared =
    Math.abs(total - 1) < 1e-9 &&
    [...shares.values()].every((p) => Math.abs(p - [...shares.values()][0]!) < 1e-9);
  const accepted =
    row.output !== 'ACCEPT' ||
    result.outcomes.every((o) => o.rules.some((r) => /\bACCEPT\b|accept/.test(r.effect)));
  return {
    ours: { ...ours, accepted, shared },
    theirs: { output: [...new Set(theirs)], masq: row.masq ?? false, accepted: true, shared: true },
  };
}

const why = (row: FlowRow, result: TraceResult) =>
  `${row.name}: ${row.protocol ?? 'TCP'} ${row.sourceIP} -> ${row.destIP}:${row.destPort}\n` +
  result.outcomes
    .map(
      (o) =>
        `  ${o.verdict} ${o.dnat ?? ''} masq=${o.masquerade}\n` +
        o.rules.map((r) => `    ${r.table} ${r.chain}: ${r.rule}  => ${r.effect}`).join('\n'),
    )
    .join('\n');

for (const { dir, minor } of RELEASES) {
  const fixtures = flowFixtures(dir);
  describe(`kube-proxy v${dir} packet-flow vectors, walked by kdebug trace`, () => {
    it('has vectors of both modes', () => {
      const modes = new Set(fixtures.map(([, f]) => f.mode));
      assert.deepEqual([...modes].sort(), ['iptables', 'nftables']);
    });
    // every case's rules through the real iptables or nft, in one namespace a mode
    const real = new Map<FlowCase, Walker | undefined>();
    for (const mode of ['iptables', 'nftables'] as const) {
      const cases = fixtures.flatMap(([, f]) =>
        f.mode === mode ? f.cases.filter((c) => !c.dump).map((c) => ({ f, c })) : [],
      );
      const walkers = realWalkers(
        mode,
        cases.map(({ f, c }) => ({ text: expectText(f, c, minor), family: configOf(f, c).family })),
      );
      cases.forEach(({ c }, i) => real.set(c, walkers[i]));
    }
    for (const [file, f] of fixtures)
      describe(`${f.mode} ${f.source.test} (${f.source.file}:${f.source.line})`, () => {
        for (const c of f.cases) {
          const walkers: [string, Walker | undefined][] = c.dump
            ? [[`kube-proxy's dump ${c.dump}`, dumpWalker(f, dir, c.dump)]]
            : [
                ['kdebug expect', expectedWalker(f, c, minor)],
                // the same rules as a node lists them, read as kdebug reads a node's
                [
                  `kdebug expect, through the real ${f.mode === 'iptables' ? 'iptables' : 'nft'}`,
                  real.get(c),
                ],
              ];
          for (const [what, walker] of walkers)
            for (const { line, rows } of c.flows)
              for (const row of rows)
                it(`${c.name ? `${c.name}: ` : ''}${row.name} (line ${line}, ${what})`, (t) => {
                  if (!walker)
                    return t.skip('root, unshare, and nft or iptables-restore and nfacct');
                  // as kube-proxy's tracer enters it: at prerouting
                  const result = walker(packetOf(row, false));
                  const { ours, theirs } = compare(row, result);
                  assert.deepEqual(ours, theirs, `${file}\n${why(row, result)}`);
                  // as the kernel does, from the node: the output hook, the same answer (unless
                  // the fixture says why not)
                  if (!fromNode(row) || c.outputHookDiffers?.[row.name]) return;
                  const local = walker(packetOf(row, true));
                  const again = compare(row, local);
                  assert.deepEqual(
                    again.ours,
                    again.theirs,
                    `${file} (output hook)\n${why(row, local)}`,
                  );
                });
        }
      });
  });
}

// kube-proxy's TestOverallNFTablesRules transaction of each release (test/fixtures/releases/,
// what that release writes for six Services), walked with the rows its TestTracePacketV4 traces
// on a fixed dump of the same six Services (V6's dump is TestNodePorts' Service: not these;
// 1.30 has no TestTracePacketV4). From prerouting, as kube-proxy's tracer, every
// row holds. From the node (the output hook), 1.30-1.32 write filter-output at priority -110,
// before DNAT, jumping to the no-endpoints check: node traffic to svc2's external IP (eTP Local,
// no local endpoint) is dropped there, kubernetes/kubernetes#131765, fixed by #132456 (1.34,
// and 1.33's patches: the 1.33.13 vector has it) with the filter-*-pre-dnat chains. kube-proxy's tracer never runs the output hook; kdebug does.
describe("kube-proxy's TestOverallNFTablesRules transactions, walked with TestTracePacketV4's rows", () => {
  const DROPPED_FROM_NODE = 'local, mark for masquerade';
  for (const { dir, minor } of RELEASES) {
    const dump = new URL(`../fixtures/releases/${minor}/nftables-overall-v4.nft`, import.meta.url);
    const rows = flowFixtures(dir).find(([, f]) => f.source.test === 'TestTracePacketV4')?.[1]
      .cases[0]!.flows[0]!.rows;
    if (!existsSync(dump) || !rows) continue;
    const table = parseNftScript(readFileSync(dump, 'utf8')).tables[0]!;
    const preDnat = writes({ minor }, 'nftPreDnatFilterChains');
    for (const row of rows)
      it(`v${dir}: ${row.name}`, () => {
        const result = traceNftPacket(table, FAKE_NETWORK, packetOf(row, false));
        const { ours, theirs } = compare(row, result);
        assert.deepEqual(ours, theirs, why(row, result));
        if (!fromNode(row)) return;
        const local = traceNftPacket(table, FAKE_NETWORK, packetOf(row, true));
        const again = compare(row, local);
        if (!preDnat && row.name === DROPPED_FROM_NODE)
          assert.deepEqual(again.ours.output, ['DROP'], why(row, local));
        else assert.deepEqual(again.ours, again.theirs, why(row, local));
      });
  }
});

// kube-proxy's TestOverallIPTablesRules payload of each release, completed with the built-in
// chains' jumps kube-proxy writes apart (test/fixtures/packet-flows/iptables-jump-chains.txt, as
// its fake iptables holds them), walked with the rows its TestTracePacket traces on a fixed dump
// of the same six Services: every row holds, from prerouting and, from the node, the output hook.
describe("kube-proxy's TestOverallIPTablesRules payloads, walked with TestTracePacket's rows", () => {
  const jumps = readFileSync(
    new URL('../fixtures/packet-flows/iptables-jump-chains.txt', import.meta.url),
    'utf8',
  );
  const part = (table: string) => jumps.split(`*${table}\n`)[1]!.split('*')[0]!;
  for (const { dir, minor } of RELEASES) {
    const payload = new URL(`../fixtures/releases/${minor}/iptables-overall.txt`, import.meta.url);
    const rows = flowFixtures(dir).find(([, f]) => /^TestTracePackets?$/.test(f.source.test))?.[1]
      .cases[0]!.flows[0]!.rows;
    if (!existsSync(payload) || !rows) continue;
    const rs = parseIptables(
      readFileSync(payload, 'utf8')
        .replace('*filter\n', `*filter\n${part('filter')}`)
        .replace('*nat\n', `*nat\n${part('nat')}`),
    );
    for (const row of rows)
      it(`v${dir}: ${row.name}`, () => {
        for (const fromHost of fromNode(row) ? [false, true] : [false]) {
          const result = tracePacket(rs, FAKE_NETWORK, packetOf(row, fromHost));
          const { ours, theirs } = compare(row, result);
          assert.deepEqual(ours, theirs, why(row, result));
        }
      });
  }
});
