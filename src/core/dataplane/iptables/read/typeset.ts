// Rules copied through a page that typesets text (a blog engine's "smart punctuation"): each
// option's "--" became an en or em dash ("–comment", "—dport") and the comment's straight quotes
// curly ones ("“ns/svc:port”"). Read as the rule iptables printed, on the paste's own lines.

/** A rule line (iptables-save, -S, optionally with counters). */
const RULE = /^[ \t]*(?:\[\d+:\d+\] )?-[AI] \S+ /;
/** An option whose "--" a page set as a dash: "–comment", "—dport". */
const DASHED = /(^|\s)[–—](?=[a-z])/g;

/** The rule line as iptables printed it, where a page typeset it: its dashed options and the
 * curly quotes that stand where iptables prints straight ones (outside a straight-quoted string:
 * a comment's own curly quotes, inside its straight ones, are its text); undefined where the line
 * is no rule or was not typeset. */
function readBack(line: string): string | undefined {
  if (!RULE.test(line)) return undefined;
  let out = '';
  let quoted = false; // inside a straight-quoted string
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    out += !quoted && (ch === '“' || ch === '”') ? '"' : ch;
  }
  out = out.replace(DASHED, '$1--');
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
