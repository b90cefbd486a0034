// Does one typed rule match one packet? Every match kdebug types is evaluated (addresses with
// negation, protocol, interfaces, ports, marks, addrtype, conntrack state of a new connection);
// what a dump cannot tell (recent lists, ipsets, bridging) is decided by a stated assumption.
import {
  anyCidr,
  holds,
  type Address,
  type PacketState,
  type TraceProtocol,
} from '../../trace/packet.js';
import type { Match, Ports, Rule } from '../read/rule/rule.js';
import { unreadText } from '../read/paste/list-view/unread.js';

export interface MatchContext {
  /** addrtype LOCAL. */
  isLocal(address: Address): boolean;
  /** Notes an assumption the verdict depends on. */
  assume(text: string): void;
}

/** 1 = matches, 0 = does not, in between = the chance it matches (statistic random). */
export function ruleMatches(rule: Rule, pkt: PacketState, ctx: MatchContext): number {
  if (rule.source && !addressMatches(rule.source.cidr, rule.source.negated, pkt.src)) return 0;
  if (rule.destination && !addressMatches(rule.destination.cidr, rule.destination.negated, pkt.dst))
    return 0;
  if (rule.protocol && protocolMatches(rule.protocol.name, pkt.protocol) === rule.protocol.negated)
    return 0;
  if (rule.inInterface) {
    if (pkt.guessed?.in) ctx.assume(pkt.guessed.in);
    if (!ifaceMatches(rule.inInterface, pkt.inInterface, 'in', ctx)) return 0;
  }
  if (rule.outInterface) {
    if (pkt.guessed?.out) ctx.assume(pkt.guessed.out);
    if (!ifaceMatches(rule.outInterface, pkt.outInterface, 'out', ctx)) return 0;
  }
  if (rule.fragment && !rule.fragment.negated) return 0; // a first packet is never a fragment
  let p = 1;
  for (const m of rule.matches) {
    const r = matchOne(m, pkt, ctx);
    if (r === 0) return 0;
    p *= r;
  }
  return p;
}

function addressMatches(cidr: string, negated: boolean, address: Address): boolean {
  const c = anyCidr(cidr);
  return (c !== undefined && holds(c, address)) !== negated;
}

const PROTOCOL_NUMBERS: Record<string, string> = {
  '6': 'tcp',
  '17': 'udp',
  '132': 'sctp',
  '1': 'icmp',
};

function protocolMatches(name: string, protocol: TraceProtocol): boolean {
  const n = PROTOCOL_NUMBERS[name] ?? name.toLowerCase();
  return n === 'all' || n === '0' || n === protocol;
}

function ifaceMatches(
  want: { name: string; negated: boolean },
  actual: string | undefined,
  side: 'in' | 'out',
  ctx: MatchContext,
): boolean {
  if (actual === undefined || actual === '?') {
    ctx.assume(
      `the ${side === 'in' ? 'incoming' : 'outgoing'} interface is unknown: assumed not to be ${want.name}`,
    );
    return want.negated;
  }
  const same = want.name.endsWith('+')
    ? actual.startsWith(want.name.slice(0, -1))
    : actual === want.name;
  return same !== want.negated;
}

function portsMatch(ports: Ports | undefined, port: number): boolean {
  if (!ports) return true;
  const inside = ports.ranges.some((r) => port >= r.from && port <= r.to);
  return inside !== ports.negated;
}

function addressType(address: Address, ctx: MatchContext): string {
  if (ctx.isLocal(address)) return 'LOCAL';
  if (typeof address === 'bigint') return address >> 120n === 0xffn ? 'MULTICAST' : 'UNICAST';
  if (address >>> 28 === 14) return 'MULTICAST';
  if (address === 0xffffffff) return 'BROADCAST';
  return 'UNICAST';
}

function matchOne(m: Match, pkt: PacketState, ctx: MatchContext): number {
  switch (m.kind) {
    case 'comment':
      return 1;
    case 'ports': {
      if (m.module !== pkt.protocol) return 0;
      if (m.sport) ctx.assume(`the client uses source port ${pkt.sport}`);
      return portsMatch(m.dport, pkt.dport) && portsMatch(m.sport, pkt.sport) ? 1 : 0;
    }
    case 'multiport': {
      if (pkt.protocol === 'icmp') return 0;
      const any = m.ports ? portsMatch(m.ports, pkt.dport) || portsMatch(m.ports, pkt.sport) : true;
      return any && portsMatch(m.dports, pkt.dport) && portsMatch(m.sports, pkt.sport) ? 1 : 0;
    }
    case 'statistic': {
      let p = 1;
      if (m.mode === 'random') p = m.probability ?? 1;
      else if (m.mode === 'nth' && m.every) {
        p = 1 / m.every;
        ctx.assume(`statistic nth (every ${m.every}) counted as a chance of 1/${m.every}`);
      }
      return m.negated ? 1 - p : p;
    }
    case 'mark':
      return ((pkt.mark & m.mask) >>> 0 === m.value) !== m.negated ? 1 : 0;
    case 'addrtype': {
      if (m.limitIfaceIn || m.limitIfaceOut)
        ctx.assume('addrtype --limit-iface-* read as if it were not limited to one interface');
      const t = (types: { types: string[]; negated: boolean } | undefined, a: Address) =>
        !types || types.types.includes(addressType(a, ctx)) !== types.negated;
      return t(m.srcType, pkt.src) && t(m.dstType, pkt.dst) ? 1 : 0;
    }
    case 'conntrack': {
      const other = m.options.some((o) => o.name !== 'ctstate' && o.name !== 'state');
      if (other) ctx.assume(`-m ${m.module} options other than --ctstate assumed to match`);
      if (!m.ctstate) return 1;
      const states = ['NEW', ...(pkt.dnat ? ['DNAT'] : []), ...(pkt.snat ? ['SNAT'] : [])];
      const any = m.ctstate.types.some((s) => states.includes(s));
      return any !== m.ctstate.negated ? 1 : 0;
    }
    case 'recent': {
      if (m.action === 'set') return m.negated ? 0 : 1;
      ctx.assume(
        `no earlier connection from this client in the recent list ${m.name} (session affinity starts fresh)`,
      );
      return m.negated ? 1 : 0;
    }
    case 'set':
      ctx.assume(`the packet is not in ipset ${m.name} (ipset contents are not in the dump)`);
      return m.negated ? 1 : 0;
    case 'physdev': {
      ctx.assume('the packet is not bridged (physdev)');
      const flags = [m.isIn, m.isOut, m.isBridged, m.in, m.out].filter((x) => x !== undefined);
      return flags.every((f) => f.negated) ? 1 : 0;
    }
    case 'other': {
      if (m.module === 'nfacct') return 1; // counts, never filters
      // what an `iptables -L` paste printed and kdebug did not read: said as such
      const shown = unreadText(m);
      if (shown !== undefined) {
        ctx.assume(`"${shown}" (as the -L listing printed it) is not read: assumed to match`);
        return 1;
      }
      if (m.module === 'icmp' && pkt.protocol !== 'icmp') return 0;
      ctx.assume(`-m ${m.module} is not modelled: assumed to match`);
      return 1;
    }
  }
}
