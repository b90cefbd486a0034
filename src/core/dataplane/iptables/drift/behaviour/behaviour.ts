// What a Service port's rules do, compared by walking the same packets (src/core/trace) through
// the node's rules and through the rules kube-proxy would write: where the dump is spelled by a
// release kdebug does not model, only where packets go counts, never how the rules read.
import { expectedSave, type ExpectedRules } from '../../../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import { parseIptables, type Ruleset } from '../../read/parse.js';
import { RuleFlag } from '../../read/token-walk.js';
import { formatIPv4, parseCidr } from '../../../../ipv4.js';
import { lineAt } from '../../../drift.js';
import { cidrHolds, formatIPv6, hostPort, parseCidr6 } from '../../../../ipv6.js';
import { tracePacket } from '../../trace/trace.js';
import { numberedPort, renamer, type NumberedPort } from './port-names.js';
import type { DiffLine } from './by-behaviour.js';
import { hexMark, servicePortRules, type RuleLine } from '../../rule-text.js';
import { markMasqSets } from '../node.js';
import type { MatchedRule, NodeNetwork, TracePacket } from '../../../trace/trace.js';

/** Where kube-proxy's rules send a share of a packet's connections. */
export interface WalkOutcome {
  share: number;
  /** The DNAT's "IP:PORT"; undefined: the destination is unchanged. */
  dnat?: string;
  /** A REJECT or DROP in a KUBE- chain stopped it. */
  refused?: 'REJECT' | 'DROP';
  /** It carries kube-proxy's masquerade mark (never said of a packet refused). */
  masquerade: boolean;
  /** The node's side only, where refused: what the walk met (no part of the comparison). */
  met?: RefusedBy;
}

/** The rule that refused a packet, the mark it then carried and the rules that set it. */
export interface RefusedBy {
  rule: MatchedRule;
  mark: number;
  marked: MatchedRule[];
}

/** One packet the two rule sets treat differently: its walks' outcomes and their text. */
export interface BehaviourDiff {
  packet: string;
  sent: TracePacket;
  expected: string;
  actual: string;
  wanted: WalkOutcome[];
  got: WalkOutcome[];
  /** A share kube-proxy's rules deliver to an endpoint is dropped or rejected on the node. */
  refused: boolean;
}

/** The rules kube-proxy would write, parsed, in the tables the node's dump holds: a nat-only
 * dump is not walked into kube-proxy's filter rules. With `ports`, only theirs and the fixed
 * chains: enough to walk packets to those ports (portsMeeting says which). */
export function wantedRules(
  exp: ExpectedRules,
  actual: Ruleset,
  ports?: ExpectedServicePort[],
): Ruleset {
  const tables = (['filter', 'nat'] as const).filter((t) => actual.table(t));
  const only = ports ? { ...exp, servicePorts: ports } : exp;
  return parseIptables(expectedSave(only, { header: false, tables }));
}

/**
 * The Service ports whose rules a packet to one port's addresses and ports can meet: itself and
 * those that name one of them (a shared external IP, a Service's other ports), and where one of
 * its addresses is the node's own, those whose node port is its port (a packet to a node address
 * meets the node ports too). Every other rule kube-proxy writes matches another port's own
 * destination, or sits in its own chains.
 */
export function portsMeeting(
  exp: ExpectedRules,
): (sp: ExpectedServicePort) => ExpectedServicePort[] {
  const by = new Map<string, ExpectedServicePort[]>();
  const node = new Set(exp.node.ips);
  const keysOf = (sp: ExpectedServicePort) => {
    const hosts = [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs];
    const ports = [sp.nodePort, sp.healthCheckNodePort];
    if (hosts.some((h) => node.has(h))) ports.push(sp.port);
    return [...hosts, ...ports.flatMap((n) => (n === undefined ? [] : [`:${n}`]))];
  };
  for (const sp of exp.servicePorts)
    for (const k of keysOf(sp)) {
      const xs = by.get(k);
      if (xs) xs.push(sp);
      else by.set(k, [sp]);
    }
  // in kube-proxy's order: where two ports claim one address and port, the first rule wins
  const order = new Map(exp.servicePorts.map((sp, i) => [sp, i]));
  return (sp) =>
    [...new Set(keysOf(sp).flatMap((k) => by.get(k) ?? []))].sort(
      (a, b) => order.get(a)! - order.get(b)!,
    );
}

