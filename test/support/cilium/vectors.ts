// Runs cilium-ref on each of Cilium's own load-balancer test vectors (shared/cilium-vectors:
// objects.yaml + config, expected tables and map dumps from its v1.17/v1.18 script tests) and
// compares. IDs are allocation order, so maps are compared after renaming every ID to the
// address it stands for. Usage: tsx test/support/cilium/vectors.ts [VECTORS_DIR] [REPORT.md]
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ciliumVersion, runCiliumRef } from './build.js';

type Row = Record<string, string>;
interface Vector {
  id: string;
  flags: string | null;
  node_addresses: { addr: string }[] | null;
  node_name: string | null;
  node_labels: string | null;
}

/** A db/show-style table: columns start where the header's words start (as db/cmp reads it). */
function parseTable(text: string): { cols: string[]; rows: Row[] } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return { cols: [], rows: [] };
  const starts = [...lines[0]!.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index! }));
  const rows = lines.slice(1).map((l) => {
    const r: Row = {};
    starts.forEach((c, i) => (r[c.name] = l.slice(c.at, starts[i + 1]?.at ?? l.length).trim()));
    return r;
  });
  return { cols: starts.map((c) => c.name), rows };
}

/** v1.20 lists backends per (Service, address); v1.17/18 per address with an Instances column. */
function backendsByAddress(rows: Row[], stateColumn: boolean): Row[] {
  const by = new Map<string, Row[]>();
  for (const r of rows) by.set(r['Address']!, [...(by.get(r['Address']!) ?? []), r]);
  return [...by].map(([addr, rs]) => ({
    Address: addr,
    State: rs[0]!['State']!,
    NodeName: rs[0]!['NodeName']!,
    Instances: rs
      .map(
        (r) =>
          r['Service']! +
          (r['PortNames'] ? ` (${r['PortNames']})` : '') +
          (!stateColumn && r['State'] !== 'active' ? ` [${r['State']}]` : ''),
      )
      .join(', '),
  }));
}

/** Compare the expected table's columns (those we have) as sets of rows. */
function compareTable(
  expected: string,
  ours: Row[],
  ordered: boolean,
  fix = (r: Row) => r,
): string {
  if (expected.length === 0)
    return ours.length === 0 ? 'match (empty)' : `DIFF: ${ours.length} rows, expected none`;
  const exp = parseTable(expected);
  const have = new Set(Object.keys(ours[0] ?? {}));
  const cols = exp.cols.filter((c) => have.has(c) || ours.length === 0);
  const missing = exp.cols.filter((c) => !cols.includes(c));
  const line = (r: Row) => cols.map((c) => r[c] ?? '').join(' | ');
  const a = exp.rows.map(fix).map(line);
  const b = ours.map(line);
  const note = missing.length ? ` (v1.20 has no column ${missing.join(', ')})` : '';
  if (ordered && a.join('\n') === b.join('\n')) return 'match' + note;
  if ([...a].sort().join('\n') === [...b].sort().join('\n'))
    return (ordered ? 'match as a set, row order differs' : 'match') + note;
  const gone = a.filter((x) => !b.includes(x));
  const extra = b.filter((x) => !a.includes(x));
  return `DIFF${note}: expected only: ${JSON.stringify(gone)}; ours only: ${JSON.stringify(extra)}`;
}

/** Rename IDs in an lb/maps-dump to what they stand for: REV address, backend address. */
function canonMaps(text: string): string[] {
  const lines = text.split('\n').filter((l) => l !== '');
  const rev = new Map<string, string>();
  const be = new Map<string, string>();
  for (const l of lines) {
    let m = /^REV: ID=(\d+) ADDR=(\S+)/.exec(l);
    if (m) rev.set(m[1]!, m[2]!);
    m = /^BE: ID=(\d+) ADDR=(\S+)/.exec(l);
    if (m) be.set(m[1]!, m[2]!);
  }
  // a service's two scopes share the REV address: keep them apart by their own SVC key
  const svcKey = new Map<string, string>();
  for (const l of lines) {
    const m = /^SVC: ID=(\d+) ADDR=(\S+) SLOT=0 /.exec(l);
    if (m) svcKey.set(m[1]!, m[2]!);
  }
  const svc = (id: string) => (id === '0' ? '0' : `<${svcKey.get(id) ?? rev.get(id) ?? '?' + id}>`);
  const ben = (id: string) => `<${be.get(id) ?? '?' + id}>`;
  return lines
    .map((l) => {
      if (l.startsWith('BE:')) return l.replace(/ID=(\d+)/, (_, id: string) => `ID=${ben(id)}`);
      if (l.startsWith('MAGLEV:')) {
        const m = /^MAGLEV: ID=(\d+) INNER=\[(.*)\]$/.exec(l)!;
        const inner = m[2]!
          .split(', ')
          .map((x) => /^(\d+)\((\d+)\)$/.exec(x)!)
          .map((x) => ({ id: ben(x[1]!), n: Number(x[2]) }))
          .sort((p, q) => q.n - p.n || (p.id < q.id ? -1 : 1));
        return `MAGLEV: ID=${svc(m[1]!)} INNER=[${inner.map((x) => `${x.id}(${x.n})`).join(', ')}]`;
      }
      return l
        .replace(/^(\w+: )ID=(\d+)/, (_, p: string, id: string) => `${p}ID=${svc(id)}`)
        .replace(/BEID=(\d+)/, (_, id: string) => `BEID=${ben(id)}`);
    })
    .sort();
}

