// Parses iptables-save and `iptables [-t table] -S` output (also after `| grep KUBE`) into
// tables, chains and rules. One pass over the bytes records each rule's hot fields as offsets
// in a flat Int32Array; typed rules are built on demand (chain.rules), so a 50 MB dump costs
// little more than reading it. Here a paste is first undone of what copying did to it (colours,
// escapes, typesetting, columns, a terminal's rows, wrapped lines, an -L listing); dump/ reads it.
import { markdownMarked, quoteNote, unquoted } from './paste/mangled/quoted.js';
import { stampedHead } from './paste/mangled/stamped.js';
import { isEscapedDump, unescapeDump } from './paste/mangled/escaped.js';
import { COLUMNED_NOTE, columnedAt, uncolumn } from './paste/mangled/columned.js';
import { typesetLines, typesetNote, untypeset } from './paste/mangled/typeset.js';
import { markupLines, markupNote, unmarkup } from './paste/mangled/markup.js';
import { unwrapRules, wrappedNote } from './paste/mangled/wrapped.js';
import { continuedNote, hasContinued, joinContinued } from './paste/mangled/continued.js';
import { restoreHiddenHashes, type Restored } from './paste/mangled/hidden-hashes.js';
import { COLOURS_REMOVED, hasColours, stripColours } from '../../paste/colours.js';
import { isListView, listViewToRules } from './paste/list-view/to-rules.js';
import { screenRows, screenWidth } from './paste/mangled/terminal.js';
import { DumpParser } from './dump/parser.js';
import type { ParseOptions, Ruleset } from './ruleset.js';
import { NoRulesError } from './errors.js';
import { nftErrors } from './paste/other-lines/nft-errors.js';
import { rowsTable } from './paste/list-view/rows-table.js';

export type { Rule } from './rule/rule.js';
export type { ForeignKind } from './paste/other-lines/foreign-kinds.js';
export type { WarningKind } from './paste/other-lines/classify.js';
export { parseRuleLine } from './rule/rule.js';
export { printRule } from './rule/print.js';
export { Chain } from './chain.js';
export { Table } from './table.js';
export { IptablesParseError, NoRulesError } from './errors.js';
export { Ruleset, TABLES, rulesetFromState, rulesetState } from './ruleset.js';

/** Parses a dump. Throws IptablesParseError with the line for anything it cannot read. */
export function parseIptables(input: Uint8Array | string, options: ParseOptions = {}): Ruleset {
  try {
    return parseForms(input, options);
  } catch (e) {
    if (!(e instanceof NoRulesError) || e.detail?.nftErrors) throw e;
    if (e.foreign !== undefined && e.foreign !== 'nft-error') throw e;
    // nft's own errors, where the paste is them: what nft said, quoted
    const errors = nftErrors(typeof input === 'string' ? input : new TextDecoder().decode(input));
    if (!errors || (e.foreign === undefined && !errors.typed)) throw e;
    throw new NoRulesError(e.file, 'nft-error', {
      ...e.detail,
      lines: e.detail?.lines ?? 0,
      nftErrors: errors,
    });
  }
}

