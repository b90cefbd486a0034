// Rules copied through a page that typesets text (a blog engine's "smart punctuation"): each
// option's "--" became an en or em dash ("–comment", "—dport") and the comment's straight quotes
// curly ones ("“ns/svc:port”"). Read as the rule iptables printed, on the paste's own lines.

/** A rule line (iptables-save, -S, optionally with counters). */
const RULE = /^[ \t]*(?:\[\d+:\d+\] )?-[AI] \S+ /;

/** The rule line as iptables printed it, where a page typeset it: an option's "--" set as a dash
 * ("–comment"), and the quotes around a comment curled; a comment's own curly quotes or dashes,
 * inside the straight quotes iptables prints, are its text (a closing quote curled where no
 * straight one closes the string is the page's too). Undefined where the line is no rule or was
 * not typeset. */
function readBack(line: string): string | undefined {
  if (!RULE.test(line)) return undefined;
  const chars = [...line];
  let out = '';
  let open: 'straight' | 'curly' | undefined; // the quote the string the scan is in began with
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    const curly = ch === '“' || ch === '”';
    if (open === 'straight' && ch === '\\') {
      out += ch + (chars[i + 1] ?? ''); // \" is the comment's own quote
      i++;
    } else if (open === undefined) {
      if (ch === '"' || curly) open = ch === '"' ? 'straight' : 'curly';
      const dashed =
        (ch === '–' || ch === '—') &&
        /^\s?$/.test(chars[i - 1] ?? '') &&
        /[a-z]/.test(chars[i + 1] ?? '');
      out += curly ? '"' : dashed ? '--' : ch;
    } else if (
      open === 'curly'
        ? ch === '"' || curly
        : ch === '"' || (ch === '”' && !chars.slice(i + 1).includes('"'))
    ) {
      open = undefined;
      out += '"';
    } else out += ch;
  }
  return out === line ? undefined : out;
}

/** The lines that read as typeset rules, 1-based. */
export function typesetLines(head: string): number[] {
  const out: number[] = [];
  head.split('\n').forEach((l, i) => {
    if (readBack(l) !== undefined) out.push(i + 1);
  });
  return out;
}

/** The text with each typeset rule line's dashes and quotes read back; other lines kept. */
export function untypeset(text: string): string {
  return text
    .split('\n')
    .map((l) => readBack(l) ?? l)
    .join('\n');
}

export const typesetNote = (lines: number[]): string =>
  `${lines.length === 1 ? 'line' : 'lines'} ${lines.join(', ')}: rules typeset by a page ("–" for "--", curly quotes for '"'): read as iptables printed them`;
