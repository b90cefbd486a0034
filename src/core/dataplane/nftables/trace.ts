// Walks one new connection's first packet through kube-proxy's nftables table, as netfilter
// would: each hook's base chains in priority order (prerouting, or output for a process on the
// node; then input, or forward and postrouting), maps and sets looked up, `numgen random mod N`
// branches (1/N each), DNAT, marks and masquerade. The same result as the iptables walk. Only
// kube-proxy's table is walked: other tables on the node (iptables-nft's, a CNI's) are not. A
// listing cut short is walked as far as it was read (trace-cut.ts).
import { percent } from '../../model.js';
import type {
  MatchedRule,
  NodeNetwork,
  TracePacket,
  TraceOutcome,
  TraceResult,
} from '../trace/trace.js';
import type { Address } from '../trace/packet.js';
import { NodeRoutes } from '../trace/route.js';
import { outcomeOf, startWalk, type Walk } from '../trace/walk.js';
import type { NftChain, NftRule, NftTable } from './read/listing.js';
import { ruleText } from './render.js';
import { RuleRun, tokens, type Result } from './trace-rule.js';
import { NftCut } from './trace-cut.js';

const MAX_STEPS = 200_000;

export function traceNftPacket(t: NftTable, net: NodeNetwork, packet: TracePacket): TraceResult {
  return new NftTracer(t, net).run(packet);
}

export class NftTracer {
  private readonly routes: NodeRoutes;
  private readonly notes: string[] = [];
  private steps = 0;
  private readonly text = new Map<NftRule, string[]>();
  /** The chains a jump or goto of this run's walks entered. */
  private readonly entered = new Set<string>();
  /** What the listing's cut left unread; undefined for a whole listing. */
  readonly cut: NftCut | undefined;

  constructor(
    private readonly t: NftTable,
    net: NodeNetwork,
  ) {
    this.routes = new NodeRoutes(net);
    this.cut = NftCut.of(t);
    this.notes.push(
      `only kube-proxy's table ${t.family} ${t.name} is walked: other nftables tables on the node (iptables-nft's, a CNI's) are not`,
    );
  }

  run(packet: TracePacket): TraceResult {
    this.entered.clear();
    const start = startWalk(packet, this.routes);
    const outcomes: TraceOutcome[] = [];
    for (const w of this.hook(packet.fromHost ? 'output' : 'prerouting', [start])) {
      // a walk stopped at the cut goes no further
      if (w.end !== 'ACCEPT' || w.cut) {
        outcomes.push(outcomeOf(w, 'local'));
        continue;
      }
      const toNode = this.routes.isLocal(w.pkt.dst);
      if (!toNode || packet.fromHost)
        this.routes.route(w.pkt, 'out', toNode ? undefined : w.pkt.dst);
      const hooks = packet.fromHost
        ? ['postrouting', ...(toNode ? ['input'] : [])]
        : toNode
          ? ['input']
          : ['forward', 'postrouting'];
      let walks = [w];
      for (const h of hooks)
        walks = [
          ...walks.filter((x) => x.end !== 'ACCEPT' || x.cut),
          ...this.hook(
            h,
            walks.filter((x) => x.end === 'ACCEPT' && !x.cut),
          ),
        ];
      for (const x of walks) outcomes.push(outcomeOf(x, toNode ? 'local' : 'forward'));
    }
    const enters = `the ${packet.fromHost ? 'output' : 'prerouting'} hook`;
    const reached = this.entered.has('services');
    const early = reached ? undefined : this.refusedBeforeDnat(packet, outcomes);
    const skipped = reached || early ? undefined : this.servicesSkipped(packet, outcomes);
    const missing = reached ? this.entryMissing(packet, outcomes) : undefined;
    return {
      packet,
      enters,
      outcomes,
      notes: this.notes,
      ...(skipped ? { servicesSkipped: skipped } : {}),
      ...(early ? { refusedBeforeDnat: early } : {}),
      ...(missing ? { entryMissing: missing } : {}),
    };
  }

