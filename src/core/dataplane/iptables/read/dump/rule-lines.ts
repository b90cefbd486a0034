// The dump parser's collaborator for rule lines: one rule, or several run together on a line
// (their line ends lost in copying), or one run on from a prompt or from a command typed before
// it; a rule pasted twice read once (./repeats.ts), a rule whose address was hidden by hand not
// read, an author's note after a rule skipped.
import { LineSyntaxError, text } from '../lexer.js';
import { gluedOutput, gluedPrompt } from '../paste/other-lines/prompts.js';
import { cutDnatPort, cutTargetOption } from '../paste/mangled/cut-option.js';
import { excerpt } from '../../../../sanitize.js';
import { CUT_FIXED_TARGET, CUT_NAME, cutFixedName, type Cuts } from './cuts.js';
import { lineFamily } from './families.js';
import type { Sections } from './sections.js';
import { NL, SP, TAB, type ParserState } from './parser-state.js';
import { holdsNatRules, isFilterReject } from './which-table.js';
import { Table } from '../table.js';

/** " -A ": a rule starting inside the line of another (a paste whose line ends were lost). */
const JOIN = Buffer.from(' -A ');

/** Reads [s, e) as a line of its own: the parser's, which every kind of line goes through. */
export interface LineReader {
  line(s: number, e: number, last: boolean, first: boolean): void;
}

export class RuleLines {
  private nextJoin = -2; // where the next " -A " inside a line may be (-1: none left)
  private natRules: boolean | undefined; // whether the paste holds nat-only rules, no table lines
  private filterPart: Table | undefined; // the filter table headerless REJECT rules are read in

  constructor(
    private readonly state: ParserState,
    private readonly sections: Sections,
    private readonly cuts: Cuts,
    private readonly reader: LineReader,
  ) {}

  /** A rule line, or several run together on one (" -A " outside quotes: line ends lost in
   * copying); the last part alone may be cut. */
  rules(s: number, e: number, last: boolean): void {
    const line = text(this.state.buf, s, e);
    const prompt = gluedPrompt(line);
    if (prompt < 0) return this.runTogether(s, e, last);
    // the command after the rule may have its own output run on after it in turn
    const at = s + Buffer.byteLength(line.slice(0, prompt));
    const glued = this.gluedRule(at, e);
    this.state.warn(
      'joined',
      glued
        ? `a prompt runs on from the end of its rule, and the next rule from the end of its command (the line ends were lost in copying): the rule and what runs on from the command are read, not the command between them: "${excerpt(glued.command, 80)}"`
        : `a prompt runs on from the end of its rule (the line end was lost in copying): the rule is read, not the command after it: "${excerpt(line.slice(prompt), 80)}"`,
    );
    this.runTogether(s, at, false);
    // the command ends the output before it: what grep prints is the next one's (on this line)
    this.state.grep.typed(
      glued ? glued.command : line.slice(prompt),
      this.state.lineNo - (glued ? 1 : 0),
    );
    if (glued) this.outputOf(at, e, last, glued);
  }

  /** One rule, or several run together on one line (" -A " outside quotes). */
  private runTogether(s: number, e: number, last: boolean): void {
    const joins = this.joins(s, e);
    if (joins.length === 0) return this.rule(s, s, e, last);
    // the warning is said with its line already
    this.state.warn(
      'joined',
      `${joins.length + 1} rules run together on one line (their line ends were lost in copying): each is read`,
    );
    let from = s;
    for (const j of joins) {
      this.state.lineStart = from;
      this.rule(from, from, j, false);
      from = j + 1;
    }
    this.state.lineStart = from;
    this.rule(from, from, e, last);
  }

  /** A line typed at a prompt whose command's output runs on from its end: said, and the output
   * read from there; false where the line holds none. */
  promptOutput(s: number, e: number, last: boolean): boolean {
    const glued = this.gluedRule(s, e);
    if (!glued) return false;
    this.state.warn(
      'joined',
      `a rule runs on from the end of the command typed before it (the line end was lost in copying): the rule is read, not the command: "${excerpt(glued.command, 80)}"`,
    );
    this.state.grep.typed(glued.command, this.state.lineNo - 1);
    this.outputOf(s, e, last, glued);
    return true;
  }

