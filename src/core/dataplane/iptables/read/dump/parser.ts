// The dump parser: one pass over a dump's lines, each read by lines.ts; at the end what the paste
// held besides the dump is said once (summary.ts), and its tables are the Ruleset.
import { text } from '../lexer.js';
import { NoRulesError } from '../errors.js';
import { Ruleset, type DumpFormat } from '../ruleset.js';
import { excerpt } from '../../../../sanitize.js';
import { DumpSummary } from './summary.js';
import { CR, NL, SP, TAB } from './state.js';

export class DumpParser extends DumpSummary {
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
      // a listing's row not read is still output a grep printed
      else if (this.options.listView.chainless?.includes(this.lineNo)) this.grep.seen(this.lineNo);
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
    rs.filtered = this.filteredBy();
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
}
