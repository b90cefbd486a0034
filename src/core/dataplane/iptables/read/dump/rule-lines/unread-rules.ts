// Rule lines not read as they stand: cut (the paste's last line), an address hidden by hand, a
// control byte iptables-save never prints; an author's note after a rule skipped, the rule read.
import { LineSyntaxError, text } from '../../lexer.js';
import { excerpt } from '../../../../../sanitize.js';
import type { Cuts } from '../cuts.js';
import type { Sections } from '../sections.js';
import { SP, TAB, type ParserState } from '../parser-state.js';
import { familyOfAddress } from '../families.js';

export class UnreadRules {
  constructor(
    private readonly state: ParserState,
    private readonly sections: Sections,
    private readonly cuts: Cuts,
  ) {}

  /** Where the rule in [spec, e) ends before an author's note after it ("  # why"), the rule read
   * and the note said skipped; -1 where the line holds none or the rule does not read without it. */
  noteAfter(spec: number, e: number): number {
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

  /** A rule line that does not read: cut (the paste's last line), an address hidden by hand, or
   * an error at its line. */
  unreadable(err: unknown, spec: number, e: number, last: boolean): void {
    if (!(err instanceof LineSyntaxError)) throw err;
    if (last) return this.cuts.cutShort(err.message);
    const hidden = err.address;
    if (hidden && REDACTED.test(hidden)) return this.redacted(spec, e, hidden);
    this.state.fail(err.message);
  }

  /** A rule that holds a control byte iptables-save never prints: not read, and its chain not
   * claimed whole. */
  controlled(spec: number, e: number, byte: number): void {
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
    // its shape still shows the family: IPv6's colons and brackets, IPv4's four dotted parts
    const family =
      familyOfAddress(address.replace(/^!/, '')) ?? (/\./.test(address) ? 'IPv4' : undefined);
    if (family === 'IPv6' || !this.state.hiddenFamilies.has(table))
      if (family) this.state.hiddenFamilies.set(table, family);
    this.state.warn(
      'redacted',
      `a rule of ${name} not read: its address "${address}" was hidden by hand, so its chain is not claimed whole`,
    );
  }
}

const QUOTE = 34;
const BACKSLASH = 92;

/** The first control byte (C0 but the tab, or DEL) in buf[s, e) outside a quoted comment (one
 * there changes nothing the rule matches or does, and is shown escaped), or -1. */
export function controlByte(buf: Uint8Array, s: number, e: number): number {
  let quoted = false;
  for (let k = s; k < e; k++) {
    const b = buf[k]!;
    // inside quotes iptables-save escapes ", \ and ' with a backslash (xtables_save_string)
    if (quoted && b === BACKSLASH) k++;
    else if (b === QUOTE) quoted = !quoted;
    else if (!quoted && ((b < 32 && b !== 9) || b === 127)) return b;
  }
  return -1;
}

/** An address its author hid: digits and separators with x's, stars or a <placeholder> (a
 * template's {{ … }}), as a source or destination (with its prefix length) or a NAT target (with
 * its port). */
const REDACTED =
  /^!?(?=[^/]*(?:[xX*]|<|\{\{))(?:(?:\d{1,3}|[xX]+|\*+)(?:\.(?:\d{1,3}|[xX]+|\*+)){3}|<[^>]+>|\{\{[^{}]*\}\}|\[[\da-fA-FxX*:]+\]|[\da-fA-FxX*]*:[\da-fA-FxX*:]*)(?:\/\d+|:\d+(?:-\d+)?)?$/;

// An author's note typed after a rule on its line ("-A X ... -j RETURN  # why it matches"): the
// shell's comment mark, which iptables never prints unquoted at a word's start (it quotes every
// comment and log prefix), so the rule before it is read whole and the note is not.

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
