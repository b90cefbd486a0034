// What a Service port's rules do, compared by walking the same packets (src/core/trace) through
// the node's rules and through the rules kube-proxy would write: where the dump is spelled by a
// release kdebug does not model, only where packets go counts, never how the rules read.
import { expectedSave, rulesOf, type ExpectedRules } from '../../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import { parseIptables, type Ruleset } from '../read/parse.js';
import { RuleFlag } from '../read/token-walk.js';
import { formatIPv4, parseCidr } from '../../../ipv4.js';
import { cidrHolds, formatIPv6, hostCidr, hostPort, parseCidr6 } from '../../../ipv6.js';
import { tracePacket } from '../trace.js';
import type { NodeNetwork, TracePacket } from '../../trace/trace.js';

/** Where kube-proxy's rules send a share of a packet's connections. */
export interface WalkOutcome {
  share: number;
  /** The DNAT's "IP:PORT"; undefined: the destination is unchanged. */
  dnat?: string;
  /** kube-proxy's REJECT or DROP stopped it. */
  refused?: 'REJECT' | 'DROP';
  masquerade: boolean;
}

/** One packet the two rule sets treat differently: its walks' outcomes and their text. */
export interface BehaviourDiff {
  packet: string;
  sent: TracePacket;
  expected: string;
  actual: string;
  wanted: WalkOutcome[];
  got: WalkOutcome[];
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
  for (const packet of packetsFor(exp, sp)) {
    const wanted = outcomes(want, net, packet);
    const got = outcomes(actual, net, packet);
    const expected = outcomesText(wanted);
    const text = outcomesText(got);
    if (expected !== text)
      out.push({ packet: describe(packet), sent: packet, expected, actual: text, wanted, got });
  }
  return out;
}

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
    for (const c of t.chains) {
      if (PORT_CHAIN.test(c.name)) continue;
      // rules that name no destination or port meet every port's packets: where a port's rule
      // stands among them is part of what its packets meet, so each of its rules says how many
      // come before it in the chain
      let catchAll = 0;
      const add = (key: string, text: string) => addTo(key, `${text} @${catchAll}`);
      for (const id of c.ruleIds) {
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

/**
 * One Service port's rules, its differences from kube-proxy's and the shared rules that name its
 * addresses or ports, with what is the port's own (its addresses, ports, endpoints, chains) and
 * comments numbered in order of first use: two ports with the same key hold the same rules but
 * for their own names, and meet the same shared rules, so the same packets go the same way,
 * renamed, and one walk tells for both. Undefined where that does not hold: a rule matches a
 * range of destinations, or one of the port's addresses is one the walks send packets from.
 */
export function behaviourKey(
  exp: ExpectedRules,
  sp: ExpectedServicePort,
  diff: { expected: readonly string[]; actual: readonly string[] },
  shared: SharedRules,
  chainRules: (table: string, chain: string) => readonly string[],
): string | undefined {
  const hosts = [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs];
  const endpoints = sp.allEndpoints;
  const addresses = [...hosts, ...endpoints.map((e) => e.ip)];
  const numbers = [sp.port, sp.nodePort, ...endpoints.map((e) => e.port)].flatMap((n) =>
    n === undefined ? [] : [n],
  );
  // every source sends to the cluster IP
  const { pod, outside, node } = sourcesOf(exp);
  if (
    addresses.some((ip) => ip === pod || ip === outside || ip === node) ||
    shared.ranges.cidrs.some((holds) => addresses.some(holds)) ||
    shared.ranges.ports.some(([a, b]) => numbers.some((n) => n >= a && n <= b))
  )
    return undefined;
  const ports = numbers.map(String);
  const own = new Set<string>([...hosts, ...ports]);
  for (const h of hosts) own.add(hostCidr(h));
  for (const e of endpoints) {
    own.add(e.ip).add(e.address).add(hostCidr(e.ip));
  }
  for (const c of Object.values(sp.chains)) if (c) own.add(c);
  // the port's rules made afresh: the key of every port need not keep them (40 MB at 10,000)
  const rules = rulesOf(exp, sp);
  const renamed = renamer(own);
  // the differences kube-proxy's side has are the port's own lines: each is marked where it
  // stands, not renamed twice
  const differs = new Map<string, number>();
  const differing = { nat: new Set<string>(), filter: new Set<string>() };
  // their lengths: a rule of another length is not looked up (hashing each rule's text was a
  // fifth of a key's time)
  const lengths = new Set<number>();
  for (const l of diff.expected) {
    differs.set(l, (differs.get(l) ?? 0) + 1);
    if (l.startsWith('-t nat ')) differing.nat.add(l.slice(7));
    else if (l.startsWith('-t filter ')) differing.filter.add(l.slice(10));
    else continue;
    lengths.add(l.length - (l.startsWith('-t nat ') ? 7 : 10));
  }
  const chains = new Map<string, string>();
  const line = (table: 'nat' | 'filter', r: { chain: string; text: string }) => {
    let chain = chains.get(r.chain);
    if (chain === undefined) chains.set(r.chain, (chain = renamed(r.chain, table)));
    const key =
      lengths.has(r.text.length) && differing[table].has(r.text)
        ? `-t ${table} ${r.text}`
        : undefined;
    const n = key === undefined ? 0 : differs.get(key);
    if (key !== undefined && n) differs.set(key, n - 1);
    return `${chain} ${renamed(r.text, table)}${n ? ' -' : ''}`;
  };
  const lines = [
    sp.protocol,
    ...rules.nat.map((r) => line('nat', r)),
    ...rules.filter.map((r) => line('filter', r)),
  ];
  const left = [...differs].flatMap(([l, n]) => Array<string>(n).fill(l));
  // the port's own chains the node's side differs in, whole and in order: a rule's place in its
  // chain is part of what it does (a DROP before the jumps, or after the last); in the shared
  // chains the rules met below keep their order
  const differed = new Set<string>();
  for (const l of diff.actual) {
    const [, table, , chain] = l.split(' ', 4) as [string, string, string, string];
    if (PORT_CHAIN.test(chain)) differed.add(`${table} ${chain}`);
  }
  const placed = [...differed].flatMap((at) => {
    const [table, chain] = at.split(' ') as [string, string];
    return [`@ ${at}`, ...chainRules(table, chain)];
  });
  const met = [...hosts, ...ports].flatMap((k) => shared.byName.get(k) ?? []);
  return [
    ...lines,
    '-',
    ...left.map((l) => renamed(l)),
    '+',
    ...diff.actual.map((l) => renamed(l)),
    ...placed.map((l) => renamed(l)),
    '=',
    ...met.map((l) => renamed(l)),
  ].join('\n');
}

/**
 * Renames a port's own words and every comment in a text to <0>, <1> ... in order of first use.
 * A word is a quoted comment whole, spaces and all, else up to the next space. A word of the
 * port's nat rules (renamed first, `table` 'nat') that names a port chain is its own, there and
 * after. Scanned by hand, a word looked up only where it starts as an own word can: a regex's
 * callback per word was most of the time of a key.
 */
function renamer(own: Set<string>): (text: string, table?: 'nat' | 'filter') => string {
  const first = new Uint8Array(128);
  for (const w of own) {
    const c = w.charCodeAt(0);
    if (c < 128) first[c] = 1;
  }
  first[34] = 1; // a comment
  first[75] = 1; // K: a port chain
  const seen = new Map<string, string>();
  const isOwn = (word: string, nat: boolean) => {
    if (own.has(word)) return true;
    if (!nat || !PORT_CHAIN.test(word)) return false;
    own.add(word);
    return true;
  };
  return (text, table) => {
    const nat = table === 'nat';
    let out = '';
    let done = 0; // text[0, done) is in out
    const n = text.length;
    let i = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32) {
        i++;
        continue;
      }
      let end = i + 1;
      if (c === 34) {
        while (end < n && text.charCodeAt(end) !== 34) end++;
        if (end < n) end++;
        else for (end = i + 1; end < n && text.charCodeAt(end) !== 32;) end++;
      } else while (end < n && text.charCodeAt(end) !== 32) end++;
      if (c >= 128 || first[c]) {
        const word = text.slice(i, end);
        if (c === 34 || isOwn(word, nat)) {
          let name = seen.get(word);
          if (name === undefined) seen.set(word, (name = `<${seen.size}>`));
          out += text.slice(done, i) + name;
          done = end;
        }
      }
      i = end;
    }
    return done === 0 ? text : out + text.slice(done);
  };
}

