// Storage of one parsed table: every rule's hot fields as byte offsets in chunked Int32Arrays
// (no object per rule), chains found by their name's bytes, and typed rules built on demand.
import { LineSyntaxError, RuleLexer, text, unescaped } from './lexer.js';
import { buildRule, type Rule } from './rule.js';
import { H, HOT_FIELDS, RuleFlag, walkRule } from './token-walk.js';
import { bytesCidrContains } from '../../../ipv4.js';
import type { IPFamily } from '../../../ipv6.js';
import { DISPATCH_MIN, dispatchOf, type Dispatch } from './dispatch.js';
import { Chain } from './chain.js';
import {
  chainKind,
  hashBytes,
  hashName,
  hides,
  KINDS,
  textHash,
  type ChainKind,
} from './chain-names.js';

/** A chain's record in its table: name bytes, rules [first, first + count) (count -1: listed
 * apart, interleaved with another chain's), declaring line (0 for none) and kind. */
const C = { nameStart: 0, nameEnd: 1, first: 2, count: 3, line: 4, kind: 5 } as const;
const C_STRIDE = 6;

// A rule is a fixed record in chunked Int32Arrays, plus the [start, end) byte offsets of only
// the hot fields it has, packed in a second store: a big dump costs ~50 bytes a rule.
const R = {
  specStart: 0, // the chain name after "-A "
  lineEnd: 1,
  lineNo: 2,
  flags: 3, // RuleFlag bits, and which hot fields are present from bit 16
  chain: 4, // index of the rule's chain
  targetChain: 5, // index of the chain it jumps to, -1 for none, UNRESOLVED until asked
  pairs: 6, // where its hot fields start in the pair store
} as const;
const STRIDE = 7;
const UNRESOLVED = -2;
const CHUNK_BITS = 12; // 4096 rules a chunk: no copying as a table grows
const CHUNK = 1 << CHUNK_BITS;
const MASK = CHUNK - 1;
const PAIR_BITS = 16; // the pair store grows in chunks of 65536 offsets
const PAIR_CHUNK = 1 << PAIR_BITS;
const PRESENT_SHIFT = 16;

/** How many of the fields below bit k are present, for each presence byte. */
const BEFORE = Array.from({ length: HOT_FIELDS }, (_, k) =>
  Uint8Array.from({ length: 256 }, (_, m) => {
    let n = 0;
    for (let j = 0; j < k; j++) if (m & (1 << j)) n++;
    return n;
  }),
);

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

export class Table {
  /** How many chains the table has. */
  chainCount = 0;
  ruleCount = 0;
  committed = false;
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
  /** A chain or jump names a kube-proxy chain whose hash its author hid (paste/hidden-hashes.ts). */
  hidesHashes = false;
  private chunks: Int32Array[] = [];
  // a field's [start, end) as Uint16 offsets from its rule's specStart: half the bytes of Int32
  private pairChunks: Uint16Array[] = [];
  private fs = 0; // the field span() found
  private fe = 0;
  private pairTop = PAIR_CHUNK; // next free int in the pair store (full: a chunk is added)
  private readonly hotScratch = new Int32Array(HOT_FIELDS * 2 + 1);
  private readonly lineStarts = new Map<number, number>(); // rules with a counters prefix
  // open-addressing hash of chain names by their bytes: slot i holds [hash, chain index + 1], so
  // a probe compares hashes before it reads any name
  private slots: Int32Array = new Int32Array(2048);
  private lastTarget = -1; // the chain the last resolved jump went to: KUBE-MARK-MASQ comes often
  private records: Int32Array = new Int32Array(1024 * C_STRIDE); // per chain, see C
  private names: (string | undefined)[] = []; // decoded chain names, by index
  private chainViews: Chain[] | undefined;
  private typed = new Map<number, Rule[]>(); // typed rules of the chains asked for
  private policies = new Map<number, string>();
  private scatteredRules = new Map<number, number[]>();
  private dispatches = new Map<number, Dispatch>(); // long chains' rules by host and port
  private reached = new Map<number, Rule>(); // rules packet walks typed, by id
  private lexer: RuleLexer | undefined; // typing a rule lexes it again: one lexer for them all

  constructor(
    public name: string,
    private readonly buf: Uint8Array,
    /** The line of `*table`, or of the first line of an `iptables -S` listing. */
    readonly startLine: number | undefined,
  ) {}

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

