// Rule lines run together: several rules on one line (their line ends lost in copying), or one
// run on from a prompt or from a command typed before it; each rule read by ./rule-lines.ts.
import { LineSyntaxError, text } from '../../lexer.js';
import { gluedOutput, gluedPrompt } from '../../paste/other-lines/prompts.js';
import { excerpt } from '../../../../../sanitize.js';
import type { ParserState } from '../parser-state.js';

/** " -A ": a rule starting inside the line of another (a paste whose line ends were lost). */
const JOIN = Buffer.from(' -A ');

/** Reads [s, e) as a line of its own: the parser's, which every kind of line goes through. */
export interface LineReader {
  line(s: number, e: number, last: boolean, first: boolean): void;
}

/** Reads one rule of a line: the rule reader's. */
export interface RuleReader {
  rule(lineStart: number, a: number, lineEnd: number, last: boolean): void;
}

export class RunTogetherRules {
  private nextJoin = -2; // where the next " -A " inside a line may be (-1: none left)

  constructor(
    private readonly state: ParserState,
    private readonly reader: LineReader,
    private readonly ruleReader: RuleReader,
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
    if (joins.length === 0) return this.ruleReader.rule(s, s, e, last);
    // the warning is said with its line already
    this.state.warn(
      'joined',
      `${joins.length + 1} rules run together on one line (their line ends were lost in copying): each is read`,
    );
    let from = s;
    for (const j of joins) {
      this.state.lineStart = from;
      this.ruleReader.rule(from, from, j, false);
      from = j + 1;
    }
    this.state.lineStart = from;
    this.ruleReader.rule(from, from, e, last);
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
      if (!insideQuotes(this.state.buf, s, at)) out.push(at);
    }
  }
}

/** A line's first rule: up to a " -A " outside quotes that starts the next one run on. */
function firstRule(line: string): string {
  let quoted = false;
  for (let k = 0; k < line.length; k++) {
    if (quoted && line[k] === '\\') k++;
    else if (line[k] === '"') quoted = !quoted;
    else if (!quoted && line.startsWith(' -A ', k)) return line.slice(0, k);
  }
  return line;
}

/** Whether buf[at] lies inside quotes of the line from s: inside them iptables-save escapes ",
 * \ and ' with a backslash (xtables_save_string), so an escaped quote does not end them. */
function insideQuotes(buf: Uint8Array, s: number, at: number): boolean {
  let quoted = false;
  for (let k = s; k < at; k++) {
    if (quoted && buf[k] === 92) k++;
    else if (buf[k] === 34) quoted = !quoted;
  }
  return quoted;
}
