// One parsed table: its chains (chain-index.ts) and rules (rule-store.ts) kept as byte offsets
// into the dump, Chain views and typed rules built on demand, and the hot fields read one at a
// time for bulk readers.
import { RuleLexer, text, unescaped } from './lexer.js';
import { buildRule, type Rule } from './rule/rule.js';
import { H, RuleFlag } from './token-walk.js';
import { bytesCidrContains } from '../../../ipv4.js';
import type { IPFamily } from '../../../ipv6.js';
import { DISPATCH_MIN, dispatchOf, type Dispatch } from './dispatch.js';
import { Chain } from './chain.js';
import type { ChainKind } from './chain-names.js';
import { ChainIndex, type ChainIndexState } from './chain-index.js';
import { RuleStore, type RuleStoreState } from './rule-store.js';

/** What Table.state() hands over: plain data, typed arrays and Maps (structured-clonable). */
export interface TableState {
  name: string;
  family: IPFamily;
  startLine: number | undefined;
  committed: boolean;
  chains: ChainIndexState;
  rules: RuleStoreState;
  partial: Map<string, string>;
  cutAbove: Set<string>;
  untold: boolean;
}

export interface AddressMatch {
  cidr: string;
  negated: boolean;
}

export class Table {
  /** Its chains by name and index: the parser declares them here. */
  chainIndex: ChainIndex;
  /** Its rules by id: the parser compares rule lines here. */
  ruleStore: RuleStore;
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
    private readonly buf: Uint8Array,
    /** The line of `*table`, or of the first line of an `iptables -S` listing. */
    readonly startLine: number | undefined,
  ) {
    this.chainIndex = new ChainIndex(buf);
    this.ruleStore = new RuleStore(buf);
  }

  /** The table's read state, to hand to another thread (its typed arrays transfer, the dump's
   * bytes travel once for all tables); `fromState` gives the same table back. */
  state(): TableState {
    return {
      name: this.name,
      family: this.family,
      startLine: this.startLine,
      committed: this.committed,
      chains: this.chainIndex.state(),
      rules: this.ruleStore.state(),
      partial: this.partial,
      cutAbove: this.cutAbove,
      untold: this.untold,
    };
  }

  static fromState(s: TableState, buf: Uint8Array): Table {
    const t = new Table(s.name, buf, s.startLine);
    t.family = s.family;
    t.committed = s.committed;
    t.chainIndex = ChainIndex.fromState(s.chains, buf);
    t.ruleStore = RuleStore.fromState(s.rules, buf);
    t.partial = s.partial;
    t.cutAbove = s.cutAbove;
    t.untold = s.untold;
    return t;
  }

  /** How many chains the table has. */
  get chainCount(): number {
    return this.chainIndex.count;
  }
  /** How many rules the table has. */
  get ruleCount(): number {
    return this.ruleStore.count;
  }
  /** A chain or jump names a kube-proxy chain whose hash its author hid
   * (paste/mangled/hidden-hashes.ts). */
  get hidesHashes(): boolean {
    return this.chainIndex.hidesHashes || this.ruleStore.hidesHashes;
  }

  /** Appends a rule of the chain at index `chain`, its hot fields from the lexer's tokens;
   * returns its id. */
  addRule(
    lex: RuleLexer,
    chain: number,
    lineStart: number,
    specStart: number,
    lineEnd: number,
    lineNo: number,
  ): number {
    const id = this.ruleStore.add(lex, chain, lineStart, specStart, lineEnd, lineNo);
    this.chainIndex.addRule(chain, id);
    return id;
  }

  // The chains' records, by index: bulk readers make no Chain view.
  nameOf(index: number): string {
    return this.chainIndex.nameOf(index);
  }
  /** The index of the chain with this name, or -1. */
  indexOf(name: string): number {
    return this.chainIndex.indexOf(name);
  }
  /** kube-proxy's per-Service chain kind of the chain at this index. */
  kindOf(index: number): ChainKind {
    return this.chainIndex.kindOf(index);
  }
  /** Some chain is of one of these kinds: read from the records, no Chain view made. */
  hasChainOfKind(...kinds: ChainKind[]): boolean {
    return this.chainIndex.hasChainOfKind(...kinds);
  }
  /** The line that declared the chain at this index, undefined for none. */
  chainLine(index: number): number | undefined {
    return this.chainIndex.lineOf(index);
  }
  ruleCountOf(index: number): number {
    return this.chainIndex.ruleCountOf(index);
  }
  /** The table-wide id of the k-th rule of the chain at index. */
  ruleIdOf(index: number, k: number): number {
    return this.chainIndex.ruleIdOf(index, k);
  }
  ruleIdsOf(index: number): number[] {
    return this.chainIndex.ruleIdsOf(index);
  }

  // The rules' records, by id.
  flags(id: number): number {
    return this.ruleStore.flags(id);
  }
  /** The rule line exactly as it appears in the dump (with its `[p:b]` counters where it has
   * them). */
  text(id: number): string {
    return this.ruleStore.text(id);
  }
  /** The rule's text from its "-A", its `[p:b]` counters aside: as kube-proxy writes it. */
  ruleText(id: number): string {
    return this.ruleStore.ruleText(id);
  }
  /** Whether the rule line is exactly `s`, compared on the bytes: no string is built. */
  textEquals(id: number, s: string): boolean {
    return this.ruleStore.textEquals(id, s);
  }
  line(id: number): number {
    return this.ruleStore.line(id);
  }
  /** The rule read from this line, or -1. */
  ruleAtLine(line: number): number {
    return this.ruleStore.ruleAtLine(line);
  }
  /** The index of targetChain(id), or -1: bulk readers touch no Chain object. */
  targetIndex(id: number): number {
    return this.ruleStore.targetIndex(id, this.chainIndex);
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
    return this.chainAtIndex(this.ruleStore.chainOf(id));
  }

  /** The full typed rule. */
  rule(id: number): Rule {
    this.lexer ??= new RuleLexer(this.buf);
    const rules = this.ruleStore;
    return buildRule(this.lexer, rules.specStart(id), rules.lineEnd(id), {
      table: this.name,
      chain: this.nameOf(rules.chainOf(id)),
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
    return c ? c.name : this.ruleStore.field(id, H.target);
  }
  /** Whether the rule's target ends with `suffix` (ASCII), read from the bytes: no lookup. */
  targetEndsWith(id: number, suffix: string): boolean {
    const rules = this.ruleStore;
    if (!rules.span(id, H.target) || rules.fe - rules.fs < suffix.length) return false;
    const at = rules.fe - suffix.length;
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
    return this.ruleStore.field(id, H.src);
  }
  hasSource(id: number): boolean {
    return this.ruleStore.has(id, H.src);
  }
  destination(id: number): string | undefined {
    return this.ruleStore.field(id, H.dst);
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
    const rules = this.ruleStore;
    if (!rules.span(id, side === 'source' ? H.src : H.dst)) return true;
    const negated = RuleFlag[side === 'source' ? 'srcNegated' : 'dstNegated'];
    return (
      bytesCidrContains(this.buf, rules.fs, rules.fe, ip) !== ((this.flags(id) & negated) !== 0)
    );
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
    const rules = this.ruleStore;
    if (!rules.span(id, H.proto)) return undefined;
    // one string for each of the usual protocols, not one per rule
    const b = this.buf;
    const s = rules.fs;
    if (rules.fe - s === 3 && b[s + 1] === 99 /* c */ && b[s + 2] === 112 /* p */) {
      if (b[s] === 116 /* t */) return 'tcp';
      if (b[s] === 117 /* u */) return 'udp';
    }
    return text(b, s, rules.fe);
  }
  dport(id: number): string | undefined {
    return this.ruleStore.field(id, H.dport);
  }
  comment(id: number): string | undefined {
    const rules = this.ruleStore;
    if (!rules.span(id, H.comment)) return undefined;
    return (this.flags(id) & RuleFlag.commentQuoted) !== 0
      ? unescaped(this.buf, rules.fs, rules.fe)
      : text(this.buf, rules.fs, rules.fe);
  }
  /** DNAT/SNAT address as written, undefined when the old-iptables quirk hides it. */
  to(id: number): string | undefined {
    return (this.flags(id) & RuleFlag.dnatQuirk) !== 0 ? undefined : this.ruleStore.field(id, H.to);
  }
  /** The statistic probability, read from the bytes without building a string. */
  probability(id: number): number | undefined {
    const rules = this.ruleStore;
    if (!rules.span(id, H.probability)) return undefined;
    const s = rules.fs;
    const e = rules.fe;
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