  chainLine(index: number): number | undefined {
    return this.records[index * C_STRIDE + C.line] || undefined;
  }
  setChainLine(index: number, line: number | undefined): void {
    this.records[index * C_STRIDE + C.line] = line ?? 0;
  }
  chainPolicy(index: number): string | undefined {
    return this.policies.get(index);
  }
  setChainPolicy(index: number, policy: string | undefined): void {
    if (policy === undefined) this.policies.delete(index);
    else this.policies.set(index, policy);
  }
  ruleCountOf(index: number): number {
    const count = this.records[index * C_STRIDE + C.count]!;
    return count < 0 ? this.scatteredRules.get(index)!.length : count;
  }

  /** The table-wide id of the k-th rule of the chain at index. */
  ruleIdOf(index: number, k: number): number {
    const at = index * C_STRIDE;
    const count = this.records[at + C.count]!;
    return count < 0 ? this.scatteredRules.get(index)![k]! : this.records[at + C.first]! + k;
  }

  /** The rule read from this line, or -1: rule ids follow the input's order, as lines do. */
  ruleAtLine(line: number): number {
    let lo = 0;
    let hi = this.ruleCount - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = this.line(mid);
      if (at === line) return mid;
      if (at < line) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  ruleIdsOf(index: number): number[] {
    const at = index * C_STRIDE;
    const count = this.records[at + C.count]!;
    if (count < 0) return [...this.scatteredRules.get(index)!];
    const first = this.records[at + C.first]!;
    return Array.from({ length: count }, (_, k) => first + k);
  }

  private addRuleTo(index: number, id: number): void {
    const at = index * C_STRIDE;
    const count = this.records[at + C.count]!;
    if (count < 0) this.scatteredRules.get(index)!.push(id);
    else if (count === 0) {
      this.records[at + C.first] = id;
      this.records[at + C.count] = 1;
    } else if (this.records[at + C.first]! + count === id) this.records[at + C.count] = count + 1;
    else {
      // rules of this chain interleaved with another's (hand-edited): list them
      this.scatteredRules.set(index, [...this.ruleIdsOf(index), id]);
      this.records[at + C.count] = -1;
    }
  }

  /** kube-proxy's per-Service chain kind of the chain at this index. */
  kindOf(index: number): ChainKind {
    const k = this.records[index * C_STRIDE + C.kind]!;
    return k === 0 ? undefined : KINDS[k - 1]!.kind;
  }

  /** Some chain is of one of these kinds: read from the records, no Chain view made. */
  hasChainOfKind(...kinds: ChainKind[]): boolean {
    for (let i = 0; i < this.chainCount; i++) if (kinds.includes(this.kindOf(i))) return true;
    return false;
  }

  /** The name of the chain at this index, decoded from the dump on first use. */
  nameOf(index: number): string {
    const at = index * C_STRIDE;
    // sized to every chain at once: a first write far past the end (names[4240] of []) would
    // turn the array into a dictionary, slower to read and several times the size
    if (this.names.length < this.chainCount) this.names.length = this.chainCount;
    return (this.names[index] ??= text(
      this.buf,
      this.records[at + C.nameStart]!,
      this.records[at + C.nameEnd]!,
    ));
  }

  typedRules(index: number): Rule[] {
    let rules = this.typed.get(index);
    if (!rules) this.typed.set(index, (rules = this.ruleIdsOf(index).map((r) => this.rule(r))));
    return rules;
  }

  /** The index of the chain named by the bytes [s, e), created undeclared when new. `near` is
   * tried first, then the chain declared after it: iptables-save writes rules in declaration
   * order. */
  chainAt(s: number, e: number, near = -1): number {
    if (near >= 0) {
      if (this.named(near, s, e)) return near;
      if (near + 1 < this.chainCount && this.named(near + 1, s, e)) return near + 1;
    }
    const h = hashBytes(this.buf, s, e);
    let found = this.probe(h, s, e);
    if (found >= 0) return found;
    const index = this.chainCount++;
    if ((index + 1) * C_STRIDE > this.records.length) {
      const grown = new Int32Array(this.records.length * 2);
      grown.set(this.records);
      this.records = grown;
    }
    const at = index * C_STRIDE;
    this.records[at + C.nameStart] = s;
    this.records[at + C.nameEnd] = e;
    this.records[at + C.kind] = chainKind(this.buf, s, e);
    if (!this.hidesHashes) this.hidesHashes = hides(this.buf, s, e);
    if ((this.chainCount + 1) * 2 * SLOT_INTS > this.slots.length) {
      this.rehash();
      found = this.probe(h, s, e);
    }
    this.place(-found - 1, h, index);
    return index;
  }

  /** Whether the chain at index is named by the bytes [s, e). */
  named(index: number, s: number, e: number): boolean {
    const at = index * C_STRIDE;
    return this.sameBytes(this.records[at + C.nameStart]!, this.records[at + C.nameEnd]!, s, e);
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

  /** The index of the chain with this name, or -1. */
  indexOf(name: string): number {
    const h = hashName(name);
    const mask = this.slots.length / SLOT_INTS - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = this.slots[i * SLOT_INTS + 1]!;
      if (v === 0) return -1;
      if (this.slots[i * SLOT_INTS] === h && this.spells(v - 1, name)) return v - 1;
    }
  }

  /** Whether the chain at index is named `name`, compared on the bytes (no name decoded). */
  private spells(index: number, name: string): boolean {
    const s = this.records[index * C_STRIDE + C.nameStart]!;
    const e = this.records[index * C_STRIDE + C.nameEnd]!;
    if (e - s !== name.length) return e - s > name.length && this.nameOf(index) === name;
    for (let k = 0; k < name.length; k++) {
      const c = this.buf[s + k]!;
      if (c >= 0x80) return this.nameOf(index) === name;
      if (c !== name.charCodeAt(k)) return false;
    }
    return true;
  }

  private lookup(s: number, e: number): number {
    const last = this.lastTarget;
    if (last >= 0 && this.named(last, s, e)) return last;
    const found = this.probe(hashBytes(this.buf, s, e), s, e);
    if (found >= 0) this.lastTarget = found;
    return found >= 0 ? found : -1;
  }

  /** Whether the rule's line, from its `[p:b]` counters where it has them (else its "-A"), is the
   * bytes [s, e) of the dump: two rules of one text that count apart are two rules. */
  ruleIs(id: number, s: number, e: number): boolean {
    return this.sameBytes(this.lineStartOf(id), this.int(id, R.lineEnd), s, e);
  }

  /** Whether the bytes [s, e) are the start of the rule's line as ruleIs takes it: a copy of it
   * cut at the paste's end. */
  ruleStartsWith(id: number, s: number, e: number): boolean {
    const start = this.lineStartOf(id);
    return e - s < this.int(id, R.lineEnd) - start && this.sameBytes(start, start + e - s, s, e);
  }

  /** Whether the rule's text, from its "-A" (its counters aside), is the bytes [a, e). */
  ruleTextIs(id: number, a: number, e: number): boolean {
    return this.sameBytes(this.int(id, R.specStart) - 3, this.int(id, R.lineEnd), a, e);
  }

  /** textHash of the rule's text, from its "-A". */
  ruleTextHash(id: number): number {
    return textHash(this.buf, this.int(id, R.specStart) - 3, this.int(id, R.lineEnd));
  }

  /** Where the rule's line starts: at its `[p:b]` counters where it has them, else its "-A". */
  private lineStartOf(id: number): number {
    return (this.flags(id) & RuleFlag.counters) !== 0
      ? this.lineStarts.get(id)!
      : this.int(id, R.specStart) - 3;
  }

  private sameBytes(as: number, ae: number, s: number, e: number): boolean {
    if (ae - as !== e - s) return false;
    const b = this.buf;
    for (let k = e - s - 1; k >= 0; k--) if (b[as + k] !== b[s + k]) return false;
    return true;
  }

  /** The chain index for the name bytes, or -(empty slot + 1) where it would go. */
  private probe(h: number, s: number, e: number): number {
    const slots = this.slots;
    const mask = slots.length / SLOT_INTS - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const at = i * SLOT_INTS;
      const v = slots[at + 1]!;
      if (v === 0) return -i - 1;
      if (slots[at] === h && this.named(v - 1, s, e)) return v - 1;
    }
  }

