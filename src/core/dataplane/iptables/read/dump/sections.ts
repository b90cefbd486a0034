// The dump parser's layer for tables: *table ... COMMIT blocks, and the lines outside any (an
// `iptables -S` listing, a grep'ed save) gathered into a section and closed into the table that a
// command typed above it, its built-in chains or its kube-proxy chains name; chain declarations,
// a table or chain pasted twice.
import { text } from '../lexer.js';
import { TABLES } from '../ruleset.js';
import { Table } from '../table.js';
import { excerpt } from '../../../../sanitize.js';
import type { IPFamily } from '../../../../ipv6.js';
import { DumpFamilies, FAMILY_TEXT, otherFamily } from './families.js';
import { SP, TAB, type Typed } from './state.js';
import { builtInTable, guessTable, holdsBuiltIns, tableOfChain } from './which-table.js';
import { listedTable } from '../paste/list-view/command.js';

export abstract class DumpSections extends DumpFamilies {
  private sawS = false;
  protected typed: Typed | undefined; // the table a command typed before the next listing lists
  /** Headerless tables started by a built-in chain declared again (another dump, or a repeat). */
  private readonly redeclared = new Set<Table>();
  /** The family of a save command typed last, whose output (grep'ed of its *table lines) follows. */
  private typedSave: IPFamily | undefined;
  /** Whether the command typed last pipes its listing through grep (its lines a filter's). */
  private typedGrep = false;

  /** A typed `iptables [-t TABLE] -L|-S`: the table of the listing that follows (or has just
   * started), as iptables itself takes it. Any other command's output follows it instead. */
  protected noteTyped(line: string, command: boolean): void {
    this.grep.typed(command ? line : undefined, this.lineNo);
    if (command) this.ruleRepeats.typed(this.lineNo);
    // prose that quotes a command names its table only where it says one (`-t nat`): "the output
    // of `iptables -S`" is as likely a nat -S as iptables' default table
    const save = SAVE_COMMAND.exec(line);
    if (save) this.saveFamily = save[1] ? 'IPv6' : 'IPv4';
    // both families' saves in one command (`(ip6tables-save; iptables-save) | grep`): neither's
    if (save && new Set([...line.matchAll(SAVE_COMMANDS)].map((m) => m[1])).size > 1)
      this.saveFamily = undefined;
    if (command && TYPED_WRITE.test(line)) this.typedWrites.push(this.lineNo);
    // a command typed starts another listing: an elision above it hid none of that one's rules
    if (command) this.elisionAbove = undefined;
    if (command) this.typedGrep = GREP_PIPE.test(line);
    // a save typed (`docker exec NODE ip6tables-save | grep X`): its lines, without *table lines
    // when grep'ed, are that family's; another command typed next prints something else
    // (prose that names a save, "nothing in ip6tables-save", says nothing of the lines after it)
    if (command) this.typedSave = save ? this.saveFamily : undefined;
    // the other family's save typed after lines of one: its own table starts (same-family lines
    // after it go on in the open one, as a grep's do)
    const section = this.section;
    if (save && command && section && this.sectionHasRules) {
      const had = this.familyShown(section);
      if (had !== undefined && had !== this.typedSave) this.closeSection();
    }
    if (!command && !/(?:^| )(?:-[a-zA-Z]*t ?|--table[= ])\w/.test(line)) return;
    const listed = listedTable(line);
    if (listed) this.saveFamily = undefined;
    if (!listed || !(TABLES as readonly string[]).includes(listed.table)) {
      if (command) this.typed = undefined;
      return;
    }
    const typed = {
      name: listed.table,
      ip6: listed.ip6,
      line: this.lineNo,
      command: excerpt(listed.command, 80),
      ...(listed.chain !== undefined ? { chain: listed.chain } : {}),
      ...(listed.part ? { part: listed.part } : {}),
    };
    const open = this.section;
    if (open && !this.sectionHasRules && !this.typedFor.has(open)) {
      this.typedFor.set(open, typed);
      this.noteListedChain(open, typed);
      return;
    }
    // a listing of another table than the open one's command named starts here
    const was = open && this.typedFor.get(open)?.name;
    if (was && was !== typed.name) this.closeSection();
    this.typed = typed;
  }

  /** COMMIT after lines without a *table line: iptables-save ends each table so, and these lines
   * are the end of a table whose *table line is above the paste (a segment of a dump). */
  protected commitSection(): void {
    const t = this.section!;
    t.committed = true;
    // after another table's COMMIT, a table starting with its chains' declarations is whole:
    // only its *table line is missing (grep'd, or lost in copying)
    const whole = this.tables.length > 0 && t.chainLine(0) === t.startLine;
    if (!whole) this.startsInside.add(t);
    this.warn(
      'table',
      whole
        ? `COMMIT ends the rules from line ${t.startLine}: an iptables-save table without its *table line`
        : `COMMIT ends the rules from line ${t.startLine}: the end of an iptables-save table whose *table line is above the paste`,
    );
    this.closeSection();
    this.sawS = false;
    this.sawSave = true;
  }

