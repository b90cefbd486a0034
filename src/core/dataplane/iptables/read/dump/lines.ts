// Each line of a dump read by its first bytes (a rule, a chain's declaration, *table, COMMIT, a
// comment) or, where it is no dump line, by what paste/other-lines/classify.ts says it is.
import { text } from '../lexer.js';
import { LEGACY_WARNING, classifyLine, missingTable } from '../paste/other-lines/classify.js';
import { nftCrashed } from '../../../paste/foreign.js';
import { ipvsChainsIn, isLog, logLine } from '../paste/other-lines/logs.js';
import type { IPFamily } from '../../../../ipv6.js';
import { DumpRuleLines } from './rule-lines.js';
import { SAVE_COMMAND } from './sections.js';
import { SP } from './state.js';

/** A dump line a unified diff removes: "-" before it. */
const DIFF_REMOVED = /^-(?:-[ANP] |:[\w-]+ |\*[a-z]+$|COMMIT$)/;

export abstract class DumpLines extends DumpRuleLines {
  protected generator: string | undefined;
  protected readonly prefixed: number[] = [];
  // a unified diff's lines: those it adds ("+", read as its new side), those it removes ("-")
  protected readonly diffAdded: number[] = [];
  protected readonly diffRemoved: number[] = [];
  protected legacyWarning: number | undefined; // iptables-nft's "legacy tables present" line
  protected nonBlank = 0;
  private typedLine: string | undefined; // the command typed on the line before (blanks aside)
  // the klog entry the last log line began, while a multi-line value of it is open
  private entry: { header: string; lines: number[]; open: boolean } | undefined;

