// Rule lines that repeat rules their chain already has. A block pasted twice repeats them line
// for line, counters and all, up to the chain's last rule read (or to the paste's end, a copy cut
// there): read once. A command typed again prints the rules it printed before, their counters
// moved since: the same rules, read once. Anything else is the chain's own: iptables keeps a rule
// appended twice, each with its own counters, and iptables-save prints each: inside one whole
// *table ... COMMIT block a chain's rules repeating in a row are the kernel's.
import { text } from '../lexer.js';
import { classifyLine } from '../paste/other-lines/classify.js';
import type { Table } from '../table.js';
import { textHash } from '../chain-names.js';
import { CR, NL, SP, TAB } from './parser-state.js';

/** What a rule line is to the rules read before it: a copy pasted again, the same rule in the
 * output of a command run again, or (undefined) a rule of its own. */
export type Repeat = 'copy' | 'rerun' | undefined;

/** A rule line as the parser reads it: where it starts (at its counters) and where its "-A" is. */
interface RuleAt {
  s: number;
  a: number;
  e: number;
}

export class Repeats {
  /** Lines read once as a copy of rules above them. */
  readonly copies: number[] = [];
  /** Lines read once as rules an earlier command printed, printed again. */
  readonly reruns: number[] = [];
  /** The line of the last command typed: the lines after it are its output. */
  private runStart = 0;
  /** Rules of earlier outputs that this output has printed again. */
  private readonly shown = new Map<Table, Set<number>>();
  /** A copy seen to go on: the rule of each chain its next line repeats. */
  private readonly next = new Map<Table, Map<number, number>>();
  /** Each chain's rules by the hash of their text, for chains looked up whole: a chain resumed
   * after another's (kube-proxy's restore input resumes KUBE-SERVICES once per Service). */
  private readonly byText = new Map<Table, Map<number, Map<number, number[]>>>();
  private tail = -1; // the end of the paste's last line that holds anything
  /** Whether the save block opened on that line reaches its COMMIT with no table or chain
   * declared before it (a block pasted again would declare them). */
  private readonly whole = new Map<number, boolean>();

  constructor(private readonly buf: Uint8Array) {}

  /** A command typed at `line`: what follows is its output, apart from the outputs before. */
  typed(line: number): void {
    this.runStart = line;
    this.shown.clear();
    this.next.clear();
  }

  /** Whether `line` is in the output of a command typed before the last. */
  earlier(line: number): boolean {
    return line < this.runStart;
  }

  /** What the rule line [s, e) of `chain`, its "-A" at `a`, is to the rules the chain has;
   * `resumed` where the line before it was another chain's; `save` the line of the *table line
   * whose block it is in. */
  check(
    table: Table,
    chain: number,
    resumed: boolean,
    r: RuleAt,
    lineNo: number,
    save?: number,
  ): Repeat {
    if (table.ruleCountOf(chain) === 0) return undefined;
    const said = this.repeat(table, chain, resumed, r, save);
    if (said === 'copy') this.copies.push(lineNo);
    if (said === 'rerun') this.reruns.push(lineNo);
    return said;
  }

  /** A rule added to its chain: where its chain is looked up by text, so is it. */
  added(table: Table, chain: number, a: number, e: number): void {
    const index = this.byText.get(table)?.get(chain);
    if (index) push(index, textHash(this.buf, a, e), table.ruleCountOf(chain) - 1);
  }

  /** The paste's last line, cut where the copy `next` expects a rule: that rule's copy. */
  cutCopy(s: number, e: number): boolean {
    for (const [table, chains] of this.next)
      for (const [chain, k] of chains)
        if (table.ruleStore.ruleStartsWith(table.ruleIdOf(chain, k), s, e)) return true;
    return false;
  }

  private repeat(
    table: Table,
    chain: number,
    resumed: boolean,
    r: RuleAt,
    save: number | undefined,
  ): Repeat {
    const chains = this.next.get(table);
    const k = chains?.get(chain);
    if (k !== undefined) {
      if (table.ruleStore.ruleIs(table.ruleIdOf(chain, k), r.s, r.e)) {
        this.expect(table, chain, k + 1);
        return 'copy';
      }
      chains!.delete(chain);
    }
    const before = this.runStart > 0 && this.earlier(table.line(table.ruleIdOf(chain, 0)));
    if (before && this.rerun(table, chain, r)) return 'rerun';
    // a clean dump pays one length compare: its first rule's, where the chain does not resume
    for (const j of resumed ? this.alike(table, chain, r) : FIRST)
      if (
        table.ruleStore.ruleIs(table.ruleIdOf(chain, j), r.s, r.e) &&
        this.goesOn(table, chain, j + 1, r.e) &&
        !(
          save !== undefined &&
          !resumed &&
          table.line(table.ruleIdOf(chain, j)) > save &&
          this.wholeBlock(save, r.e)
        )
      ) {
        this.expect(table, chain, j + 1);
        return 'copy';
      }
    return undefined;
  }

  /** A rule an earlier output printed, alike but for its counters, that this one has not yet. */
  private rerun(table: Table, chain: number, r: RuleAt): boolean {
    let shown = this.shown.get(table);
    if (!shown) this.shown.set(table, (shown = new Set()));
    const fresh = (id: number) => table.line(id) < this.runStart && !shown.has(id);
    for (const j of this.alike(table, chain, r)) {
      const id = table.ruleIdOf(chain, j);
      if (!fresh(id) || !table.ruleStore.ruleTextIs(id, r.a, r.e)) continue;
      shown.add(id);
      return true;
    }
    // `iptables -S -v` prints each rule's counters inside it ("-c 0 0" before its target): the
    // same rule as another listing's line without them
    const line = text(this.buf, r.a, r.e);
    const bare = withoutCounters(line);
    // neither this line nor the chain's rules printed so (a chain's rules share one listing's form)
    if (bare === line && !IN_RULE_COUNTERS.test(table.text(table.ruleIdOf(chain, 0)))) return false;
    for (let j = 0; j < table.ruleCountOf(chain); j++) {
      const id = table.ruleIdOf(chain, j);
      if (!fresh(id)) continue;
      const other = table.text(id).replace(/^\[\d+:\d+\] /, '');
      if (withoutCounters(other) !== bare) continue;
      shown.add(id);
      return true;
    }
    return false;
  }

