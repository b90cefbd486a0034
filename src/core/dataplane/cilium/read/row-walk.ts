// Walking a text listing's rows: where its header is, what ends it (a prompt, a new command, a
// fence), the rows an author left out, the rows below a line that is none; and a backend's cell as
// the text tables print it.
import {
  CiliumParseError,
  backendState,
  parseAddress,
  type CiliumBackend,
  type CiliumCut,
  type CiliumForm,
} from './listing.js';
import { HEADERS, ROWS } from './which-listing.js';
import { excerpt } from '../../../sanitize.js';
import { ELISION } from '../../paste/elisions.js';

/** A row that does not read: an error at its line, never a guess. */
export const fail = (source: string, line: number, why: string): never => {
  throw new CiliumParseError(source, line, why);
};

/** The line where the listing's header is (the line before its first row where it has none),
 * and the column it starts at. */
export function headerAt(lines: string[], form: CiliumForm): { index: number; column: number } {
  let index = lines.findIndex((l) => HEADERS.some(([re, f]) => f === form && re.test(l.trim())));
  if (index < 0) {
    index = lines.findIndex((l) => ROWS.some(([re, f]) => f === form && re.test(l.trim()))) - 1;
    // rows that do not say the form may come first (a grep's context): back to what ends it
    while (index >= 0 && lines[index]!.trim() !== '' && !endsListing(lines[index]!.trim())) index--;
  }
  if (index < 0) return { index: -1, column: 0 };
  const line = lines[index]!;
  return { index, column: line.length - line.trimStart().length };
}

/** A line that ends the listing: a shell prompt ("root@node:~# ", "[user@host dir]$ ", one
 * alone at the end of a line as a trimmed paste leaves it), a new command (with or without a
 * prompt, as documentation writes it; through an alias of kubectl or docker, "k exec ... --
 * cilium-dbg service list | grep X"), a code fence. */