  /** gluedOutput of the line in [s, e), where what runs on from the command reads as a dump line:
   * prose after a prompt ("rules.txt-A is the flag to append") leaves the line a prompt. */
  private gluedRule(s: number, e: number): ReturnType<typeof gluedOutput> {
    const line = text(this.state.buf, s, e);
    const glued = gluedOutput(line);
    if (!glued || !line.startsWith('-A ', glued.at)) return glued;
    // its first rule alone: the next may run on from its end, or a prompt after it
    const rest = line.slice(glued.at);
    const prompt = gluedPrompt(rest);
    const first = firstRule(prompt < 0 ? rest : rest.slice(0, prompt));
    const at = s + Buffer.byteLength(line.slice(0, glued.at));
    try {
      this.state.lex.lex(at + 3, at + Buffer.byteLength(first));
    } catch (err) {
      if (err instanceof LineSyntaxError) return undefined;
      throw err;
    }
    return glued;
  }

  /** The output run on from a command's end in [s, e), as a line of its own. */
  private outputOf(
    s: number,
    e: number,
    last: boolean,
    glued: { at: number; elided: boolean },
  ): void {
    // "..." before the prompt: the previous command's output left out there
    if (glued.elided) this.state.noteElided();
    const at = s + Buffer.byteLength(text(this.state.buf, s, e).slice(0, glued.at));
    this.state.lineStart = at;
    this.reader.line(at, e, last, false);
  }

  /** Where " -A " starts a rule inside [s, e), outside quotes. One pass over the input in all:
   * a dump with none (every real one) looks once. */
  private joins(s: number, e: number): number[] {
    const out: number[] = [];
    for (;;) {
      if (this.nextJoin === -1) return out;
      if (this.nextJoin < s) this.nextJoin = this.state.whole.indexOf(JOIN, s);
      if (this.nextJoin === -1 || this.nextJoin >= e) return out;
      const at = this.nextJoin;
      this.nextJoin = this.state.whole.indexOf(JOIN, at + 1);
      let quotes = 0;
      for (let k = s; k < at; k++) if (this.state.buf[k] === 34) quotes++;
      if (quotes % 2 === 0) out.push(at);
    }
  }

