// The spelling layer of the drift check: every rule in kube-proxy's chains is compared as text
// with what the modelled release writes, and each difference is attributed to a Service port (by
// chain, comment or address) or to the node. Service ports that route correctly but read
// differently get one informational `rule-text-differs`; so do the node's own chains. A dump of
// a release kdebug does not model is compared by behaviour instead: one folded info per node.
// Per-Service chains are compared in order, chain by chain; shared chains as multisets.
import type { DriftContext } from './context.js';
import { rulesOf, type RuleLine } from '../../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import type { Table } from '../read/parse.js';
import type { ReleaseDisagrees } from '../../kube-proxy/releases.js';
import { hostCidr } from '../../../ipv6.js';
import {
  foldByBehaviour,
  refusedByNodeChains,
  said,
  type Diff,
  type Other,
} from './behaviour/by-behaviour.js';
import { caughtByExtraRules, mayDivert } from './behaviour/caught.js';

const SHARED: Record<'nat' | 'filter', string[]> = {
  nat: ['KUBE-SERVICES', 'KUBE-NODEPORTS'],
  filter: ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL'],
};
/** kube-proxy's own chains whose rules belong to no Service port. */
const FIXED: Record<'nat' | 'filter', string[]> = {
  nat: ['KUBE-POSTROUTING', 'KUBE-MARK-MASQ'],
  filter: ['KUBE-FORWARD', 'KUBE-FIREWALL'],
};
const BUILTIN = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];
const NODE = '';
const SUFFIXES = [
  ' cluster IP',
  ' external IP',
  ' loadbalancer IP',
  ' has no endpoints',
  ' has no local endpoints',
  ' health check node port',
];