  /** No walk went into chain services, where one started would have been DNATed: the hook's nat
   * chain lacks its jump to the Service rules, which are there. */
  private servicesSkipped(
    packet: TracePacket,
    outcomes: TraceOutcome[],
  ): TraceResult['servicesSkipped'] {
    const services = this.t.chain('services');
    if (!services || !untranslated(outcomes)) return undefined;
    const hook = packet.fromHost ? 'output' : 'prerouting';
    const entry = this.t.chains.find((c) => c.hook === hook && c.type === 'nat');
    if (!entry) return undefined;
    const out: Walk[] = [];
    this.walk(startWalk(packet, this.routes), [{ chain: services, index: 0 }], out);
    return out.some((w) => w.pkt.dnat)
      ? { from: `chain ${entry.name}`, to: 'chain services' }
      : undefined;
  }

  /** Every walk was refused by the hook's chains that run before its nat chain (1.31-1.32's
   * filter-output at -110): the rules that refused the first; undefined where one got past. */
  private refusedBeforeDnat(
    packet: TracePacket,
    outcomes: TraceOutcome[],
  ): MatchedRule[] | undefined {
    if (!outcomes.every((o) => o.verdict === 'REJECT' || o.verdict === 'DROP')) return undefined;
    const hook = packet.fromHost ? 'output' : 'prerouting';
    const nat = this.t.chains.find((c) => c.hook === hook && c.type === 'nat');
    if (!nat) return undefined;
    const early = this.hook(hook, [startWalk(packet, this.routes)], nat.prio ?? 0);
    return early.every((w) => w.end === 'REJECT' || w.end === 'DROP') ? early[0]?.rules : undefined;
  }

  /** The walks went into chain services and map service-ips holds no element for the packet's
   * address, protocol and port: the entry kube-proxy adds for each Service port is not there. */
  private entryMissing(packet: TracePacket, outcomes: TraceOutcome[]): TraceResult['entryMissing'] {
    const map = this.t.set('service-ips');
    if (!map || map.elided || !untranslated(outcomes)) return undefined;
    if (packet.protocol === 'icmp' || packet.dport === undefined) return undefined;
    const key = [packet.dst, packet.protocol, String(packet.dport)];
    if (map.elements.some((e) => e.key.map(String).join(' . ') === key.join(' . ')))
      return undefined;
    return {
      map: `map ${map.name} of table ${this.t.family} ${this.t.name}`,
      key: key.join(' . '),
    };
  }

  /** The walks through every base chain of one hook (those below priority `below`, where given),
   * lowest priority first; in a listing cut short, up to a base chain of kube-proxy's it does
   * not hold. */
  private hook(hook: string, walks: Walk[], below = Infinity): Walk[] {
    const hidden = (this.cut?.hiddenBaseChains(hook) ?? []).map((h) => ({ ...h, hidden: true }));
    const chains = [...this.t.chains.filter((c) => c.hook === hook), ...hidden]
      .filter((c) => (c.prio ?? 0) < below)
      .sort((a, b) => (a.prio ?? 0) - (b.prio ?? 0));
    let out: Walk[] = walks.map((w) => ({ ...w, end: 'ACCEPT' }));
    for (const chain of chains) {
      const next: Walk[] = [];
      for (const w of out) {
        if (w.end !== 'ACCEPT' || w.cut) next.push(w);
        else if ('hidden' in chain) next.push({ ...w, cut: NftCut.hook(hook, chain.name) });
        else {
          w.end = undefined;
          this.walk(w, [{ chain, index: 0 }], next);
        }
      }
      out = next;
    }
    return out;
  }