/** The packets whose walk differs between the node's rules and kube-proxy's (`want`, from
 * wantedRules; none: the same). */
export function behaviourDiffers(
  exp: ExpectedRules,
  want: Ruleset,
  actual: Ruleset,
  sp: ExpectedServicePort,
): BehaviourDiff[] {
  const net: NodeNetwork = { localAddresses: exp.node.ips, interfaces: [] };
  const out: BehaviourDiff[] = [];
  const masq = { want: marksMasq(want, exp), actual: marksMasq(actual, exp) };
  for (const packet of packetsFor(exp, sp)) {
    const wanted = outcomes(want, net, packet, masq.want);
    const got = outcomes(actual, net, packet, masq.actual, true);
    const expected = outcomesText(wanted);
    const text = outcomesText(got);
    if (expected === text) continue;
    const refused =
      wanted.some((o) => o.dnat !== undefined && !o.refused) &&
      refusedShare(got) > refusedShare(wanted) + 1e-9;
    out.push({
      packet: describePacket(packet),
      sent: packet,
      expected,
      actual: text,
      wanted,
      got,
      refused,
    });
  }
  return out;
}

const refusedShare = (os: WalkOutcome[]) => os.reduce((n, o) => n + (o.refused ? o.share : 0), 0);

/** The rules' KUBE-MARK-MASQ sets kube-proxy's masquerade mark (masqueradeBit, from its flags
 * or configuration): one that sets another bit marks for something else, never masquerade. */
const marksMasq = (rs: Ruleset, exp: ExpectedRules): boolean => {
  const nat = rs.table('nat');
  return nat !== undefined && (markMasqSets(nat) & exp.masqueradeMark) === exp.masqueradeMark;
};

// a chain of one Service port: KUBE-SVC-, KUBE-SEP- ... and its 16-character hash
const PORT_CHAIN = /^KUBE-(?:SVC|SVL|SEP|EXT|FW|XLB)-[A-Z0-9]{16}$/;

/** The rules of the chains every Service port's packets pass through (KUBE-SERVICES,
 * KUBE-NODEPORTS, the built-in chains ...), by the one host (`-d`) or, without one, the one
 * port (`--dport`) they match; `ranges`: the destinations and ports of the others (a CIDR, a
 * negated match, a port range or list), which ports of one shape may meet differently. */
export interface SharedRules {
  byName: Map<string, string[]>;
  ranges: { cidrs: ((address: string) => boolean)[]; ports: [number, number][] };
}

/** The shared rules of the node's nat and filter tables, read once per drift. */
export function sharedRules(actual: Ruleset): SharedRules {
  const byName = new Map<string, string[]>();
  const ranges: SharedRules['ranges'] = { cidrs: [], ports: [] };
  const addTo = (key: string, text: string) => {
    const xs = byName.get(key);
    if (xs) xs.push(text);
    else byName.set(key, [text]);
  };
  for (const t of actual.tables)
    // by index, a port's own chains by the kind their name reads as (PORT_CHAIN's): no Chain
    // view nor name made for the 100,000 of a large node
    for (let c = 0; c < t.chainCount; c++) {
      if (t.kindOf(c) !== undefined) continue;
      // rules that name no destination or port meet every port's packets: where a port's rule
      // stands among them is part of what its packets meet, so each of its rules says how many
      // come before it in the chain
      let catchAll = 0;
      const add = (key: string, text: string) => addTo(key, `${text} @${catchAll}`);
      const count = t.ruleCountOf(c);
      for (let k = 0; k < count; k++) {
        const id = t.ruleIdOf(c, k);
        // -d and --dport as the table read them (a comment's words are no match)
        const flags = t.flags(id);
        const dst = t.destination(id);
        const dport = t.dport(id);
        if (dst !== undefined) {
          const host = dst.replace(/\/(?:32|128)$/, '');
          if (flags & RuleFlag.dstNegated || host.includes('/')) ranges.cidrs.push(cidrHolds(dst));
          else add(host, t.text(id));
        } else if (dport !== undefined && !(flags & RuleFlag.dportNegated) && /^\d+$/.test(dport))
          add(dport, t.text(id));
        else {
          // a negated port, a range, or multiport's list: the ports it may match
          const ports = dport ?? / --dports (\S+)/.exec(t.text(id))?.[1];
          if (ports === undefined) catchAll++;
          for (const p of ports?.split(',') ?? []) {
            const [a, b] = p.split(':').map(Number);
            ranges.ports.push(
              flags & RuleFlag.dportNegated ? [0, 65535] : [a ?? 0, b ?? a ?? 65535],
            );
          }
        }
      }
    }
  return { byName, ranges };
}

