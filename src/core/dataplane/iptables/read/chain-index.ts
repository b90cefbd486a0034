// A table's chains as records in one Int32Array (name bytes, rules, declaring line, kind), found
// by their name's bytes through an open-addressing hash: no object per chain until asked.
import { sameBytes, text } from './lexer.js';
import { chainKind, hashBytes, hashName, hides, KINDS, type ChainKind } from './chain-names.js';

/** A chain's record in its table: name bytes, rules [first, first + count) (count -1: listed
 * apart, interleaved with another chain's), declaring line (0 for none) and kind. */
const C = { nameStart: 0, nameEnd: 1, first: 2, count: 3, line: 4, kind: 5 } as const;
const C_STRIDE = 6;
const SLOT_INTS = 2;

/** What ChainIndex.state() hands over: typed arrays and Maps (structured-clonable). */
export interface ChainIndexState {
  count: number;
  slots: Int32Array;
  records: Int32Array;
  policies: Map<number, string>;
  scatteredRules: Map<number, number[]>;
}

export class ChainIndex {
  /** How many chains the table has. */
  count = 0;
  /** A chain names a kube-proxy chain whose hash its author hid
   * (paste/mangled/hidden-hashes.ts). */
  hidesHashes = false;
  // open-addressing hash of chain names by their bytes: slot i holds [hash, chain index + 1], so
  // a probe compares hashes before it reads any name
  private slots: Int32Array = new Int32Array(2048);
  private lastTarget = -1; // the chain the last resolved jump went to: KUBE-MARK-MASQ comes often
  private records: Int32Array = new Int32Array(1024 * C_STRIDE); // per chain, see C
  private names: (string | undefined)[] = []; // decoded chain names, by index
  private policies = new Map<number, string>();
  private scatteredRules = new Map<number, number[]>();

  constructor(private readonly buf: Uint8Array) {}

  /** The index's read state, to hand to another thread; `fromState` gives the same index back. */
  state(): ChainIndexState {
    const { count, slots, records, policies, scatteredRules } = this;
    return { count, slots, records, policies, scatteredRules };
  }

  static fromState(s: ChainIndexState, buf: Uint8Array): ChainIndex {
    const index = new ChainIndex(buf);
    index.count = s.count;
    index.slots = s.slots;
    index.records = s.records;
    index.policies = s.policies;
    index.scatteredRules = s.scatteredRules;
    return index;
  }

  lineOf(index: number): number | undefined {
    return this.records[index * C_STRIDE + C.line] || undefined;
  }
  setLine(index: number, line: number | undefined): void {
    this.records[index * C_STRIDE + C.line] = line ?? 0;
  }
  policyOf(index: number): string | undefined {
    return this.policies.get(index);
  }
  setPolicy(index: number, policy: string | undefined): void {
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

  ruleIdsOf(index: number): number[] {
    const at = index * C_STRIDE;
    const count = this.records[at + C.count]!;
    if (count < 0) return [...this.scatteredRules.get(index)!];
    const first = this.records[at + C.first]!;
    return Array.from({ length: count }, (_, k) => first + k);
  }

  /** Appends the rule `id` to the chain at index. */
  addRule(index: number, id: number): void {
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
    for (let i = 0; i < this.count; i++) if (kinds.includes(this.kindOf(i))) return true;
    return false;
  }

  /** The name of the chain at this index, decoded from the dump on first use. */
  nameOf(index: number): string {
    const at = index * C_STRIDE;
    // sized to every chain at once: a first write far past the end (names[4240] of []) would
    // turn the array into a dictionary, slower to read and several times the size
    if (this.names.length < this.count) this.names.length = this.count;
    return (this.names[index] ??= text(
      this.buf,
      this.records[at + C.nameStart]!,
      this.records[at + C.nameEnd]!,
    ));
  }

  /** The index of the chain named by the bytes [s, e), created undeclared when new. `near` is
   * tried first, then the chain declared after it: iptables-save writes rules in declaration
   * order. */
  chainAt(s: number, e: number, near = -1): number {
    if (near >= 0) {
      if (this.named(near, s, e)) return near;
      if (near + 1 < this.count && this.named(near + 1, s, e)) return near + 1;
    }
    const h = hashBytes(this.buf, s, e);
    let found = this.probe(h, s, e);
    if (found >= 0) return found;
    const index = this.count++;
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
    if ((this.count + 1) * 2 * SLOT_INTS > this.slots.length) {
      this.rehash();
      found = this.probe(h, s, e);
    }
    this.place(-found - 1, h, index);
    return index;
  }

  /** Whether the chain at index is named by the bytes [s, e). */
  named(index: number, s: number, e: number): boolean {
    const at = index * C_STRIDE;
    const r = this.records;
    return sameBytes(this.buf, r[at + C.nameStart]!, r[at + C.nameEnd]!, s, e);
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

  /** The index of the chain a jump names by the bytes [s, e), or -1 (no chain is made). */
  lookup(s: number, e: number): number {
    const last = this.lastTarget;
    if (last >= 0 && this.named(last, s, e)) return last;
    const found = this.probe(hashBytes(this.buf, s, e), s, e);
    if (found >= 0) this.lastTarget = found;
    return found >= 0 ? found : -1;
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
}
