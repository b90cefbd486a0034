// grep's context output (`grep -A N`, `-B N`, `-C N`): each match with the lines its window holds
// around it, windows that touch merged into a group, groups apart printed with a "--" line between
// them. The "--" lines are elisions (../../../elisions.ts); this says what they cannot: the last
// group's end (and the first group's start) may be where a window ended, not the end of the input,
// so the chain there may go on past what the paste holds.
import {
  droppedInPipe,
  grepContext,
  grepFilter,
  thenByText,
  windowText,
  type GrepContext,
  type GrepFilter,
} from '../../../paste/grep-context.js';
import type { Table } from '../table.js';

/** A chain whose rules a grep window may have cut: past its last line shown, or above its first
 * (`line`); `why` says so of the chain, `said` of the paste. */
export interface WindowCut {
  table: Table;
  chain: number;
  side: 'after' | 'before';
  line: number;
  why: string;
  said: string;
}

/** One stretch of a command's output, and what of grep's groups it holds. */
interface Region {
  /** The line that ended the output before it: a command typed, a fence, or a line of prose
   * (noteTyped, typed-commands.ts; not a "#" note among the rules, nor prose going on from another
   * tool's output, which leave the output open). */
  after: number;
  /** From a typed grep with context options, and the line it was typed on. */
  typed?: GrepContext & { line: number };
  /** From a typed grep without them: only the lines matching it are in the output. */
  filter?: GrepFilter & { line: number };
  start?: number; // its first non-blank line
  end?: number; // its last non-blank line so far
  separators: number[];
  declaredFirst: boolean; // a chain or table starts before its first rule: that chain starts there
  firstRule?: { table: Table; chain: number; line: number };
  // the last rule read, in fields of their own: a dump of 400,000 rules makes no object each
  lastTable?: Table | undefined;
  lastChain: number;
  lastLine: number;
}

const newRegion = (after: number): Region => ({
  after,
  separators: [],
  declaredFirst: false,
  lastChain: -1,
  lastLine: 0,
});

/** The output of a grep without context options: the lines from `start` to `end` are those of
 * a listing that matched it, each chain's other rules not in the paste. */
export interface Filtered extends GrepFilter {
  line: number;
  start: number;
  end: number;
}

/** Follows a paste's lines and says, of each command's output that is grep's context output,
 * which chains its windows may have cut. */
export class GrepWindows {
  private region = newRegion(0);
  readonly cuts: WindowCut[] = [];
  readonly filtered: Filtered[] = [];
  /** The lines each output ends after (a command typed, a fence, prose), in order. */
  readonly ends: number[] = [];

  /** A non-blank line of the paste (after it was read). */
  seen(line: number): void {
    if (line <= this.region.after) return;
    this.region.start ??= line;
    this.region.end = line;
  }

  /** A command typed, a fence or a line of prose (as `after` says): the output before it ends,
   * another may start. */
  typed(lineText: string | undefined, line: number): void {
    this.close();
    this.ends.push(line);
    const context = lineText === undefined ? undefined : grepContext(lineText);
    this.region = newRegion(line);
    if (context) this.region.typed = { ...context, line };
    const filter = lineText === undefined ? undefined : grepFilter(lineText);
    if (filter) this.region.filter = { ...filter, line };
  }

  /** grep's "--" between two groups. */
  separator(line: number): void {
    this.region.separators.push(line);
  }

  /** A line that starts or ends a chain (a declaration, a Chain line, *table, COMMIT): the
   * rules before it end their chain, and a chain starts after it. */
  boundary(): void {
    if (!this.region.firstRule) this.region.declaredFirst = true;
    this.region.lastTable = undefined;
  }

  rule(table: Table, chain: number, line: number): void {
    const r = this.region;
    r.firstRule ??= { table, chain, line };
    r.lastTable = table;
    r.lastChain = chain;
    r.lastLine = line;
  }

  /** The end of the paste. */
  finish(): void {
    this.close();
    this.region = newRegion(Infinity);
  }