  protected override line(s: number, e: number, last: boolean, first: boolean): void {
    const b = this.buf;
    const c = b[s];
    const typedAbove = this.typedLine;
    this.typedLine = undefined;
    if (c === 45 /* - */ && e - s >= 2 && b[s + 2] === SP) {
      const k = b[s + 1];
      if (k === 65 /* A */ && b[s + 3] !== 45) return this.rules(s, e, last);
      if (k === 78 /* N */) return this.declare(s, e, false);
      if (k === 80 /* P */) return this.declare(s, e, true);
    } else if (c === 35 /* # */) {
      return this.comment(s, e, last);
    } else if (c === 42 /* * */ && e - s > 1 && b[s + 1] !== SP) {
      return this.startTable(s, e, last);
    } else if (c === 58 /* : */ && e - s > 1 && b[s + 1] !== SP) {
      return this.chainLine(s, e, last);
    } else if (c === 91 /* [ */) {
      // iptables-save -c: "[packets:bytes] -A ..."
      const close = b.indexOf(93, s);
      if (
        close > 0 &&
        close < e &&
        b[close + 1] === SP &&
        b[close + 2] === 45 &&
        b[close + 3] === 65
      ) {
        // iptables-save -c prints these inside *table ... COMMIT only: lines that start without
        // it are a part of a dump, and the chain they start in may have rules above them
        const first = !this.current && !this.section;
        this.rule(s, close + 2, e, last);
        if (first && this.section) this.startsInside.add(this.section);
        return;
      }
      // its counters alone (the line broken after them): the rule they count is the next line's
      if (close === e - 1 && /^\[\d+:\d+\]$/.test(text(b, s, e))) return this.counters(last);
    } else if (c === 67 /* C */ && e - s === 6 && text(b, s, e) === 'COMMIT') {
      if (!this.current && this.section && this.section.chainCount > 0) return this.commitSection();
      if (!this.current)
        return this.warn('prose', 'COMMIT without a *table line before it: not read');
      this.current.committed = true;
      this.grep.boundary();
      this.spans.set(this.current, [this.spanStart, e]);
      this.current = undefined;
      this.settleTwice();
      return;
    }
    // "-A" alone on the last line: a rule cut before its chain's name, said where rules are read
    if (last && c === 45 /* - */ && e - s === 2 && b[s + 1] === 65) return this.rule(s, s, e, last);
    const cls = classifyLine(text(b, s, e));
    // the shell's "Segmentation fault" for the nft typed above: its crash, not prose
    if (cls.kind === 'prose' && nftCrashed(text(b, s, e), typedAbove))
      return this.foreignLine('nft-crash');
    if (cls.kind === 'prompt' || cls.kind === 'command') this.typedLine = text(b, s, e);
    if ((cls.kind === 'prompt' || cls.kind === 'prose') && this.promptOutput(s, e, last)) return;
    if (cls.kind === 'prefix' && first) {
      const diff = !cls.log && /^\+\s*$/.test(text(b, s, e).slice(0, cls.rest));
      (cls.log ? this.logged : diff ? this.diffAdded : this.prefixed).push(this.lineNo);
      const rest = s + new TextEncoder().encode(text(b, s, e).slice(0, cls.rest)).length;
      this.lineStart = rest;
      return this.line(rest, e, last, false);
    }
    if (cls.kind === 'backend') {
      this.legacyWarning ??= this.lineNo;
      return this.warn('backend', backendWarning(text(b, s, e)));
    }
    if (cls.kind === 'foreign') {
      const t = text(b, s, e);
      // iptables' error for a table the kernel lacks names that table, not all of them
      const missing = missingTable(t);
      if (missing)
        this.unopened.set(cls.foreign, (this.unopened.get(cls.foreign) ?? new Set()).add(missing));
      // kube-proxy's log naming its IPVS proxier's chains: kept with it, as what tells its mode
      const ipvs = cls.foreign === 'kube-proxy-log' ? ipvsChainsIn(t) : [];
      for (const c of ipvs)
        this.unopened.set(cls.foreign, (this.unopened.get(cls.foreign) ?? new Set()).add(c));
      this.entry = isLog(cls.foreign)
        ? { header: t, lines: [this.lineNo], open: OPENS.test(t) }
        : undefined;
      return this.foreignLine(cls.foreign);
    }
    if (cls.kind === 'prose' && this.lastForeign) return this.goesOn(text(b, s, e));
    if (cls.kind === 'elided') this.noteElided();
    if (cls.kind === 'elided' && e - s === 2 && b[s] === 45) this.grep.separator(this.lineNo);
    if (cls.kind === 'fence') this.grep.typed(undefined, this.lineNo);
    // a "..." that ends the paste inside a table is why it has no COMMIT: said with it, once
    if (cls.kind === 'elided' && last && this.current) {
      this.endsElided = { table: this.current, line: this.lineNo, text: text(b, s, e) };
      return;
    }
    if (cls.kind === 'prompt' || cls.kind === 'command' || cls.kind === 'prose')
      this.noteTyped(text(b, s, e), cls.kind !== 'prose');
    // the paste's first line the tail of a rule ("--probability 0.5 -j KUBE-SEP-…"): it starts
    // inside a table, cut mid-rule, and the chain of the rules after it may have more above
    if (
      cls.kind === 'prose' &&
      this.nonBlank === 1 &&
      RULE_TAIL.test(text(b, s, e)) &&
      !this.current &&
      !this.section
    ) {
      this.startsMidRule = this.lineNo;
      return this.warn(
        'truncated',
        `the paste starts mid-rule at line ${this.lineNo} (the start of that rule is cut off): not read, and the chain of the rules after it may have more rules above the paste`,
      );
    }
    if (cls.kind === 'prose' && DIFF_REMOVED.test(text(b, s, e)))
      this.diffRemoved.push(this.lineNo);
    this.skip(cls.kind === 'prefix' ? 'prose' : cls.kind);
  }

  /** A line inside another tool's listing; inside a klog entry's multi-line value (klog writes
   * `key=<`, the value's lines indented, then ` >` and the entry's other keys), the entry's: whose
   * log it is, its words there may say (ip6tables, a KUBE- chain), and its lines move there. */
  private goesOn(line: string): void {
    const kind = this.lastForeign!;
    this.foreignLine(kind);
    const entry = this.entry;
    if (!entry?.open) return;
    entry.lines.push(this.lineNo);
    if (line.startsWith('>')) entry.open = OPENS.test(line);
    // an entry its header names no component of: the words of each of its lines, with it
    const now = kind === 'other-log' ? logLine(`${entry.header} ${line}`)?.kind : undefined;
    if (!now || now === kind) return;
    // the entry's lines are the last of its kind's: blank lines are counted under none
    this.foreign.get(kind)!.splice(-entry.lines.length);
    if (this.foreign.get(kind)!.length === 0) this.foreign.delete(kind);
    const to = this.foreign.get(now) ?? [];
    to.push(...entry.lines);
    this.foreign.set(now, to);
    this.lastForeign = now;
  }

