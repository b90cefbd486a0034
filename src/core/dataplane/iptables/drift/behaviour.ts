// What a Service port's rules do, compared by walking the same packets (src/core/trace) through
// the node's rules and through the rules kube-proxy would write: where the dump is spelled by a
// release kdebug does not model, only where packets go counts, never how the rules read.
import { expectedSave, type ExpectedRules, type ExpectedServicePort } from '../../expected.js';
import { parseIptables, type Ruleset } from '../read/parse.js';
import { formatIPv4, parseCidr } from '../../../ipv4.js';
import { formatIPv6, hostPort, parseCidr6 } from '../../../ipv6.js';
import { tracePacket } from '../trace.js';
import type { NodeNetwork, TracePacket } from '../../trace/trace.js';

/** One packet the two rule sets treat differently. */
export interface BehaviourDiff {
  packet: string;
  expected: string;
  actual: string;
}

/** The rules kube-proxy would write, parsed once per expectation and tables compared. */
const wanted = new WeakMap<ExpectedRules, Map<string, Ruleset>>();

/** The packets whose walk differs between the node's rules and kube-proxy's (none: the same). */
export function behaviourDiffers(
  exp: ExpectedRules,
  actual: Ruleset,
  sp: ExpectedServicePort,
): BehaviourDiff[] {
  // only the tables the dump holds: a nat-only dump is not walked into kube-proxy's filter rules
  const tables = (['filter', 'nat'] as const).filter((t) => actual.table(t));
  const byTables = wanted.get(exp) ?? new Map<string, Ruleset>();
  wanted.set(exp, byTables);
  let want = byTables.get(tables.join());
  if (!want)
    byTables.set(
      tables.join(),
      (want = parseIptables(expectedSave(exp, { header: false, tables }))),
    );
  const net: NodeNetwork = { localAddresses: exp.node.ips, interfaces: [] };
  const out: BehaviourDiff[] = [];
  for (const packet of packetsFor(exp, sp)) {
    const expected = outcomes(want, net, packet);
    const got = outcomes(actual, net, packet);
    if (expected !== got) out.push({ packet: describe(packet), expected, actual: got });
  }
  return out;
}

// a chain of one Service port: KUBE-SVC-, KUBE-SEP- ... and its 16-character hash
const PORT_CHAIN = /^KUBE-(?:SVC|SVL|SEP|EXT|FW|XLB)-[A-Z0-9]{16}$/;

/**
 * One Service port's rules and their differences from kube-proxy's, with what names that port
 * alone (addresses, ports and other numbers, its chains, comments) numbered in order of first
 * use: two ports with the same key hold the same rules but for those names, so their packets go
 * the same way, renamed, and one walk tells for both.
 */
export function behaviourKey(
  sp: ExpectedServicePort,
  diff: { expected: readonly string[]; actual: readonly string[] },
): string {
  const seen = new Map<string, number>();
  const name = (word: string) => {
    let n = seen.get(word);
    if (n === undefined) seen.set(word, (n = seen.size));
    return `<${n}>`;
  };
  const renamed = (text: string) => {
    const out: string[] = [];
    const words = text.split(' ');
    for (let i = 0; i < words.length; i++) {
      let w = words[i]!;
      if (w.startsWith('"')) {
        // a comment, spaces and all
        while (!(w.length > 1 && w.endsWith('"')) && i + 1 < words.length) w += ` ${words[++i]!}`;
        out.push(name(w));
      } else {
        const c = w.charCodeAt(0);
        const named = (c >= 48 && c <= 57) || c === 91 || w.includes(':') || PORT_CHAIN.test(w);
        out.push(named ? name(w) : w);
      }
    }
    return out.join(' ');
  };
  return [
    sp.protocol,
    ...sp.nat.map((r) => `${renamed(r.chain)} ${renamed(r.text)}`),
    ...sp.filter.map((r) => `${renamed(r.chain)} ${renamed(r.text)}`),
    '-',
    ...diff.expected.map(renamed),
    '+',
    ...diff.actual.map(renamed),
  ].join('\n');
}

/** Where kube-proxy's rules send a packet, as a sorted list of "50% -> 10.0.0.1:80 masquerade"
 * outcomes: its DNAT, its mark for masquerade and its REJECT or DROP; what the node's other rules
 * do (a CNI's masquerade, a host firewall) is not kube-proxy's and not compared. */
function outcomes(rs: Ruleset, net: NodeNetwork, packet: TracePacket): string {
  const merged = new Map<string, number>();
  for (const o of tracePacket(rs, net, packet).outcomes) {
    const last = o.rules.at(-1);
    const stopped = o.verdict !== 'ACCEPT' && last?.chain.startsWith('KUBE-') ? o.verdict : '';
    const masq = o.rules.some((r) => r.chain === 'KUBE-MARK-MASQ') ? ' masquerade' : '';
    const key = `${stopped || (o.dnat ?? 'unchanged')}${masq}`;
    merged.set(key, (merged.get(key) ?? 0) + o.probability);
  }
  return [...merged]
    .map(([k, p]) => `${Math.round(p * 1000) / 10}% -> ${k}`)
    .sort()
    .join(', ');
}

const describe = (p: TracePacket) =>
  `${p.protocol} ${p.fromHost ? `from the node (${p.src})` : `from ${p.src}`} to ${hostPort(p.dst, p.dport ?? 0)}`;

/** A Pod's, an outside client's and the node's packet to each of the port's addresses. */
function packetsFor(exp: ExpectedRules, sp: ExpectedServicePort): TracePacket[] {
  const v6 = exp.ruleContext.family === 'IPv6';
  const node = exp.node.ips[0];
  const pod = hostOf(exp.localDetector?.ifLocal.source ?? exp.node.podCIDR, v6);
  // TEST-NET / documentation addresses: a client outside the cluster
  const outside = v6 ? '2001:db8:ffff::77' : '198.51.100.77';
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