/** Our v1.20 dump in v1.17's format: no protocol, zero address as <zero>, no LBALG on slot 0. */
function toV117(dump: string): string {
  return dump
    .replace(/(ADDR=\S+?)\/(TCP|UDP|SCTP|ANY)(\/i)?/g, '$1$3')
    .replace(/0\.0\.0\.0:\d+|\[::\]:\d+/g, '<zero>')
    .replace(/SLOT=0 LBALG=\S+ AFFTimeout=\d+/g, 'SLOT=0 BEID=0');
}

function compareMaps(expected: string, ours: string, v117: boolean): string {
  if (expected === ours) return 'match (byte for byte)';
  if (v117) ours = toV117(ours);
  const e = canonMaps(expected);
  const o = canonMaps(ours);
  const how = v117 ? 'ID renaming and v1.17 format' : 'ID renaming';
  if (e.join('\n') === o.join('\n')) return `match after ${how}`;
  // v1.20 adds a drop entry per ClusterIP/ExternalIP address for ports it does not serve
  const wild = (l: string) => /^SVC: ID=0 ADDR=\S+:0(\/ANY)? /.test(l);
  const o2 = o.filter((l) => !wild(l));
  const nWild = o.length - o2.length;
  if (e.join('\n') === o2.join('\n'))
    return `match after ${how}, less v1.20's ${nWild} wildcard ':0/ANY' entries`;
  const gone = e.filter((x) => !o2.includes(x));
  const extra = o2.filter((x) => !e.includes(x));
  return `DIFF (ignoring ${nWild} wildcard entries): expected only ${JSON.stringify(gone)}; ours only ${JSON.stringify(extra)}`;
}

/** cilium-ref arguments for a vector: harness defaults, its flags, node facts. */
function argsFor(dir: string, v: Vector, out: string): string[] {
  const config = readFileSync(join(dir, 'config.txt'), 'utf8');
  const args = ['--objects', join(dir, 'objects.yaml'), '--out', out];
  args.push('--node', v.node_name ?? 'testnode', '--ipv6=true'); // harness: IPv4+IPv6
  for (const a of v.node_addresses ?? []) args.push('--node-address', a.addr);
  if (v.node_labels) args.push('--node-label', v.node_labels.split(' ')[0]!);
  const ip = /Local node IP:\n\s+(\S+)/.exec(config);
  if (ip) args.push('--node-ip', ip[1]!);
  for (const m of config.matchAll(/test\/update-backend-health (\S+) (\S+) false/g))
    args.push('--unhealthy', `${m[1]}=${m[2]}`);
  // the agent's own flags: the harness's maglev table size, then the script's flags, less the
  // v1.17 opt-in flag (gone), fault injection (fake maps only), metrics sampling (no effect)
  const agent = ['--bpf-lb-maglev-table-size=1021'];
  // the healthserver package's harness turns this on (pkg/loadbalancer/healthserver/script_test.go)
  if (readFileSync(join(dir, 'src.txt'), 'utf8').includes('/healthserver/'))
    agent.push('--enable-health-check-loadbalancer-ip=true');
  for (const m of (v.flags ?? '').matchAll(/--[a-z0-9-]+(=\S+)?/g)) {
    if (
      !/^--(enable-experimental-lb|lb-test-fault-probability|metrics-sampling-interval)/.test(m[0])
    )
      agent.push(m[0]);
  }
  return [...args, '--', ...agent];
}

const vectorsDir = process.argv[2] ?? '/work/shared/cilium-vectors';
const reportPath = process.argv[3];
const index = JSON.parse(readFileSync(join(vectorsDir, 'INDEX.json'), 'utf8')) as {
  vectors: Vector[];
};
const report: string[] = [
  `# cilium-ref (cilium ${ciliumVersion()}) against Cilium's own LB test vectors`,
  '',
  '| vector | frontends | backends | maps |',
  '| --- | --- | --- | --- |',
];
const details: string[] = [];
for (const v of index.vectors) {
  const dir = join(vectorsDir, v.id);
  const out = mkdtempSync(join(tmpdir(), 'cilium-vec-'));
  const cells: string[] = [];
  try {
    const args = argsFor(dir, v, out);
    runCiliumRef(args);
    const ours = (f: string) => readFileSync(join(out, f), 'utf8');
    const exp = (f: string) =>
      existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : undefined;
    const fe = exp('expected-frontends.txt');
    const v117 = v.id.includes('-v117-');
    // v1.17 put each backend's state in the frontends' Backends column: "addr (active)"
    const fixFe = (r: Row) => ({
      ...r,
      Backends: (r['Backends'] ?? '').replace(/ \((\w+)\)/g, ''),
    });
    cells.push(
      fe === undefined
        ? 'n/a'
        : compareTable(fe, parseTable(ours('frontends.txt')).rows, true, v117 ? fixFe : undefined),
    );
    const be = exp('expected-backends.txt');
    // v1.18 marked unhealthy instances; v1.20's table does not show health (the maps do)
    const fixBe = (r: Row) => ({
      ...r,
      Instances: (r['Instances'] ?? '').replace(' [unhealthy]', ''),
    });
    const stateCol = be !== undefined && parseTable(be).cols.includes('State');
    cells.push(
      be === undefined
        ? 'n/a'
        : compareTable(
            be,
            backendsByAddress(parseTable(ours('backends.txt')).rows, stateCol),
            false,
            fixBe,
          ),
    );
    const maps = exp('expected-maps.txt');
    cells.push(maps === undefined ? 'n/a' : compareMaps(maps, ours('maps.txt'), v117));
    details.push(`## ${v.id}\n\n    cilium-ref ${args.join(' ')}\n`);
  } catch (e) {
    cells.push(`ERROR: ${(e as Error).message.split('\n')[0]}`, '', '');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  const row = `| ${v.id} | ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  report.push(row);
  console.log(row);
}
if (reportPath) writeFileSync(reportPath, [...report, '', ...details].join('\n') + '\n');
