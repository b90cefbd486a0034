// Parses iptables-save and `iptables [-t table] -S` output (also after `| grep KUBE`) into
// tables, chains and rules. One pass over the bytes records each rule's hot fields as offsets
// in a flat Int32Array; typed rules are built on demand (chain.rules), so a 50 MB dump costs
// little more than reading it.
import { LineSyntaxError, RuleLexer, text } from './lexer.js';
import {
  FOREIGN,
  LEGACY_WARNING,
  SKIPPED_AS,
  classifyLine,
  gluedOutput,
  gluedPrompt,
  listedTable,
  type ForeignKind,
  type WarningKind,
} from './paste/classify.js';
import { isEscapedDump, unescapeDump } from './paste/escaped.js';
import { cutTargetOption } from './paste/cut-option.js';
import { COLUMNED_NOTE, columnedAt, uncolumn } from './paste/columned.js';
import { typesetLines, typesetNote, untypeset } from './paste/typeset.js';
import { unwrapRules, wrappedNote } from './paste/wrapped.js';
import { COLOURS_REMOVED, hasColours, stripColours } from '../../colours.js';
import { isLog } from './paste/logs.js';
import { isListView, listViewToRules, type ListViewCut } from './paste/list-view.js';
import { screenRows, screenWidth } from './paste/terminal.js';
import { BUILTINS, Table } from './table.js';
import { excerpt } from '../../../sanitize.js';
import type { IPFamily } from '../../../ipv6.js';
import { IptablesParseError, NoRulesError } from './errors.js';
import {
  Ruleset,
  TABLES,
  type DumpFormat,
  type ParseOptions,
  type ParseWarning,
} from './ruleset.js';

export type { Rule } from './rule.js';
export type { ForeignKind, WarningKind } from './paste/classify.js';
export { printRule, parseRuleLine } from './rule.js';
export { Chain, Table } from './table.js';
export { IptablesParseError, NoRulesError } from './errors.js';
export { Ruleset, TABLES, rulesetFromState, rulesetState } from './ruleset.js';

/** Parses a dump. Throws IptablesParseError with the line for anything it cannot read. */
export function parseIptables(input: Uint8Array | string, options: ParseOptions = {}): Ruleset {
  const bytes = toBytes(input);
  const head = new TextDecoder().decode(bytes.subarray(0, 16384));
  // grep --color's codes around each match: the text without them
  if (hasColours(head)) {
    const rs = parseIptables(stripColours(new TextDecoder().decode(bytes)), options);
    rs.warnings.unshift({ line: null, kind: 'view', message: COLOURS_REMOVED });
    return rs;
  }
  // a dump inside a quoted string (a JSON field, a log line): the text it stands for
  const escaped = isEscapedDump(head) ? new TextDecoder().decode(bytes) : undefined;
  const unescaped = escaped === undefined ? undefined : unescapeDump(escaped);
  if (unescaped !== undefined && unescaped !== escaped) {
    const rs = parseIptables(unescaped, options);
    rs.warnings.unshift({
      line: null,
      kind: 'view',
      message:
        'the rules were inside a quoted string (line ends written as \\n): read unescaped, and line numbers count the unescaped lines',
    });
    return rs;
  }
  // rules a page typeset ("–comment", "“ns/svc”"): read with the characters iptables printed
  const typeset = typesetLines(head);
  if (typeset.length > 0) {
    const text = new TextDecoder().decode(bytes);
    const rs = parseIptables(untypeset(text), options);
    const lines = typesetLines(text);
    rs.warnings.unshift({ line: lines[0]!, kind: 'view', message: typesetNote(lines), lines });
    return rs;
  }
  // `iptables -L | column -t`: its fields and comments spread apart, read one space apart
  const columned = columnedAt(head);
  if (columned !== undefined) {
    const rs = parseIptables(uncolumn(new TextDecoder().decode(bytes)), options);
    rs.warnings.unshift({ line: columned, kind: 'view', message: COLUMNED_NOTE });
    return rs;
  }
  // copied off a terminal's screen: its rows run together at its width
  const width = screenWidth(head);
  if (width !== undefined) {
    const rs = parseIptables(screenRows(new TextDecoder().decode(bytes), width), options);
    rs.warnings.unshift({
      line: null,
      kind: 'view',
      message: `copied off a terminal ${width} columns wide (its rows padded with blanks and run together, long lines wrapped): read row by row, and line numbers count those rows`,
    });
    return rs;
  }
  // an `iptables -L` listing, read as the -S rules it shows, each on the paste's own line
  const listing = isListView(head);
  // a rule longer than the terminal it was copied from, gone on at the next line's start
  const unwrapped = listing ? undefined : unwrapRules(bytes);
  if (unwrapped) {
    const rs = new DumpParser(toBytes(unwrapped.text), options).run();
    // the line a rule went on to is left blank: not said as a blank line of the paste
    const gone = new Set(unwrapped.lines);
    const kept = rs.warnings.filter((w) => !(w.kind === 'blank' && gone.has(w.line ?? 0)));
    rs.warnings.length = 0;
    rs.warnings.push(wrappedNote(unwrapped.lines));
    for (const w of kept) rs.warnings.push(w);
    return rs;
  }
  if (listing) {
    const view = listViewToRules(new TextDecoder().decode(bytes));
    const listView = {
      listingStarts: view.listingStarts,
      broken: view.broken,
      above: view.above,
      ...(view.cut ? { cut: view.cut } : {}),
    };
    const rs = new DumpParser(toBytes(view.text), { ...options, listView }).run();
    rs.warnings.unshift(
      ...view.notes.map(({ line, message, lines }) => ({
        line,
        kind: 'view' as const,
        message,
        ...(lines ? { lines } : {}),
      })),
    );
    return rs;
  }
  return new DumpParser(bytes, options).run();
}

function toBytes(input: Uint8Array | string): Uint8Array {
  if (typeof input !== 'string') return input;
  const B = (globalThis as { Buffer?: { from(s: string, enc: string): Uint8Array } }).Buffer;
  return B ? B.from(input, 'utf8') : new TextEncoder().encode(input);
}

const NL = 10;
const CR = 13;
/** " -A ": a rule starting inside the line of another (a paste whose line ends were lost). */
const JOIN = Buffer.from(' -A ');
const SP = 32;
const TAB = 9;