  protected startTable(s: number, e: number, last: boolean): void {
    const name = text(this.buf, s + 1, e);
    if (this.current) this.fail(`*${name} starts before table ${this.current.name} has its COMMIT`);
    if (!(TABLES as readonly string[]).includes(name)) {
      // "*** NOTE:", "*Output*": prose with a star, not a table line (one word of letters)
      if (!/^[a-z]+$/.test(name)) return this.skip('prose');
      if (last) return this.cutShort('its *table line cut mid-word', 'mid-line');
      this.fail(`unknown table "${name}" (raw, mangle, nat, filter or security)`);
    }
    if (this.sawS && !this.sawSave)
      this.fail('*table line after iptables -S lines: give one dump at a time');
    this.closeSection();
    this.sawSave = true;
    // ip6tables-save names its tables as iptables-save does: the other family's is its own
    const family = this.saveFamily;
    const named = this.tables.filter((t) => t.name === name);
    const existing = named.find((t) => !family || this.family(t) === family);
    const other = existing ? undefined : named[0];
    // no save line names a family (`# Generated by`, a typed save): the second table's own
    // addresses may, once read (ip6tables-save's nat after iptables-save's); decided at its COMMIT
    const undecided = existing && !family && !this.repeats(existing, s);
    if (existing && !undecided) {
      if (!this.repeats(existing, s)) this.fail(`table ${name} appears twice`);
      this.warn(
        'duplicate',
        `table ${name} from line ${this.lineNo} repeats the one from line ${existing.startLine} byte for byte (pasted twice?): read once`,
      );
      this.skipUntilCommit = true;
      return;
    }
    this.current = new Table(name, this.buf, this.lineNo);
    this.current.headed = true;
    this.grep.boundary();
    this.saveForm.add(this.current);
    this.spanStart = s;
    if (undecided) this.twice = { table: this.current, first: existing, line: this.lineNo };
    if (family) this.declared.set(this.current, family);
    if (other && family)
      this.warn(
        'table',
        `table ${name} from line ${this.lineNo} is the ${FAMILY_TEXT[family]} one, not a repeat of the ${otherFamily(family)} one from line ${other.startLine}: each is read, with its family`,
      );
    this.tables.push(this.current);
  }

  /** Whether the bytes from `s` on start with a copy of the table's own bytes. */
  private repeats(table: Table, s: number): boolean {
    const span = this.spans.get(table);
    if (!span) return false;
    const [a, z] = span;
    if (s + (z - a) > this.buf.length) return false;
    for (let k = 0; k < z - a; k++) if (this.buf[a + k] !== this.buf[s + k]) return false;
    return true;
  }

  /** ":CHAIN POLICY [packets:bytes]" */
  protected chainLine(s: number, e: number, last: boolean): void {
    this.elisionAbove = undefined; // declarations come before all rules: an elision above hid none
    this.grep.boundary();
    const b = this.buf;
    let k = s + 1;
    while (k < e && b[k] !== SP) k++;
    let p = k + 1;
    while (p < e && b[p] !== SP) p++;
    const whole = k < e && p !== k + 1 && (p >= e || (b[p + 1] === 91 && b[e - 1] === 93));
    // the paste's last line, cut inside a chain's declaration
    if (!whole && last) return this.cutShort('a chain declaration', 'mid-line');
    if (!whole) this.fail('expected ":CHAIN POLICY [packets:bytes]"');
    // a built-in chain declared again after rules of a table without its *table line: another
    // dump (the other family's, its *table line lost) starts here, as a second -S listing does;
    // a kube-proxy chain's declared again is a grep pasted twice, read once below
    const open = this.section;
    const builtIn = !(p === k + 2 && b[k + 1] === 45);
    const again = open && builtIn ? open.indexOf(text(b, s + 1, k)) : -1;
    const redeclared =
      !this.current && open && this.sectionHasRules && again >= 0 && open.chainLine(again);
    if (redeclared) this.closeSection();
    // so after a headerless table's COMMIT (the same dump pasted twice, COMMIT and all)
    const prev = this.tables.at(-1);
    const afterCommit =
      !this.current && !open && builtIn && prev?.committed === true && this.settled.has(prev);
    const table = this.target();
    if (redeclared || afterCommit) this.redeclared.add(table);
    this.saveForm.add(table);
    const chain = table.chainIndex.chainAt(s + 1, k);
    const declared = table.chainLine(chain);
    if (declared !== undefined) {
      this.warn(
        'duplicate',
        `chain ${table.nameOf(chain)} is declared again (first on line ${declared}; ${this.ruleRepeats.earlier(declared) ? 'a command run again?' : 'pasted twice?'}): read once`,
      );
      if (!this.current) this.againDeclared.push({ s: s + 1, e: k, line: this.lineNo });
      return;
    }
    table.chainIndex.setLine(chain, this.lineNo);
    if (!(p === k + 2 && b[k + 1] === 45)) table.chainIndex.setPolicy(chain, text(b, k + 1, p));
  }