/** A Service port's rules and differences from kube-proxy's, to key its walks by. */
export type KeyOf = (
  sp: ExpectedServicePort,
  diff: { expected: readonly DiffLine[]; actual: readonly DiffLine[] },
) => string | undefined;

/**
 * Keys the Service ports of one drift by what their walks meet: a port's rules, its differences
 * from kube-proxy's and the shared rules that name its addresses or ports, with what is the
 * port's own (its addresses, ports, endpoints, chains) numbered (port-names.ts) and comments
 * numbered in order of first use. Two ports with the same key hold the same rules but for their
 * own names, and meet the same shared rules, so the same packets go the same way, renamed, and
 * one walk tells for both. Undefined where that does not hold: a rule matches a range of
 * destinations, or one of the port's addresses is one the walks send packets from. The rules of
 * each shape (port-names.ts) are written once, and stand in the key by their number.
 */
export function behaviourKeys(
  exp: ExpectedRules,
  shared: SharedRules,
  chainRules: (table: string, chain: string) => readonly string[],
): KeyOf {
  // every source sends to the cluster IP
  const { pod, outside, node } = sourcesOf(exp);
  const shapes = new Map<string, Shaped>(); // by the shape's key (numberedPort's)
  const written = new Map<string, number>(); // a shape's numbered rules, one number per text
  const marks = new Map<string, Marking>(); // by a shape's number and its differing lines
  const shaped = (port: NumberedPort): Shaped => {
    let s = shapes.get(port.key);
    if (s) return s;
    const rules = servicePortRules(port.shape(), exp.ruleContext);
    const text = (['nat', 'filter'] as const)
      .flatMap((table) => rules[table].map((r) => `${table} ${r.text}`))
      .join('\n');
    let id = written.get(text);
    if (id === undefined) written.set(text, (id = written.size));
    shapes.set(port.key, (s = { id, rules }));
    return s;
  };
  return (sp, diff) => {
    // plain loops: this runs for every Service port of the node
    const hosts = [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs];
    const addresses = hosts.slice();
    const numbers = sp.nodePort === undefined ? [sp.port] : [sp.port, sp.nodePort];
    for (const e of sp.allEndpoints) {
      addresses.push(e.ip);
      numbers.push(e.port);
    }
    if (
      addresses.some((ip) => ip === pod || ip === outside || ip === node) ||
      shared.ranges.cidrs.some((holds) => addresses.some(holds)) ||
      shared.ranges.ports.some(([a, b]) => numbers.some((n) => n >= a && n <= b))
    )
      return undefined;
    const numbered = numberedPort(sp);
    const { id, rules } = shaped(numbered);
    // the differences kube-proxy's side has are the port's own lines, renamed as numberedPort
    // numbers them: each is marked where it stands (by its place among the shape's rules); ports
    // of one shape mostly differ alike, so each shape's marking of those lines is made once
    let own = `#${id}`;
    if (diff.expected.length > 0) {
      const rename = renamer(numbered, true);
      for (const l of diff.expected) own += `\n${l.table} ${rename(l.text)}`;
    }
    let mark = marks.get(own);
    if (!mark) marks.set(own, (mark = markDiffers(rules, diff.expected.length > 0 ? own : '')));
    // the port's own chains the node's side differs in, whole and in order: a rule's place in its
    // chain is part of what it does (a DROP before the jumps, or after the last); in the shared
    // chains the rules met below keep their order
    const differed = new Map<string, DiffLine>(); // one line of each chain, by "table chain"
    for (const l of diff.actual)
      if (PORT_CHAIN.test(l.chain)) differed.set(`${l.table} ${l.chain}`, l);
    const placed = [...differed].flatMap(([at, l]) => [`@ ${at}`, ...chainRules(l.table, l.chain)]);
    const met: string[] = [];
    const meet = (k: string) => {
      const rules = shared.byName.get(k);
      if (rules) for (const r of rules) met.push(r);
    };
    for (const h of hosts) meet(h);
    for (const n of numbers) meet(String(n));
    const renamed = renamer(numbered);
    return [
      sp.protocol,
      (mark.said ??= [`#${id} ${mark.marked.join(',')}`, '-', ...mark.left].join('\n')),
      '+',
      ...diff.actual.map((l) => `-t ${l.table} ${renamed(l.text)}`),
      ...placed.map(renamed),
      '=',
      ...met.map(renamed),
    ].join('\n');
  };
}

