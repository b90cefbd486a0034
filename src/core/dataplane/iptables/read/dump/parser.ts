// The dump parser: one pass over a dump's lines, each read by its first bytes (a rule, a chain's
// declaration, *table, COMMIT, a comment) or, where it is no dump line, by what paste/classify.ts
// says it is; at the end what the paste held besides the dump is said once, and its tables are
// the Ruleset.
import { text } from '../lexer.js';
import {
  LEGACY_WARNING,
  classifyLine,
  foreignText,
  missingTable,
  type ForeignKind,
} from '../paste/classify.js';
import { nftCrashed } from '../../../paste/foreign.js';
import { isLog, logLine } from '../paste/logs.js';
import { NoRulesError } from '../errors.js';
import { Ruleset, type DumpFormat } from '../ruleset.js';
import { excerpt } from '../../../../sanitize.js';
import type { IPFamily } from '../../../../ipv6.js';
import { DumpRuleLines } from './rule-lines.js';
import { SAVE_COMMAND } from './sections.js';
import { CR, NL, SP, TAB } from './state.js';

export class DumpParser extends DumpRuleLines {
  private generator: string | undefined;
  private readonly prefixed: number[] = [];
  private legacyWarning: number | undefined; // iptables-nft's "legacy tables present" line
  private nonBlank = 0;
  private typedLine: string | undefined; // the command typed on the line before (blanks aside)
  // the klog entry the last log line began, while a multi-line value of it is open
  private entry: { header: string; lines: number[]; open: boolean } | undefined;

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
        this.grep.seen(this.lineNo);
      } else if (!this.options.listView) this.skip('blank');
      pos = end + 1;
    }
    this.grep.finish();
    const head = this.options.listView?.cut;
    if (head?.head) this.cutInHead(head, head.head.chain);
    const open = this.current;
    if (open) this.spans.set(open, [this.spanStart, n]);
    this.settleTwice();
    // a last line cut inside the table is why it has no COMMIT: the cut says it, once; a "..."
    // ending it is said here, as why, and not as a line skipped besides
    const end = this.endsElided;
    if (open && open !== this.cutTable) {
      const reason = end
        ? `the paste ends in an elision at line ${end.line} ("${excerpt(end.text)}"): the rest of table ${open.name}, its COMMIT with it, is not in the paste`
        : `the dump looks cut short after line ${this.lineNo}: table ${open.name} has no COMMIT`;
      this.warn(
        'truncated',
        `${reason}; read up to there`,
        end?.line ?? this.lineNo,
        undefined,
        reason,
      );
    }
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
    const cut = this.warnings.find((w) => w.kind === 'truncated');
    if (cut) rs.cut = { line: cut.line, reason: cut.reason ?? cut.message, message: cut.message };
    const main = this.mainForeign();
    if (rs.tables.length === 0)
      throw new NoRulesError(this.options.file ?? '<input>', main, {
        lines: this.nonBlank,
        ...(main && this.unopened.has(main) ? { unopened: this.unopenedBy(main) } : {}),
        ...(this.legacyWarning !== undefined ? { legacyWarning: this.legacyWarning } : {}),
        ...(this.countersLines.length > 0 ? { counters: this.countersLines } : {}),
        ...(this.options.source ? { source: this.options.source } : {}),
        ...(this.typedWrites.length > 0 ? { typedRules: this.typedWrites } : {}),
        // the one rule there was, cut: said as such, not as a line of something else
        ...(rs.cut ? { cut: rs.cut.message } : {}),
      });
    return rs;
  }

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
      (cls.log ? this.logged : this.prefixed).push(this.lineNo);
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
    const { copies, reruns } = this.ruleRepeats;
    if (copies.length > 0)
      this.warn(
        'duplicate',
        `${copies.length} rule line${copies.length === 1 ? '' : 's'} repeat${copies.length === 1 ? 's' : ''} an earlier one (pasted twice?): read once (line${copies.length === 1 ? '' : 's'} ${list(copies)})`,
        copies[0]!,
        copies,
      );
    if (reruns.length > 0)
      this.warn(
        'duplicate',
        `${reruns.length} rule line${reruns.length === 1 ? '' : 's'} repeat${reruns.length === 1 ? 's' : ''} the rules an earlier command printed (the command run again; where counters are printed, only they may differ): the same rule${reruns.length === 1 ? '' : 's'}, read once (line${reruns.length === 1 ? '' : 's'} ${list(reruns)})`,
        reruns[0]!,
        reruns,
      );
    // -L's rows among rules read: those lines are -L's, not the paste's kind
    const ruled = [...this.tables, this.section].some((t) => (t?.ruleCount ?? 0) > 0);
    for (const [kind, lines] of this.foreign) {
      const at = `line${lines.length === 1 ? '' : 's'} ${list(lines)}`;
      this.warn(
        'foreign',
        kind === 'iptables-list' && ruled
          ? `${at}: a row of \`iptables -L\` (its target, prot, opt, source and destination columns) among rules as iptables-save and -S print them: not read, the rules around it are`
          : `${at} not read: ${foreignText(kind, this.unopenedBy(kind))}`,
        lines[0]!,
        lines,
      );
    }
  }

  /** The tables the lines of `kind` (iptables failing to open one) name, in the order named. */
  private unopenedBy(kind: ForeignKind): string[] {
    return [...(this.unopened.get(kind) ?? [])];
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
    // its chains, declared or only jumped to (two KUBE-SERVICES rules quoted alone)
    const ipvsChains = ['KUBE-NODE-PORT', 'KUBE-LOAD-BALANCER', 'KUBE-LOOP-BACK'];
    if (matchSet || has(...ipvsChains) || nat.jumpsTo(ipvsChains)) {
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
