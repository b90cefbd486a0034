// Each line of a dump read by its first bytes (a rule, a chain's declaration, *table, COMMIT, a
// comment) or, where it is no dump line, by what paste/other-lines/classify.ts says it is.
import { text } from '../lexer.js';
import { LEGACY_WARNING, classifyLine } from '../paste/other-lines/classify.js';
import { missingTable } from '../paste/other-lines/foreign-kinds.js';
import { nftCrashed } from '../../../paste/foreign.js';
import { ipvsChainsIn, isLog, logLine, proxierIn } from '../paste/other-lines/logs.js';
import type { IPFamily } from '../../../../ipv6.js';
import { RuleLines } from './rule-lines/rule-lines.js';
import type { Sections } from './sections.js';
import { SAVE_COMMAND, TypedCommands } from './typed-commands.js';
import { SP, type ParserState } from './parser-state.js';
import type { Cuts } from './cuts.js';
import type { Families } from './families.js';

/** The kinds of nft's own lines: a block one of them opens is one a "}" alone may close. */
const NFT_KINDS = ['nft', 'nft-rules', 'kube-proxy-nft', 'nft-tables'] as const;

/** A dump line a unified diff removes: "-" before it. */
const DIFF_REMOVED = /^-(?:-[ANP] |:[\w-]+ |\*[a-z]+$|COMMIT$)/;

