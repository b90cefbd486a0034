// The lines only iptables prints, for another reader to tell its output from iptables' beside it:
// its rules (iptables-save, -S, -save -c's counters before a rule) and its -L view's Chain lines
// and column headers (with -v's counters), after a quote's or a hand-drawn tree's "> " marks, or
// after a prefix the parser strips (grep -n / -H, a prompt, a log's: classify.ts, their one home).
import { classifyLine } from './classify.js';
import { CHAIN, HEADER } from '../list-view/columns.js';

/** A rule or declaration of iptables-save or iptables -S, `[p:b]` counters perhaps before it. */
const RULE_LINE =
  /^(?:[>+|]\s*)*(?:(?:\[\d+:\d+\] )?-[AINP] [\w-]+(?: |$)|:[\w-]+ \S+ \[\d+:\d+\]$|\*(?:nat|filter|mangle|raw|security)$)/;

/** The rule the parser reads after a prefix it strips ("12:-A ...", "dump.txt:-A ..."), as its
 * classifyLine finds it; undefined where the line has none. */
function afterPrefix(line: string): string | undefined {
  if (!/\S/.test(line)) return undefined;
  const c = classifyLine(line);
  return c.kind === 'prefix' ? line.slice(c.rest) : undefined;
}

/** Whether a line is a rule or declaration as iptables-save or iptables -S prints it, perhaps
 * after a prefix the parser strips. */
export const isIptablesRuleLine = (line: string): boolean => {
  if (RULE_LINE.test(line)) return true;
  const rest = afterPrefix(line);
  return rest !== undefined && RULE_LINE.test(rest);
};

/** Whether a line is one only iptables prints: a rule, or an -L view's Chain line or header. */
export const isIptablesLine = (line: string): boolean => {
  const bare = line.replace(/^(?:[>+|]\s*)*/, '');
  return isIptablesRuleLine(line) || CHAIN.test(bare) || HEADER.test(bare);
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
