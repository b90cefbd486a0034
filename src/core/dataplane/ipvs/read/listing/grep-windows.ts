// ipvsadm's listing piped through grep: grep prints the lines that match its pattern and, with
// -A/-B/-C, a window of lines around each; the real servers of a virtual server it printed may go
// on past the window's end (or, without -A, be left out whole). The reader says of each virtual
// server grep may have cut so that no share and no "no endpoints" is stated of it; its "--" lines
// are elisions (../../../paste/elisions.ts), which say the same of the virtual server above each,
// and say grep printed the output where no grep is typed.
import {
  droppedInPipe,
  grepContext,
  thenByText,
  windowText,
  type GrepContext,
} from '../../../paste/grep-context.js';
import type { IpvsService } from '../listing.js';

/** One command's output: from the line after `line` (0: the paste's start) up to the next
 * prompt, command or prose line; `context` where the command pipes through grep (null for a grep
 * without -A/-B/-C). */
export interface GrepRegion {
  line: number;
  context?: GrepContext | null;
}

/** The output a command typed at `line` starts (a prompt, a command or prose line). */
export const regionAt = (text: string, line: number): GrepRegion => {
  const context = grepContext(text);
  return context === undefined ? { line } : { line, context };
};

/** Says, of the virtual servers read in `region` (ending before line `until`), which grep may
 * have cut: each one where grep printed only matching lines (or those and the lines before
 * them), else the last one read where the last window may end inside its real servers. */
export function closeRegion(
  region: GrepRegion,
  until: number,
  lines: string[],
  services: IpvsService[],
  current: IpvsService | undefined,
): void {
  const shown: number[] = [];
  for (let no = region.line + 1; no < until; no++) if (lines[no - 1]!.trim()) shown.push(no);
  if (shown.length === 0) return;
  const { context } = region;
  const typed = context === undefined ? '' : `, typed at line ${region.line}`;
  if (context === null || context?.after === 0) {
    const how = `grep (${[context ? windowText(context) : '', typed.slice(2)].filter(Boolean).join(', ')})`;
    for (const vs of services)
      if (vs.line > region.line && vs.line < until)
        vs.partial ??= `${how} printed only the lines matching its pattern${context ? ' and those before them' : ''}: more of its real servers may be left out`;
    return;
  }
  // grep's own "--" between groups; another elision ("...") is the author's
  const separators = shown.filter((no) => lines[no - 1]!.trim() === '--');
  if (!context && separators.length === 0) return;
  const [start, end] = [shown[0]!, shown.at(-1)!];
  const lastStart = (separators.at(-1) ?? start - 1) + 1;
  // a window not cut by the input's ends holds `before` lines, the match and `after` lines
  const alone = separators.length === 0;
  const whole = context ? context.before + context.after + 1 : 0;
  if (!current || current.line < lastStart) return;
  // a window shorter than that ends where the input did, unless a command in the pipe (`head`
  // after grep or before it) may have dropped its lines
  if (
    context &&
    !droppedInPipe(context) &&
    end - lastStart + 1 < (alone ? context.after + 1 : whole)
  )
    return;
  const how = context
    ? `grep's window (${windowText(context)}${typed}${thenByText(context)})`
    : `grep's window (its "--" lines say grep -A/-B/-C printed this; its size is not in the paste)`;
  current.partial ??= `${how} may end inside its real servers, at line ${end}: more may follow past it`;
}
