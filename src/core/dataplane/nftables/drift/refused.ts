// A Service port's packets dropped or rejected in nftables mode where kube-proxy's table would
// deliver them, judged by behaviour: where the node's table can drop or reject by a rule (or a
// base chain's policy) kube-proxy's table does not hold, the packets of each port that rule may
// catch are walked (trace.ts) through the node's table and through the one kube-proxy writes; a
// share kube-proxy DNATs to an endpoint that the node drops or rejects is
// service-traffic-diverted, naming what refused it (FILE:LINE). kube-proxy's own drops and rejects
// (no endpoints, source ranges, cluster-ips-check) are in both tables: a clean table walks nothing.
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import {
  describePacket,
  outcomeText,
  packetsFor,
} from '../../iptables/drift/behaviour/behaviour.js';
import type { Quote } from '../../drift.js';
import type { TraceOutcome, TracePacket } from '../../trace/trace.js';
import { expectedNftCommands, expectedNftTable } from '../expected/expected.js';
import { verdictOf, type NftChain, type NftRule, type NftTable } from '../read/listing.js';
import { traceNftPacket } from '../trace.js';
import { isObject } from '../trees/expr.js';
import { portChain } from '../trees/port-chain.js';
import { unreadNames } from '../trees/partial.js';
import { ruleAt, type PortCheck } from './context.js';
import { slicer, type Slicer } from './port-slice.js';
import { isAddress, signature } from './rule-signature.js';
import { containsAny } from '../../../ipv6.js';

/** What can refuse a packet in the node's table that kube-proxy's table does not hold there: a
 * rule, or a base chain's drop policy (no rule). */
interface Refuser {
  chain: NftChain;
  rule?: NftRule;
}

/** Adds service-traffic-diverted for each Service port whose packets the node's table drops or
 * rejects where kube-proxy's would send them to an endpoint; a port with an error already
 * (`flagged`) says why its packets go astray. */
export function refusedPorts(
  c: PortCheck,
  serviceCIDRs: string[],
  flagged: ReadonlySet<string>,
): void {
  // a line not read outside any one port's chains may be on every walk's way: none is walked
  if (c.unread.some((u) => unreadNames(u) === undefined)) return;
  const candidates = refusers(c.table);
  if (candidates.length === 0) return;
  const byName = new Map(c.exp.servicePorts.map((sp) => [sp.name, sp]));
  const portOf = (chain: string) => {
    const p = portChain(chain);
    return p ? byName.get(p.name) : undefined;
  };
  // kube-proxy's table for the ports whose chains hold a candidate: which of them it writes
  const owners = new Set(candidates.flatMap((x) => portOf(x.chain.name) ?? []));
  const theirs = (ports: ExpectedServicePort[]) =>
    expectedNftTable(expectedNftCommands({ ...c.exp, servicePorts: ports }, serviceCIDRs));
  const extra = unwritten(candidates, theirs([...owners]));
  // a chain of a port kube-proxy does not have now is orphan-chain's, not walked; one of a shared
  // chain may catch the ports its addresses say (every port, where they say nothing)
  const shared = extra.filter((x) => portChain(x.chain.name) === undefined);
  const first = c.exp.servicePorts[0];
  const sources = first ? packetsFor(c.exp, first).map((p) => p.src) : [];
  const catches = shared.map((x) => mayCatch(x.rule, c.exp.node.ips, sources));
  const walked = c.exp.servicePorts.filter(
    (sp) =>
      catches.some((may) => may(sp)) ||
      extra.some((x) => portChain(x.chain.name)?.name === sp.name),
  );
  if (walked.length === 0) return;
  const node = slicer(c.table);
  const want = slicer(theirs(walked));
  const unwrittenRules = new Set(extra.flatMap((x) => x.rule ?? []));
  const policies = extra.flatMap((x) => (x.rule ? [] : [x.chain.name]));
  const by = (o: TraceOutcome) => refusedBy(c, o, unwrittenRules, policies);
  for (const sp of walked)
    if (!flagged.has(sp.name) && c.bearing(sp.name) === undefined) walkPort(c, sp, node, want, by);
}

/** What refused a walk on the node, where a rule or policy kube-proxy does not write is on its
 * way: that rule (and the one it ended at, if another: a goto to kube-proxy's reject-chain), by
 * FILE:LINE, or the base chain's drop policy. */
interface RefusedBy {
  words: string;
  lines: (string | Quote)[];
}

