// One parsed table: its chains (chain-records.ts) and rules (rule-records.ts) kept as byte
// offsets into the dump, Chain views and typed rules built on demand, and the hot fields read one
// at a time for bulk readers.
import { RuleLexer, text, unescaped } from './lexer.js';
import { buildRule, type Rule } from './rule/rule.js';
import { H, RuleFlag } from './token-walk.js';
import { bytesCidrContains } from '../../../ipv4.js';
import type { IPFamily } from '../../../ipv6.js';
import { DISPATCH_MIN, dispatchOf, type Dispatch } from './dispatch.js';
import { Chain } from './chain.js';
import { R, RuleRecords } from './rule-records.js';

/** What Table.state() hands over: plain data, typed arrays and Maps (structured-clonable). */
export interface TableState {
  name: string;
  family: IPFamily;
  startLine: number | undefined;
  chainCount: number;
  ruleCount: number;
  committed: boolean;
  chunks: Int32Array[];
  pairChunks: Uint16Array[];
  pairTop: number;
  lineStarts: Map<number, number>;
  slots: Int32Array;
  records: Int32Array;
  policies: Map<number, string>;
  scatteredRules: Map<number, number[]>;
  partial: Map<string, string>;
  cutAbove: Set<string>;
  untold: boolean;
}

export interface AddressMatch {
  cidr: string;
  negated: boolean;
}

export class Table extends RuleRecords {
  committed = false;
  /** Opened by its *table line: with its COMMIT, a block iptables-save printed whole. */
  headed = false;
  /** Whose table it is: iptables' (IPv4) or ip6tables' (IPv6), which name their tables alike. */
  family: IPFamily = 'IPv4';
  /** Chains whose rules the paste may not hold in full (a cut, a dump without COMMIT), by name,
   * with why: nothing about their endpoints is claimed. */
  partial = new Map<string, string>();
  /** Partial chains whose first rules may lie above the paste: none of their shares is known. */
  cutAbove = new Set<string>();
  /** Read as filter for want of anything that tells its table (no *table line, no chain or
   * target of one table's): which table it is, the paste does not say. */
  untold = false;
  /** The chains read, where only some were (one Service's, by name): of any other chain nothing
   * is known, not even that it is missing. Undefined: the whole table was read. */
  chainsRead: ReadonlySet<string> | undefined;
  /** The file its lines are in, where the rule set was read from more than one. */
  file: string | undefined;
  private chainViews: Chain[] | undefined;
  private typed = new Map<number, Rule[]>(); // typed rules of the chains asked for
  private dispatches = new Map<number, Dispatch>(); // long chains' rules by host and port
  private reached = new Map<number, Rule>(); // rules packet walks typed, by id
  private lexer: RuleLexer | undefined; // typing a rule lexes it again: one lexer for them all

  constructor(
    public name: string,
    buf: Uint8Array,
    /** The line of `*table`, or of the first line of an `iptables -S` listing. */
    readonly startLine: number | undefined,
  ) {
    super(buf);
  }

  /** The table's read state, to hand to another thread (its typed arrays transfer, the dump's
   * bytes travel once for all tables); `fromState` gives the same table back. */
  state(): TableState {
    return {
      name: this.name,
      family: this.family,
      startLine: this.startLine,
      chainCount: this.chainCount,
      ruleCount: this.ruleCount,
      committed: this.committed,
      chunks: this.chunks,
      pairChunks: this.pairChunks,
      pairTop: this.pairTop,
      lineStarts: this.lineStarts,
      slots: this.slots,
      records: this.records,
      policies: this.policies,
      scatteredRules: this.scatteredRules,
      partial: this.partial,
      cutAbove: this.cutAbove,
      untold: this.untold,
    };
  }

