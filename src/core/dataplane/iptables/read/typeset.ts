// Rules copied through a page that typesets text (a blog engine's "smart punctuation"): each
// option's "--" became an en or em dash ("–comment", "—dport") and the comment's straight quotes
// curly ones ("“ns/svc:port”"). Read as the rule iptables printed, on the paste's own lines.

/** A rule line (iptables-save, -S, optionally with counters) holding a typeset option or quote. */
const TYPESET_RULE = /^[ \t]*(?:\[\d+:\d+\] )?-[AI] \S+ .*(?:\s[–—][a-z]|[“”])/;

/** The lines that read as typeset rules, 1-based. */
export function typesetLines(head: string): number[] {
  const out: number[] = [];
  head.split('\n').forEach((l, i) => {
    if (TYPESET_RULE.test(l)) out.push(i + 1);
  });
  return out;
}

/** The text with each typeset rule line's dashes and quotes read back; other lines kept. */
export function untypeset(text: string): string {
  return text
    .split('\n')
    .map((l) =>
      TYPESET_RULE.test(l) ? l.replace(/(^|\s)[–—](?=[a-z])/g, '$1--').replace(/[“”]/g, '"') : l,
    )
    .join('\n');
}

export const typesetNote = (lines: number[]): string =>
  `${lines.length === 1 ? 'line' : 'lines'} ${lines.join(', ')}: rules typeset by a page ("–" for "--", curly quotes for '"'): read as iptables printed them`;
