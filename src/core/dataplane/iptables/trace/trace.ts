// Walks one new connection's first packet through a node's parsed rules, as netfilter would: nat
// PREROUTING (from a Pod or the network) or nat OUTPUT (from a process on the node), the routing
// decision, filter INPUT / FORWARD / OUTPUT, then nat POSTROUTING, where the mark decides
// masquerading. `statistic random` splits the walk; every outcome carries its probability, the
// rules it matched in order, and the assumptions it rests on. Docker's, flannel's or anyone
// else's rules in those chains are walked like kube-proxy's.
import { ipv4 } from '../../../ipv4.js';
import { familyOf, ipv6 } from '../../../ipv6.js';
import type { Chain, Ruleset, Table } from '../read/parse.js';
import type { Rule } from '../read/rule/rule.js';
import { printRule } from '../read/rule/print.js';
import { addressPort, packetAddress, type Address, type PacketState } from '../../trace/packet.js';
import { NodeRoutes } from '../../trace/route.js';
import { outcomeOf, startWalk, type Walk } from '../../trace/walk.js';
import { percent } from '../../../model.js';
import type {
  MatchedRule,
  NodeNetwork,
  TraceOutcome,
  TracePacket,
  TraceResult,
} from '../../trace/trace.js';
import { ruleMatches } from './match.js';

/** Too many branches or rules means a loop or a pathological dump: stop with a note. */
const MAX_STEPS = 200_000;
const MAX_OUTCOMES = 4096;

interface Frame {
  chain: Chain;
  index: number;
}

export function tracePacket(rs: Ruleset, net: NodeNetwork, packet: TracePacket): TraceResult {
  // a paste of both families: the packet meets its own family's tables only
  const family = familyOf(packet.dst);
  const own = rs.families().length > 1 && family ? rs.ofFamily(family) : rs;
  return new Tracer(own, net).run(packet);
}

class Tracer {
  private readonly routes: NodeRoutes;
  private readonly notes: string[] = [];
  private readonly notRead: string[] = [];
  private steps = 0;

  constructor(
    private readonly rs: Ruleset,
    net: NodeNetwork,
  ) {
    this.routes = new NodeRoutes(net);
  }

  private isLocal = (a: Address) => this.routes.isLocal(a);

  private route(pkt: PacketState, side: 'in' | 'out', address: Address | undefined): void {
    this.routes.route(pkt, side, address);
  }

  run(packet: TracePacket): TraceResult {
    const start = startWalk(packet, this.routes);
    const outcomes: TraceOutcome[] = [];
    const nat = this.table('nat');
    const filter = this.table('filter');
    for (const w of this.hook(nat, packet.fromHost ? 'OUTPUT' : 'PREROUTING', [start])) {
      if (w.end !== 'ACCEPT') {
        outcomes.push(outcomeOf(w, 'local'));
        continue;
      }
      const toNode = this.isLocal(w.pkt.dst);
      if (!toNode || packet.fromHost) this.route(w.pkt, 'out', toNode ? undefined : w.pkt.dst);
      const chains: [Table | undefined, string][] = packet.fromHost
        ? [
            [filter, 'OUTPUT'],
            [nat, 'POSTROUTING'],
            ...(toNode ? ([[filter, 'INPUT']] as [Table | undefined, string][]) : []),
          ]
        : toNode
          ? [
              [nat, 'INPUT'],
              [filter, 'INPUT'],
            ]
          : [
              [filter, 'FORWARD'],
              [nat, 'POSTROUTING'],
            ];
      let walks = [w];
      for (const [table, chain] of chains) {
        const done = walks.filter((x) => x.end !== 'ACCEPT');
        walks = [
          ...done,
          ...this.hook(
            table,
            chain,
            walks.filter((x) => x.end === 'ACCEPT'),
          ),
        ];
      }
      for (const x of walks) outcomes.push(outcomeOf(x, toNode ? 'local' : 'forward'));
    }
    const enters = packet.fromHost ? 'nat OUTPUT' : 'nat PREROUTING';
    const notRead = this.notRead.length > 0 ? { tablesNotRead: this.notRead } : {};
    const skipped = this.servicesSkipped(nat, packet, outcomes);
    return {
      packet,
      enters,
      outcomes,
      notes: this.notes,
      ...notRead,
      ...(skipped ? { servicesSkipped: skipped } : {}),
    };
  }