  private place(slot: number, h: number, index: number): void {
    const at = slot * SLOT_INTS;
    this.slots[at] = h;
    this.slots[at + 1] = index + 1;
  }

  /** Doubles the slots, moving each entry by the hash it holds (no name is read again). */
  private rehash(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    const mask = this.slots.length / SLOT_INTS - 1;
    for (let at = 0; at < old.length; at += SLOT_INTS) {
      const v = old[at + 1]!;
      if (v === 0) continue;
      let i = old[at]! & mask;
      while (this.slots[i * SLOT_INTS + 1] !== 0) i = (i + 1) & mask;
      this.place(i, old[at]!, v - 1);
    }
  }

  /** Appends a rule's hot fields from the lexer's tokens; returns its id. */
  addRule(
    lex: RuleLexer,
    chain: number,
    lineStart: number,
    specStart: number,
    lineEnd: number,
    lineNo: number,
  ): number {
    const id = this.ruleCount++;
    if ((id & MASK) === 0) this.chunks.push(new Int32Array(CHUNK * STRIDE));
    const c = this.chunks[id >> CHUNK_BITS]!;
    const at = (id & MASK) * STRIDE;
    const hot = this.hotScratch.fill(0);
    let flags = walkRule(this.buf, lex, hot);
    if (!this.hidesHashes && hot[1] !== 0) this.hidesHashes = hides(this.buf, hot[0]!, hot[1]!);
    if (lineStart !== specStart - 3) {
      flags |= RuleFlag.counters;
      this.lineStarts.set(id, lineStart);
    }
    // pack the present fields; a rule's pairs never straddle two chunks
    if (this.pairTop + HOT_FIELDS * 2 > PAIR_CHUNK * this.pairChunks.length) {
      this.pairChunks.push(new Uint16Array(PAIR_CHUNK));
      this.pairTop = PAIR_CHUNK * (this.pairChunks.length - 1);
    }
    const store = this.pairChunks[this.pairChunks.length - 1]!;
    let top = this.pairTop & (PAIR_CHUNK - 1);
    let present = 0;
    for (let f = 0; f < HOT_FIELDS; f++) {
      if (hot[f * 2 + 1] === 0) continue;
      present |= 1 << f;
      if (hot[f * 2 + 1]! - specStart > 0xffff)
        throw new LineSyntaxError('a rule longer than 65,535 bytes: iptables-save writes none');
      store[top++] = hot[f * 2]! - specStart;
      store[top++] = hot[f * 2 + 1]! - specStart;
    }
    c[at + R.specStart] = specStart;
    c[at + R.lineEnd] = lineEnd;
    c[at + R.lineNo] = lineNo;
    c[at + R.flags] = flags | (present << PRESENT_SHIFT);
    c[at + R.chain] = chain;
    c[at + R.targetChain] = UNRESOLVED; // looked up on first use: most jumps are never followed
    c[at + R.pairs] = this.pairTop;
    this.pairTop = (this.pairTop & ~(PAIR_CHUNK - 1)) + top;
    this.addRuleTo(chain, id);
    return id;
  }