/** The places among a shape's rules of the lines kube-proxy's side has that the node's lacks,
 * and those of them the shape does not write ("table text" each). */
interface Marking {
  marked: number[];
  left: string[];
  /** Both as the key says them, made once. */
  said?: string;
}

/** Marks the differing lines (`own`: the shape's number, then "table text" a line each, renamed
 * as numberedPort numbers them; '' for none) where they stand among the shape's rules. */
function markDiffers(rules: Shaped['rules'], own: string): Marking {
  const differs = { nat: new Map<string, number>(), filter: new Map<string, number>() };
  const marked: number[] = [];
  if (own !== '') {
    for (const line of own.split('\n').slice(1)) {
      const space = line.indexOf(' ');
      const table = line.slice(0, space) as 'nat' | 'filter';
      const k = line.slice(space + 1);
      differs[table].set(k, (differs[table].get(k) ?? 0) + 1);
    }
    let at = 0;
    for (const table of ['nat', 'filter'] as const)
      for (const r of rules[table]) {
        const n = differs[table].size > 0 ? differs[table].get(r.text) : undefined;
        if (n) {
          differs[table].set(r.text, n - 1);
          marked.push(at);
        }
        at++;
      }
  }
  const left = (['nat', 'filter'] as const).flatMap((table) =>
    [...differs[table]].flatMap(([l, n]) => Array<string>(n).fill(`${table} ${l}`)),
  );
  return { marked, left };
}

/** A shape's numbered rules, and their number among the texts of the shapes met. */
interface Shaped {
  id: number;
  rules: { nat: RuleLine[]; filter: RuleLine[] };
}

/** Where kube-proxy's rules send a packet, alike outcomes merged: its DNAT, its mark for
 * masquerade (`masq`: KUBE-MARK-MASQ sets kube-proxy's mark) and a REJECT or DROP in a KUBE-
 * chain, whichever rule it is; what the node's other rules do (a CNI's masquerade, a host
 * firewall) is not kube-proxy's and not compared. `said`: what refused it is kept, for words. */
function outcomes(
  rs: Ruleset,
  net: NodeNetwork,
  packet: TracePacket,
  masq: boolean,
  said = false,
): WalkOutcome[] {
  const merged = new Map<string, WalkOutcome>();
  for (const o of tracePacket(rs, net, packet).outcomes) {
    const last = o.rules.at(-1);
    const refused =
      o.verdict !== 'ACCEPT' && last?.chain.startsWith('KUBE-') ? o.verdict : undefined;
    const w: WalkOutcome = refused
      ? {
          share: o.probability,
          refused,
          masquerade: false,
          ...(said && last
            ? { met: { rule: last, mark: o.mark, marked: marking(rs, o.rules) } }
            : {}),
        }
      : {
          share: o.probability,
          ...(o.dnat ? { dnat: o.dnat } : {}),
          masquerade: masq && o.rules.some((r) => r.chain === 'KUBE-MARK-MASQ'),
        };
    const key = outcomeText({ ...w, share: 0 });
    const m = merged.get(key);
    if (m) m.share += w.share;
    else merged.set(key, w);
  }
  return [...merged.values()];
}

/** The rules of a walk that set a mark, as read (a rule's typed target, by its line). */
function marking(rs: Ruleset, rules: MatchedRule[]): MatchedRule[] {
  return rules.filter((m) => {
    const t = rs.table(m.table);
    const id = m.line > 0 ? (t?.ruleAtLine(m.line) ?? -1) : -1;
    return id >= 0 && t!.rule(id).target?.kind === 'mark';
  });
}