  /** The nat entry chain never took the packet into KUBE-SERVICES, where a walk started would
   * have DNATed it: the Service's rules are there, the jump to them is not. */
  private servicesSkipped(
    nat: Table | undefined,
    packet: TracePacket,
    outcomes: TraceOutcome[],
  ): TraceResult['servicesSkipped'] {
    const services = nat?.chain('KUBE-SERVICES');
    if (!nat || !services) return undefined;
    const reached = outcomes.some((o) =>
      o.rules.some((m) => m.table === 'nat' && m.into === 'KUBE-SERVICES'),
    );
    if (reached || !outcomes.some((o) => o.destination === null)) return undefined;
    const walks = this.hook(nat, 'KUBE-SERVICES', [startWalk(packet, this.routes)]);
    return walks.some((w) => w.pkt.dnat)
      ? { from: `nat ${packet.fromHost ? 'OUTPUT' : 'PREROUTING'}`, to: 'KUBE-SERVICES' }
      : undefined;
  }

  /** A table the dump holds, else said not read: walked past, its chains' effect not observed. */
  private table(name: string): Table | undefined {
    const t = this.rs.table(name);
    if (!t) {
      this.notRead.push(name);
      this.notes.push(
        `the dump holds no ${name} table: the walk passes its chains without them, and what they do to the packet was not read`,
      );
    }
    return t;
  }

  /** Runs the walks through one built-in chain; each ends ACCEPT (go on), DROP or REJECT. */
  private hook(table: Table | undefined, builtin: string, walks: Walk[]): Walk[] {
    const out: Walk[] = [];
    const start = table?.chain(builtin);
    for (const w of walks) {
      if (!table || !start) {
        out.push({ ...w, end: 'ACCEPT' });
        continue;
      }
      const stack: Frame[] = [{ chain: start, index: 0 }];
      w.end = undefined;
      this.walk(table, w, stack, out);
    }
    return out;
  }

  /** The rule's -s and -d (what ruleMatches tests first) admit the packet; an IPv6 walk has no
   * such shortcut (the bytes are read as IPv4): ruleMatches decides. */
  private addressesMatch(table: Table, id: number, pkt: PacketState): boolean {
    if (typeof pkt.src === 'bigint' || typeof pkt.dst === 'bigint') return true;
    return table.admits(id, 'source', pkt.src) && table.admits(id, 'destination', pkt.dst);
  }

  private walk(table: Table, w: Walk, stack: Frame[], out: Walk[]): void {
    while (w.end === undefined) {
      if (++this.steps > MAX_STEPS || out.length > MAX_OUTCOMES) {
        this.notes.push('the walk was stopped: too many rules or branches (a loop in the rules?)');
        w.end = 'DROP';
        break;
      }
      const frame = stack[stack.length - 1];
      if (!frame) break;
      const chain = frame.chain;
      if (frame.index >= chain.ruleCount) {
        stack.pop();
        if (stack.length === 0) {
          const policy = chain.policy ?? 'ACCEPT';
          if (policy === 'DROP') {
            w.rules.push({
              table: table.name,
              chain: chain.name,
              line: 0,
              rule: `:${chain.name} DROP`,
              effect: 'policy DROP',
            });
            w.end = 'DROP';
          } else w.end = 'ACCEPT';
        }
        continue;
      }
      // a long chain (a rule per Service port) goes straight to the rules for this packet
      if (typeof w.pkt.dst === 'number')
        frame.index = table.nextRuleFor(chain.index, frame.index, w.pkt.dst, w.pkt.dport);
      if (frame.index >= chain.ruleCount) continue;
      const id = chain.ruleId(frame.index++);
      if (!this.addressesMatch(table, id, w.pkt)) continue; // most rules, before typing them
      const rule = table.reachedRule(id);
      const p = ruleMatches(rule, w.pkt, {
        isLocal: this.isLocal,
        assume: (a) => w.assumptions.add(a),
      });
      if (p === 0) continue;
      if (p < 1) {
        // the rule fires for a share p of new connections: follow both
        const taken: Walk = {
          p: w.p * p,
          pkt: { ...w.pkt, guessed: { ...w.pkt.guessed } },
          rules: [...w.rules],
          assumptions: new Set(w.assumptions),
        };
        const branchStack = stack.map((f) => ({ ...f }));
        w.p *= 1 - p;
        this.apply(table, id, rule, taken, branchStack, `${percent(p)} branch, `);
        this.walk(table, taken, branchStack, out);
        continue;
      }
      this.apply(table, id, rule, w, stack, '');
    }
    out.push(w);
  }