  /** "-N CHAIN" or "-P CHAIN POLICY" (iptables -S). */
  protected declare(s: number, e: number, policy: boolean): void {
    this.elisionAbove = undefined; // a chain's rules follow its -N (its Chain line): none hidden above
    this.grep.boundary();
    const b = this.buf;
    const words: number[] = [];
    for (let k = s; k < e;) {
      while (k < e && (b[k] === SP || b[k] === TAB)) k++;
      const w = k;
      while (k < e && b[k] !== SP && b[k] !== TAB) k++;
      if (k > w) words.push(w, k);
    }
    if (words.length !== (policy ? 6 : 4))
      this.fail(policy ? 'expected "-P CHAIN POLICY"' : 'expected "-N CHAIN"');
    if (this.current)
      this.fail(
        `${policy ? '-P' : '-N'} line inside *${this.current.name}: iptables-save does not write these`,
      );
    // a second `iptables -S` listing starts here, unless it is the next of several one-chain
    // listings (`iptables -t nat -S KUBE-SVC-...`, each with its own -N, or one -P for a
    // built-in chain; a whole table's listing starts with two -P lines or more)
    const name = text(b, words[2]!, words[3]!);
    const view = this.options.listView;
    if (view) {
      if (view.listingStarts.includes(this.lineNo)) this.closeSection();
    } else if (
      this.sectionHasRules &&
      !this.grepOfOpenTable() &&
      ((policy && this.policyFollows()) || this.listedBefore(name))
    )
      this.closeSection();
    if (this.outsideTables()) return this.skip('stray');
    const table = this.target();
    const chain = table.chainIndex.chainAt(words[2]!, words[3]!);
    table.chainIndex.setLine(chain, this.lineNo);
    if (policy) table.chainIndex.setPolicy(chain, text(b, words[4]!, words[5]!));
  }

  /** Whether a command typed just above greps a listing of the open section's own table: its
   * lines (an -N among them) are more lines of that table, not another listing of it. */
  private grepOfOpenTable(): boolean {
    const open = this.section && this.typedFor.get(this.section);
    return this.typedGrep && this.typed !== undefined && open?.name === this.typed.name;
  }

  /** Whether the next line that holds anything is another -P line. */
  private policyFollows(): boolean {
    return this.nextStarts(80 /* P */);
  }

  /** Whether the open `iptables -S` section already declared this chain or holds its rules, or
   * the chain is of another table than the section's chains (a filter chain after nat ones). */
  private listedBefore(name: string): boolean {
    const t = this.section;
    if (!t) return false;
    const c = t.indexOf(name);
    if (c >= 0 && (t.chainLine(c) !== undefined || t.ruleCountOf(c) > 0)) return true;
    const table = tableOfChain(name);
    return (
      table !== undefined &&
      t.chains.some((x) => {
        const other = tableOfChain(x.name);
        return other !== undefined && other !== table;
      })
    );
  }

  /** Whether a rule or -N/-P line belongs to no table: after the last COMMIT of a whole dump
   * (grep'ed save output keeps no *table lines, a whole dump does). Such a line is not read, and
   * said; a chain's declaration there starts a dump whose *table line is not in the paste. */
  protected outsideTables(): boolean {
    return !this.current && this.sawSave && this.tables.every((t) => t.committed) && !this.section;
  }

  /** The table a line belongs to: the open *table, else the current -S section (one a line
   * outside every table, outsideTables(), never asks for). */
  protected target(): Table {
    if (this.current) return this.current;
    this.sawS = true;
    if (!this.section) {
      this.section = new Table('', this.buf, this.lineNo);
      this.spanStart = this.lineStart;
      this.sectionHasRules = false;
      this.sectionFamily = undefined;
      if (this.typedSave) this.declared.set(this.section, this.typedSave);
      if (this.startsMidRule !== undefined && this.tables.length === 0)
        this.startsInside.add(this.section);
    }
    // the listing a typed command names goes on in the open section (`-S CHAIN` after `-S CHAIN`)
    if (this.typed && !this.typedFor.has(this.section)) this.typedFor.set(this.section, this.typed);
    if (this.typed) this.noteListedChain(this.section, this.typed);
    this.typed = undefined;
    return this.section;
  }