/** One port's packets, walked through both tables (sliced to them); a finding where the node
 * refuses, by what kube-proxy does not write, a share kube-proxy delivers to an endpoint. */
function walkPort(
  c: PortCheck,
  sp: ExpectedServicePort,
  node: Slicer,
  want: Slicer,
  refusedBy: (o: TraceOutcome) => RefusedBy | undefined,
): void {
  const packets = packetsFor(c.exp, sp);
  const values: (string | number)[] = [...c.exp.node.ips, 40000];
  for (const p of packets) values.push(p.src, p.dst, p.dport ?? 0);
  for (const e of sp.allEndpoints) values.push(e.ip, e.port);
  const net = { localAddresses: c.exp.node.ips, interfaces: [] };
  const mine = node(values);
  const kubeProxys = want(values);
  const walks: { packet: TracePacket; got: TraceOutcome[]; wanted: TraceOutcome[] }[] = [];
  let by: RefusedBy | undefined;
  let verdict: string | undefined;
  for (const packet of packets) {
    const got = traceNftPacket(mine, net, packet).outcomes;
    // a walk stopped at what the listing does not hold says nothing
    if (got.some((o) => o.cut) || refusedShare(got) === 0) continue;
    const wanted = traceNftPacket(kubeProxys, net, packet).outcomes;
    const delivered = wanted.some((o) => o.verdict === 'ACCEPT' && o.dnat !== undefined);
    if (!delivered || refusedShare(got) <= refusedShare(wanted) + 1e-9) continue;
    // refused by what kube-proxy writes (a translation missing): the text checks say it
    const refused = got.filter((o) => o.verdict !== 'ACCEPT');
    const met = refused.map((o) => ({ o, by: refusedBy(o) })).find((x) => x.by);
    if (!met) continue;
    by ??= met.by;
    verdict ??= met.o.verdict;
    walks.push({ packet, got, wanted });
  }
  const first = walks[0];
  if (!first || !by) return;
  const verb = verdict === 'REJECT' ? 'rejected' : 'dropped';
  const n = walks.length;
  c.add('service-traffic-diverted', {
    service: sp.name,
    title: `${n === 1 ? '1 packet is' : `${n} packets are`} ${verb} on the node where kube-proxy would send ${n === 1 ? 'it' : 'them'} to the endpoints`,
    message: `walked through node ${c.node}'s table, ${describePacket(first.packet)} ends ${text(first.got)}, ${verb} by ${by.words}; through the table kube-proxy v1.${c.release.minor} writes it ends ${text(first.wanted)}, so it never reaches the endpoints.`,
    expected: walks.map((w) => `${describePacket(w.packet)}: ${text(w.wanted)}`),
    actual: [...by.lines, ...walks.map((w) => `${describePacket(w.packet)}: ${text(w.got)}`)],
  });
}

function refusedBy(
  c: PortCheck,
  o: TraceOutcome,
  unwritten: ReadonlySet<NftRule>,
  policies: string[],
): RefusedBy | undefined {
  // a walk's rule is its place in its chain (1 on)
  const ruleOf = (m: TraceOutcome['rules'][number]) => c.table.chain(m.chain)?.rules[m.line - 1];
  const last = o.rules.at(-1);
  const end = last && /\b(?:drop|reject)\b/.test(last.effect) ? last : undefined;
  const placed = o.rules.find((m) => {
    const r = ruleOf(m);
    return r !== undefined && unwritten.has(r);
  });
  if (placed) {
    // the rule kube-proxy does not write is the difference; its reject-chain is as written
    const lines = [
      ruleAt(c.source, ruleOf(placed)!),
      ...(end && end !== placed ? [ruleAt(c.source, ruleOf(end)!, true)] : []),
    ];
    const words =
      lines.length > 1
        ? `${placed.chain} (${lines[0]!.text}), then ${end!.chain} (${lines[1]!.text})`
        : `${placed.chain} (${lines[0]!.text})`;
    return { words, lines };
  }
  // ended by a base chain's policy, not by a rule
  if (end || policies.length === 0) return undefined;
  return {
    words: `${policies.join(' or ')}'s policy drop`,
    lines: policies.map((x) => `${c.source}: chain ${x} policy drop`),
  };
}

const refusedShare = (os: TraceOutcome[]) =>
  os.reduce((n, o) => n + (o.verdict === 'ACCEPT' ? 0 : o.probability), 0);