  private int(id: number, field: number): number {
    return this.chunks[id >> CHUNK_BITS]![(id & MASK) * STRIDE + field]!;
  }

  /** Puts a present hot field's [start, end) bytes in fs / fe; false when the rule has none. */
  private span(id: number, field: number): boolean {
    const c = this.chunks[id >> CHUNK_BITS]!;
    const at = (id & MASK) * STRIDE;
    const present = c[at + R.flags]! >>> PRESENT_SHIFT;
    if ((present & (1 << field)) === 0) return false;
    const p = c[at + R.pairs]! + 2 * BEFORE[field]![present]!;
    const store = this.pairChunks[p >>> PAIR_BITS]!;
    const k = p & (PAIR_CHUNK - 1);
    const base = c[at + R.specStart]!;
    this.fs = base + store[k]!;
    this.fe = base + store[k + 1]!;
    return true;
  }

  private field(id: number, field: number): string | undefined {
    return this.span(id, field) ? text(this.buf, this.fs, this.fe) : undefined;
  }

  private has(id: number, field: number): boolean {
    return ((this.int(id, R.flags) >>> PRESENT_SHIFT) & (1 << field)) !== 0;
  }

  /** The rule line exactly as it appears in the dump (with its `[p:b]` counters where it has
   * them). */
  text(id: number): string {
    return text(this.buf, this.lineStartOf(id), this.int(id, R.lineEnd));
  }

  /** Whether the rule line is exactly `s`, compared on the bytes: no string is built. */
  textEquals(id: number, s: string): boolean {
    const b = this.buf;
    const end = this.int(id, R.lineEnd);
    const start = this.lineStartOf(id);
    if (end - start !== s.length) return s.length > end - start ? false : this.text(id) === s;
    for (let k = 0; k < s.length; k++) {
      const c = b[start + k]!;
      if (c >= 0x80) return this.text(id) === s; // UTF-8: compare the decoded text
      if (c !== s.charCodeAt(k)) return false;
    }
    return true;
  }

  line(id: number): number {
    return this.int(id, R.lineNo);
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
  flags(id: number): number {
    return this.int(id, R.flags) & 0xffff;
  }
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
  /** The index of targetChain(id), or -1: bulk readers touch no Chain object. */
  targetIndex(id: number): number {
    const c = this.chunks[id >> CHUNK_BITS]!;
    const at = (id & MASK) * STRIDE;
    let i = c[at + R.targetChain]!;
    if (i === UNRESOLVED)
      i = c[at + R.targetChain] = this.span(id, H.target) ? this.lookup(this.fs, this.fe) : -1;
    return i;
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

const SLOT_INTS = 2;