/** Where kube-proxy's rules send a packet, alike outcomes merged: its DNAT, its mark for
 * masquerade and its REJECT or DROP; what the node's other rules do (a CNI's masquerade, a host
 * firewall) is not kube-proxy's and not compared. */
function outcomes(rs: Ruleset, net: NodeNetwork, packet: TracePacket): WalkOutcome[] {
  const merged = new Map<string, WalkOutcome>();
  for (const o of tracePacket(rs, net, packet).outcomes) {
    const last = o.rules.at(-1);
    const refused =
      o.verdict !== 'ACCEPT' && last?.chain.startsWith('KUBE-') ? o.verdict : undefined;
    const masquerade = o.rules.some((r) => r.chain === 'KUBE-MARK-MASQ');
    const w: WalkOutcome = refused
      ? { share: o.probability, refused, masquerade }
      : { share: o.probability, ...(o.dnat ? { dnat: o.dnat } : {}), masquerade };
    const key = outcomeText({ ...w, share: 0 });
    const m = merged.get(key);
    if (m) m.share += w.share;
    else merged.set(key, w);
  }
  return [...merged.values()];
}

/** "50% -> 10.0.0.1:80 masquerade": an outcome as text, its share first. */
export const outcomeText = (o: WalkOutcome): string =>
  `${Math.round(o.share * 1000) / 10}% -> ${o.refused ?? o.dnat ?? 'unchanged'}${o.masquerade ? ' masquerade' : ''}`;

/** The outcomes as a sorted list of outcomeText. */
const outcomesText = (os: WalkOutcome[]): string => os.map(outcomeText).sort().join(', ');

const describe = (p: TracePacket) =>
  `${p.protocol} ${p.fromHost ? `from the node (${p.src})` : `from ${p.src}`} to ${hostPort(p.dst, p.dport ?? 0)}`;

/** Where the walks send packets from: a Pod, a client outside the cluster, the node. */
function sourcesOf(exp: ExpectedRules): { pod?: string; outside: string; node?: string } {
  const v6 = exp.ruleContext.family === 'IPv6';
  const pod = hostOf(exp.localDetector?.ifLocal.source ?? exp.node.podCIDR, v6);
  // TEST-NET / documentation addresses: a client outside the cluster
  const outside = v6 ? '2001:db8:ffff::77' : '198.51.100.77';
  return { pod, outside, node: exp.node.ips[0] };
}

/** A Pod's, an outside client's and the node's packet to each of the port's addresses. */
function packetsFor(exp: ExpectedRules, sp: ExpectedServicePort): TracePacket[] {
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
