// Two rule sets compared as kube-proxy's own tests compare them, after both went through the
// real iptables-restore and iptables-save of an empty namespace: the rules of every chain in
// order, but the chains that hold a rule per Service (Go map order) as sets, with the node-ports
// rule last, and the built-in chains' jumps as sets (their order is who started first: the
// kubelet, kube-proxy, a CNI); declared chains as sets.
import { spawnSync } from 'node:child_process';

const UNORDERED = new Set([
  'KUBE-SERVICES',
  'KUBE-NODEPORTS',
  'KUBE-EXTERNAL-SERVICES',
  'KUBE-PROXY-FIREWALL',
  'KUBE-IPVS-OUT-FILTER',
  'INPUT',
  'FORWARD',
  'OUTPUT',
  'PREROUTING',
  'POSTROUTING',
]);
const LAST = 'NOTE: this must be the last rule in this chain';

type Saved = Map<string, { chains: Set<string>; rules: Map<string, string[]> }>;

function run(argv: string[], input = ''): string {
  const r = spawnSync(argv[0]!, argv.slice(1), {
    input,
    encoding: 'utf8',
    timeout: 30_000,
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** An empty namespace of the lab's (removed by `down` with the rest), with the nfacct counters
 * kube-proxy's rules name (iptables-restore refuses a rule whose counter does not exist). */
export function scratchNamespace(prefix: string): string {
  const netns = `${prefix}.scratch`;
  spawnSync('ip', ['netns', 'del', netns]);
  run(['ip', 'netns', 'add', netns]);
  for (const counter of ['ct_state_invalid_dropped_pkts', 'localhost_nps_accepted_pkts'])
    run(['ip', 'netns', 'exec', netns, 'nfacct', 'add', counter]);
  return netns;
}

/** `text` loaded into the (empty, lab-made) namespace `netns` and saved back, by iptables or
 * (`ip6`) ip6tables. */
export function roundTrip(netns: string, text: string, ip6 = false): string {
  const tool = ip6 ? 'ip6tables' : 'iptables';
  run(['ip', 'netns', 'exec', netns, `${tool}-restore`], text);
  return run(['ip', 'netns', 'exec', netns, `${tool}-save`]);
}

function parse(text: string, tables: string[]): Saved {
  const out: Saved = new Map();
  let table: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) {
      table = line.slice(1);
      if (tables.includes(table)) out.set(table, { chains: new Set(), rules: new Map() });
      continue;
    }
    const t = table && out.get(table);
    if (!t) continue;
    if (line.startsWith(':')) t.chains.add(line.slice(1).split(' ')[0]!);
    else if (line.startsWith('-A ')) {
      const chain = line.split(' ')[1]!;
      t.rules.set(chain, [...(t.rules.get(chain) ?? []), line]);
    }
  }
  return out;
}

/** What differs between the expected and the actual save, one line each; [] when they agree. */
export function differences(
  expected: string,
  actual: string,
  tables = ['filter', 'nat'],
): string[] {
  const e = parse(expected, tables);
  const a = parse(actual, tables);
  const out: string[] = [];
  for (const table of tables) {
    const et = e.get(table);
    const at = a.get(table);
    if (!et || !at) {
      out.push(`*${table}: ${et ? 'not in the actual rules' : 'not in the expected rules'}`);
      continue;
    }
    for (const c of et.chains)
      if (!at.chains.has(c)) out.push(`${table} :${c} expected, not declared`);
    for (const c of at.chains)
      if (!et.chains.has(c)) out.push(`${table} :${c} declared, not expected`);
    for (const chain of new Set([...et.rules.keys(), ...at.rules.keys()])) {
      const want = et.rules.get(chain) ?? [];
      const got = at.rules.get(chain) ?? [];
      if (UNORDERED.has(chain)) {
        const missing = want.filter((r) => !got.includes(r));
        const extra = got.filter((r) => !want.includes(r));
        out.push(
          ...missing.map((r) => `${table} missing: ${r}`),
          ...extra.map((r) => `${table} extra:   ${r}`),
        );
        const last = got.findIndex((r) => r.includes(LAST));
        if (last >= 0 && got.slice(last + 1).some((r) => !r.includes(LAST)))
          out.push(`${table} ${chain}: the node-ports rule is not last`);
      } else if (want.join('\n') !== got.join('\n')) {
        out.push(
          `${table} ${chain} differs:`,
          ...want.map((r) => `  expected ${r}`),
          ...got.map((r) => `  actual   ${r}`),
        );
      }
    }
  }
  return out;
}

/** kube-proxy's nftables `table` (`ip` or `ip6` kube-proxy), given as a script or a listing,
 * loaded into the empty lab namespace `netns` with nft -f and listed back as nft's JSON. */
export function nftRoundTrip(netns: string, text: string, family: 'ip' | 'ip6' = 'ip'): string {
  run(['ip', 'netns', 'exec', netns, 'nft', 'flush', 'ruleset']);
  run(['ip', 'netns', 'exec', netns, 'nft', '-f', '-'], text);
  return run(['ip', 'netns', 'exec', netns, 'nft', '-j', 'list', 'table', family, 'kube-proxy']);
}

/**
 * Two nft -j listings of kube-proxy's table compared as kube-proxy's tests compare its
 * transactions: each chain's rules in order, each set's and map's elements as a set (nft lists a
 * hash set in its own order); handles and the clients an affinity set has learnt are left out.
 */
export function nftDifferences(expected: string, actual: string): string[] {
  const e = nftItems(expected);
  const a = nftItems(actual);
  const out: string[] = [];
  for (const key of [...new Set([...e.keys(), ...a.keys()])].sort()) {
    const want = e.get(key);
    const got = a.get(key);
    if (want === got) continue;
    if (!got) out.push(`missing: ${key} ${want}`);
    else if (!want) out.push(`extra:   ${key} ${got}`);
    else out.push(`${key} differs:`, `  expected ${want}`, `  actual   ${got}`);
  }
  return out;
}

/** "chain NAME" / "set NAME" -> its normalised JSON (a chain with its rules). */
function nftItems(listing: string): Map<string, string> {
  type J = Record<string, unknown>;
  const items = (JSON.parse(listing) as { nftables: J[] }).nftables;
  const out = new Map<string, string>();
  const chains = new Map<string, { chain: J; rules: unknown[] }>();
  for (const item of items) {
    const [kind, body] = Object.entries(item)[0] as [string, J];
    const { handle: _h, ...rest } = body;
    if (kind === 'chain') chains.set(String(body['name']), { chain: rest, rules: [] });
    else if (kind === 'rule') {
      const { handle: _r, chain, ...rule } = rest as J;
      chains.get(String(chain))?.rules.push(rule);
    } else if (kind === 'set' || kind === 'map') {
      const name = String(body['name']);
      const elem = name.startsWith('affinity-')
        ? []
        : ((rest['elem'] as unknown[] | undefined) ?? []).map((x) => JSON.stringify(x)).sort();
      out.set(`${kind} ${name}`, JSON.stringify({ ...rest, elem }));
    } else if (kind === 'table') out.set('table', JSON.stringify(rest));
  }
  for (const [name, c] of chains) out.set(`chain ${name}`, JSON.stringify(c));
  return out;
}