export function textDifferences(
  c: DriftContext,
  flagged: Set<string>,
): { writtenBy?: string; releaseDisagrees?: ReleaseDisagrees } {
  const diffs = new Map<string, Diff>();
  const diff = (owner: string) => {
    let d = diffs.get(owner);
    if (!d) diffs.set(owner, (d = { expected: [], actual: [] }));
    return d;
  };
  // the shared chains' rules as a multiset per table, keyed by rule text (one text, one chain):
  // each expected line takes one copy away
  type Copies = { chain: string; ids: number[] };
  const actual = { nat: new Map<string, Copies>(), filter: new Map<string, Copies>() };
  const tables = { nat: c.nat, filter: c.filter };
  for (const name of ['nat', 'filter'] as const) {
    const table = tables[name];
    if (!table) continue;
    const owned = new Set([...SHARED[name], ...FIXED[name]]);
    const lines = actual[name];
    for (const chain of [...SHARED[name], ...FIXED[name], ...BUILTIN]) {
      for (const id of table.chain(chain)?.ruleIds ?? []) {
        if (BUILTIN.includes(chain) && !owned.has(table.target(id) ?? '')) continue;
        const text = table.text(id);
        const copies = lines.get(text);
        if (copies) copies.ids.push(id);
        else lines.set(text, { chain, ids: [id] });
      }
    }
  }
  const take = (owner: string, table: 'nat' | 'filter', l: RuleLine) => {
    const ids = actual[table].get(l.text)?.ids;
    if (ids && ids.length > 0) ids.pop();
    else diff(owner).expected.push({ table, chain: l.chain, text: l.text });
  };
  const seen = new Uint8Array(c.nat.chainCount); // per-Service chains compared, by index
  // huge dumps (large-cluster mode): per-endpoint rules are sampled, the first and last endpoint
  // of each port (every endpoint is still checked semantically); a difference compares in full
  const sample = c.exp.largeClusterMode;
  for (const sp of c.exp.servicePorts) {
    const shared =
      (sample && comparePort(c, rulesOf(c.exp, sp, true), seen)) ||
      comparePort(c, rulesOf(c.exp, sp), seen, () => diff(sp.name));
    if (!shared) continue;
    for (const l of shared.nat) take(sp.name, 'nat', l);
    for (const l of shared.filter) take(sp.name, 'filter', l);
  }
  for (const table of ['nat', 'filter'] as const)
    for (const l of c.exp.fixed[table]) take(NODE, table, l);
  const left = (['nat', 'filter'] as const).flatMap((name) =>
    [...actual[name]].flatMap(([text, { chain, ids }]) =>
      ids.map((id) => ({ table: tables[name]!, id, chain, text })),
    ),
  );
  // a left-over rule that sends some Service port's packets elsewhere is a finding of its own
  const caught = caughtByExtraRules(
    c,
    left.filter((l) => mayDivert(l.table, l.id)),
    flagged,
  );
  let owners: Owners | undefined; // built only when a shared rule is left over
  for (const l of left) {
    if (caught.has(l)) continue;
    const owner = ruleOwner(l.table, l.id, (owners ??= ownersOf(c.exp.servicePorts)));
    diff(owner).actual.push({
      table: l.table.name as 'nat' | 'filter',
      chain: l.chain,
      text: l.text,
    });
  }
  // per-Service chains the node has and kube-proxy would not write now (stale endpoints, KUBE-XLB)
  for (const sp of c.exp.servicePorts) {
    const t = c.trees.get(sp.hash);
    if (!t) continue;
    const owner = sp.name;
    const extra = (name: string | undefined) => {
      const ch = name ? c.nat.indexOf(name) : -1;
      if (ch < 0 || seen[ch]) return;
      seen[ch] = 1;
      for (const id of c.nat.ruleIdsOf(ch))
        diff(owner).actual.push({ table: 'nat', chain: name!, text: c.nat.text(id) });
    };
    extra(t.chains.svc);
    extra(t.chains.svl);
    extra(t.chains.ext);
    extra(t.chains.fw);
    extra(t.chains.xlb);
    // sampled: endpoint chains were checked semantically (a stale one is flagged there)
    if (sample) continue;
    for (const e of t.endpoints) extra(e.chain);
    for (const e of t.localEndpoints ?? []) extra(e.chain);
  }

  const { writtenBy, releaseDisagrees: disagrees } = writtenByOf(c);
  const other = disagrees ? { who: 'an older kube-proxy' } : otherRelease(c, writtenBy);
  if (other) foldByBehaviour(c, diffs, flagged, other);
  else {
    // a difference in kube-proxy's own chains is judged by what it does to the ports' packets
    refusedByNodeChains(c, diffs, flagged);
    for (const [owner, d] of diffs) {
      if (d.expected.length === 0 && d.actual.length === 0) continue;
      const n = Math.max(d.expected.length, d.actual.length);
      if (owner === NODE)
        c.add({
          id: 'rule-text-differs',
          title: "kube-proxy's own chains are spelled differently",
          message: `node ${c.node}'s jumps and fixed chains (KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-FORWARD, KUBE-FIREWALL ...) are not spelled the way kube-proxy v1.${c.exp.release.minor} writes them`,
          expected: d.expected.map(said),
          actual: d.actual.map(said),
        });
      else if (!flagged.has(owner))
        c.add({
          id: 'rule-text-differs',
          service: owner,
          title: `routes as expected; ${n} rules spelled differently`,
          message: `node ${c.node} routes ${owner} as kube-proxy would; only the spelling of ${n} rules differs from what kube-proxy v1.${c.exp.release.minor} writes`,
          expected: d.expected.map(said),
          actual: d.actual.map(said),
        });
    }
  }
  return {
    ...(writtenBy ? { writtenBy } : {}),
    ...(disagrees ? { releaseDisagrees: disagrees } : {}),
  };
}

/** Who wrote the dump by its signs, where they show an older kube-proxy; and where the release
 * read for the node (its /metrics, image or nodeInfo) is newer than any they allow, that the two
 * disagree: the rules were not written by it (a stale kube-proxy, a fork), said once with both,
 * the spelling the rules' own (what was observed), never that release's. Cheap: a few chains. */
export function writtenByOf(c: Pick<DriftContext, 'nat' | 'filter' | 'exp'>): {
  writtenBy?: string;
  releaseDisagrees?: ReleaseDisagrees;
} {
  const signs = fingerprint(c);
  if (!signs) return {};
  const asked = c.exp.requested;
  if (!asked || asked.minor <= signs.upTo)
    return { writtenBy: `an older kube-proxy: ${signs.text}` };
  const releaseDisagrees = { read: `v1.${asked.minor}`, upTo: `v1.${signs.upTo}` };
  return {
    writtenBy: `an older kube-proxy than the ${releaseDisagrees.read} read for this node (its rules are not that release's: a kube-proxy that is not the one running, or a fork): ${signs.text}`,
    releaseDisagrees,
  };
}

/** Who wrote a dump kdebug does not model: the release the caller named, else an older
 * kube-proxy by the signs the dump shows; undefined when it is a modelled release's. */
function otherRelease(c: DriftContext, signs: string | undefined): Other | undefined {
  const asked = c.exp.requested;
  if (asked && asked.minor !== c.exp.release.minor) return { who: `kube-proxy v1.${asked.minor}` };
  return signs ? { who: 'an older kube-proxy' } : undefined;
}