  rule(lineStart: number, a: number, lineEnd: number, last: boolean): void {
    const specStart = a + 3;
    let e = lineEnd;
    // a copy of rules above, cut by the paste's end inside its last line: read with them
    if (last && this.state.ruleRepeats.cutCopy(lineStart, e)) {
      this.state.ruleRepeats.copies.push(this.state.lineNo);
      return;
    }
    // the last line only "-A", or "-A" and a word: cut before, after or inside the chain's name
    if (last && !this.state.options.listView && e - a < 4)
      return this.cuts.cutShort('a rule cut before its chain name');
    if (e - a < 4) this.state.fail('expected "-A CHAIN ..."');
    // iptables-save ends every line with a newline: a node's recorded dump whose last line has
    // none was cut in it (a paste's may have lost it in copying: said below, read); past the last
    // COMMIT no table is open to be cut, and the line is said not read as any such line is
    const unterminated = last && this.state.buf.indexOf(NL, e) < 0;
    if (unterminated && this.state.options.noun === 'dump' && !this.sections.outsideTables())
      return this.cuts.cutShort(
        'its line has no newline, which iptables-save ends every line with',
      );
    try {
      this.state.lex.lex(specStart, e);
    } catch (err) {
      // looked for only where the line does not read: a dump's 440,000 rules are not scanned twice
      const note = err instanceof LineSyntaxError ? this.noteAfter(specStart, e) : -1;
      if (note < 0) return this.unreadable(err, specStart, e, last);
      e = note;
    }
    // iptables-save prints no control byte (a BEL, an escape sequence's ESC): a rule of a node's
    // recorded dump that reads and holds one was not written by it as it reads (an address
    // "10.244.1.7:80\x07"): not read (a paste's copying artefacts are undone in paste/)
    const control =
      this.state.options.noun === 'dump' ? controlByte(this.state.buf, specStart, e) : -1;
    if (control >= 0) return this.controlled(specStart, e, control);
    if (last && !this.state.options.listView && /^\S+$/.test(text(this.state.buf, specStart, e))) {
      const [table, chain] = [this.state.lastTable, this.state.lastChain];
      this.cuts.cutShort('a rule cut at its chain name');
      // a name cut short may be the chain before it's, going on past the cut
      const word = text(this.state.buf, specStart, e);
      if (table && chain >= 0 && table.nameOf(chain).startsWith(word))
        [this.state.lastTable, this.state.lastChain] = [table, chain];
      return;
    }
    // kube-proxy writes every rule with a target: one without, where the input ends without its
    // newline, stopped mid-rule; so is the `iptables -L` line the listing says it cut (whatever
    // follows it: a final newline, blank lines); a kube-proxy chain's last line without one is
    // cut, whatever an editor put after it (a newline)
    const cutInView = this.state.options.listView?.cut?.line === this.state.lineNo;
    // the rule's text, made only where it is looked at: 440,000 rules' strings cost a dump's read
    const spec = last || !this.state.current ? text(this.state.buf, specStart, e) : '';
    const kubeChain = spec.startsWith('KUBE-');
    const end = last && (e === this.state.buf.length || kubeChain) && !this.state.options.listView;
    if ((cutInView || end) && !this.state.lex.hasTarget())
      return this.cuts.cutShort('a rule without its target');
    // a jump to a name cut before its end ("-j KUBE-MARK-", "-j KUBE-SERV"): not read
    const cutTarget = end ? CUT_FIXED_TARGET.exec(spec)?.[1] : undefined;
    if (cutTarget !== undefined && cutFixedName(cutTarget))
      return this.cuts.cutShort(`a rule cut inside its target's name ("${cutTarget}")`);
    // "-j MARK --set-xm", "-j DNAT --to-destination": cut in or after an option's name
    const cutOption = end ? (cutTargetOption(spec) ?? cutDnatPort(spec)) : undefined;
    if (cutOption !== undefined) return this.cuts.cutShort(cutOption);
    // kube-proxy names its chains with 16 hash characters: fewer at the input's very end is a cut
    // (an -L row prints more columns after its target: its end is not the name's)
    const cutName = end ? CUT_NAME.exec(spec)?.[1] : undefined;
    const t = this.state.lex.tokens;
    // an elision just above, in the same table: rules of this one's chain may be left out with it
    const open = this.state.current ?? this.state.section;
    const elision = this.state.elisionAbove?.table === open ? this.state.elisionAbove : undefined;
    this.state.elisionAbove = undefined;
    // headerless, the other family's rule starts the other family's dump (grep of both saves)
    const family = this.state.current ? undefined : lineFamily(spec);
    if (
      family &&
      this.state.section &&
      this.state.sectionFamily &&
      family !== this.state.sectionFamily &&
      !this.state.tables.some((x) => x.family === family)
    ) {
      this.sections.closeSection();
      this.moveDeclarations();
    }
    this.state.againDeclared = [];
    if (this.sections.outsideTables()) return this.state.skip('stray');
    const table =
      this.filterReject(spec || text(this.state.buf, specStart, e)) ?? this.sections.target();
    const near = this.state.lastTable === table ? this.state.lastChain : -1;
    const chain = table.chainIndex.chainAt(t[0]!, t[1]!, near);
    if (this.state.options.listView?.broken.includes(this.state.lineNo)) {
      const name = table.nameOf(chain);
      table.partial.set(name, 'a rule of it is not in the paste: -L printed only its counters');
      return this.state.warn(
        'counters',
        `a rule of ${name} not read: the line holds only the columns -L prints before its target, and the rest of its row is not in the paste, so its chain is not claimed whole`,
      );
    }
    this.state.lastTable = table;
    const resumed = chain !== near && table.ruleCountOf(chain) > 0;
    this.state.lastChain = chain;
    const save = this.state.current?.startLine;
    const r = { s: lineStart, a, e };
    if (this.state.ruleRepeats.check(table, chain, resumed, r, this.state.lineNo, save)) return;
    // a chain's rules resumed after another's: kube-proxy's restore input, not iptables-save
    if (resumed) this.state.interleaved.add(table);
    try {
      table.addRule(this.state.lex, chain, lineStart, specStart, e, this.state.lineNo);
    } catch (err) {
      return this.unreadable(err, specStart, e, false);
    }
    this.state.ruleRepeats.added(table, chain, a, e);
    if (!this.state.current) this.state.sectionHasRules = true;
    if (!this.state.current) this.state.sectionFamily ??= family;
    this.state.grep.rule(table, chain, this.state.lineNo);
    // the first rule after an elision: rules of its chain before it may be among those left out
    if (elision) {
      const chains = this.state.elidedAbove.get(table) ?? [];
      chains.push(chain); // grep -A's 100k "--": not a copy each
      this.state.elidedAbove.set(table, chains);
    }
    if (cutName) this.cuts.cutInName(table, cutName);
    // a last word of digits (a port, an address, a probability, a mark) may be the start of
    // another value; a name (a verdict, a whole chain's) is whole or said cut above
    else if (unterminated && !this.state.options.listView && /[\d.:/]$/.test(spec))
      this.state.warn(
        'unterminated',
        `the paste's last line has no newline after it (iptables-save ends every line with one): the paste may be cut there, its last word short ("${excerpt(spec.split(' ').at(-1)!, 40)}"); the rule is read as it stands`,
      );
  }

