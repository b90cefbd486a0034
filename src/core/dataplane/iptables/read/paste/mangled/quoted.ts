// A paste wrapped in markdown: quoted in a reply (">" and a blank before each of its lines, "> > "
// where the reply quotes a quote, the replier's own prose around it unmarked), its code fence
// typed on the listing's first or last line (fences.ts), or some of its lines made bold or italic
// by the author ("**TCP  10.0.0.1:80 rr**", or opened on one line and closed on a later one): no
// tool prints those marks around its lines. The marks are markdown's, not the
// listing's: every reader (iptables', nft's, ipvsadm's, Cilium's) reads the lines without them,
// on the paste's own lines, and says so.
import { classifyLine } from '../other-lines/classify.js';
import { fencesNote, unfence, type GluedFence } from './fences.js';
import { isIptablesLine } from '../other-lines/iptables-lines.js';
import { stampsNote, unstamped, type Stamps } from './stamped.js';

/** Markdown's quote marks at a line's start: ">" and at most one blank, once per level. */
const MARKS = /^(?:> ?)+/;

/** What markdown put around a listing, read off its lines. */
export interface Quote {
  /** Every line read without a mark (a quote's or a fence), 1-based, in order. */
  lines: number[];
  /** The lines a quote marks, and how deep each is quoted ("> > " is 2; 0 for a blank one:
   * ">" alone quotes a blank line at any depth), in their order. */
  quoted: number[];
  depths: number[];
  /** The lines a fence is glued to, the fence read off. */
  fences: GluedFence[];
  /** The lines markdown's emphasis wraps ("**" before and after), the marks read off; `to`, the
   * last line where the marks open on one line and close on a later one. */
  emphasis?: Emphasis[];
  /** The lines a CI log's time is read off (stamped.ts). */
  stamps?: Stamps;
}

/** The lines a markdown quote marks, where one of them, unmarked, is a line of a listing (a
 * rule, a row of -L, ipvsadm, nft or Cilium): undefined where the marks hold only prose or
 * commands (a ">" prompt before a command whose output is not marked). */
function quoteOf(text: string): Pick<Quote, 'quoted' | 'depths'> | undefined {
  if (!text.startsWith('>') && !text.includes('\n>')) return undefined;
  const quoted: number[] = [];
  const depths: number[] = [];
  let depth = 0; // 0 while no marked line is a listing's
  text.split('\n').forEach((l, i) => {
    const m = MARKS.exec(l);
    if (!m) return;
    const level = m[0].split('>').length - 1;
    const t = l.slice(m[0].length).replace(/\r$/, '').trim();
    quoted.push(i + 1);
    depths.push(t === '' ? 0 : level);
    if (listingLine(t)) depth = Math.max(depth, level);
  });
  return depth > 0 ? { quoted, depths } : undefined;
}

/** A line some reader reads, or names as another tool's listing: not prose, a prompt or a command. */
function listingLine(t: string): boolean {
  if (t === '') return false;
  if (isIptablesLine(t)) return true;
  const c = classifyLine(t);
  return c.kind === 'foreign' || c.kind === 'prefix';
}

/** The text with each quoted line without its marks, every line on its own number. */
const unquote = (text: string, quoted: number[]): string => {
  const marked = new Set(quoted);
  return text
    .split('\n')
    .map((l, i) => (marked.has(i + 1) ? l.replace(MARKS, '') : l))
    .join('\n');
};

/** A whole line in markdown's emphasis: its indent, the same run of "*" or "_" (1 to 3: italic,
 * bold, both) before and after, no blank just inside either (CommonMark's flanking rule). */
const EMPHASIS = /^([ \t]*)(\*{1,3}|_{1,3})(?![*_\s])(.*?[^*_\s])\2([ \t]*\r?)$/;

/** Whether the head of a paste may hold markdown's marks: a quote's, a fence, or emphasis around
 * a line. */