  private walk(w: Walk, stack: { chain: NftChain; index: number }[], out: Walk[]): void {
    while (w.end === undefined) {
      if (++this.steps > MAX_STEPS) {
        this.notes.push('the walk was stopped: too many rules or branches (a loop in the table?)');
        w.end = 'DROP';
        break;
      }
      const frame = stack[stack.length - 1];
      if (!frame) break;
      if (frame.index >= frame.chain.rules.length) {
        // past the last rule read of a chain the cut is inside: more may follow, not read
        const met = this.cut?.endOf(frame.chain.name);
        if (met) {
          w.cut = met;
          w.end = 'ACCEPT';
          break;
        }
        stack.pop();
        // the end of a base chain is its policy; of a jumped-to chain, back to the caller
        if (stack.length === 0) w.end = frame.chain.policy === 'drop' ? 'DROP' : 'ACCEPT';
        continue;
      }
      const rule = frame.chain.rules[frame.index]!;
      const line = ++frame.index;
      const results = this.evaluate(rule, w);
      if (results.length > 1) {
        // a numgen branch: the walk splits, each share walked in the map's order (the outcomes
        // come out as the iptables walk gives them, in the order of the rules)
        for (const r of results) {
          const taken: Walk = {
            p: w.p * r.p,
            pkt: r.pkt,
            rules: [...w.rules],
            assumptions: new Set(w.assumptions),
          };
          const s = stack.map((f) => ({ ...f }));
          this.apply(taken, s, rule, line, r, true);
          this.walk(taken, s, out);
        }
        return;
      }
      const [only] = results;
      if (!only) continue;
      if (only.cut) {
        // a set or map the cut hid: the walk stops at the rule that looks it up
        w.rules.push(
          this.matched(
            frame.chain.name,
            rule,
            line,
            `${only.cut.what} not read whole (the listing is cut short): the walk stops`,
          ),
        );
        w.cut = only.cut;
        w.end = 'ACCEPT';
        break;
      }
      w.p *= only.p;
      w.pkt = only.pkt;
      this.apply(w, stack, rule, line, only, false);
    }
    out.push(w);
  }

  private apply(
    w: Walk,
    stack: { chain: NftChain; index: number }[],
    rule: NftRule,
    line: number,
    r: Result,
    branched: boolean,
  ): void {
    if (!r.matched) return;
    const chain = stack[stack.length - 1]!.chain.name;
    const effects = [...r.effect];
    const v = r.verdict;
    if (v?.kind === 'jump' || v?.kind === 'goto') {
      const to = this.t.chain(v.target!);
      if (!to && this.cut) {
        effects.push(`${v.kind} ${v.target}, not in the listing (cut short): the walk stops`);
        w.cut = this.cut.jumpTo(v.kind, v.target!);
        w.end = 'ACCEPT';
      } else if (!to) effects.push(`${v.kind} to ${v.target}, which is not in the table: skipped`);
      else {
        effects.push(`${v.kind} ${v.target}`);
        this.entered.add(to.name);
        if (v.kind === 'goto') stack.pop();
        stack.push({ chain: to, index: 0 });
      }
    } else if (v?.kind === 'return') {
      effects.push('return');
      stack.pop();
      if (stack.length === 0) w.end = 'ACCEPT';
    } else if (v) {
      effects.push(v.kind);
      w.end = v.kind === 'drop' ? 'DROP' : v.kind === 'reject' ? 'REJECT' : 'ACCEPT';
    }
    w.rules.push(
      this.matched(
        chain,
        rule,
        line,
        `${branched ? `${percent(r.p)} branch, ` : ''}${effects.join(', ') || 'counts the packet'}`,
      ),
    );
  }

  private matched(chain: string, rule: NftRule, line: number, effect: string): MatchedRule {
    return { table: `${this.t.family} ${this.t.name}`, chain, line, rule: ruleText(rule), effect };
  }

  /** The rule against the walk's packet: its matches in order, then its statements. */
  private evaluate(rule: NftRule, w: Walk): Result[] {
    let words = this.text.get(rule);
    if (!words) this.text.set(rule, (words = tokens(ruleText(rule))));
    return new RuleRun(words, w, this).results();
  }

  // what RuleRun asks of the walk
  isLocal = (a: Address) => this.routes.isLocal(a);
  set = (name: string) => this.t.set(name);
}

/** No outcome was DNATed, and none stopped at what a listing cut short hid. */
const untranslated = (outcomes: TraceOutcome[]) =>
  outcomes.length > 0 && outcomes.every((o) => !o.dnat && !o.cut);