const ENDS =
  /^(?:\S*[#$%>](?: |$)|\[[^\]]*\][#$%>](?: |$)|```|~~~|Exitcode:|Stderr:|cmd: |(?:sudo\s+)?(?:kubectl|cilium|cilium-dbg)\s|\S+\s.*\s(?:cilium|cilium-dbg)\s+(?:service|bpf|shell|status|statedb|map)\b)/;

/** A line that ends the listing and is no elision ("# --- snip ---" and "<omitted>" read as a
 * prompt). */
export const endsListing = (t: string) => ENDS.test(t) && !ELISION.test(t);

/** Where another command's output starts after a listing: at `k` where rows follow, so that it is
 * read in turn (or said not read), never dropped. */
export const followedByRows = (lines: string[], k: number): number | undefined => {
  // below a command, its output (whatever it prints); below a fence, the author's markdown, in
  // which only a listing's own lines are another listing
  const fence = FENCE.test(lines[k]!.trim());
  const rows = lines
    .slice(k + 1)
    .some((l) => (fence ? printedRow(l.trim()) : l.trim() !== '' && !FENCE.test(l.trim())));
  return rows ? k + 1 : undefined;
};

const FENCE = /^(?:```|~~~)/;

/** A line Cilium's printers print in a listing: a header, or a row holding an address and port
 * where every row has one (first; after service list's ID column, or its "2 => " before a
 * backend's). A numbered note ("3. `cilium monitor`") starts with a digit and is none. */
const printedRow = (t: string): boolean =>
  HEADERS.some(([re]) => re.test(t)) ||
  /^(?:\d+\s+(?:=>\s+)?)?(?:\[[\da-fA-F:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):\d+(?![\d.])/.test(t);

/** A backend's row of its own under its frontend's: "2 => 10.244.0.3:53/UDP (active)" in
 * service list, "10.244.0.3:53/UDP (7) (2)" in bpf lb list ("192.168.214.171:8080 (59)", no slot,
 * before 1.10). */
const BACKEND_ROW: Partial<Record<CiliumForm, RegExp>> = {
  'service-list': /^\d+ => \S+/,
  'bpf-lb-list': /^\S+:\d+\S* \(\d+\)(?: \(\d+\))?/,
};

/** Whether a row of the listing's form follows line `k` before another listing starts (a
 * prompt, a command, a header): a numbered note or a route below it is none. */
function rowsBelow(lines: string[], k: number, form: CiliumForm): boolean {
  for (const l of lines.slice(k + 1)) {
    const t = l.trim();
    if (endsListing(t) || HEADERS.some(([re]) => re.test(t))) return false;
    if (ROWS.some(([re, f]) => f === form && re.test(t)) || BACKEND_ROW[form]?.test(t)) return true;
  }
  return false;
}

/** Rows the author left out at `line`, quoted as marked. */
export const leftOut = (line: number, mark: string): CiliumCut => ({
  line,
  reason: `rows left out ("${mark}")`,
});

/** A row cut short, at the end of the listing: the row as far as it goes, and whether it is
 * indented (a further row of the Service above, where the listing prints its address once). */
export interface RowCut {
  cut: CiliumCut;
  text: string;
  indented: boolean;
}

/** How each printer ends a whole row: its last column closed ("(active)", "(14) (3)",
 * "[ClusterIP]", "(L7LB Proxy Port: 15735)"), or "backend 12 not found". The paste's last line,
 * where no newline ends it, is whole only so (unless its reader knows the release's columns
 * otherwise): "2 => 10.244.1.109:5" may be ":53/UDP (active)" cut short, and read as it stands it
 * would be a backend no listing printed. */
const CLOSED: Partial<Record<CiliumForm, RegExp>> = {
  'service-list': /\)$/,
  'bpf-lb-list': /[)\]]$|^backend \d+ not found$/,
};

/** Where the listing ends, when it ends after line `k`: nothing but blank lines follow to the
 * end of the paste (`at` undefined) or to a line `at` that ends it (a fence, a prompt, a command:
 * `unreadFrom` where another listing's rows follow it), or prose does (no row of a listing is
 * without a digit) with no row of it below. */
type ListingEnd = { at?: number; unreadFrom?: number };
function endsAfter(lines: string[], k: number, form: CiliumForm): ListingEnd | undefined {
  for (let j = k + 1; j < lines.length; j++) {
    const t = lines[j]!.trim();
    if (t === '') continue;
    if (endsListing(t)) return { at: j, unreadFrom: followedByRows(lines, j) };
    const prose = !ELISION.test(t) && !/\d/.test(t) && !rowsBelow(lines, j, form);
    return prose ? { at: j } : undefined;
  }
  return {};
}

/** Calls `row` with each of the listing's rows after its header, trimmed, with its line number,
 * up to what ends it (a prompt, a fence, or `row` returning false); marked elided where the
 * author left rows out. Returns where the first elision is, the line of a new command whose
 * output follows (that is another listing, not read with this one), where `row` stopped at a
 * line with rows after it (those not read), and the listing's last row where it is cut short
 * (it does not read, or it is the paste's last line and no newline ends it where its printer
 * closes it, or `closed` says, as far as the rows before it show the release's columns): the
 * rows before it read, it not. */
export function eachRow(
  lines: string[],
  index: number,
  form: CiliumForm,
  row: (r: { t: string; at: number; elided: boolean }) => boolean | void,
  closed: (t: string) => boolean = (t) => CLOSED[form]?.test(t) !== false,
): { cut?: CiliumCut; unreadFrom?: number; stopped?: CiliumCut; endsInRow?: RowCut } {
  let cut: CiliumCut | undefined;
  // rows left out before the first one read, its header with them: the listing is not whole
  const headed = index >= 0 && HEADERS.some(([re]) => re.test(lines[index]!.trim()));
  for (let k = index; !headed && k >= 0 && !endsListing(lines[k]!.trim()); k--)
    if (ELISION.test(lines[k]!.trim())) cut ??= leftOut(k + 1, lines[k]!.trim());
  const last = lines.length - 1;
  const cutRow = (k: number, t: string, { at, unreadFrom }: ListingEnd) => {
    const what = at === undefined ? 'paste' : 'listing';
    const endsInRow = {
      cut: { line: k + 1, reason: `the ${what} ends inside a row ("${excerpt(t)}"), not read` },
      text: t,
      indented: /^\s/.test(lines[k]!),
    };
    return { ...(cut ? { cut } : {}), ...(unreadFrom ? { unreadFrom } : {}), endsInRow };
  };
  for (let k = index + 1; k < lines.length; k++) {
    const t = lines[k]!.trim();
    if (t === '') continue;
    // most rows start with an address: no prompt, fence or elision starts with a digit
    const plain = t.charCodeAt(0) >= 48 && t.charCodeAt(0) <= 57;
    const elided = !plain && ELISION.test(t);
    if (!plain && !elided && ENDS.test(t)) {
      const unreadFrom = followedByRows(lines, k);
      return { ...(cut ? { cut } : {}), ...(unreadFrom ? { unreadFrom } : {}) };
    }
    if (elided) cut ??= leftOut(k + 1, t);
    else if (k === last && /\d/.test(t) && !closed(t)) return cutRow(k, t, {});
    let more: boolean | void;
    try {
      more = row({ t, at: k + 1, elided });
    } catch (e) {
      const end = e instanceof CiliumParseError ? endsAfter(lines, k, form) : undefined;
      if (!end) throw e;
      return cutRow(k, t, end);
    }
    if (more === false) {
      // rows of the listing below a line that is none ("(output truncated)", a note): said unread
      if (!rowsBelow(lines, k, form)) break;
      const stopped = {
        line: k + 1,
        reason: `lines from here not read ("${excerpt(t)}" is no row of the listing, and rows follow it)`,
      };
      return { ...(cut ? { cut } : {}), stopped };
    }
  }
  return cut ? { cut } : {};
}

/** "10.244.1.69:53/TCP" then " (active)", " (active) (preferred)", or nothing (old releases). */
export function backendCell(
  address: string,
  rest: string,
  line: number,
  source: string,
): CiliumBackend {
  const a = parseAddress(address) ?? fail(source, line, `not a backend address: "${address}"`);
  // the printer closes each word it writes in parentheses: one left open is cut short
  if (/\([^)]*$/.test(rest)) fail(source, line, `a backend cut short: "${address}${rest}"`);
  const words = [...rest.matchAll(/\(([^)]*)\)/g)].map((w) => w[1]!);
  const state = words.map(backendState).find((s) => s !== undefined);
  return {
    ip: a.ip,
    port: a.port,
    ...(a.protocol ? { protocol: a.protocol } : {}),
    ...(state ? { state } : {}),
    ...(words.includes('preferred') ? { preferred: true } : {}),
    line,
  };
}