/** A Go field or variable whose raw string opens with a *table line: up to the "*", its table. */
const GO_RAW_TABLE = /^\+?\s*[\w.]+\s*(?::|:?=)\s*`\*(?=(filter|nat|mangle|raw|security)\s*$)/;

export class Lines {
  private readonly ruleLines: RuleLines;
  private readonly commands: TypedCommands;
  private typedLine: string | undefined; // the command typed on the line before (blanks aside)
  // the klog entry the last log line began, while a multi-line value of it is open
  private entry: { header: string; lines: number[]; open: boolean } | undefined;

  constructor(
    private readonly state: ParserState,
    private readonly sections: Sections,
    private readonly cuts: Cuts,
    private readonly families: Families,
  ) {
    this.ruleLines = new RuleLines(state, sections, cuts, this);
    this.commands = new TypedCommands(state, sections, families);
  }

  line(s: number, e: number, last: boolean, first: boolean): void {
    const b = this.state.buf;
    const c = b[s];
    const typedAbove = this.typedLine;
    this.typedLine = undefined;
    if (c === 45 /* - */ && e - s >= 2 && b[s + 2] === SP) {
      const k = b[s + 1];
      if (k === 65 /* A */ && b[s + 3] !== 45) return this.ruleLines.rules(s, e, last);
      if (k === 78 /* N */) return this.sections.declare(s, e, false);
      if (k === 80 /* P */) return this.sections.declare(s, e, true);
    } else if (c === 35 /* # */) {
      return this.comment(s, e, last);
    } else if (c === 42 /* * */ && e - s > 1 && b[s + 1] !== SP) {
      return this.sections.startTable(s, e, last);
    } else if (c === 58 /* : */ && e - s > 1 && b[s + 1] !== SP) {
      return this.sections.chainLine(s, e, last);
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
        const first = !this.state.current && !this.state.section;
        this.ruleLines.rule(s, close + 2, e, last);
        if (first && this.state.section) this.state.startsInside.add(this.state.section);
        return;
      }
      // its counters alone (the line broken after them): the rule they count is the next line's
      if (close === e - 1 && /^\[\d+:\d+\]$/.test(text(b, s, e))) return this.cuts.counters(last);
    } else if (c === 67 /* C */ && e - s === 6 && text(b, s, e) === 'COMMIT') {
      if (!this.state.current && this.state.section && this.state.section.chainCount > 0)
        return this.sections.commitSection();
      if (!this.state.current)
        return this.state.warn('prose', 'COMMIT without a *table line before it: not read');
      this.state.current.committed = true;
      this.state.grep.boundary();
      this.state.spans.set(this.state.current, [this.state.spanStart, e]);
      this.state.current = undefined;
      this.families.settleTwice();
      return;
    }
    // "-A" alone on the last line: a rule cut before its chain's name, said where rules are read
    if (last && c === 45 /* - */ && e - s === 2 && b[s + 1] === 65)
      return this.ruleLines.rule(s, s, e, last);
    // a Go test's raw string opening an iptables-restore input at the end of its line
    // ("expectedIPTablesWithSlice: `*filter", "expected := `*nat"): that table starts there
    const raw = GO_RAW_TABLE.exec(text(b, s, e));
    if (raw) {
      this.sections.startTable(s + raw[0].length - 1, s + raw[0].length + raw[1]!.length, last);
      this.state.rawTable = this.state.current;
      return;
    }
    const classed = classifyLine(text(b, s, e));
    // a "}" alone closes a block nft opened only where the paste holds an nft line that opens
    // one: after a stylesheet's rules (curl's HTML), a Go or JSON literal, it is theirs, prose
    const cls: typeof classed =
      classed.kind === 'foreign' &&
      classed.foreign === 'nft' &&
      text(b, s, e).trim() === '}' &&
      !NFT_KINDS.some((k) => this.state.foreign.has(k))
        ? { kind: 'prose' }
        : classed;
    // the shell's "Segmentation fault" for the nft typed above: its crash, not prose
    if (cls.kind === 'prose' && nftCrashed(text(b, s, e), typedAbove))
      return this.state.foreignLine('nft-crash');
    if (cls.kind === 'prompt' || cls.kind === 'command') this.typedLine = text(b, s, e);
    if ((cls.kind === 'prompt' || cls.kind === 'prose') && this.ruleLines.promptOutput(s, e, last))
      return;
    if (cls.kind === 'prefix' && first) {
      const diff = !cls.log && /^\+\s*$/.test(text(b, s, e).slice(0, cls.rest));
      (cls.log ? this.state.logged : diff ? this.state.diffAdded : this.state.prefixed).push(
        this.state.lineNo,
      );
      const rest = s + new TextEncoder().encode(text(b, s, e).slice(0, cls.rest)).length;
      this.state.lineStart = rest;
      return this.line(rest, e, last, false);
    }
    if (cls.kind === 'backend') {
      this.state.legacyWarning ??= this.state.lineNo;
      return this.state.warn('backend', backendWarning(text(b, s, e)));
    }
    if (cls.kind === 'foreign') {
      const t = text(b, s, e);
      // iptables' error for a table the kernel lacks names that table, not all of them
      const missing = /-no-table$/.test(cls.foreign) ? missingTable(t) : undefined;
      if (missing)
        this.state.unopened.set(
          cls.foreign,
          (this.state.unopened.get(cls.foreign) ?? new Set()).add(missing),
        );
      // kube-proxy's log naming its IPVS proxier's chains, or the proxier it says it uses: kept
      // apart from the tables, as what tells its mode
      if (cls.foreign === 'kube-proxy-log') {
        for (const c of ipvsChainsIn(t)) this.state.ipvsChains.add(c);
        this.state.proxierSaid ??= proxierIn(t);
      }
      this.entry = isLog(cls.foreign)
        ? { header: t, lines: [this.state.lineNo], open: OPENS.test(t) }
        : undefined;
      return this.state.foreignLine(cls.foreign);
    }
    if (cls.kind === 'prose' && this.state.lastForeign) return this.goesOn(text(b, s, e));
    if (cls.kind === 'elided') this.state.noteElided();
    if (cls.kind === 'elided' && e - s === 2 && b[s] === 45)
      this.state.grep.separator(this.state.lineNo);
    if (cls.kind === 'fence') this.state.grep.typed(undefined, this.state.lineNo);
    // the block quoting a Go raw string's table ends it there, without its COMMIT (not quoted)
    if (cls.kind === 'fence' && this.state.current && this.state.current === this.state.rawTable)
      this.state.current = undefined;
    // a "..." that ends the paste inside a table is why it has no COMMIT: said with it, once
    if (cls.kind === 'elided' && last && this.state.current) {
      this.state.endsElided = {
        table: this.state.current,
        line: this.state.lineNo,
        text: text(b, s, e),
      };
      return;
    }
    if (cls.kind === 'prompt' || cls.kind === 'command' || cls.kind === 'prose')
      this.commands.noteTyped(text(b, s, e), cls.kind !== 'prose');
    // the paste's first line the tail of a rule ("--probability 0.5 -j KUBE-SEP-…"): it starts
    // inside a table, cut mid-rule, and the chain of the rules after it may have more above
    if (
      cls.kind === 'prose' &&
      this.state.nonBlank === 1 &&
      RULE_TAIL.test(text(b, s, e)) &&
      !this.state.current &&
      !this.state.section
    ) {
      this.state.startsMidRule = this.state.lineNo;
      return this.state.warn(
        'truncated',
        `the paste starts mid-rule at line ${this.state.lineNo} (the start of that rule is cut off): not read, and the chain of the rules after it may have more rules above the paste`,
      );
    }
    if (cls.kind === 'prose' && DIFF_REMOVED.test(text(b, s, e)))
      this.state.diffRemoved.push(this.state.lineNo);
    this.state.skip(cls.kind === 'prefix' ? 'prose' : cls.kind);
  }

  /** A line inside another tool's listing; inside a klog entry's multi-line value (klog writes
   * `key=<`, the value's lines indented, then ` >` and the entry's other keys), the entry's: whose
   * log it is, its words there may say (ip6tables, a KUBE- chain), and its lines move there. */
  private goesOn(line: string): void {
    const kind = this.state.lastForeign!;
    this.state.foreignLine(kind);
    const entry = this.entry;
    if (!entry?.open) return;
    entry.lines.push(this.state.lineNo);
    if (line.startsWith('>')) entry.open = OPENS.test(line);
    // an entry its header names no component of: the words of each of its lines, with it
    const now = kind === 'other-log' ? logLine(`${entry.header} ${line}`)?.kind : undefined;
    if (!now || now === kind) return;
    // the entry's lines are the last of its kind's: blank lines are counted under none
    this.state.foreign.get(kind)!.splice(-entry.lines.length);
    if (this.state.foreign.get(kind)!.length === 0) this.state.foreign.delete(kind);
    const to = this.state.foreign.get(now) ?? [];
    to.push(...entry.lines);
    this.state.foreign.set(now, to);
    this.state.lastForeign = now;
  }

  private comment(s: number, e: number, last: boolean): void {
    const t = text(this.state.buf, s, e);
    if (t.startsWith('# Generated by') || t.startsWith('# Completed on')) {
      this.state.generator ??= t.startsWith('# Generated by') ? t : undefined;
      const save = SAVE_COMMAND.exec(t);
      if (save) this.state.saveFamily = save[1] ? 'IPv6' : 'IPv4';
    } else if (/^# Table `\w+' contains incompatible base-chains, use 'nft' tool/.test(t)) {
      // iptables-nft 1.8.9+ above a table whose base chains nft itself made
      const name = /`(\w+)'/.exec(t)![1]!;
      this.state.warn(
        'backend',
        `iptables-nft says table ${name} holds base chains it cannot show (made with nft itself, a CNI's or a firewall's): what they do is not in this dump; ${nftListing(name, this.state.saveFamily)} shows them`,
      );
    } else if (/^# Table `\w+' is incompatible, use 'nft' tool\.?$/.test(t)) {
      // iptables-nft-save 1.8.8+ in place of a table it cannot print
      const name = /`(\w+)'/.exec(t)![1]!;
      this.state.warn(
        'backend',
        `iptables-nft-save could not print table ${name}: it holds rules iptables cannot show (written by nft itself, or by a newer iptables), so the table is not in this dump; \`nft list table ip${this.state.saveFamily === 'IPv6' ? '6' : ''} ${name}\` shows it`,
      );
    } else if (t.startsWith('# Warning:')) {
      if (LEGACY_WARNING.test(t)) this.state.legacyWarning ??= this.state.lineNo;
      this.state.warn('backend', backendWarning(t.slice(2)));
    } else {
      const cls = classifyLine(t);
      if (cls.kind === 'prompt') {
        this.typedLine = t;
        // a root prompt ("# iptables-save"), its output perhaps run on from its end
        this.commands.noteTyped(t.slice(1).trim(), true);
        if (!this.ruleLines.promptOutput(s, e, last)) this.state.skip('prompt');
      } else if (cls.kind === 'foreign')
        this.state.foreignLine(cls.foreign); // a page's joined listing
      else if (cls.kind === 'elided') {
        // "# --- snip ---": the author left rules out here; at the paste's end, why no COMMIT
        this.state.noteElided();
        if (last && this.state.current)
          this.state.endsElided = { table: this.state.current, line: this.state.lineNo, text: t };
        else this.state.skip('elided');
      }
      // iptables-save prints no other comment: an author's note between the rules, said skipped
      // (a comment to iptables-restore too: it holds no rule)
      else this.state.skip('comment');
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