class DumpParser {
  private lex: RuleLexer;
  private tables: Table[] = [];
  private current: Table | undefined; // inside *table ... COMMIT
  private section: Table | undefined; // -S output (or grep'ed save output) outside *table
  private sectionHasRules = false;
  private sectionFamily: IPFamily | undefined; // what the open section's rules' addresses show
  // headerless chains declared again since the section's last rule: the next dump's, if it splits
  private againDeclared: { s: number; e: number; line: number }[] = [];
  private sawSave = false;
  private sawS = false;
  private warnings: ParseWarning[] = [];
  private generator: string | undefined;
  private lineNo = 0;
  private lastTable: Table | undefined; // the table and chain of the last rule line
  private lastChain = -1;
  private lineStart = 0;
  private lineEnd = 0;
  private readonly spans = new Map<Table, [number, number]>(); // each table's bytes, for repeats
  private spanStart = 0; // where the open table or section starts
  private skipUntilCommit = false; // inside a repeated *table block
  private dupNext = -1; // the rule a repeated block is expected to repeat next
  private readonly prefixed: number[] = [];
  private readonly typedWrites: number[] = []; // `iptables -t nat -A ...` typed: not a listing
  private readonly logged: number[] = []; // rules kube-proxy logged, read after its log prefix
  private readonly foreign = new Map<ForeignKind, number[]>();
  private lastForeign: ForeignKind | undefined; // lines inside another tool's listing
  private readonly duplicates: number[] = [];
  private legacyWarning: number | undefined; // iptables-nft's "legacy tables present" line
  private readonly saveForm = new Set<Table>(); // tables read from iptables-save lines (":CHAIN")
  private cutTable: Table | undefined; // the table whose last line ends mid-rule
  private endsElided: { table: Table; line: number; text: string } | undefined; // "..." at the end
  private nextJoin = -2; // where the next " -A " inside a line may be (-1: none left)
  private readonly whole: Buffer;
  private readonly elided = new Map<Table, number[]>(); // "..." lines: the chain read before each
  private nonBlank = 0;
  private readonly countersLines: number[] = []; // counters whose rule is not in the paste
  private readonly startsInside = new Set<Table>(); // tables the paste starts in (COMMIT, no *table)
  private readonly interleaved = new Set<Table>(); // tables whose chains' rules take turns
  private typed: Typed | undefined; // the table a command typed before the next listing lists
  private readonly typedFor = new Map<Table, Typed>(); // the listing each such command named
  // whose save the next *table lines are: iptables-save's "# Generated by" line, or the command
  private saveFamily: IPFamily | undefined;
  /** A table named as one before it, with no save line to say its family: its own addresses
   * say whether it is the other family's (kept) or a second dump of the same (an error). */
  private twice: { table: Table; first: Table; line: number } | undefined;
  /** Headerless tables started by a built-in chain declared again (another dump, or a repeat). */
  private readonly redeclared = new Set<Table>();
  /** The line of a rule's tail the paste starts with (its start cut off). */
  private startsMidRule: number | undefined;
  /** The family of a save command typed last, whose output (grep'ed of its *table lines) follows. */
  private typedSave: IPFamily | undefined;
  private readonly declared = new Map<Table, IPFamily>(); // tables a save line or command names
  private readonly misdeclared = new Set<Table>(); // tables whose addresses belie that line
  private readonly settled = new Set<Table>(); // tables whose family is read already

  constructor(
    private readonly buf: Uint8Array,
    private readonly options: ParseOptions,
  ) {
    this.lex = new RuleLexer(buf);
    this.whole = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  run(): Ruleset {
    const b = this.buf;
    const n = b.length;
    // the end of the last line that holds anything: a paste cut mid-rule may still end in a newline
    let tail = n;
    while (
      tail > 0 &&
      (b[tail - 1] === NL || b[tail - 1] === CR || b[tail - 1] === SP || b[tail - 1] === TAB)
    )
      tail--;
    let pos = 0;
    while (pos < n) {
      let end = b.indexOf(NL, pos);
      if (end < 0) end = n;
      let e = end;
      if (e > pos && b[e - 1] === CR) e--;
      this.lineNo++;
      let s = pos;
      while (s < e && (b[s] === SP || b[s] === TAB)) s++;
      while (e > s && (b[e - 1] === SP || b[e - 1] === TAB)) e--;
      this.lineStart = s;
      this.lineEnd = e;
      // a paste's last line may be cut mid-rule, even when a newline follows (not a lone line)
      const last = end === n || (end >= tail && this.nonBlank > 0);
      if (this.skipUntilCommit) {
        if (e - s === 6 && text(b, s, e) === 'COMMIT') this.skipUntilCommit = false;
      } else if (s < e) {
        this.nonBlank++;
        this.line(s, e, last, true);
      } else if (!this.options.listView) this.skip('blank');
      pos = end + 1;
    }
    const head = this.options.listView?.cut;
    if (head?.head) this.cutInHead(head, head.head.chain);
    const open = this.current;
    if (open) this.spans.set(open, [this.spanStart, n]);
    this.settleTwice();
    // a last line cut inside the table is why it has no COMMIT: the cut says it, once; a "..."
    // ending it is said here, as why, and not as a line skipped besides
    const end = this.endsElided;
    if (open && open !== this.cutTable)
      this.warn(
        'truncated',
        end
          ? `the paste ends in an elision at line ${end.line} ("${excerpt(end.text)}"): the rest of table ${open.name}, its COMMIT with it, is not in the paste; read up to there`
          : `the dump looks cut short after line ${this.lineNo}: table ${open.name} has no COMMIT; read up to there`,
        end?.line ?? this.lineNo,
      );
    this.closeSection();
    this.settleFamilies();
    for (const t of this.tables) this.markPartial(t);
    this.mergeLogs();
    this.summarise();
    this.proxyModes();
    const format: DumpFormat = this.sawSave ? 'iptables-save' : 'iptables -S';
    const rs = new Ruleset(format, this.lineNo);
    rs.tables.push(...this.tables);
    this.warnings.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    for (const w of this.warnings) rs.warnings.push(w); // a spread of 100k+ overflows the stack
    rs.generator = this.generator;
    rs.foreign = [...this.foreign.keys()];
    // the one rule there was, cut: said as such, not as a line of something else
    const cut = this.warnings.find((w) => w.kind === 'truncated');
    if (rs.tables.length === 0)
      throw new NoRulesError(this.options.file ?? '<input>', this.mainForeign(), {
        lines: this.nonBlank,
        ...(this.legacyWarning !== undefined ? { legacyWarning: this.legacyWarning } : {}),
        ...(this.countersLines.length > 0 ? { counters: this.countersLines } : {}),
        ...(this.options.source ? { source: this.options.source } : {}),
        ...(this.typedWrites.length > 0 ? { typedRules: this.typedWrites } : {}),
        ...(cut ? { cut: cut.message } : {}),
      });
    return rs;
  }

  private line(s: number, e: number, last: boolean, first: boolean): void {
    const b = this.buf;
    const c = b[s];
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
      this.spans.set(this.current, [this.spanStart, e]);
      this.current = undefined;
      this.settleTwice();
      return;
    }
    // "-A" alone on the last line: a rule cut before its chain's name, said where rules are read
    if (last && c === 45 /* - */ && e - s === 2 && b[s + 1] === 65) return this.rule(s, s, e, last);
    const cls = classifyLine(text(b, s, e));
    if ((cls.kind === 'prompt' || cls.kind === 'prose') && this.promptOutput(s, e, last)) return;
    if (cls.kind === 'prefix' && first) {
      (cls.log ? this.logged : this.prefixed).push(this.lineNo);
      const rest = s + new TextEncoder().encode(text(b, s, e).slice(0, cls.rest)).length;
      this.lineStart = rest;
      return this.line(rest, e, last, false);
    }
    if (cls.kind === 'backend') {
      this.legacyWarning ??= this.lineNo;
      return this.warn('backend', backendWarning(text(b, s, e)));
    }
    if (cls.kind === 'foreign' || (cls.kind === 'prose' && this.lastForeign))
      return this.foreignLine(cls.kind === 'foreign' ? cls.foreign : this.lastForeign!);
    if (cls.kind === 'elided') this.noteElided();
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
    this.skip(cls.kind === 'prefix' ? 'prose' : cls.kind);
  }