  private close(): void {
    const r = this.region;
    const typed = r.typed;
    if (r.start === undefined || r.end === undefined) return;
    // a rule on the line a command is glued to ends the output before it there
    const end = Math.max(r.end, r.lastLine);
    if (r.filter && r.firstRule) this.filtered.push({ ...r.filter, start: r.start, end });
    if (!typed && r.separators.length === 0) return;
    const seps = r.separators;
    const firstEnd = (seps[0] ?? r.end + 1) - 1;
    const lastStart = (seps.at(-1) ?? r.start - 1) + 1;
    const alone = seps.length === 0; // one group: its edges may touch the input's
    // a window not cut by the input's ends holds `before` lines, the match and `after` lines
    const whole = typed ? typed.before + typed.after + 1 : 0;
    // a window shorter than that touches the input's end, unless a command after grep (`head`,
    // `tail`) may have dropped lines of it
    const full = (n: number, side: number) =>
      droppedInPipe(typed) || n >= (alone ? side + 1 : whole);
    const how = typed
      ? `grep's window (${windowText(typed)}, typed at line ${typed.line}${thenByText(typed)})`
      : `grep's window (its "--" lines say grep -A/-B/-C printed this; its size is not in the paste)`;
    const last = r.lastTable && { table: r.lastTable, chain: r.lastChain, line: r.lastLine };
    if (
      last &&
      last.line >= lastStart &&
      (!typed || (typed.after > 0 && full(r.end - lastStart + 1, typed.after)))
    )
      this.cuts.push({
        ...last,
        side: 'after',
        line: r.end,
        why: `${how} may end inside it, at line ${r.end}: more of its rules may follow past it`,
        said: `${how} may end at line ${r.end}: what grep left out past it is not in the paste`,
      });
    const first = r.firstRule;
    if (
      first &&
      !r.declaredFirst &&
      first.line <= firstEnd &&
      (!typed || (typed.before > 0 && full(firstEnd - r.start + 1, typed.before)))
    )
      this.cuts.push({
        ...first,
        side: 'before',
        line: r.start,
        why: `${how} may start inside it, at line ${r.start}: more of its rules may lie above`,
        said: `${how} may start at line ${r.start}: what grep left out above it is not in the paste`,
      });
  }
}

/** The fixed strings a grep's pattern matches: one, or any of its alternatives. */
const fixedOf = (f: GrepFilter): string[] | undefined =>
  f.fixed !== undefined ? [f.fixed] : f.anyOf;

/** The fixed pattern as grep matches it (any of its alternatives): a "." stands for any
 * character. */
const matcher = (f: Filtered): RegExp | undefined => {
  const fixed = fixedOf(f);
  return fixed === undefined
    ? undefined
    : new RegExp(
        fixed
          .map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '.' ? '.' : `\\${c}`)))
          .join('|'),
        f.ignoreCase ? 'i' : '',
      );
};

/** Whether the rules after a grep can be its output: each holds its pattern, where it is fixed.
 * Rules that do not were put there by hand (more than grep prints), not filtered by it. */
export function printedBy(t: Table, f: Filtered): boolean {
  const match = matcher(f);
  if (!match) return true;
  const within = (line: number | undefined) =>
    line !== undefined && line >= f.start && line <= f.end;
  for (let c = 0; c < t.chainCount; c++) {
    // its declaration as iptables-save (`:NAME POLICY`) or -S (`-N NAME`, `-P NAME POLICY`) prints it
    const name = t.nameOf(c);
    const policy = t.chainIndex.policyOf(c);
    const declared = [`:${name} ${policy ?? '-'}`, policy ? `-P ${name} ${policy}` : `-N ${name}`];
    if (within(t.chainLine(c)) && !declared.some((d) => match.test(d))) return false;
    for (const id of t.ruleIdsOf(c))
      if (within(t.line(id)) && !match.test(t.text(id))) return false;
  }
  return true;
}

/** kube-proxy's chains whose every rule it comments with the Service port's name, first. */
const NAMED_RULES = new Set(['KUBE-SVC', 'KUBE-SVL', 'KUBE-SEP']);

/** The chains of a table a grep's output shows part of: each with a rule or declaration in it,
 * unless the pattern is one every rule of the chain holds: its name where the rules are printed
 * with it (`-A CHAIN`, not -L's rows), or the Service port's name kube-proxy comments each rule of
 * a KUBE-SVC, KUBE-SVL or KUBE-SEP chain with. */
export function filteredChains(t: Table, f: Filtered, named: boolean): number[] {
  const within = (line: number | undefined) =>
    line !== undefined && line >= f.start && line <= f.end;
  const fixed = fixedOf(f)?.map((x) => (f.ignoreCase ? x.toLowerCase() : x));
  const holds = (s: string) =>
    fixed !== undefined && fixed.some((x) => (f.ignoreCase ? s.toLowerCase() : s).includes(x));
  const out: number[] = [];
  for (let c = 0; c < t.chainCount; c++) {
    const ids = t.ruleIdsOf(c);
    if (!within(t.chainLine(c)) && !ids.some((id) => within(t.line(id)))) continue;
    if (named && holds(`-A ${t.nameOf(c)}`)) continue;
    const commented =
      NAMED_RULES.has(t.kindOf(c) ?? '') &&
      ids.length > 0 &&
      ids.every((id) => holds(t.comment(id)?.split(' ')[0] ?? ''));
    if (!commented) out.push(c);
  }
  return out;
}