  private comment(s: number, e: number, last: boolean): void {
    const t = text(this.buf, s, e);
    if (t.startsWith('# Generated by') || t.startsWith('# Completed on')) {
      this.generator ??= t.startsWith('# Generated by') ? t : undefined;
      const save = SAVE_COMMAND.exec(t);
      if (save) this.saveFamily = save[1] ? 'IPv6' : 'IPv4';
    } else if (/^# Table `\w+' contains incompatible base-chains, use 'nft' tool/.test(t)) {
      // iptables-nft 1.8.9+ above a table whose base chains nft itself made
      const name = /`(\w+)'/.exec(t)![1]!;
      this.warn(
        'backend',
        `iptables-nft says table ${name} holds base chains it cannot show (made with nft itself, a CNI's or a firewall's): what they do is not in this dump; ${nftListing(name, this.saveFamily)} shows them`,
      );
    } else if (/^# Table `\w+' is incompatible, use 'nft' tool\.?$/.test(t)) {
      // iptables-nft-save 1.8.8+ in place of a table it cannot print
      const name = /`(\w+)'/.exec(t)![1]!;
      this.warn(
        'backend',
        `iptables-nft-save could not print table ${name}: it holds rules iptables cannot show (written by nft itself, or by a newer iptables), so the table is not in this dump; \`nft list table ip${this.saveFamily === 'IPv6' ? '6' : ''} ${name}\` shows it`,
      );
    } else if (t.startsWith('# Warning:')) {
      if (LEGACY_WARNING.test(t)) this.legacyWarning ??= this.lineNo;
      this.warn('backend', backendWarning(t.slice(2)));
    } else {
      const cls = classifyLine(t);
      if (cls.kind === 'prompt') {
        this.typedLine = t;
        // a root prompt ("# iptables-save"), its output perhaps run on from its end
        this.noteTyped(t.slice(1).trim(), true);
        if (!this.promptOutput(s, e, last)) this.skip('prompt');
      } else if (cls.kind === 'foreign')
        this.foreignLine(cls.foreign); // a page's joined listing
      else if (cls.kind === 'elided') {
        // "# --- snip ---": the author left rules out here; at the paste's end, why no COMMIT
        this.noteElided();
        if (last && this.current)
          this.endsElided = { table: this.current, line: this.lineNo, text: t };
        else this.skip('elided');
      }
      // iptables-save prints no other comment: an author's note between the rules, said skipped
      // (a comment to iptables-restore too: it holds no rule)
      else this.skip('comment');
    }
  }
}

/** A klog line that opens a multi-line value (`err=<`), its lines to follow. */
const OPENS = /=<$/;

/** The end of a rule without its "-A CHAIN" start: options up to a target. */
const RULE_TAIL = /^(?:! )?--?[a-z][\w-]*(?: \S+)*? -[jg] [\w-]+(?: .*)?$/;

/** The nft command that lists an iptables table as nft holds it, for the family the dump is of
 * (both, where nothing says which). */
const nftListing = (table: string, family: IPFamily | undefined) =>
  family === 'IPv6'
    ? `\`nft list table ip6 ${table}\``
    : family === 'IPv4'
      ? `\`nft list table ip ${table}\``
      : `\`nft list table ip ${table}\` (\`ip6 ${table}\` for ip6tables)`;

/** iptables-nft-save's note that the legacy backend has tables too, with what it means. */
function backendWarning(note: string): string {
  if (!/iptables-legacy/.test(note)) return note;
  return `${note} — this node has rules in both iptables backends: the legacy ones are not in this dump, and one of the two sets may be stale; run \`iptables-legacy-save\` too and compare which one kube-proxy writes`;
}