  /** A typed `iptables [-t TABLE] -L|-S`: the table of the listing that follows (or has just
   * started), as iptables itself takes it. Any other command's output follows it instead. */
  private noteTyped(line: string, command: boolean): void {
    // prose that quotes a command names its table only where it says one (`-t nat`): "the output
    // of `iptables -S`" is as likely a nat -S as iptables' default table
    const save = SAVE_COMMAND.exec(line);
    if (save) this.saveFamily = save[1] ? 'IPv6' : 'IPv4';
    // both families' saves in one command (`(ip6tables-save; iptables-save) | grep`): neither's
    if (save && new Set([...line.matchAll(SAVE_COMMANDS)].map((m) => m[1])).size > 1)
      this.saveFamily = undefined;
    if (command && TYPED_WRITE.test(line)) this.typedWrites.push(this.lineNo);
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
    if (!command && !/(?:^| )(?:-t ?|--table[= ])\w/.test(line)) return;
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
    };
    const open = this.section;
    if (open && !this.sectionHasRules && !this.typedFor.has(open)) {
      this.typedFor.set(open, typed);
      return;
    }
    // a listing of another table than the open one's command named starts here
    const was = open && this.typedFor.get(open)?.name;
    if (was && was !== typed.name) this.closeSection();
    this.typed = typed;
  }

  /** COMMIT after lines without a *table line: iptables-save ends each table so, and these lines
   * are the end of a table whose *table line is above the paste (a segment of a dump). */
  private commitSection(): void {
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

  /** "..." inside a table: the chain before it may go on past it, and any chain may lie in it. */
  private noteElided(): void {
    const t = this.current ?? this.section;
    if (!t) return;
    const before = this.elided.get(t) ?? [];
    before.push(this.lastTable === t ? this.lastChain : -1); // grep -A's 100k "--": not a copy each
    this.elided.set(t, before);
  }

  /** A line of another tool's listing: counted under its kind, named once at the end. */
  private foreignLine(kind: ForeignKind): void {
    this.lastForeign = kind;
    const lines = this.foreign.get(kind) ?? [];
    lines.push(this.lineNo); // a 100,000-line log: one push each, not a copy of all before it
    this.foreign.set(kind, lines);
  }

  /** A line that is not part of the dump, reported with an excerpt. */
  private skip(kind: Exclude<WarningKind, 'prefix'>): void {
    if (kind !== 'blank') this.lastForeign = undefined;
    const what = SKIPPED_AS[kind] ?? 'not a line of iptables-save or iptables -S output';
    const line = text(this.buf, this.lineStart, this.lineEnd);
    this.warn(kind, kind === 'blank' ? `${what}, skipped` : `${what}, skipped: "${excerpt(line)}"`);
  }

  private warn(
    kind: WarningKind,
    message: string,
    line: number | null = this.lineNo,
    lines?: number[],
  ): void {
    this.warnings.push(lines ? { line, kind, message, lines } : { line, kind, message });
  }

  /** One warning for each kind of line that is read in bulk: prefixes, repeats, listings. */
  private summarise(): void {
    const list = (lines: number[]) =>
      lines.length <= 8 ? lines.join(', ') : `${lines.slice(0, 8).join(', ')} ... ${lines.at(-1)}`;
    if (this.prefixed.length > 0)
      this.warn(
        'prefix',
        `${this.prefixed.length} line${this.prefixed.length === 1 ? '' : 's'} had a prefix before the dump line (grep -n / grep -H / a prompt): stripped and read (line${this.prefixed.length === 1 ? '' : 's'} ${list(this.prefixed)})`,
        this.prefixed[0]!,
        this.prefixed,
      );
    if (this.logged.length > 0)
      this.warn(
        'log',
        `rules kube-proxy logged (the input it gave iptables-restore), read after the log's prefix: what kube-proxy wrote or tried to write, not read back from the node (its log says whether iptables-restore took them; \`iptables-save\` there shows what the node holds) (line${this.logged.length === 1 ? '' : 's'} ${list(this.logged)})`,
        this.logged[0]!,
        this.logged,
      );
    if (this.duplicates.length > 0)
      this.warn(
        'duplicate',
        `${this.duplicates.length} rule line${this.duplicates.length === 1 ? '' : 's'} repeat${this.duplicates.length === 1 ? 's' : ''} an earlier one (pasted twice?): read once (line${this.duplicates.length === 1 ? '' : 's'} ${list(this.duplicates)})`,
        this.duplicates[0]!,
        this.duplicates,
      );
    for (const [kind, lines] of this.foreign)
      this.warn(
        'foreign',
        `line${lines.length === 1 ? '' : 's'} ${list(lines)} not read: ${FOREIGN[kind]}`,
        lines[0]!,
        lines,
      );
  }

  /** A component's log lines whose file or words name no component (shared_informer.go,
   * iptables.go) are of the log the paste's other lines name: one log, said once. */
  private mergeLogs(): void {
    const other = this.foreign.get('other-log');
    const named = [...this.foreign]
      .filter(([kind]) => isLog(kind) && kind !== 'other-log')
      .sort((a, b) => b[1].length - a[1].length)[0];
    if (!other || !named) return;
    this.foreign.set(
      named[0],
      [...named[1], ...other].sort((a, b) => a - b),
    );
    this.foreign.delete('other-log');
  }

  /** Other kube-proxy modes whose rules an iptables dump shows only in part: said once each. */
  private proxyModes(): void {
    const nat = this.tables.find((t) => t.name === 'nat');
    if (!nat) return;
    const has = (...names: string[]) => names.some((n) => nat.indexOf(n) >= 0);
    const services = nat.indexOf('KUBE-SERVICES');
    let matchSet = false; // IPVS mode's KUBE-SERVICES starts with its ipset rules
    for (let k = 0; services >= 0 && k < Math.min(20, nat.ruleCountOf(services)); k++)
      matchSet ||= nat.text(nat.ruleIdOf(services, k)).includes('--match-set KUBE-CLUSTER-IP');
    if (matchSet || has('KUBE-NODE-PORT', 'KUBE-LOAD-BALANCER', 'KUBE-LOOP-BACK')) {
      let leftovers = 0;
      for (let c = 0; c < nat.chainCount; c++) if (nat.kindOf(c) !== undefined) leftovers++;
      this.warn(
        'mode',
        `IPVS mode: the Services are in IPVS, read them with \`ipvsadm -Ln\`${leftovers > 0 ? `; the ${leftovers} KUBE-SVC/KUBE-SEP chains here are leftovers from iptables mode` : ''}`,
        null,
      );
    }
    // the portal chains, declared or only jumped to from the built-in chains (a listing's segment)
    const jumped = (...names: string[]) => nat.jumpsTo(names, ['PREROUTING', 'OUTPUT']);
    const portals = ['KUBE-PORTALS-CONTAINER', 'KUBE-PORTALS-HOST', 'KUBE-NODEPORT-CONTAINER'];
    if (has(...portals) || jumped(...portals))
      this.warn(
        'mode',
        'userspace mode: kube-proxy itself proxies each Service on a port of its own (the portal rules send traffic there); the endpoints are not in iptables',
        null,
      );
  }

  /** The other tool's listing most of the input was, for the error when nothing else was; none
   * where such lines are a few among prose (a README's "}" is no nft listing). */
  private mainForeign(): ForeignKind | undefined {
    const seen = [...this.foreign.values()].reduce((n, lines) => n + lines.length, 0);
    if (seen * 4 < this.nonBlank) return undefined;
    // nft's errors quote the rules it refused: what the paste is, whatever they quote
    if (this.foreign.has('nft-error')) return 'nft-error';
    // nft's crash in place of a listing: what the paste is, whatever else was typed around it
    if (this.foreign.has('nft-crash')) return 'nft-crash';
    let best: ForeignKind | undefined;
    for (const [kind, lines] of this.foreign) {
      if (kind === 'kube-proxy-nft') return kind; // its tables sit among iptables-nft's
      if (!best || lines.length > this.foreign.get(best)!.length) best = kind;
    }
    return best;
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
      else this.skip('prose');
    }
  }

  private startTable(s: number, e: number, last: boolean): void {
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

  /** A table named twice: the other family's where its addresses and the first's differ (each
   * read, said so), else the dump holds the same table twice. */
  private settleTwice(): void {
    const twice = this.twice;
    if (!twice) return;
    this.twice = undefined;
    const { table, first, line } = twice;
    const mine = this.familyShown(table);
    const theirs = this.familyShown(first);
    if (!mine || !theirs || mine === theirs) {
      const file = this.options.file ?? '<input>';
      throw new IptablesParseError(
        file,
        line,
        `*${table.name}`,
        `table ${table.name} appears twice (from lines ${first.startLine} and ${line})${mine && mine === theirs ? `, both ${mine}` : ''}: give one dump at a time`,
      );
    }
    this.declared.set(table, mine);
    if (!this.declared.has(first)) this.declared.set(first, theirs);
    this.warn(
      'table',
      `table ${table.name} from line ${line} is the ${FAMILY_TEXT[mine]} one, not a repeat of the ${theirs} one from line ${first.startLine} (their addresses say so; no save line names them): each is read, with its family`,
      line,
    );
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
  private chainLine(s: number, e: number, last: boolean): void {
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
    const table = this.target(true);
    if (redeclared || afterCommit) this.redeclared.add(table);
    this.saveForm.add(table);
    const chain = table.chainAt(s + 1, k);
    const declared = table.chainLine(chain);
    if (declared !== undefined) {
      this.warn(
        'duplicate',
        `chain ${table.nameOf(chain)} is declared again (first on line ${declared}; pasted twice?): read once`,
      );
      if (!this.current) this.againDeclared.push({ s: s + 1, e: k, line: this.lineNo });
      return;
    }
    table.setChainLine(chain, this.lineNo);
    if (!(p === k + 2 && b[k + 1] === 45)) table.setChainPolicy(chain, text(b, k + 1, p));
  }

  /** "-N CHAIN" or "-P CHAIN POLICY" (iptables -S). */
  private declare(s: number, e: number, policy: boolean): void {
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
      ((policy && this.policyFollows()) || this.listedBefore(name))
    )
      this.closeSection();
    const table = this.target();
    const chain = table.chainAt(words[2]!, words[3]!);
    table.setChainLine(chain, this.lineNo);
    if (policy) table.setChainPolicy(chain, text(b, words[4]!, words[5]!));
  }

  /** Whether the next line that holds anything is another -P line. */
  private policyFollows(): boolean {
    return this.nextStarts(80 /* P */);
  }

  /** Whether the next line that holds anything starts "-P " or "-A " (by the letter's byte). */
  private nextStarts(letter: number): boolean {
    const b = this.buf;
    let k = this.lineEnd;
    while (k < b.length && (b[k] === NL || b[k] === CR || b[k] === SP || b[k] === TAB)) k++;
    return b[k] === 45 /* - */ && b[k + 1] === letter && b[k + 2] === SP;
  }

  /** iptables-save -c's "[packets:bytes]" on a line of its own: the rule after it is the one
   * they count; on the last line, the paste was cut after them. */
  private counters(last: boolean): void {
    const next = !last && this.nextStarts(65 /* A */);
    if (!next) this.countersLines.push(this.lineNo);
    if (last) return this.cutShort('a rule cut after its counters');
    this.warn(
      'counters',
      next
        ? 'the counters iptables-save -c prints before a rule, on a line of their own: the rule on the next line is read'
        : 'the counters iptables-save -c prints before a rule, on a line of their own, and the rule they count is not in the paste: not read',
    );
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

  /** A rule line, or several run together on one (" -A " outside quotes: line ends lost in
   * copying); the last part alone may be cut. */
  private rules(s: number, e: number, last: boolean): void {
    const line = text(this.buf, s, e);
    const prompt = gluedPrompt(line);
    if (prompt < 0) return this.runTogether(s, e, last);
    // the command after the rule may have its own output run on after it in turn
    const at = s + Buffer.byteLength(line.slice(0, prompt));
    const glued = this.gluedRule(at, e);
    this.warn(
      'joined',
      glued
        ? `a prompt runs on from the end of its rule, and the next rule from the end of its command (the line ends were lost in copying): the rule and what runs on from the command are read, not the command between them: "${excerpt(glued.command, 80)}"`
        : `a prompt runs on from the end of its rule (the line end was lost in copying): the rule is read, not the command after it: "${excerpt(line.slice(prompt), 80)}"`,
    );
    this.runTogether(s, at, false);
    if (glued) this.outputOf(at, e, last, glued);
  }

  /** One rule, or several run together on one line (" -A " outside quotes). */
  private runTogether(s: number, e: number, last: boolean): void {
    const joins = this.joins(s, e);
    if (joins.length === 0) return this.rule(s, s, e, last);
    // the warning is said with its line already
    this.warn(
      'joined',
      `${joins.length + 1} rules run together on one line (their line ends were lost in copying): each is read`,
    );
    let from = s;
    for (const j of joins) {
      this.lineStart = from;
      this.rule(from, from, j, false);
      from = j + 1;
    }
    this.lineStart = from;
    this.rule(from, from, e, last);
  }

  /** A line typed at a prompt whose command's output runs on from its end: said, and the output
   * read from there; false where the line holds none. */
  private promptOutput(s: number, e: number, last: boolean): boolean {
    const glued = this.gluedRule(s, e);
    if (!glued) return false;
    this.warn(
      'joined',
      `a rule runs on from the end of the command typed before it (the line end was lost in copying): the rule is read, not the command: "${excerpt(glued.command, 80)}"`,
    );
    this.outputOf(s, e, last, glued);
    return true;
  }

  /** gluedOutput of the line in [s, e), where what runs on from the command reads as a dump line:
   * prose after a prompt ("rules.txt-A is the flag to append") leaves the line a prompt. */
  private gluedRule(s: number, e: number): ReturnType<typeof gluedOutput> {
    const line = text(this.buf, s, e);
    const glued = gluedOutput(line);
    if (!glued || !line.startsWith('-A ', glued.at)) return glued;
    // its first rule alone: the next may run on from its end, or a prompt after it
    const rest = line.slice(glued.at);
    const prompt = gluedPrompt(rest);
    const first = firstRule(prompt < 0 ? rest : rest.slice(0, prompt));
    const at = s + Buffer.byteLength(line.slice(0, glued.at));
    try {
      this.lex.lex(at + 3, at + Buffer.byteLength(first));
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
    if (glued.elided) this.noteElided();
    const at = s + Buffer.byteLength(text(this.buf, s, e).slice(0, glued.at));
    this.lineStart = at;
    this.line(at, e, last, false);
  }

  /** Where " -A " starts a rule inside [s, e), outside quotes. One pass over the input in all:
   * a dump with none (every real one) looks once. */
  private joins(s: number, e: number): number[] {
    const out: number[] = [];
    for (;;) {
      if (this.nextJoin === -1) return out;
      if (this.nextJoin < s) this.nextJoin = this.whole.indexOf(JOIN, s);
      if (this.nextJoin === -1 || this.nextJoin >= e) return out;
      const at = this.nextJoin;
      this.nextJoin = this.whole.indexOf(JOIN, at + 1);
      let quotes = 0;
      for (let k = s; k < at; k++) if (this.buf[k] === 34) quotes++;
      if (quotes % 2 === 0) out.push(at);
    }
  }

  private rule(lineStart: number, a: number, e: number, last: boolean): void {
    const specStart = a + 3;
    // the last line only "-A", or "-A" and a word: cut before, after or inside the chain's name
    if (last && !this.options.listView && e - a < 4)
      return this.cutShort('a rule cut before its chain name');
    if (e - a < 4) this.fail('expected "-A CHAIN ..."');
    try {
      this.lex.lex(specStart, e);
    } catch (err) {
      return this.unreadable(err, specStart, e, last);
    }
    if (last && !this.options.listView && /^\S+$/.test(text(this.buf, specStart, e))) {
      const [table, chain] = [this.lastTable, this.lastChain];
      this.cutShort('a rule cut at its chain name');
      // a name cut short may be the chain before it's, going on past the cut
      const word = text(this.buf, specStart, e);
      if (table && chain >= 0 && table.nameOf(chain).startsWith(word))
        [this.lastTable, this.lastChain] = [table, chain];
      return;
    }
    // kube-proxy writes every rule with a target: one without, where the input ends without its
    // newline, stopped mid-rule; so is the `iptables -L` line the listing says it cut (whatever
    // follows it: a final newline, blank lines); a kube-proxy chain's last line without one is
    // cut, whatever an editor put after it (a newline)
    const cutInView = this.options.listView?.cut?.line === this.lineNo;
    // the rule's text, made only where it is looked at: 440,000 rules' strings cost a dump's read
    const spec = last || !this.current ? text(this.buf, specStart, e) : '';
    const kubeChain = spec.startsWith('KUBE-');
    const end = last && (e === this.buf.length || kubeChain) && !this.options.listView;
    if ((cutInView || end) && !this.lex.hasTarget())
      return this.cutShort('a rule without its target');
    // a jump to a name cut before its end ("-j KUBE-MARK-", "-j KUBE-SERV"): not read
    const cutTarget = end ? CUT_FIXED_TARGET.exec(spec)?.[1] : undefined;
    if (cutTarget !== undefined && cutFixedName(cutTarget))
      return this.cutShort(`a rule cut inside its target's name ("${cutTarget}")`);
    // "-j MARK --set-xm", "-j DNAT --to-destination": cut in or after an option's name
    const cutOption = end ? cutTargetOption(spec) : undefined;
    if (cutOption !== undefined) return this.cutShort(cutOption);
    // kube-proxy names its chains with 16 hash characters: fewer at the input's very end is a cut
    // (an -L row prints more columns after its target: its end is not the name's)
    const cutName = end ? CUT_NAME.exec(spec)?.[1] : undefined;
    const t = this.lex.tokens;
    // headerless, the other family's rule starts the other family's dump (grep of both saves)
    const family = this.current ? undefined : lineFamily(spec);
    if (
      family &&
      this.section &&
      this.sectionFamily &&
      family !== this.sectionFamily &&
      !this.tables.some((x) => x.family === family)
    ) {
      this.closeSection();
      this.moveDeclarations();
    }
    this.againDeclared = [];
    const table = this.target();
    const near = this.lastTable === table ? this.lastChain : -1;
    const chain = table.chainAt(t[0]!, t[1]!, near);
    if (this.options.listView?.broken.includes(this.lineNo)) {
      const name = table.nameOf(chain);
      table.partial.set(name, 'a rule of it is not in the paste: -L printed only its counters');
      return this.warn(
        'counters',
        `a rule of ${name} not read: the line holds only the columns -L prints before its target, and the rest of its row is not in the paste, so its chain is not claimed whole`,
      );
    }
    // a chain's rules resumed after another's: kube-proxy's restore input, not iptables-save
    if (chain !== near && table.ruleCountOf(chain) > 0) this.interleaved.add(table);
    this.lastTable = table;
    if (this.repeated(table, chain, chain !== near, a, e)) return;
    this.lastChain = chain;
    try {
      table.addRule(this.lex, chain, lineStart, specStart, e, this.lineNo);
    } catch (err) {
      return this.unreadable(err, specStart, e, false);
    }
    if (!this.current) this.sectionHasRules = true;
    if (!this.current) this.sectionFamily ??= family;
    if (cutName) this.cutInName(table, cutName);
  }

  /** Chains declared again just above the other family's first rule: that dump's, not a repeat. */
  private moveDeclarations(): void {
    const moved = new Set(this.againDeclared.map((d) => d.line));
    if (moved.size === 0) return;
    this.warnings = this.warnings.filter((w) => w.kind !== 'duplicate' || !moved.has(w.line ?? 0));
    const [lineNo, lineStart] = [this.lineNo, this.lineStart];
    for (const d of this.againDeclared) {
      [this.lineNo, this.lineStart] = [d.line, d.s - 1]; // the new table starts at its first
      const table = this.target(true);
      table.setChainLine(table.chainAt(d.s, d.e), d.line);
    }
    [this.lineNo, this.lineStart] = [lineNo, lineStart];
  }

  /** The input's last line, without its newline, ends inside a kube-proxy chain's name: the rule
   * is read up to its jump, and the chain it names (its name cut) is not in the paste. */
  private cutInName(table: Table, name: string): void {
    this.cutTable = table;
    const prefix = name.slice(0, name.lastIndexOf('-') + 1);
    table.partial.set(name, 'its name is cut at the end of the paste: the chain is not in it');
    this.warn(
      'truncated',
      `${cutAt(this.lineNo)}: it ends mid-word in ${name}, ${name.length - prefix.length} of the 16 characters kube-proxy writes after ${prefix}: the rule is read, the chain it names is not in the paste`,
    );
  }

  /**
   * Which chains of a table the paste may not hold in full. iptables-save declares every chain
   * before any rule, so a dump without COMMIT (cut, or grep'd) declares chains whose rules are
   * not in it; and the chain the input ends in may go on past the end when the input was cut
   * (no COMMIT, a last line cut mid-rule) or is a fragment (rules without any declaration).
   */
  private markPartial(t: Table): void {
    const noCommit = this.saveForm.has(t) && !t.committed;
    const elided = this.elided.get(t);
    for (const c of elided ?? [])
      if (c >= 0)
        t.partial.set(
          t.nameOf(c),
          'the paste elides lines after it: more of its rules may be there',
        );
    // a table the paste's last line elides is left open there, not cut
    const cut = (noCommit && this.endsElided?.table !== t) || this.cutTable === t;
    // iptables -L lists each chain's rules under its Chain line: only the one cut may go on
    const listed = this.options.listView !== undefined;
    let declared = false;
    for (let c = 0; c < t.chainCount; c++) {
      if (t.chainLine(c) === undefined) continue;
      declared = true;
      // an -L listing's cut spares the chains before it; an elision may hide any chain's rules
      if (((cut && !listed) || elided) && t.ruleCountOf(c) === 0)
        t.partial.set(
          t.nameOf(c),
          cut
            ? 'declared, but the paste is cut: its rules may lie past the cut'
            : 'declared, but the paste elides lines: its rules may be among them',
        );
    }
    // the chain the paste starts in may have rules above it; in kube-proxy's restore input (its
    // log's, or chains taking turns) any chain may
    const turns = this.interleaved.has(t) || this.logged.length > 0;
    for (let c = 0; this.startsInside.has(t) && c < t.chainCount; c++)
      if ((c === 0 || turns) && t.chainLine(c) === undefined && t.ruleCountOf(c) > 0) {
        t.partial.set(
          t.nameOf(c),
          'the paste starts inside its table: more of its rules may lie above',
        );
        t.cutAbove.add(t.nameOf(c));
      }
    // rows read above the paste's first Chain line: that chain's first rules lie above it
    for (const name of this.options.listView?.above ?? [])
      if (t.indexOf(name) >= 0) {
        t.partial.set(name, 'its Chain line is above the paste: more of its rules may lie above');
        t.cutAbove.add(name);
      }
    const last = this.lastTable === t ? this.lastChain : -1;
    // a COMMIT the paste holds ends its last chain
    if (last >= 0 && (cut || (!declared && !t.committed)))
      t.partial.set(
        t.nameOf(last),
        cut
          ? 'the paste is cut inside it: more of its rules may lie past the cut'
          : 'the paste ends inside it and declares no chain: more of its rules may follow',
      );
  }

  /** A rule line that does not read: cut (the paste's last line), an address hidden by hand, or
   * an error at its line. */
  private unreadable(err: unknown, spec: number, e: number, last: boolean): void {
    if (!(err instanceof LineSyntaxError)) throw err;
    if (last) return this.cutShort(err.message);
    const hidden = /^"(.+)" is not an address$/.exec(err.message)?.[1];
    if (hidden && REDACTED.test(hidden)) return this.redacted(spec, e, hidden);
    this.fail(err.message);
  }

  /** A rule whose address its author hid by hand: not read, and its chain not claimed whole. */
  private redacted(spec: number, e: number, address: string): void {
    let end = spec;
    while (end < e && this.buf[end] !== SP) end++;
    const table = this.target();
    const name = table.nameOf(table.chainAt(spec, end));
    table.partial.set(name, `a rule of it is not read: its address "${address}" is hidden`);
    this.warn(
      'redacted',
      `a rule of ${name} not read: its address "${address}" was hidden by hand, so its chain is not claimed whole`,
    );
  }

  /** A last line that does not lex: the paste was cut in the middle of it. */
  private cutShort(reason: string, where = 'mid-rule'): void {
    this.cutTable = this.current ?? this.section;
    // the chain a cut rule names is the one the paste is cut inside
    const named = /^(?:\[\d+:\d+\] )?-A (\S+)/.exec(text(this.buf, this.lineStart, this.lineEnd));
    const at = named && this.cutTable ? this.cutTable.indexOf(named[1]!) : -1;
    if (at >= 0) [this.lastTable, this.lastChain] = [this.cutTable, at];
    // a chain the paste holds no other rule of: the chain before it ended whole
    else if (named) this.lastChain = -1;
    // an `iptables -L` line: what -L printed of it, as the paste shows it
    const listed = this.options.listView?.cut;
    const [why, shown] =
      listed?.line === this.lineNo
        ? [listed.reason, listed.text]
        : [reason, text(this.buf, this.lineStart, this.lineEnd)];
    this.warn(
      'truncated',
      `${cutAt(this.lineNo)}: it ends ${where} (${why}), not read: "${excerpt(shown)}"`,
    );
  }

  /** An `iptables -L` listing cut in or after a Chain line or a column header: the chain listed
   * before a Chain line is whole, the chain a column header is of has its rules past the cut. */
  private cutInHead(cut: ListViewCut, chain: string | undefined): void {
    const t = this.section;
    this.cutTable = t;
    if (t) [this.lastTable, this.lastChain] = [t, chain === undefined ? -1 : t.indexOf(chain)];
    this.warn(
      'truncated',
      cut.head?.read
        ? `the dump looks cut short after line ${cut.line}: the paste ends ${cut.reason}`
        : `${cutAt(cut.line)}: it ends ${cut.reason}, not read: "${excerpt(cut.text)}"`,
      cut.line,
    );
  }

  /**
   * Whether the rule in bytes [a, e) repeats one its chain already has (a block pasted twice):
   * the rule a repeat is expected to repeat next, the chain's first rule, or, when the chain's
   * rules resume after another chain's, any of them. A clean dump pays one length compare.
   */
  private repeated(table: Table, chain: number, resumed: boolean, a: number, e: number): boolean {
    const count = table.ruleCountOf(chain);
    if (count === 0) return false;
    let k = -1;
    const next = this.dupNext;
    if (next >= 0 && next < count && table.ruleIs(table.ruleIdOf(chain, next), a, e)) k = next;
    else if (table.ruleIs(table.ruleIdOf(chain, 0), a, e)) k = 0;
    else if (resumed)
      for (let j = 1; j < count && k < 0; j++)
        if (table.ruleIs(table.ruleIdOf(chain, j), a, e)) k = j;
    if (k < 0) {
      this.dupNext = -1;
      return false;
    }
    this.dupNext = k + 1;
    this.lastChain = chain;
    this.duplicates.push(this.lineNo);
    return true;
  }

  /** The table a line belongs to: the open *table, else the current -S section. */
  private target(declaration = false): Table {
    if (this.current) return this.current;
    // a chain's declaration after COMMIT starts a dump whose *table line is not in the paste
    if (!declaration && this.sawSave && this.tables.every((t) => t.committed) && !this.section) {
      // lines after COMMIT outside any table: grep'ed save output keeps no *table lines,
      // but a whole dump must not have stray lines
      this.fail('line outside a *table ... COMMIT block');
    }
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
    this.typed = undefined;
    return this.section;
  }

  private closeSection(): void {
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

  /** A table's address family: ip6tables' where the command typed before it or its save's
   * "# Generated by" line says so, or its rules hold IPv6 (addresses, [address]:port DNAT
   * targets, ICMPv6); a sample of its rules tells, as every kube-proxy rule of an address does. */
  private family(t: Table): IPFamily {
    return this.familyShown(t) ?? 'IPv4';
  }

  /** What says a table's family, where anything does: the command or save line, or an address
   * of its rules (an IPv4 one too: a filter table of kube-proxy's may hold none). */
  private familyShown(t: Table): IPFamily | undefined {
    const said = this.typedFor.get(t)?.ip6 ? 'IPv6' : this.declared.get(t);
    // the rules' own addresses outweigh a command or save line (one typed above other output)
    const own = addressFamily(t);
    if (own && said && own !== said && !this.misdeclared.has(t)) {
      this.misdeclared.add(t);
      this.warn(
        'table',
        `rules from line ${t.startLine} hold ${own} addresses though the command or save line above them names ${said}: read as ${own}`,
        t.startLine ?? null,
      );
    }
    return own ?? said ?? (this.typedFor.has(t) ? 'IPv4' : undefined);
  }

  /** The families of the tables not settled while read: each its own where it shows one, else
   * that of the dump it is part of (the next table that shows one, else the one before). */
  private settleFamilies(): void {
    const open = this.tables.filter((t) => !this.settled.has(t));
    const shown = open.map((t) => this.familyShown(t));
    open.forEach((t, i) => {
      t.family =
        shown[i] ??
        shown.slice(i + 1).find((f) => f !== undefined) ??
        shown
          .slice(0, i)
          .reverse()
          .find((f) => f !== undefined) ??
        'IPv4';
    });
  }

  private fail(reason: string, atEnd = false): never {
    const file = this.options.file ?? '<input>';
    if (atEnd) throw new IptablesParseError(file, this.lineNo, '', reason);
    throw new IptablesParseError(
      file,
      this.lineNo,
      text(this.buf, this.lineStart, this.lineEnd),
      reason,
    );
  }
}

/** The family a sample of a table's rules shows by their addresses ([address]:port DNAT
 * targets, ICMPv6 too), where any has one: every kube-proxy rule of an address does. */
function addressFamily(t: Table): IPFamily | undefined {
  let looked = 0;
  let v4 = false;
  for (const c of t.chains) {
    if (looked >= FAMILY_SAMPLE) break;
    for (let k = 0; k < c.ruleCount && looked < FAMILY_SAMPLE; k++, looked++) {
      const f = ruleFamily(t, c.ruleId(k));
      if (f === 'IPv6') return f;
      v4 ||= f === 'IPv4';
    }
  }
  return v4 ? 'IPv4' : undefined;
}

/** The family a rule's text shows by the addresses iptables-save prints in it (-s, -d, a DNAT's
 * --to-destination), where it has any. */
function lineFamily(spec: string): IPFamily | undefined {
  // a comment's words are no address
  const m = / -[sd] (\S+)| --to-destination (\S+)/.exec(spec.replace(/"[^"]*"/g, '""'));
  return m ? familyOfAddress(m[1] ?? m[2]!) : undefined;
}

/** The family of an address as iptables prints it: IPv6 bracketed ("[fd00::1]:80") or with two
 * colons or more; IPv4 otherwise ("10.0.0.1", "10.0.0.1-10.0.0.3:80"); none for a port alone
 * (":80") or nothing. */
function familyOfAddress(value: string): IPFamily | undefined {
  if (value === '' || value.startsWith(':')) return undefined;
  if (value.startsWith('[') || value.indexOf(':') !== value.lastIndexOf(':')) return 'IPv6';
  return /^\d/.test(value) ? 'IPv4' : undefined;
}

/** The family one rule's own addresses show, where it has any. */
function ruleFamily(t: Table, id: number): IPFamily | undefined {
  const families = [t.source(id), t.destination(id), t.to(id)].map((a) => familyOfAddress(a ?? ''));
  if (families.includes('IPv6') || /^(?:ipv6-icmp|icmpv6|58)$/.test(t.protocol(id) ?? ''))
    return 'IPv6';
  return families.includes('IPv4') ? 'IPv4' : undefined;
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

/** The end of a rule without its "-A CHAIN" start: options up to a target. */
const RULE_TAIL = /^(?:! )?--?[a-z][\w-]*(?: \S+)*? -[jg] [\w-]+(?: .*)?$/;

/** `iptables-save` or `ip6tables-save` typed, or named by its "# Generated by" line. */
const SAVE_COMMAND = /(?:^|[\s`$#(])ip(6?)tables(?:-legacy|-nft)?-save\b/;
const SAVE_COMMANDS = new RegExp(SAVE_COMMAND.source, 'g');

/** How many rules of a table are looked at for its family. */
const FAMILY_SAMPLE = 5000;

/** A family's table, as a warning names it. */
const FAMILY_TEXT: Record<IPFamily, string> = {
  IPv4: "IPv4 (iptables')",
  IPv6: "IPv6 (ip6tables')",
};
const otherFamily = (f: IPFamily): IPFamily => (f === 'IPv4' ? 'IPv6' : 'IPv4');

/** A paste whose last line ends where it was cut, mid-line (the lines before it whole). */
const cutAt = (line: number) => `the paste is cut at line ${line}`;

/** A jump ending the line in a kube-proxy chain's name shorter than its 16 hash characters. */
const CUT_NAME = / -[jg] (KUBE-(?:SVC|SVL|SEP|EXT|FW|XLB)-[A-Z2-7]{0,15})$/;

/** The jump a line ends in, to a kube-proxy chain of a fixed name. */
const CUT_FIXED_TARGET = / -[jg] (KUBE-[A-Z-]*)$/;
/** kube-proxy's chains of fixed names (iptables and IPVS modes). */
const FIXED_KUBE_CHAINS = [
  'KUBE-MARK-MASQ',
  'KUBE-MARK-DROP',
  'KUBE-SERVICES',
  'KUBE-NODEPORTS',
  'KUBE-POSTROUTING',
  'KUBE-FIREWALL',
  'KUBE-FORWARD',
  'KUBE-EXTERNAL-SERVICES',
  'KUBE-PROXY-FIREWALL',
  'KUBE-LOAD-BALANCER',
  'KUBE-NODE-PORT',
];
/** A name cut before its end: a strict beginning of a fixed name's, and of no whole one. */
const cutFixedName = (name: string) =>
  !FIXED_KUBE_CHAINS.includes(name) &&
  FIXED_KUBE_CHAINS.some((c) => c.startsWith(name)) &&
  !/^KUBE-(?:SVC|SVL|SEP|EXT|FW|XLB)-/.test(name);

/** An address its author hid: digits and separators with x's, stars or a <placeholder>. */
const REDACTED =
  /^!?(?=[^/]*(?:[xX*]|<))(?:(?:\d{1,3}|[xX]+|\*+)(?:\.(?:\d{1,3}|[xX]+|\*+)){3}|<[^>]+>|[\da-fA-FxX*]*:[\da-fA-FxX*:]*)(?:\/\d+)?$/;

/** A command typed before a listing: the table it lists, whether ip6tables lists it, its line
 * and its text. */
interface Typed {
  name: string;
  ip6: boolean;
  line: number;
  command: string;
}

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

const NAT_TARGETS = new Set(['DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT', 'NETMAP', 'KUBE-MARK-MASQ']);
const FILTER_TARGETS = new Set([
  'REJECT',
  'ACCEPT',
  'DROP',
  'KUBE-FIREWALL',
  'KUBE-FORWARD',
  'KUBE-EXTERNAL-SERVICES',
]);
const NAT_CHAINS =
  /^KUBE-(SVC|SEP|SVL|EXT|FW|XLB|MARK-MASQ|MARK-DROP|POSTROUTING|NODEPORTS|SERVICES)/;

/** The one table a kube-proxy chain can be in, by its name (KUBE-SERVICES and KUBE-NODEPORTS are
 * in both nat and filter). */
function tableOfChain(name: string): 'nat' | 'filter' | undefined {
  if (/^KUBE-(?:SVC|SEP|SVL|EXT|FW|XLB|MARK-MASQ|MARK-DROP|POSTROUTING)-?/.test(name)) return 'nat';
  if (/^KUBE-(?:FORWARD|FIREWALL|EXTERNAL-SERVICES|PROXY-FIREWALL)$/.test(name)) return 'filter';
  return undefined;
}

/** The built-in chains a listing holds. */
const builtInsOf = (t: Table) => BUILTINS.mangle!.filter((name) => t.indexOf(name) >= 0);

/** Whether a table has every built-in chain the listing holds. */
const holdsBuiltIns = (table: string, t: Table) =>
  builtInsOf(t).every((name) => BUILTINS[table]?.includes(name));

/** The table a listing's built-in chains settle, undefined where they do not. nat has PREROUTING
 * or POSTROUTING and no FORWARD, filter FORWARD and neither. Both: mangle only where the listing
 * is mangle's whole (a policy line for each of its five chains, no rule only nat may hold); a
 * grep across tables mixes them too. raw shares PREROUTING and OUTPUT with nat: only a target
 * raw alone takes (CT, NOTRACK, TRACE) tells it. */
function builtInTable(t: Table): 'nat' | 'filter' | 'raw' | 'mangle' | undefined {
  const has = (name: string) => t.indexOf(name) >= 0;
  const natOnly = has('PREROUTING') || has('POSTROUTING');
  if (natOnly && has('FORWARD')) {
    const whole = BUILTINS.mangle!.every((name) => t.chain(name)?.policy !== undefined);
    return whole && !natRules(t) ? 'mangle' : undefined;
  }
  if (!natOnly) return has('FORWARD') ? 'filter' : undefined;
  return rawRules(t) ? 'raw' : 'nat';
}

/** Targets only the raw table takes. */
const RAW_TARGETS = new Set(['CT', 'NOTRACK', 'TRACE']);

/** Whether a listing holds a rule only the raw table may. */
const rawRules = (t: Table) => anyTarget(t, (target) => RAW_TARGETS.has(target));

/** Whether a listing holds a rule only the nat table may: a NAT target, or a jump to a kube-proxy
 * chain of nat's (its built-in chains jump to KUBE-SERVICES there). */
const natRules = (t: Table) =>
  anyTarget(t, (target) => NAT_TARGETS.has(target) || NAT_CHAINS.test(target));

/** Whether some rule of the listing has a target `of` accepts. */
function anyTarget(t: Table, of: (target: string) => boolean): boolean {
  for (const c of t.chains)
    for (let k = 0; k < c.ruleCount; k++) {
      const target = t.target(c.ruleId(k));
      if (target !== undefined && of(target)) return true;
    }
  return false;
}

function guessTable(t: Table): string | undefined {
  const builtIn = builtInTable(t);
  if (builtIn) return builtIn;
  let nat = 0;
  let filter = 0;
  for (const c of t.chains) {
    if (c.name === 'PREROUTING' || c.name === 'POSTROUTING') nat += 2;
    if (c.name === 'FORWARD' || c.name === 'INPUT') filter += 2;
    if (/^KUBE-(SVC|SEP|SVL|EXT|XLB|MARK-MASQ|POSTROUTING)/.test(c.name)) nat += 3;
    if (/^KUBE-(FORWARD|FIREWALL|EXTERNAL-SERVICES|PROXY-FIREWALL)$/.test(c.name)) filter += 3;
    for (let k = 0; k < c.ruleCount; k++) {
      const id = c.ruleId(k);
      const target = t.target(id);
      if (target === undefined) continue;
      if (
        NAT_TARGETS.has(target) ||
        (NAT_CHAINS.test(target) && target !== 'KUBE-SERVICES' && target !== 'KUBE-NODEPORTS')
      )
        nat++;
      else if (FILTER_TARGETS.has(target)) filter++;
    }
  }
  if (nat === filter) return undefined;
  return nat > filter ? 'nat' : 'filter';
}