export const markdownMarked = (head: string): boolean =>
  /(?:^|\n)>|```|~~~/.test(head) ||
  /(?:^|\n)[ \t]*(\*{1,3}|_{1,3})[^*_\s\n](?:[^\n]*[^*_\s\n])?\1[ \t]*\r?(?:\n|$)/.test(head);

interface Emphasis {
  line: number;
  mark: string;
  to?: number;
}

/** Emphasis opened at a listing line's start, closed at the end of a later one ("**TCP  ... rr"
 * ... "-> ... 0**"): the same marks as EMPHASIS, split over the lines they wrap. */
const OPENS = /^([ \t]*)(\*{1,3}|_{1,3})(?![*_\s])(.*)$/;
const CLOSES = /^(.*[^*_\s])(\*{1,3}|_{1,3})([ \t]*\r?)$/;

/** The text with the emphasis markdown put around a listing's line read off ("*nat", which
 * iptables-save prints, has no closing mark), and those lines. */
function unemphasise(text: string): { text: string; emphasis: Emphasis[] } {
  const emphasis: Emphasis[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = EMPHASIS.exec(lines[i]!);
    if (m && listingLine(m[3]!.trim())) {
      emphasis.push({ line: i + 1, mark: m[2]! });
      lines[i] = m[1]! + m[3]! + m[4]!;
      continue;
    }
    const to = spanEnd(lines, i);
    if (to === undefined) continue;
    const open = OPENS.exec(lines[i]!)!;
    const close = CLOSES.exec(lines[to]!)!;
    emphasis.push({ line: i + 1, mark: open[2]!, to: to + 1 });
    lines[i] = open[1]! + open[3]!;
    lines[to] = close[1]! + close[3]!;
    i = to;
  }
  return { text: emphasis.length > 0 ? lines.join('\n') : text, emphasis };
}

/** The line (0-based) whose end closes the emphasis line i opens, every line from i to it a
 * listing's line without the marks; undefined where none does. */
function spanEnd(lines: string[], i: number): number | undefined {
  const open = OPENS.exec(lines[i]!);
  if (!open || !listingLine(open[3]!.trim())) return undefined;
  for (let j = i + 1; j < lines.length; j++) {
    const close = CLOSES.exec(lines[j]!);
    if (close && close[2] === open[2] && listingLine(close[1]!.trim())) return j;
    if (!listingLine(lines[j]!.trim())) return undefined;
  }
  return undefined;
}

/** The text a reader reads: without a CI log's times before its lines, without a quote's marks
 * where a listing is quoted, without a fence glued to a listing's line, and without emphasis
 * around one. */
export function unquoted(text: string): { text: string; quote?: Quote } {
  const ci = unstamped(text, (l) => listingLine(l));
  const logged = ci?.text ?? text;
  const q = quoteOf(logged);
  const inner = q ? unquote(logged, q.quoted) : logged;
  const { text: read, glued } = unfence(inner, (l) => listingLine(l.trim()));
  const { text: plain, emphasis } = /[*_]/.test(read)
    ? unemphasise(read)
    : { text: read, emphasis: [] };
  if (!ci && !q && glued.length === 0 && emphasis.length === 0) return { text };
  const lines = [
    ...new Set([
      ...(ci?.stamps.lines ?? []),
      ...(q?.quoted ?? []),
      ...glued.map((g) => g.line),
      ...emphasis.flatMap((e) => (e.to === undefined ? [e.line] : [e.line, e.to])),
    ]),
  ].sort((a, b) => a - b);
  return {
    text: plain,
    quote: {
      lines,
      quoted: q?.quoted ?? [],
      depths: q?.depths ?? [],
      fences: glued,
      ...(emphasis.length > 0 ? { emphasis } : {}),
      ...(ci ? { stamps: ci.stamps } : {}),
    },
  };
}

/** What is said of emphasis around listing lines: where, with which marks. */
const emphasisNote = (emphasis: Emphasis[]): string => {
  const lines = emphasis.filter((e) => e.to === undefined);
  const spans = emphasis.filter((e) => e.to !== undefined);
  const at = lines.map((e) => e.line);
  const marks = (es: Emphasis[]) => [...new Set(es.map((e) => `"${e.mark}"`))].join(' or ');
  const n = at.length;
  const said = [
    ...(n > 0
      ? [
          `line${n === 1 ? '' : 's'} ${span(at)} ${n === 1 ? 'is' : 'are'} wrapped in markdown emphasis (${marks(lines)} before and after${n === 1 ? ' it' : ' each'}, which no listing prints)`,
        ]
      : []),
    ...spans.map(
      (e) =>
        `lines ${e.line}-${e.to} are wrapped in markdown emphasis ("${e.mark}" at the start of line ${e.line} and the end of line ${e.to}, which no listing prints)`,
    ),
  ];
  return `${said.join('; ')}: read without the marks, as the listing was printed`;
};

/** What a reader says of a listing wrapped in markdown: the quote marks every quoted line has,
 * the lines quoted deeper than that ("> " before each, "> > " on line 6), each depth as it is;
 * the fences glued to its lines. */
export const quoteNote = (q: Quote): string => {
  const emphasis = q.emphasis ? emphasisNote(q.emphasis) : undefined;
  const marks = q.quoted.length > 0 || q.fences.length > 0 ? marksNote(q) : undefined;
  const said = [q.stamps ? stampsNote(q.stamps, span) : undefined, marks, emphasis];
  return said.filter((s) => s !== undefined).join('; ');
};

/** What is said of a quote's marks and glued fences. */
const marksNote = (q: Quote): string => {
  const said = q.depths.filter((d) => d > 0);
  if (said.length === 0) return fencesNote(q.fences);
  const least = Math.min(...said);
  const deeper = [...new Set(said)]
    .filter((d) => d > least)
    .sort((a, b) => a - b)
    .map((d) => {
      const at = q.quoted.filter((_, i) => q.depths[i] === d);
      return `, "${'> '.repeat(d)}" on line${at.length === 1 ? '' : 's'} ${span(at)}`;
    });
  const deepest = Math.max(...said);
  const n = q.quoted.length;
  const quoted = `line${n === 1 ? '' : 's'} ${span(q.quoted)} ${n === 1 ? 'is' : 'are'} quoted in a markdown reply ("${'> '.repeat(least)}" before each${deeper.join('')}${deepest > 1 ? ', a quote of a quote' : ''}): read without the quote marks, as the listing was printed`;
  return q.fences.length > 0 ? `${quoted}; ${fencesNote(q.fences)}` : quoted;
};

/** Lines as a range where they run on ("14-18"), else listed (the first 10). */
const span = (lines: number[]): string =>
  lines.length > 2 && lines.at(-1)! - lines[0]! === lines.length - 1
    ? `${lines[0]}-${lines.at(-1)}`
    : lines.length > 10
      ? `${lines.slice(0, 10).join(', ')} …`
      : lines.join(', ');
