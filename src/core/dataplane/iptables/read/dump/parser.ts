// The dump parser: one pass over a dump's lines, each read by lines.ts; at the end what the paste
// held besides the dump is said once (summary.ts), and its tables are the Ruleset. Its
// collaborators share one ParserState (parser-state.ts), each with its own job's state.
import { text } from '../lexer.js';
import { NoRulesError } from '../errors.js';
import { Ruleset, type DumpFormat } from '../ruleset.js';
import { excerpt } from '../../../../sanitize.js';
import {
  ipvsNamed,
  mainForeign,
  namedLogs,
  mergeLogs,
  mergeIpsets,
  proxyModes,
  summarise,
  unopenedBy,
} from './summary.js';
import { CR, NL, ParserState, SP, TAB } from './parser-state.js';
import { Cuts } from './cuts.js';
import { Families } from './families.js';
import { Sections } from './sections.js';
import { Lines } from './lines.js';
import type { ParseOptions } from '../ruleset.js';

export class DumpParser {
  private readonly state: ParserState;
  private readonly cuts: Cuts;
  private readonly families: Families;
  private readonly sections: Sections;
  private readonly lines: Lines;

  constructor(buf: Uint8Array, options: ParseOptions) {
    const state = (this.state = new ParserState(buf, options));
    this.cuts = new Cuts(state);
    this.families = new Families(state);
    this.sections = new Sections(state, this.families, this.cuts);
    this.lines = new Lines(state, this.sections, this.cuts, this.families);
  }

  run(): Ruleset {
    const state = this.state;
    const b = state.buf;
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
      state.lineNo++;
      let s = pos;
      while (s < e && (b[s] === SP || b[s] === TAB)) s++;
      while (e > s && (b[e - 1] === SP || b[e - 1] === TAB)) e--;
      state.lineStart = s;
      state.lineEnd = e;
      // a paste's last line may be cut mid-rule, even when a newline follows (not a lone line)
      const last = end === n || (end >= tail && state.nonBlank > 0);
      if (state.skipUntilCommit) {
        if (e - s === 6 && text(b, s, e) === 'COMMIT') state.skipUntilCommit = false;
      } else if (s < e) {
        state.nonBlank++;
        this.lines.line(s, e, last, true);
        state.grep.seen(state.lineNo);
      } else if (!state.options.listView) state.skip('blank');
      // a listing's row not read is still output a grep printed
      else if (state.options.listView.chainless?.includes(state.lineNo))
        state.grep.seen(state.lineNo);
      pos = end + 1;
    }
    state.grep.finish();
    const head = state.options.listView?.cut;
    if (head?.head) this.cuts.cutInHead(head, head.head.chain);
    const open = state.current;
    if (open) state.spans.set(open, [state.spanStart, n]);
    this.families.settleTwice();
    // a last line cut inside the table is why it has no COMMIT: the cut says it, once; a "..."
    // ending it is said here, as why, and not as a line skipped besides
    const end = state.endsElided;
    if (open && open !== state.cutTable) {
      const reason = end
        ? `the paste ends in an elision at line ${end.line} ("${excerpt(end.text)}"): the rest of table ${open.name}, its COMMIT with it, is not in the paste`
        : `the dump looks cut short after line ${state.lineNo}: table ${open.name} has no COMMIT`;
      state.warn(
        'truncated',
        `${reason}; read up to there`,
        end?.line ?? state.lineNo,
        undefined,
        reason,
      );
    }
    this.sections.closeSection();
    this.families.settleFamilies();
    for (const t of state.tables) this.cuts.markPartial(t);
    mergeLogs(state);
    mergeIpsets(state);
    summarise(state);
    proxyModes(state);
    const format: DumpFormat = state.sawSave ? 'iptables-save' : 'iptables -S';
    const rs = new Ruleset(format, state.lineNo);
    rs.tables.push(...state.tables);
    state.warnings.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    for (const w of state.warnings) rs.warnings.push(w); // a spread of 100k+ overflows the stack
    rs.generator = state.generator;
    rs.filtered = this.cuts.filteredBy();
    rs.foreign = [...state.foreign.keys()];
    rs.legacyWarning = state.legacyWarning;
    const cut = state.warnings.find((w) => w.kind === 'truncated');
    if (cut) rs.cut = { line: cut.line, reason: cut.reason ?? cut.message, message: cut.message };
    const main = mainForeign(state);
    if (rs.tables.length === 0)
      throw new NoRulesError(state.options.file ?? '<input>', main, {
        lines: state.nonBlank,
        ...(main && state.unopened.has(main) ? { unopened: unopenedBy(state, main) } : {}),
        ...(main && ipvsNamed(state, main).length > 0
          ? { ipvsChains: ipvsNamed(state, main) }
          : {}),
        ...(state.legacyWarning !== undefined ? { legacyWarning: state.legacyWarning } : {}),
        ...(state.countersLines.length > 0 ? { counters: state.countersLines } : {}),
        ...(state.options.source ? { source: state.options.source } : {}),
        ...(state.typedWrites.length > 0 ? { typedRules: state.typedWrites } : {}),
        // the one rule there was, cut: said as such, not as a line of something else
        ...(rs.cut ? { cut: rs.cut.message } : {}),
        // a component's log among lines that are mostly none: whose, said all the same
        ...(main === undefined && namedLogs(state).length > 0 ? { logs: namedLogs(state) } : {}),
      });
    return rs;
  }
}