/**
 * Compares one port's per-Service chains chain by chain (kube-proxy/expected.ts writes each chain's
 * rules together) and returns its shared-chain rules: nat texts and filter lines. Sampled (no
 * `diff`): undefined at the first difference, nothing recorded.
 */
function comparePort(
  c: DriftContext,
  rules: { nat: RuleLine[]; filter: RuleLine[] },
  seen: Uint8Array,
  diff?: () => Diff,
): { nat: RuleLine[]; filter: RuleLine[] } | undefined {
  const nat = rules.nat;
  const shared: RuleLine[] = [];
  let start = 0;
  for (let k = 1; k <= nat.length; k++) {
    if (k < nat.length && nat[k]!.chain === nat[start]!.chain) continue;
    const chain = nat[start]!.chain;
    if (chain === 'KUBE-SERVICES' || chain === 'KUBE-NODEPORTS')
      for (let i = start; i < k; i++) shared.push(nat[i]!);
    else {
      const index = diff
        ? compareChain(c.nat, chain, nat, start, k, diff)
        : sameSample(c.nat, chain, nat, start, k);
      if (index === -2) return undefined;
      if (index >= 0) seen[index] = 1;
    }
    start = k;
  }
  return { nat: shared, filter: rules.filter };
}

/** A sampled chain: the rule count and the sampled rules at their positions. Returns the
 * chain's index, or -2 when anything differs. */
function sameSample(
  nat: Table,
  chain: string,
  lines: RuleLine[],
  from: number,
  to: number,
): number {
  const c = nat.indexOf(chain);
  if (c < 0) return -2;
  const count = nat.ruleCountOf(c);
  for (let k = from; k < to; k++) {
    const l = lines[k]!;
    const index = l.index ?? k - from;
    const of = l.of ?? to - from;
    if (count !== of || !nat.textEquals(nat.ruleIdOf(c, index), l.text)) return -2;
  }
  return c;
}

/** One per-Service chain (expected lines [from, to)), in order; a difference adds both sides'
 * lines to the owner's diff. Returns the chain's index in the table, -1 when it has none. */
function compareChain(
  nat: Table,
  chain: string,
  lines: { text: string }[],
  from: number,
  to: number,
  diff: () => Diff,
): number {
  // by index, no Chain view made: every per-Service chain of every port differing comes here
  const c = nat.indexOf(chain);
  const count = c < 0 ? 0 : nat.ruleCountOf(c);
  let same = count === to - from;
  for (let k = 0; same && k < count; k++)
    same = nat.textEquals(nat.ruleIdOf(c, k), lines[from + k]!.text);

  if (same) return c;
  const d = diff();
  const line = (text: string) => ({ table: 'nat' as const, chain, text });
  // one line more on one side, the rest the same in order (an older release's moved rule): the
  // multisets below would leave that line alone
  const one = c < 0 ? undefined : oneMore(nat, c, lines, from, to);
  if (one !== undefined) {
    (one.expected ? d.expected : d.actual).push(line(one.text));
    return c;
  }
  const expected = lines.slice(from, to).map((l) => l.text);
  const actual = c < 0 ? [] : nat.ruleIdsOf(c).map((id) => nat.text(id));
  // the lines only one side has, as multisets, in each side's order
  const left = new Map<string, number>();
  for (const t of actual) left.set(t, (left.get(t) ?? 0) + 1);
  const before = d.expected.length + d.actual.length;
  for (const e of expected) {
    const n = left.get(e) ?? 0;
    if (n > 0) left.set(e, n - 1);
    else d.expected.push(line(e));
  }
  for (const t of actual) {
    const n = left.get(t) ?? 0;
    if (n > 0) {
      left.set(t, n - 1);
      d.actual.push(line(t));
    }
  }
  // the same lines in another order: show the chain as it is and as it should be
  if (d.expected.length + d.actual.length === before) {
    d.expected.push(...expected.map(line));
    d.actual.push(...actual.map(line));
  }
  return c;
}

/** The one line only one side of a chain has (expected lines [from, to), the dump's chain at
 * index `c`) where the rest are the same in order; undefined otherwise. */
