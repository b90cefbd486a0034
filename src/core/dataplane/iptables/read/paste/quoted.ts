// A paste quoted in a markdown reply: ">" and a blank before each of its lines ("> > " where the
// reply quotes a quote), the replier's own prose around it unmarked. The marks are markdown's,
// not the listing's: every reader (iptables', nft's, ipvsadm's, Cilium's) reads the quoted lines
// without them, on the paste's own lines, and says so.
import { classifyLine } from './classify.js';
import { isIptablesLine } from './iptables-lines.js';

/** Markdown's quote marks at a line's start: ">" and at most one blank, once per level. */
const MARKS = /^(?:> ?)+/;

/** A quote's lines (1-based), and how deep its deepest line of a listing is quoted. */
export interface Quote {
  lines: number[];
  depth: number;
  /** How deep each of `lines` is quoted ("> > " is 2), in their order; 0 for a blank one (">"
   * alone quotes a blank line at any depth). */
  depths: number[];
}

/** The lines a markdown quote marks, where one of them, unmarked, is a line of a listing (a
 * rule, a row of -L, ipvsadm, nft or Cilium): undefined where the marks hold only prose or
 * commands (a ">" prompt before a command whose output is not marked). */
function quoteOf(text: string): Quote | undefined {
  if (!text.startsWith('>') && !text.includes('\n>')) return undefined;
  const lines: number[] = [];
  const depths: number[] = [];
  let depth = 0; // 0 while no marked line is a listing's
  text.split('\n').forEach((l, i) => {
    const m = MARKS.exec(l);
    if (!m) return;
    const level = m[0].split('>').length - 1;
    const t = l.slice(m[0].length).replace(/\r$/, '').trim();
    lines.push(i + 1);
    depths.push(t === '' ? 0 : level);
    if (listingLine(t)) depth = Math.max(depth, level);
  });
  return depth > 0 ? { lines, depth, depths } : undefined;
}

/** A line some reader reads, or names as another tool's listing: not prose, a prompt or a command. */
function listingLine(t: string): boolean {
  if (t === '') return false;
  if (isIptablesLine(t)) return true;
  const c = classifyLine(t);
  return c.kind === 'foreign' || c.kind === 'prefix';
}

/** The text with each line of the quote without its marks, every line on its own number. */
const unquote = (text: string, quote: Quote): string => {
  const marked = new Set(quote.lines);
  return text
    .split('\n')
    .map((l, i) => (marked.has(i + 1) ? l.replace(MARKS, '') : l))
    .join('\n');
};

/** The text a reader reads: without the quote's marks where a listing is quoted. */
export function unquoted(text: string): { text: string; quote?: Quote } {
  const quote = quoteOf(text);
  return quote ? { text: unquote(text, quote), quote } : { text };
}

/** What a reader says of a quoted listing: the marks every line has, and the lines quoted
 * deeper than that ("> " before each, "> > " on line 6), each depth as it is. */
export const quoteNote = (q: Quote): string => {
  const said = q.depths.filter((d) => d > 0);
  const least = Math.min(...said);
  const deeper = [...new Set(said)]
    .filter((d) => d > least)
    .sort((a, b) => a - b)
    .map((d) => {
      const at = q.lines.filter((_, i) => q.depths[i] === d);
      return `, "${'> '.repeat(d)}" on line${at.length === 1 ? '' : 's'} ${span(at)}`;
    });
  const deepest = Math.max(...said);
  return `line${q.lines.length === 1 ? '' : 's'} ${span(q.lines)} ${q.lines.length === 1 ? 'is' : 'are'} quoted in a markdown reply ("${'> '.repeat(least)}" before each${deeper.join('')}${deepest > 1 ? ', a quote of a quote' : ''}): read without the quote marks, as the listing was printed`;
};

/** Lines as a range where they run on ("14-18"), else listed (the first 10). */
const span = (lines: number[]): string =>
  lines.length > 2 && lines.at(-1)! - lines[0]! === lines.length - 1
    ? `${lines[0]}-${lines.at(-1)}`
    : lines.length > 10
      ? `${lines.slice(0, 10).join(', ')} …`
      : lines.join(', ');