  static fromState(s: TableState, buf: Uint8Array): Table {
    const t = new Table(s.name, buf, s.startLine);
    t.family = s.family;
    t.chainCount = s.chainCount;
    t.ruleCount = s.ruleCount;
    t.committed = s.committed;
    t.chunks = s.chunks;
    t.pairChunks = s.pairChunks;
    t.pairTop = s.pairTop;
    for (const [k, v] of s.lineStarts) t.lineStarts.set(k, v);
    t.slots = s.slots;
    t.records = s.records;
    t.policies = s.policies;
    t.partial = s.partial;
    t.cutAbove = s.cutAbove;
    t.untold = s.untold;
    t.scatteredRules = s.scatteredRules;
    return t;
  }

  /** Chains in declaration order. */
  get chains(): readonly Chain[] {
    const views = (this.chainViews ??= []);
    for (let i = views.length; i < this.chainCount; i++) views.push(new Chain(this, i));
    return views;
  }

  chain(name: string): Chain | undefined {
    const i = this.indexOf(name);
    return i >= 0 ? this.chainAtIndex(i) : undefined;
  }

  chainAtIndex(index: number): Chain {
    return this.chainViews?.[index] ?? new Chain(this, index);
  }

  typedRules(index: number): Rule[] {
    let rules = this.typed.get(index);
    if (!rules) this.typed.set(index, (rules = this.ruleIdsOf(index).map((r) => this.rule(r))));
    return rules;
  }

  /** Whether a rule of `chains` (of every chain when none are named) targets one of `targets`. */
  jumpsTo(targets: readonly string[], chains?: readonly string[]): boolean {
    const from = chains
      ? chains.map((c) => this.indexOf(c)).filter((i) => i >= 0)
      : Array.from({ length: this.chainCount }, (_, i) => i);
    return from.some((c) => {
      for (let k = 0; k < this.ruleCountOf(c); k++)
        if (targets.includes(this.target(this.ruleIdOf(c, k)) ?? '')) return true;
      return false;
    });
  }

  chainOf(id: number): Chain {
    return this.chainAtIndex(this.int(id, R.chain));
  }

  /** The full typed rule. */
  rule(id: number): Rule {
    this.lexer ??= new RuleLexer(this.buf);
    return buildRule(this.lexer, this.int(id, R.specStart), this.int(id, R.lineEnd), {
      table: this.name,
      chain: this.nameOf(this.int(id, R.chain)),
      line: this.line(id),
    });
  }

  /** The typed rule, built once for every packet walk: a drift by behaviour walks the same
   * chains' rules for each Service port's packets. */
  reachedRule(id: number): Rule {
    let rule = this.reached.get(id);
    if (!rule) this.reached.set(id, (rule = this.rule(id)));
    return rule;
  }