  /** Where the rule in [spec, e) ends before an author's note after it ("  # why"), the rule read
   * and the note said skipped; -1 where the line holds none or the rule does not read without it. */
  private noteAfter(spec: number, e: number): number {
    const note = trailingNote(this.state.buf, spec, e);
    if (note < 0) return -1;
    try {
      this.state.lex.lex(spec, note);
    } catch (err) {
      if (err instanceof LineSyntaxError) return -1;
      throw err;
    }
    this.state.warn(
      'comment',
      `a note after the rule (the shell's "#", which iptables never prints), skipped, the rule before it read: "${excerpt(text(this.state.buf, note, e).trim(), 80)}"`,
    );
    return note;
  }

  /** The filter table a headerless REJECT rule of kube-proxy's filter chains is read in, where
   * the paste's other headerless rules are nat's and no command names their table (a grep of a
   * whole save); undefined for any other rule. */
  private filterReject(spec: string): Table | undefined {
    if (this.state.current || this.state.options.table || this.state.typed || !isFilterReject(spec))
      return undefined;
    if (this.state.section && this.state.typedFor.has(this.state.section)) return undefined;
    this.natRules ??= holdsNatRules(text(this.state.buf, 0, this.state.buf.length));
    if (!this.natRules) return undefined;
    if (this.filterPart) return this.filterPart;
    const t = (this.filterPart = new Table('filter', this.state.buf, this.state.lineNo));
    t.family = lineFamily(spec) ?? this.state.saveFamily ?? 'IPv4';
    this.state.settled.add(t);
    this.state.tables.push(t);
    this.state.warn(
      'table',
      `rules from line ${this.state.lineNo} read as the filter table (no *filter line): kube-proxy writes its REJECT rules for Services without endpoints there, and iptables takes no REJECT in nat`,
    );
    return t;
  }

  /** Chains declared again just above the other family's first rule: that dump's, not a repeat. */
  private moveDeclarations(): void {
    const moved = new Set(this.state.againDeclared.map((d) => d.line));
    if (moved.size === 0) return;
    this.state.warnings = this.state.warnings.filter(
      (w) => w.kind !== 'duplicate' || !moved.has(w.line ?? 0),
    );
    const [lineNo, lineStart] = [this.state.lineNo, this.state.lineStart];
    for (const d of this.state.againDeclared) {
      [this.state.lineNo, this.state.lineStart] = [d.line, d.s - 1]; // the new table starts at its first
      const table = this.sections.target();
      table.chainIndex.setLine(table.chainIndex.chainAt(d.s, d.e), d.line);
    }
    [this.state.lineNo, this.state.lineStart] = [lineNo, lineStart];
  }

