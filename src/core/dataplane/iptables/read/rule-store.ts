// A table's rules as fixed records in chunked Int32Arrays, each with the byte offsets of only the
// hot fields it has (token-walk.ts), packed in a second store: a big dump costs ~50 bytes a rule.
import { LineSyntaxError, sameBytes, text, type RuleLexer } from './lexer.js';
import { H, HOT_FIELDS, RuleFlag, walkRule } from './token-walk.js';
import { hides, textHash } from './chain-names.js';
import type { ChainIndex } from './chain-index.js';

/** A rule's record: its fields' places in its chunk. */
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

/** What RuleStore.state() hands over: typed arrays and a Map (structured-clonable). */
export interface RuleStoreState {
  count: number;
  chunks: Int32Array[];
  pairChunks: Uint16Array[];
  pairTop: number;
  lineStarts: Map<number, number>;
}

export class RuleStore {
  /** How many rules the table has; their ids are 0 to count - 1, in the input's order. */
  count = 0;
  /** A rule jumps to a kube-proxy chain whose hash its author hid
   * (paste/mangled/hidden-hashes.ts). */
  hidesHashes = false;
  /** The field span() found: its [fs, fe) bytes. */
  fs = 0;
  fe = 0;
  private chunks: Int32Array[] = [];
  // a field's [start, end) as Uint16 offsets from its rule's specStart: half the bytes of Int32
  private pairChunks: Uint16Array[] = [];
  private pairTop = PAIR_CHUNK; // next free int in the pair store (full: a chunk is added)
  private readonly hotScratch = new Int32Array(HOT_FIELDS * 2 + 1);
  private lineStarts = new Map<number, number>(); // rules with a counters prefix

  constructor(private readonly buf: Uint8Array) {}

  /** The store's read state, to hand to another thread; `fromState` gives the same store back. */
  state(): RuleStoreState {
    const { count, chunks, pairChunks, pairTop, lineStarts } = this;
    return { count, chunks, pairChunks, pairTop, lineStarts };
  }

  static fromState(s: RuleStoreState, buf: Uint8Array): RuleStore {
    const store = new RuleStore(buf);
    store.count = s.count;
    store.chunks = s.chunks;
    store.pairChunks = s.pairChunks;
    store.pairTop = s.pairTop;
    for (const [k, v] of s.lineStarts) store.lineStarts.set(k, v);
    return store;
  }

  /** Appends a rule of the chain at index `chain`, its hot fields from the lexer's tokens;
   * returns its id. */
  add(
    lex: RuleLexer,
    chain: number,
    lineStart: number,
    specStart: number,
    lineEnd: number,
    lineNo: number,
  ): number {
    const id = this.count++;
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
    return id;
  }

  private int(id: number, field: number): number {
    return this.chunks[id >> CHUNK_BITS]![(id & MASK) * STRIDE + field]!;
  }

  /** The index of the rule's chain. */
  chainOf(id: number): number {
    return this.int(id, R.chain);
  }

  /** Where the rule's text after "-A " starts (its chain's name). */
  specStart(id: number): number {
    return this.int(id, R.specStart);
  }

  lineEnd(id: number): number {
    return this.int(id, R.lineEnd);
  }

  /** Puts a present hot field's [start, end) bytes in fs / fe; false when the rule has none. */
  span(id: number, field: number): boolean {
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

  field(id: number, field: number): string | undefined {
    return this.span(id, field) ? text(this.buf, this.fs, this.fe) : undefined;
  }

  has(id: number, field: number): boolean {
    return ((this.int(id, R.flags) >>> PRESENT_SHIFT) & (1 << field)) !== 0;
  }

  flags(id: number): number {
    return this.int(id, R.flags) & 0xffff;
  }

  /** The rule line exactly as it appears in the dump (with its `[p:b]` counters where it has
   * them). */
  text(id: number): string {
    return text(this.buf, this.lineStartOf(id), this.int(id, R.lineEnd));
  }

  /** The rule's text from its "-A", its `[p:b]` counters aside. */
  ruleText(id: number): string {
    return text(this.buf, this.int(id, R.specStart) - 3, this.int(id, R.lineEnd));
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

  /** The rule read from this line, or -1: rule ids follow the input's order, as lines do. */
  ruleAtLine(line: number): number {
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = this.line(mid);
      if (at === line) return mid;
      if (at < line) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Whether the rule's line, from its `[p:b]` counters where it has them (else its "-A"), is the
   * bytes [s, e) of the dump: two rules of one text that count apart are two rules. */
  ruleIs(id: number, s: number, e: number): boolean {
    return sameBytes(this.buf, this.lineStartOf(id), this.int(id, R.lineEnd), s, e);
  }

  /** Whether the bytes [s, e) are the start of the rule's line as ruleIs takes it: a copy of it
   * cut at the paste's end. */
  ruleStartsWith(id: number, s: number, e: number): boolean {
    const start = this.lineStartOf(id);
    const end = this.int(id, R.lineEnd);
    return e - s < end - start && sameBytes(this.buf, start, start + e - s, s, e);
  }

  /** Whether the rule's text, from its "-A" (its counters aside), is the bytes [a, e). */
  ruleTextIs(id: number, a: number, e: number): boolean {
    return sameBytes(this.buf, this.int(id, R.specStart) - 3, this.int(id, R.lineEnd), a, e);
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

  /** The index in `chains` of the chain the rule jumps or goes to, or -1: looked up once. */
  targetIndex(id: number, chains: ChainIndex): number {
    const c = this.chunks[id >> CHUNK_BITS]!;
    const at = (id & MASK) * STRIDE;
    let i = c[at + R.targetChain]!;
    if (i === UNRESOLVED)
      i = c[at + R.targetChain] = this.span(id, H.target) ? chains.lookup(this.fs, this.fe) : -1;
    return i;
  }
}