  /** Applies a matching rule's target. */
  private apply(
    table: Table,
    id: number,
    rule: Rule,
    w: Walk,
    stack: Frame[],
    prefix: string,
  ): void {
    const t = rule.target;
    const record = (effect: string, into?: string) => {
      w.rules.push(this.step(table.name, rule, prefix + effect, into));
    };
    if (!t) return record('counts the packet');
    switch (t.kind) {
      case 'chain':
        if (table.chainsRead && !table.chainsRead.has(t.name)) {
          record(`${t.goto ? 'goto' : 'jump'} to ${t.name}, which was not read: skipped`);
          w.assumptions.add(
            `${t.name} was not read (only the Service's own chains were, by name): what it does to the packet is not known`,
          );
          return;
        }
        {
          // the jump's chain, resolved once per rule by the table
          const next = table.targetChain(id);
          if (!next) {
            const m = this.step(
              table.name,
              rule,
              `${prefix}${t.goto ? 'goto' : 'jump'} to ${t.name}, which is not in the dump: skipped`,
            );
            m.absent = t.name; // typed, for who asks where a share went (checks/reachability)
            w.rules.push(m);
            return;
          }
          record(`${t.goto ? 'goto' : 'jump'} ${t.name}`, t.name);
          if (t.goto) stack.pop();
          stack.push({ chain: next, index: 0 });
        }
        return;
      case 'verdict':
        if (t.name === 'RETURN') {
          record('return');
          stack.pop();
          if (stack.length === 0) w.end = 'ACCEPT';
          return;
        }
        record(t.name);
        w.end = t.name === 'DROP' ? 'DROP' : 'ACCEPT';
        if (t.name === 'QUEUE')
          w.assumptions.add('QUEUE: the userspace program accepts the packet');
        return;
      case 'reject':
        record(`REJECT (${t.rejectWith})`);
        w.end = 'REJECT';
        return;
      case 'mark':
        w.pkt.mark = ((w.pkt.mark & ~t.mask) ^ t.value) >>> 0;
        record(`mark is now 0x${w.pkt.mark.toString(16)}`);
        return;
      case 'dnat': {
        const to = t.to;
        const address =
          to?.address !== undefined ? (ipv4(to.address) ?? ipv6(to.address)) : undefined;
        if (address === undefined && to?.ports === undefined) {
          record('DNAT to an address the dump does not show');
          w.assumptions.add(t.quirk ?? 'the DNAT target could not be read');
        } else {
          if (address !== undefined) w.pkt.dst = address;
          if (to?.ports) w.pkt.dport = to.ports.from;
          w.pkt.dnat = true;
          record(`DNAT to ${addressPort(w.pkt.dst, w.pkt.dport)}`);
        }
        w.end = 'ACCEPT';
        return;
      }
      case 'snat':
      case 'masquerade':
        w.pkt.snat = true;
        record(t.kind === 'snat' ? `SNAT to ${t.to?.text ?? '?'}` : 'MASQUERADE');
        w.end = 'ACCEPT';
        return;
      default:
        if (t.name === 'REDIRECT') {
          w.pkt.dst = packetAddress(
            typeof w.pkt.dst === 'bigint' ? '::1' : '127.0.0.1',
            'redirect',
          );
          const port = t.options.find((o) => o.name === 'to-ports')?.values[0];
          if (port) w.pkt.dport = Number(port.split('-')[0]);
          w.pkt.dnat = true;
          record(`REDIRECT to local port ${w.pkt.dport}`);
          w.end = 'ACCEPT';
          return;
        }
        record(`${t.name} (does not stop the walk)`);
    }
  }

  /** The rule as a walk shows it; its text printed only when read (a drift by behaviour walks
   * thousands of packets and reads none). */
  private step(table: string, r: Rule, effect: string, into?: string): MatchedRule {
    const m: MatchedRule = {
      table,
      chain: r.chain,
      line: r.line,
      get rule() {
        return printRule(r);
      },
      effect,
    };
    if (into !== undefined) m.into = into;
    return m;
  }
}