  // Hot fields one at a time: bulk readers build no object per rule.
  target(id: number): string | undefined {
    const c = this.targetChain(id);
    return c ? c.name : this.field(id, H.target);
  }
  /** Whether the rule's target ends with `suffix` (ASCII), read from the bytes: no lookup. */
  targetEndsWith(id: number, suffix: string): boolean {
    if (!this.span(id, H.target) || this.fe - this.fs < suffix.length) return false;
    const at = this.fe - suffix.length;
    for (let k = 0; k < suffix.length; k++)
      if (this.buf[at + k] !== suffix.charCodeAt(k)) return false;
    return true;
  }
  /** The chain this rule jumps or goes to, when its target is a chain of this table. */
  targetChain(id: number): Chain | undefined {
    const i = this.targetIndex(id);
    return i >= 0 ? this.chainAtIndex(i) : undefined;
  }
  source(id: number): string | undefined {
    return this.field(id, H.src);
  }
  hasSource(id: number): boolean {
    return this.has(id, H.src);
  }
  destination(id: number): string | undefined {
    return this.field(id, H.dst);
  }
  /** Jumps to KUBE-MARK-MASQ (marks the packet for masquerading). */
  marksForMasquerade(id: number): boolean {
    return (this.flags(id) & RuleFlag.targetMarkMasq) !== 0;
  }
  /** Its target is DNAT. */
  isDnat(id: number): boolean {
    return (this.flags(id) & RuleFlag.targetDnat) !== 0;
  }
  /** A DNAT whose --to-destination old iptables did not print (see to()). */
  hidesDnatTarget(id: number): boolean {
    return (this.flags(id) & RuleFlag.dnatQuirk) !== 0;
  }
  /** Matches `-m recent --rcheck` (session affinity's lookup). */
  checksRecent(id: number): boolean {
    return (this.flags(id) & RuleFlag.recentRcheck) !== 0;
  }
  /** Matches something besides addresses, protocol, ports, comment and statistic. */
  hasOtherMatches(id: number): boolean {
    return (this.flags(id) & RuleFlag.hasOtherMatches) !== 0;
  }
  /** The rule's -s / -d admits the IPv4 address `ip` (true when it has none), read from the
   * bytes: a packet walk passes most rules without typing them or making a string. */
  admits(id: number, side: 'source' | 'destination', ip: number): boolean {
    if (!this.span(id, side === 'source' ? H.src : H.dst)) return true;
    const negated = RuleFlag[side === 'source' ? 'srcNegated' : 'dstNegated'];
    return bytesCidrContains(this.buf, this.fs, this.fe, ip) !== ((this.flags(id) & negated) !== 0);
  }
  /** The first position from `k` on in the chain at `index` whose rule may match an IPv4 packet
   * to `dst`:`dport` (dispatch.ts): a walk skips the rules of a long chain that name another
   * address or port. */
  nextRuleFor(index: number, k: number, dst: number, dport: number): number {
    const count = this.ruleCountOf(index);
    if (count < DISPATCH_MIN) return k;
    let d = this.dispatches.get(index);
    if (d?.count !== count) this.dispatches.set(index, (d = dispatchOf(this, index, count)));
    return d.next(k, dst, dport);
  }
  /** The rule's -s / -d match, read without typing the rule. */
  addressMatch(id: number, side: 'source' | 'destination'): AddressMatch | undefined {
    const cidr = side === 'source' ? this.source(id) : this.destination(id);
    if (cidr === undefined) return undefined;
    const negated = RuleFlag[side === 'source' ? 'srcNegated' : 'dstNegated'];
    return { cidr, negated: (this.flags(id) & negated) !== 0 };
  }
  protocol(id: number): string | undefined {
    if (!this.span(id, H.proto)) return undefined;
    // one string for each of the usual protocols, not one per rule
    const b = this.buf;
    const s = this.fs;
    if (this.fe - s === 3 && b[s + 1] === 99 /* c */ && b[s + 2] === 112 /* p */) {
      if (b[s] === 116 /* t */) return 'tcp';
      if (b[s] === 117 /* u */) return 'udp';
    }
    return text(b, s, this.fe);
  }
  dport(id: number): string | undefined {
    return this.field(id, H.dport);
  }
  comment(id: number): string | undefined {
    if (!this.span(id, H.comment)) return undefined;
    return (this.flags(id) & RuleFlag.commentQuoted) !== 0
      ? unescaped(this.buf, this.fs, this.fe)
      : text(this.buf, this.fs, this.fe);
  }
  /** DNAT/SNAT address as written, undefined when the old-iptables quirk hides it. */
  to(id: number): string | undefined {
    return (this.flags(id) & RuleFlag.dnatQuirk) !== 0 ? undefined : this.field(id, H.to);
  }
  /** The statistic probability, read from the bytes without building a string. */
  probability(id: number): number | undefined {
    if (!this.span(id, H.probability)) return undefined;
    const s = this.fs;
    const e = this.fe;
    const b = this.buf;
    let whole = 0;
    let frac = 0;
    let scale = 1;
    let k = s;
    for (; k < e && b[k] !== 46; k++) whole = whole * 10 + b[k]! - 48;
    if (e - k > 16) return Number(text(b, s, e));
    for (k++; k < e; k++) {
      frac = frac * 10 + b[k]! - 48;
      scale *= 10;
    }
    return whole + frac / scale;
  }
}