function parseForms(input: Uint8Array | string, options: ParseOptions): Ruleset {
  const bytes = toBytes(input);
  const head = new TextDecoder().decode(bytes.subarray(0, 16384));
  // grep --color's codes around each match: the text without them, said; a node's recorded dump
  // is iptables-save's own output, which holds none: its lines with one are not read (dump/)
  if (options.noun !== 'dump' && hasColours(head)) {
    const rs = parseIptables(stripColours(new TextDecoder().decode(bytes)), options);
    rs.warnings.unshift({ line: null, kind: 'view', message: COLOURS_REMOVED });
    return rs;
  }
  // quoted in a markdown reply ("> " before each line), a fence glued to a rule, a CI log's times
  // before each line: read without them
  if (markdownMarked(head) || stampedHead(head)) {
    const q = unquoted(new TextDecoder().decode(bytes));
    if (q.quote) {
      const rs = parseIptables(q.text, options);
      const { lines } = q.quote;
      rs.warnings.unshift({ line: lines[0]!, kind: 'view', message: quoteNote(q.quote), lines });
      return rs;
    }
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
  // rules in a page's HTML source ("<span>-A</span> ...", "-&gt;"): read as the page showed them
  const markup = markupLines(head);
  if (markup.length > 0) {
    const rs = parseIptables(unmarkup(new TextDecoder().decode(bytes)), options);
    rs.warnings.unshift({ line: markup[0]!, kind: 'view', message: markupNote(markup) });
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
  // rules typed as in a shell, continued over lines ending in " \": each read as its one rule
  const continued = hasContinued(head) ? joinContinued(new TextDecoder().decode(bytes)) : undefined;
  if (continued) {
    const rs = parseIptables(continued.text, options);
    // the lines a rule went on to are left blank: not said as blank lines of the paste
    const gone = new Set(continued.rules.flatMap((r) => range(r.from + 1, r.to)));
    const kept = rs.warnings.filter((w) => !(w.kind === 'blank' && gone.has(w.line ?? 0)));
    rs.warnings.length = 0;
    const lines = continued.rules.map((r) => r.from);
    rs.warnings.push({
      line: lines[0]!,
      kind: 'view',
      message: continuedNote(continued.rules),
      lines,
    });
    rs.warnings.push(...kept);
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
    const rs = dumpOf(toBytes(unwrapped.text), options);
    // the line a rule went on to is left blank: not said as a blank line of the paste
    const gone = new Set(unwrapped.lines);
    const kept = rs.warnings.filter((w) => !(w.kind === 'blank' && gone.has(w.line ?? 0)));
    rs.warnings.length = 0;
    rs.warnings.push(wrappedNote(unwrapped.lines));
    for (const w of kept) rs.warnings.push(w);
    return rs;
  }
  if (listing) {
    const listed = new TextDecoder().decode(bytes);
    const view = listViewToRules(listed);
    const listView = {
      listingStarts: view.listingStarts,
      broken: view.broken,
      above: view.above,
      chainless: view.chainless,
      ...(view.cut ? { cut: view.cut } : {}),
    };
    const rs = chainlessOnly(view.chainless, listed, () =>
      dumpOf(toBytes(view.text), { ...options, listView }),
    );
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
  return dumpOf(bytes, options);
}

/** The listing read; where it holds no rule and -L rows whose chain nothing names, it is said
 * to be those rows, not lines of no known kind. */
function chainlessOnly(chainless: number[], text: string, read: () => Ruleset): Ruleset {
  try {
    return read();
  } catch (e) {
    if (!(e instanceof NoRulesError) || chainless.length === 0 || e.foreign) throw e;
    throw new NoRulesError(e.file, undefined, {
      ...e.detail,
      lines: e.detail?.lines ?? 0,
      chainless,
      chainlessTable: rowsTable(text.split('\n'), chainless),
    });
  }
}

/** The dump read; where it names kube-proxy chains whose hash its author hid, read again with
 * each name a line ties to one chain written as kube-proxy's, the rest said and claiming nothing. */
function dumpOf(bytes: Uint8Array, options: ParseOptions): Ruleset {
  const rs = new DumpParser(bytes, options).run();
  if (!rs.tables.some((t) => t.hidesHashes)) return rs;
  const restored = restoreHiddenHashes(new TextDecoder().decode(bytes));
  if (!restored || restored.read.length === 0) return withUnread(rs, restored?.unread ?? []);
  const again = new DumpParser(toBytes(restored.text), options).run();
  const lines = restored.read.flatMap((r) => r.lines).sort((a, b) => a - b);
  again.warnings.unshift({ line: lines[0]!, kind: 'view', message: readNote(restored), lines });
  return withUnread(again, restored.unread);
}

/** Hidden names no line tied to one chain: said, and their chains claim nothing. */
function withUnread(rs: Ruleset, unread: Restored['unread']): Ruleset {
  const lines = new Set(unread.flatMap((u) => u.lines));
  // lines alike only by a name hidden alike are no paste's repeat (their rules are said below)
  const kept = rs.warnings.filter(
    (w) => w.kind !== 'duplicate' || !(w.lines ?? [w.line ?? 0]).every((l) => lines.has(l)),
  );
  rs.warnings.length = 0;
  for (const w of kept) rs.warnings.push(w);
  for (const u of unread) {
    const why = `its hash is hidden: ${u.why}`;
    for (const t of rs.tables) {
      if (t.indexOf(u.hidden) >= 0) t.partial.set(u.hidden, why);
      // a chain that jumps to it: which chain each jump takes is not known, so no share is
      for (const line of u.lines) {
        const id = t.ruleAtLine(line);
        const chain = id < 0 ? undefined : t.chainOf(id).name;
        if (chain === undefined || chain === u.hidden) continue;
        t.partial.set(chain, `a jump of it names ${u.hidden}, whose hash is hidden: ${u.why}`);
        t.cutAbove.add(chain);
      }
    }
    rs.warnings.push({
      line: u.lines[0]!,
      kind: 'redacted',
      message: `${u.hidden} (line${u.lines.length === 1 ? '' : 's'} ${u.lines.join(', ')}): ${why}; read as written, and what its chain holds is not claimed whole`,
      lines: u.lines,
    });
  }
  return rs;
}

const readNote = (r: Restored) => {
  const each = r.read.map(
    (x) => `${x.hidden} as ${x.as} (line${x.lines.length === 1 ? '' : 's'} ${x.lines.join(', ')})`,
  );
  const more = each.length > 8 ? `; and ${each.length - 8} more` : '';
  return `chain names whose hash was hidden by hand, read as the chains kube-proxy names after the Service port (and endpoint) their lines give: ${each.slice(0, 8).join('; ')}${more}`;
};

function toBytes(input: Uint8Array | string): Uint8Array {
  if (typeof input !== 'string') return input;
  const B = (globalThis as { Buffer?: { from(s: string, enc: string): Uint8Array } }).Buffer;
  return B ? B.from(input, 'utf8') : new TextEncoder().encode(input);
}

/** from, from + 1, ... to. */
const range = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, k) => from + k);