  /** The chain's rules whose text (counters aside) may be the line's, by its hash. */
  private alike(table: Table, chain: number, r: RuleAt): number[] {
    let chains = this.byText.get(table);
    if (!chains) this.byText.set(table, (chains = new Map()));
    let index = chains.get(chain);
    if (!index) {
      chains.set(chain, (index = new Map()));
      for (let j = 0; j < table.ruleCountOf(chain); j++)
        push(index, table.ruleStore.ruleTextHash(table.ruleIdOf(chain, j)), j);
    }
    return index.get(textHash(this.buf, r.a, r.e)) ?? [];
  }

  private expect(table: Table, chain: number, k: number): void {
    let chains = this.next.get(table);
    if (!chains) this.next.set(table, (chains = new Map()));
    if (k < table.ruleCountOf(chain)) chains.set(chain, k);
    else chains.delete(chain);
  }

  /** Whether the lines after byte `e` go on to repeat the chain's rules from the `from`th to its
   * last read, each read as the parser reads it (a prefix stripped), other chains' rules and blank
   * lines between them aside; or until the paste ends, its last line perhaps cut in a rule. */
  private goesOn(table: Table, chain: number, from: number, e: number): boolean {
    let pos = e;
    for (let j = from; j < table.ruleCountOf(chain);) {
      const line = this.lineAfter(pos);
      if (!line) return true;
      pos = line.end;
      if (line.s === line.e) continue;
      const r = this.ruleIn(line.s, line.e);
      if (!r) return false;
      let name = r.a + 3;
      while (name < r.e && this.buf[name] !== SP) name++;
      if (!table.chainIndex.named(chain, r.a + 3, name)) continue;
      const id = table.ruleIdOf(chain, j);
      if (table.ruleStore.ruleIs(id, r.s, r.e)) j++;
      else return line.e >= this.lastEnd() && table.ruleStore.ruleStartsWith(id, r.s, r.e);
    }
    return true;
  }

  /** Whether the save block opened on line `save` (byte `pos` inside it) reaches its COMMIT
   * before any *table line or chain declaration, or the paste's end. */
  private wholeBlock(save: number, pos: number): boolean {
    let whole = this.whole.get(save);
    let at = pos;
    while (whole === undefined) {
      const line = this.lineAfter(at);
      if (!line) whole = false;
      else if (line.e - line.s === 6 && text(this.buf, line.s, line.e) === 'COMMIT') whole = true;
      else if (this.buf[line.s] === 42 || this.buf[line.s] === 58)
        whole = false; // "*", ":"
      else at = line.end;
    }
    this.whole.set(save, whole);
    return whole;
  }

  /** The line after the one `pos` is on, trimmed; undefined at the paste's end. */
  private lineAfter(pos: number): { s: number; e: number; end: number } | undefined {
    const b = this.buf;
    let s = b.indexOf(NL, pos) + 1;
    if (s === 0) return undefined;
    let end = b.indexOf(NL, s);
    if (end < 0) end = b.length;
    let e = end;
    while (s < e && (b[s] === SP || b[s] === TAB)) s++;
    while (e > s && (b[e - 1] === SP || b[e - 1] === TAB || b[e - 1] === CR)) e--;
    return { s, e, end };
  }

  /** The rule the trimmed line [s, e) holds as the parser reads it: "-A ...", "[p:b] -A ...",
   * either after one prefix it strips (grep -n, grep -H, a prompt); undefined for another line. */
  private ruleIn(s: number, e: number, first = true): RuleAt | undefined {
    const b = this.buf;
    if (b[s] === 45 && b[s + 1] === 65 && b[s + 2] === SP) return { s, a: s, e };
    if (b[s] === 91) {
      let close = s + 1;
      while (close < e && b[close] !== 93) close++;
      if (b[close + 1] === SP && b[close + 2] === 45 && b[close + 3] === 65)
        return { s, a: close + 2, e };
    }
    if (!first) return undefined;
    const line = text(b, s, e);
    const cls = classifyLine(line);
    if (cls.kind !== 'prefix') return undefined;
    return this.ruleIn(s + Buffer.byteLength(line.slice(0, cls.rest)), e, false);
  }

  /** Where the paste's last line that holds anything ends. */
  private lastEnd(): number {
    const b = this.buf;
    if (this.tail < 0) {
      let t = b.length;
      while (t > 0 && (b[t - 1] === NL || b[t - 1] === CR || b[t - 1] === SP || b[t - 1] === TAB))
        t--;
      this.tail = t;
    }
    return this.tail;
  }
}

const FIRST: readonly number[] = [0];

/** The counters `iptables -S -v` prints inside a rule, before its target. */
const IN_RULE_COUNTERS = / -c \d+ \d+(?= |$)/;
const withoutCounters = (rule: string) => rule.replace(IN_RULE_COUNTERS, '');

const push = (index: Map<number, number[]>, hash: number, k: number) => {
  const at = index.get(hash);
  if (at) at.push(k);
  else index.set(hash, [k]);
};