  /** The chain a typed `-S CHAIN` lists whole, in the section its rows are read in. */
  private noteListedChain(t: Table, typed: Typed): void {
    if (typed.chain !== undefined || typed.part)
      this.listedChains.set(t, [...(this.listedChains.get(t) ?? []), typed]);
  }

  protected closeSection(): void {
    const t = this.section;
    if (!t) return;
    this.section = undefined;
    this.sectionHasRules = false;
    this.sectionFamily = undefined;
    const typed = this.options.table ? undefined : this.typedFor.get(t);
    // a table has its own built-in chains (no PREROUTING in filter, no FORWARD in nat or raw):
    // chains a typed command's table (or one quoted wrong) cannot hold settle which it listed
    const builtIn = builtInTable(t);
    const mistyped = builtIn && typed && !holdsBuiltIns(typed.name, t);
    const guess = this.options.table ?? (mistyped ? builtIn : typed?.name) ?? guessTable(t);
    t.name = guess ?? 'filter';
    // ip6tables lists the IPv6 family's tables by the same names: another table, not a repeat
    t.family = this.family(t);
    this.settled.add(t);
    const same = this.tables.find((x) => x.name === t.name && x.family === t.family);
    const other = !same && this.tables.find((x) => x.name === t.name);
    if (other) {
      this.warn(
        'table',
        `rules from line ${t.startLine} are the ${FAMILY_TEXT[t.family]} ${t.name} table, not a repeat of the ${other.family} one from line ${other.startLine}: each is read, with its family`,
        t.startLine ?? null,
      );
      this.tables.push(t);
      return;
    }
    // the same dump pasted twice (its built-in chains declared again): read once
    if (same && this.redeclared.has(t) && repeatsRules(same, t)) {
      this.warn(
        'duplicate',
        `the rules from line ${t.startLine} repeat those from line ${same.startLine} (pasted twice?): read once`,
        t.startLine ?? null,
      );
      return;
    }
    // two dumps of one family's table back to back, each with its built-in chains: as two -L
    // listings, the one with more rules is read, said so
    if (same && !this.redeclared.has(t) && (!this.options.listView || !guess || this.options.table))
      this.fail(
        `two listings of the ${t.name} table (lines ${same.startLine} and ${t.startLine}): give one dump per table`,
        true,
      );
    if (same) {
      // two `iptables -L` of one table (before and after a change): the one with more rules is
      // read, and only it
      const [kept, dropped] = t.ruleCount > same.ruleCount ? [t, same] : [same, t];
      this.warn(
        'table',
        `two listings of the ${t.name} table (from lines ${same.startLine} and ${t.startLine}): the one from line ${kept.startLine} is read (${kept.ruleCount === dropped.ruleCount ? 'the first' : 'it holds more rules'}), the one from line ${dropped.startLine} is not`,
        dropped.startLine ?? null,
      );
      if (kept === t) this.tables.splice(this.tables.indexOf(same), 1, t);
      return;
    }
    if (!guess) {
      t.untold = true;
      this.warn(
        'table',
        `cannot tell which table the rules from line ${t.startLine} belong to; read as filter (pass the table to be sure)`,
        t.startLine ?? null,
      );
    } else if (typed) {
      this.warn(
        'table',
        `rules from line ${t.startLine} read as the ${guess} table: the command on line ${typed.line} lists it (\`${typed.command}\`)`,
        t.startLine ?? null,
      );
    } else if (!this.options.table) {
      this.warn(
        'table',
        `rules from line ${t.startLine} read as the ${guess} table (no *table line)`,
        t.startLine ?? null,
      );
    }
    this.tables.push(t);
  }
}

/** An iptables command that changes rules: add, insert, delete, replace a rule, add a chain. */
const TYPED_WRITE =
  /(?:^|[\s$#(/])ip6?tables(?:-legacy|-nft)?(?:\s+(?:-t\s*\w+|--table[= ]\w+|-w(?:\s*\d+)?|--wait))*\s+-[AIDRN]\s+\S/;

/** Whether every chain of `b` holds the same rules, in order, in `a` (a paste repeated). */
function repeatsRules(a: Table, b: Table): boolean {
  return b.chains.every((c) => {
    const other = a.chain(c.name);
    return (
      other !== undefined &&
      other.ruleCount === c.ruleCount &&
      c.ruleIds.every((id, k) => a.text(other.ruleIds[k]!) === b.text(id))
    );
  });
}

/** `iptables-save` or `ip6tables-save` typed, or named by its "# Generated by" line. */
export const SAVE_COMMAND = /(?:^|[\s`$#(])ip(6?)tables(?:-legacy|-nft)?-save\b/;
const SAVE_COMMANDS = new RegExp(SAVE_COMMAND.source, 'g');

/** A listing piped through grep (`iptables -t nat -S | grep X`). */
const GREP_PIPE = /\|\s*(?:sudo\s+)?[ef]?grep\b/;