/** A walk's outcomes in words, alike ones merged: "50% -> 10.244.1.3:80, 50% -> DROP". */
function text(os: TraceOutcome[]): string {
  const merged = new Map<string, number>();
  for (const o of os) {
    const to = o.verdict !== 'ACCEPT' ? o.verdict : o.dnat;
    const k = to ?? '';
    merged.set(k, (merged.get(k) ?? 0) + o.probability);
  }
  return [...merged]
    .map(([to, share]) =>
      outcomeText({
        share,
        ...(to === 'DROP' || to === 'REJECT' ? { refused: to } : to ? { dnat: to } : {}),
        masquerade: false,
      }),
    )
    .sort()
    .join(', ');
}

/** The node's rules that can end a packet dropped or rejected (a drop or reject, or a jump or
 * goto to a chain that can), and its base chains whose policy is drop. */
function refusers(t: NftTable): Refuser[] {
  const memo = new Map<string, boolean>();
  const refusing = (name: string): boolean => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    memo.set(name, false); // a loop refuses nothing by itself
    const chain = t.chain(name);
    const r = chain?.rules.some((x) => refuses(x, refusing)) ?? false;
    memo.set(name, r);
    return r;
  };
  const out: Refuser[] = [];
  for (const chain of t.chains) {
    if (chain.hook && chain.policy === 'drop') out.push({ chain });
    for (const rule of chain.rules) if (refuses(rule, refusing)) out.push({ chain, rule });
  }
  return out;
}

/** The rule drops or rejects, or jumps or goes to a chain that can, as read (nft's JSON, or the
 * text a listing kept). */
function refuses(r: NftRule, refusing: (chain: string) => boolean): boolean {
  const verdict = (v: unknown) => {
    const x = verdictOf(v);
    return !!x && (x.kind === 'drop' || x.kind === 'reject' || (!!x.target && refusing(x.target)));
  };
  for (const e of r.expr) {
    if (verdict(e)) return true;
    const vmap = e['vmap'];
    const data = isObject(vmap) && isObject(vmap['data']) ? vmap['data']['set'] : undefined;
    if (Array.isArray(data) && data.some((pair) => Array.isArray(pair) && verdict(pair[1])))
      return true;
    const m = e['match'];
    if (
      isObject(m) &&
      typeof m['text'] === 'string' &&
      /(?:^|\s)(?:drop|reject)(?:\s|$)/.test(m['text'])
    )
      return true;
  }
  return false;
}

/** Which ports' packets a rule of a shared chain may catch, as far as the addresses it names
 * say: those with one of them as an address, an endpoint or a node address (a node port); every
 * port where it names none, negates a match, or names one of the walks' sources. */
function mayCatch(
  rule: NftRule | undefined,
  nodeIPs: string[],
  /** Where the walks send packets from (a Pod, outside, the node): the same for every port. */
  sources: string[],
): (sp: ExpectedServicePort) => boolean {
  const all = () => true;
  if (!rule) return all; // a base chain's policy
  const negated = rule.expr.some((e) => {
    const m = e['match'];
    return (
      isObject(m) &&
      (m['op'] === '!=' || (typeof m['text'] === 'string' && m['text'].includes('!=')))
    );
  });
  const named = signature(rule).split(' ').filter(isAddress);
  if (negated || named.length === 0) return all;
  const holds = (ip: string) => named.some((cidr) => containsAny(cidr, ip));
  if (sources.some(holds)) return all;
  return (sp) =>
    holds(sp.clusterIP) ||
    sp.externalIPs.some(holds) ||
    sp.loadBalancerIPs.some(holds) ||
    sp.allEndpoints.some((e) => holds(e.ip)) ||
    (sp.nodePort !== undefined && nodeIPs.some(holds));
}

/** The candidates kube-proxy's table (`want`) does not hold: a rule whose chain there has none of
 * its signature left, a drop policy where kube-proxy's chain accepts. */
function unwritten(candidates: Refuser[], want: NftTable): Refuser[] {
  const left = new Map<string, string[]>();
  const signatures = (chain: string) => {
    let xs = left.get(chain);
    if (!xs) left.set(chain, (xs = (want.chain(chain)?.rules ?? []).map(signature)));
    return xs;
  };
  return candidates.filter(({ chain, rule }) => {
    if (!rule) return want.chain(chain.name)?.policy !== 'drop';
    const xs = signatures(chain.name);
    const i = xs.indexOf(signature(rule));
    if (i < 0) return true;
    xs.splice(i, 1);
    return false;
  });
}