/** What refused a walk on the node, in words: "dropped by filter KUBE-FIREWALL (FILE:136: -A
 * KUBE-FIREWALL ...)", and the mark the packet then carried and the rules that set it. */
export function refusedText(
  rs: Ruleset,
  source: string,
  masqueradeMark: number,
  o: WalkOutcome,
): string {
  const verb = o.refused === 'REJECT' ? 'rejected' : 'dropped';
  const m = o.met;
  if (!m) return verb;
  const at = (r: MatchedRule) => {
    const t = rs.table(r.table);
    const id = t && r.line > 0 ? t.ruleAtLine(r.line) : -1;
    return lineAt(source, r.line > 0 ? r.line : undefined, id >= 0 ? t!.text(id) : r.rule);
  };
  const by = `${verb} by ${m.rule.table} ${m.rule.chain} (${at(m.rule)})`;
  if (m.mark === 0) return by;
  const set = m.marked.length > 0 ? `, set by ${m.marked.map(at).join(' and ')}` : '';
  return `${by}, the packet carrying mark ${hexMark(m.mark)} (kube-proxy masquerades ${hexMark(masqueradeMark)})${set}`;
}

/** "50% -> 10.0.0.1:80 masquerade": an outcome as text, its share first. */
export const outcomeText = (o: WalkOutcome): string =>
  `${Math.round(o.share * 1000) / 10}% -> ${o.refused ?? o.dnat ?? 'unchanged'}${o.masquerade ? ' masquerade' : ''}`;

/** The outcomes as a sorted list of outcomeText. */
const outcomesText = (os: WalkOutcome[]): string => os.map(outcomeText).sort().join(', ');

/** "tcp from 10.244.0.201 to 10.96.0.10:53": a walk's packet in words. */
export const describePacket = (p: TracePacket) =>
  `${p.protocol} ${p.fromHost ? `from the node (${p.src})` : `from ${p.src}`} to ${hostPort(p.dst, p.dport ?? 0)}`;

/** Where the walks send packets from: a Pod, a client outside the cluster, the node. */
function sourcesOf(exp: ExpectedRules): { pod?: string; outside: string; node?: string } {
  const v6 = exp.ruleContext.family === 'IPv6';
  const pod = hostOf(exp.localDetector?.ifLocal.source ?? exp.node.podCIDR, v6);
  // TEST-NET / documentation addresses: a client outside the cluster
  const outside = v6 ? '2001:db8:ffff::77' : '198.51.100.77';
  return { pod, outside, node: exp.node.ips[0] };
}

/** A Pod's, an outside client's and the node's packet to each of the port's addresses (and an
 * outside client's to its node port): the packets drift by behaviour walks in every mode. */
export function packetsFor(exp: ExpectedRules, sp: ExpectedServicePort): TracePacket[] {
  const { pod, outside, node } = sourcesOf(exp);
  const sources: [string, boolean][] = [
    ...(pod ? [[pod, false] as [string, boolean]] : []),
    [outside, false],
    ...(node ? [[node, true] as [string, boolean]] : []),
  ];
  const to = (dst: string, dport: number) =>
    sources.map(([src, fromHost]) => ({ src, dst, dport, protocol: sp.protocol, fromHost }));
  return [
    ...to(sp.clusterIP, sp.port),
    ...[...sp.externalIPs, ...sp.loadBalancerIPs].flatMap((ip) => to(ip, sp.port)),
    ...(sp.nodePort !== undefined && node
      ? [{ src: outside, dst: node, dport: sp.nodePort, protocol: sp.protocol, fromHost: false }]
      : []),
  ];
}

/** An address inside `cidr` that no kube-proxy rule names (its 201st host). */
function hostOf(cidr: string | undefined, v6: boolean): string | undefined {
  if (!cidr) return undefined;
  if (v6) {
    const c = parseCidr6(cidr);
    return c && formatIPv6(c.network + 201n);
  }
  const c = parseCidr(cidr);
  return c && formatIPv4(c.network + 201);
}
