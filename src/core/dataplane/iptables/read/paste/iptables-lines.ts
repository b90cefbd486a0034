// The lines only iptables prints, for another reader to tell its output from iptables' beside it:
// its rules (iptables-save, -S, -save -c's counters before a rule) and its -L view's Chain lines
// and column headers (with -v's counters), after a quote's or a hand-drawn tree's "> " marks.
import { CHAIN, HEADER } from './list-view/columns.js';

/** A rule or declaration of iptables-save or iptables -S, `[p:b]` counters perhaps before it. */
const RULE_LINE =
  /^(?:[>+|]\s*)*(?:(?:\[\d+:\d+\] )?-[AINP] [\w-]+(?: |$)|:[\w-]+ \S+ \[\d+:\d+\]$|\*(?:nat|filter|mangle|raw|security)$)/;

/** Whether a line is a rule or declaration as iptables-save or iptables -S prints it. */
export const isIptablesRuleLine = (line: string): boolean => RULE_LINE.test(line);

/** Whether a line is one only iptables prints: a rule, or an -L view's Chain line or header. */
export const isIptablesLine = (line: string): boolean => {
  const bare = line.replace(/^(?:[>+|]\s*)*/, '');
  return RULE_LINE.test(line) || CHAIN.test(bare) || HEADER.test(bare);
};

/** Whether any line of the text is one only iptables prints. */
export function holdsIptablesLine(text: string): boolean {
  for (let at = 0; at < text.length;) {
    const end = text.indexOf('\n', at);
    const stop = end < 0 ? text.length : end;
    if (isIptablesLine(text.slice(at, stop).replace(/\r$/, '').trim())) return true;
    at = stop + 1;
  }
  return false;
}
