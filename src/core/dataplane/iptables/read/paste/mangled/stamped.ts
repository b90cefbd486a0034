// A CI job's log: each line the job printed after the time its runner logged it, a blank between
// (GitHub Actions' raw log: the UTC time in ISO 8601 with its fraction and "Z"; Jenkins'
// timestamper: the time of day), then the line as printed, its own indent kept. The times are the
// runner's, not the listing's: every reader reads the lines without them, on their own numbers.

/** A runner's time before a line and the one blank after it (the job's own indent is kept). */
const STAMP = /^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|\d\d:\d\d:\d\d) /;

/** The lines (1-based) a CI log's time is read off, and the first such time, as printed. */
export interface Stamps {
  lines: number[];
  first: string;
}

/** The text with the runner's times read off, where two lines or more carry one of the same form
 * and one of them is a listing's line (`listing` tells it from prose); undefined where none. */
export function unstamped(
  text: string,
  listing: (line: string) => boolean,
): { text: string; stamps: Stamps } | undefined {
  const lines = text.split('\n');
  const first = lines.map((l) => STAMP.exec(l)?.[0]).find((s) => s !== undefined);
  if (first === undefined) return undefined;
  // one form: ISO's date, or the time of day alone
  const iso = first.includes('T');
  const at: number[] = [];
  let listed = false;
  const out = lines.map((l, i) => {
    const m = STAMP.exec(l);
    if (!m || m[0].includes('T') !== iso) return l;
    at.push(i + 1);
    const rest = l.slice(m[0].length);
    listed ||= listing(rest.trim());
    return rest;
  });
  if (at.length < 2 || !listed) return undefined;
  return { text: out.join('\n'), stamps: { lines: at, first: first.trimEnd() } };
}

/** What a reader says of the times read off. */
export const stampsNote = (s: Stamps, span: (lines: number[]) => string): string =>
  `line${s.lines.length === 1 ? '' : 's'} ${span(s.lines)} carry a CI log's time before each ("${s.first}", its runner's, not the listing's): read without it, as the listing was printed`;

/** Whether the head of a paste may be a CI log whose lines carry a time. */
export const stampedHead = (head: string): boolean =>
  /(?:^|\n)(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|\d\d:\d\d:\d\d) /.test(head);