function oneMore(
  nat: Table,
  c: number,
  lines: { text: string }[],
  from: number,
  to: number,
): { expected: boolean; text: string } | undefined {
  const count = nat.ruleCountOf(c);
  const expected = to - from === count + 1;
  if (!expected && count !== to - from + 1) return undefined;
  // the first place they part, then the rest one apart
  const n = Math.min(count, to - from);
  let k = 0;
  while (k < n && nat.textEquals(nat.ruleIdOf(c, k), lines[from + k]!.text)) k++;
  for (let i = k; i < n; i++)
    if (
      !(expected
        ? nat.textEquals(nat.ruleIdOf(c, i), lines[from + i + 1]!.text)
        : nat.textEquals(nat.ruleIdOf(c, i + 1), lines[from + i]!.text))
    )
      return undefined;
  return { expected, text: expected ? lines[from + k]!.text : nat.text(nat.ruleIdOf(c, k)) };
}

/** Service port names by name, chain hash and VIP ("10.96.0.10/32:53/udp"). */
interface Owners {
  byName: Set<string>;
  byHash: Map<string, string>;
  byVip: Map<string, string>;
}

function ownersOf(ports: ExpectedServicePort[]): Owners {
  const o: Owners = { byName: new Set(), byHash: new Map(), byVip: new Map() };
  for (const sp of ports) {
    o.byName.add(sp.name);
    o.byHash.set(sp.hash, sp.name);
    o.byVip.set(`${hostCidr(sp.clusterIP)}:${sp.port}/${sp.protocol}`, sp.name);
    for (const ips of [sp.externalIPs, sp.loadBalancerIPs])
      for (const ip of ips) o.byVip.set(`${hostCidr(ip)}:${sp.port}/${sp.protocol}`, sp.name);
  }
  return o;
}

/** Which Service port a rule of a shared chain belongs to ('' for the node's own rules). */
function ruleOwner(table: Table, id: number, { byName, byHash, byVip }: Owners): string {
  const comment = table.comment(id);
  if (comment !== undefined) {
    if (byName.has(comment)) return comment;
    for (const s of SUFFIXES)
      if (comment.endsWith(s) && byName.has(comment.slice(0, -s.length)))
        return comment.slice(0, -s.length);
    const fw = / traffic not accepted by KUBE-FW-[A-Z0-9]{16}$/.exec(comment);
    if (fw && byName.has(comment.slice(0, fw.index))) return comment.slice(0, fw.index);
  }
  const target = table.target(id);
  if (table.name === 'nat' && target && /^KUBE-(SVC|SVL|EXT|FW|XLB)-/.test(target)) {
    const owner = byHash.get(target.slice(-16));
    if (owner) return owner;
  }
  const d = table.destination(id);
  const owner = d ? byVip.get(`${d}:${table.dport(id)}/${table.protocol(id) ?? 'tcp'}`) : undefined;
  return owner ?? NODE;
}

/** Signs of an older kube-proxy in the dump, in words ("v1.20 or earlier: ..."), and the newest
 * release those in chains kube-proxy rewrites on every sync allow: a chain only an older release
 * or the kubelet made (KUBE-XLB, KUBE-MARK-DROP) outlives an upgrade, so it dates nothing. */
function fingerprint(
  c: Pick<DriftContext, 'nat' | 'filter'>,
): { text: string; upTo: number } | undefined {
  const signs: { what: string; upTo: number; rewritten: boolean }[] = [];
  const nat = c.nat;
  let xlb = false;
  for (let i = 0; i < nat.chainCount && !xlb; i++) xlb = nat.kindOf(i) === 'KUBE-XLB';
  if (xlb) signs.push({ what: 'KUBE-XLB chains', upTo: 23, rewritten: false });
  const services = nat.chain('KUBE-SERVICES');
  if (services?.ruleIds.some((id) => nat.target(id) === 'KUBE-MARK-MASQ'))
    signs.push({ what: 'masquerade rules in KUBE-SERVICES', upTo: 20, rewritten: true });
  const post = nat.chain('KUBE-POSTROUTING')?.rules ?? [];
  if (post.length === 1 && post[0]!.matches.some((m) => m.kind === 'mark'))
    signs.push({ what: 'a one-rule KUBE-POSTROUTING', upTo: 19, rewritten: true });
  if (nat.chain('KUBE-MARK-DROP'))
    signs.push({ what: "kubelet's KUBE-MARK-DROP", upTo: 27, rewritten: false });
  if (c.filter && !c.filter.chain('KUBE-PROXY-FIREWALL'))
    signs.push({ what: 'no KUBE-PROXY-FIREWALL', upTo: 24, rewritten: true });
  if (signs.length === 0) return undefined;
  const text = signs.map((x) => `${x.what} (v1.${x.upTo} or earlier)`).join(', ');
  return { text, upTo: Math.min(...signs.filter((x) => x.rewritten).map((x) => x.upTo)) };
}