  /** A rule line that does not read: cut (the paste's last line), an address hidden by hand, or
   * an error at its line. */
  private unreadable(err: unknown, spec: number, e: number, last: boolean): void {
    if (!(err instanceof LineSyntaxError)) throw err;
    if (last) return this.cuts.cutShort(err.message);
    const hidden = /^"(.+)" is not an address$/.exec(err.message)?.[1];
    if (hidden && REDACTED.test(hidden)) return this.redacted(spec, e, hidden);
    this.state.fail(err.message);
  }

  /** A rule that holds a control byte iptables-save never prints: not read, and its chain not
   * claimed whole. */
  private controlled(spec: number, e: number, byte: number): void {
    let end = spec;
    while (end < e && this.state.buf[end] !== SP) end++;
    const table = this.sections.target();
    const name = table.nameOf(table.chainIndex.chainAt(spec, end));
    const shown = `\\x${byte.toString(16).padStart(2, '0')}`;
    table.partial.set(name, `a rule of it is not read: it holds a control byte (${shown})`);
    this.state.warn(
      'control',
      `a rule of ${name} not read: it holds a control byte (${shown}), which iptables-save never prints, so its chain is not claimed whole`,
    );
  }

  /** A rule whose address its author hid by hand: not read, and its chain not claimed whole. */
  private redacted(spec: number, e: number, address: string): void {
    let end = spec;
    while (end < e && this.state.buf[end] !== SP) end++;
    const table = this.sections.target();
    const name = table.nameOf(table.chainIndex.chainAt(spec, end));
    table.partial.set(name, `a rule of it is not read: its address "${address}" is hidden`);
    this.state.warn(
      'redacted',
      `a rule of ${name} not read: its address "${address}" was hidden by hand, so its chain is not claimed whole`,
    );
  }
}

/** The first control byte (C0 but the tab, or DEL) in buf[s, e) outside a quoted comment (one
 * there changes nothing the rule matches or does, and is shown escaped), or -1. */
function controlByte(buf: Uint8Array, s: number, e: number): number {
  let quoted = false;
  for (let k = s; k < e; k++) {
    const b = buf[k]!;
    if (b === 34) quoted = !quoted;
    else if (!quoted && ((b < 32 && b !== 9) || b === 127)) return b;
  }
  return -1;
}

/** A line's first rule: up to a " -A " outside quotes that starts the next one run on. */
function firstRule(line: string): string {
  let quoted = false;
  for (let k = 0; k < line.length; k++) {
    if (line[k] === '"') quoted = !quoted;
    else if (!quoted && line.startsWith(' -A ', k)) return line.slice(0, k);
  }
  return line;
}

/** An address its author hid: digits and separators with x's, stars or a <placeholder>. */
const REDACTED =
  /^!?(?=[^/]*(?:[xX*]|<))(?:(?:\d{1,3}|[xX]+|\*+)(?:\.(?:\d{1,3}|[xX]+|\*+)){3}|<[^>]+>|[\da-fA-FxX*]*:[\da-fA-FxX*:]*)(?:\/\d+)?$/;

// An author's note typed after a rule on its line ("-A X ... -j RETURN  # why it matches"): the
// shell's comment mark, which iptables never prints unquoted at a word's start (it quotes every
// comment and log prefix), so the rule before it is read whole and the note is not.

const QUOTE = 34;
const BACKSLASH = 92;
const HASH = 35;

/** Where a note after the rule in [s, e) starts (the blank before its "#"), or -1: a "#" after a
 * blank, outside quotes, with a rule before it. */
function trailingNote(b: Uint8Array, s: number, e: number): number {
  let quoted = false;
  for (let k = s; k < e; k++) {
    const c = b[k];
    if (quoted) {
      if (c === BACKSLASH) k++;
      else if (c === QUOTE) quoted = false;
    } else if (c === QUOTE) quoted = true;
    else if (c === HASH && k > s && (b[k - 1] === SP || b[k - 1] === TAB)) {
      let end = k;
      while (end > s && (b[end - 1] === SP || b[end - 1] === TAB)) end--;
      return end > s ? end : -1;
    }
  }
  return -1;
}
