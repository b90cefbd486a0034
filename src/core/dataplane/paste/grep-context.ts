// The context a grep typed on a command line prints (`grep -A N`, `-B N`, `-C N`): every reader
// of a listing piped through grep (iptables', ipvsadm's, nft's) asks it how far a window reaches.
import { stageKeeps } from './filter-stage.js';

/** The context a grep typed on a command line prints: lines after and before each match. */
export interface GrepContext {
  after: number;
  before: number;
  /** A command after the grep in the pipe that may drop lines of its output (`head`, `tail`,
   * `sed`, `awk`, `cut`, another grep ...): a window shorter than the options say may be its
   * doing, not the input's end. */
  thenBy?: string;
  /** A command before the grep in the pipe that may drop lines of its input (`ipvsadm -Ln | head
   * -5 | grep -A3 X`): grep's input may end before the listing does, so a window ending with
   * it is no sign the listing ended there. */
  firstBy?: string;
}

/** Whether a command in the pipe, before or after the grep, may have dropped lines of its
 * windows: a window shorter than its options say is then no sign of the input's end. */
export const droppedInPipe = (c: GrepContext | null | undefined): boolean =>
  !!(c?.thenBy ?? c?.firstBy);

/** Commands that pass every line of their input on. */
const KEEPS_LINES = /^(?:cat|less|more|tee|nl|column)$/;

/** The context options of the last grep of a command line that has them (`-A 3`, `-B2`, `-nC 1`, `-3`,
 * `--after-context=3`), and what follows it in the pipe; null for greps without them, undefined
 * for a line without grep. */
export function grepContext(line: string): GrepContext | null | undefined {
  const greps = [...line.matchAll(/(?:^|[\s|;&(`])[ef]?grep((?:\s+[^|;&)`]*)?)/g)];
  if (greps.length === 0) return undefined;
  // the windows are the last grep's with context options; a grep after it only drops lines
  for (const grep of greps.reverse()) {
    const context = options(grep[1] ?? '');
    if (!context) continue;
    // the pipe's stages after it, up to the command line's end or its next command
    const after = line.slice(grep.index + grep[0].length).split(/[;&)`]/)[0]!;
    const thenBy = dropping(after.split('|').slice(1));
    // the stages before it, from its command line's start or its command's: the first prints
    // the listing, the rest filter it (a grep without context options too)
    const before = line
      .slice(0, grep.index)
      .split(/[;&(`]/)
      .at(-1)!;
    const firstBy = dropping(before.split('|').slice(1));
    return { ...context, ...(thenBy ? { thenBy } : {}), ...(firstBy ? { firstBy } : {}) };
  }
  return null;
}

/** The first of a pipe's stages that may drop lines. */
const dropping = (stages: string[]): string | undefined =>
  stages
    .map((stage) => /^\s*(?:sudo\s+)?(\S+)/.exec(stage)?.[1]?.replace(/^.*\//, ''))
    .find((command) => command !== undefined && !KEEPS_LINES.test(command));

/** A grep's context options, if it has any. */
function options(args: string): GrepContext | undefined {
  const words = args.trim().split(/\s+/);
  const context: GrepContext = { after: 0, before: 0 };
  let said = false;
  const set = (which: string, n: number) => {
    said = true;
    if (which !== 'B') context.after = n;
    if (which !== 'A') context.before = n;
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const short = /^-[a-zA-Z]*?([ABC])(\d*)$/.exec(w);
    const long = /^--(after|before)?-?context(?:=(\d+))?$/.exec(w);
    if (short) set(short[1]!, Number(short[2] || words[++i]));
    else if (long) set(long[1] ? long[1][0]!.toUpperCase() : 'C', Number(long[2] ?? words[++i]));
    else if (/^-\d+$/.test(w)) set('C', Number(w.slice(1)));
  }
  return said && Number.isFinite(context.after + context.before) ? context : undefined;
}

/** A window's size as grep's options say it. */
export const windowText = (c: GrepContext) =>
  c.after === c.before
    ? `-C ${c.after}`
    : [c.before > 0 ? `-B ${c.before}` : '', c.after > 0 ? `-A ${c.after}` : '']
        .filter(Boolean)
        .join(' ');

/** What a command after the grep may have done to its windows, said after them ("" if none). */
export const thenByText = (c: GrepContext | null | undefined) =>
  [
    c?.firstBy ? `; \`${c.firstBy}\` before grep in the pipe may drop lines` : '',
    c?.thenBy ? `; \`${c.thenBy}\` after grep in the pipe may drop lines` : '',
  ].join('');

/** What the filtering stages of a pipe print, one after another. */
const keepsOf = (stages: string[]) =>
  stages.length === 1
    ? stageKeeps(stages[0]!)
    : `what each stage keeps: ${stages.map((s) => `\`${/^\s*(?:sudo\s+)?(\S+)/.exec(s)![1]!.replace(/^.*\//, '')}\` ${stageKeeps(s)}`).join('; ')}`;

/** A grep without context options on a command line: it prints only the lines that match, so
 * every listing piped through it holds part of each chain it shows. */
export interface GrepFilter {
  /** The grep, as typed (`grep -i nginx`). */
  command: string;
  /** What the pipe's filtering stages print of the listing, as the object of "only" ("the lines
   * matching its pattern", "what its program prints of each line"). */
  keeps: string;
  /** The pattern as a fixed string where grep keeps exactly the lines holding it (one grep, no
   * -v/-x, no regex operator); undefined where which lines it kept cannot be said so. */
  fixed?: string;
  /** The fixed strings of a pattern of alternatives (`grep -E 'a|b'`, `egrep`, `grep 'a\\|b'`,
   * `grep -e a -e b`), where grep keeps exactly the lines holding any one of them; undefined
   * where the pattern is one (`fixed`) or not of fixed strings. */
  anyOf?: string[];
  ignoreCase: boolean;
}

/** Options that change which lines grep prints from "those holding the pattern". */
const NOT_HOLDING = /^-[a-zA-Z]*[vxfoclLe]|^--(?:invert|line-regexp|file|only|count|files|regexp)/;
/** Regex operators (basic and extended): a pattern with one matches more than its text. */
const OPERATOR = /[[\]*+?^$(){}|]|\\[^-.]/;

/** A command line split at the characters in `at` that stand outside quotes. */
function splitOutside(line: string, at: string): string[] {
  const parts: string[] = [];
  let quote: string | undefined;
  let part = '';
  for (const c of line) {
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (at.includes(c)) {
      parts.push(part);
      part = '';
      continue;
    }
    part += c;
  }
  return [...parts, part];
}

/** The words of a stage: quoted ones without their quotes. */
const stageWords = (args: string) =>
  [...args.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((w) => ({
    text: w[1] ?? w[2] ?? w[3]!,
    option: w[3]?.startsWith('-') ?? false,
  }));

/** Patterns no line iptables-save writes for a rule matches (comments, blank lines, COMMIT, the
 * table and chain declarations): `grep -v` of them removes no rule. */
const NO_RULE_LINE = /^(?:\^#.*|#.*|\^\$|\^?COMMIT\$?|\^\\\*.*|\^\[\*\].*|\^:.*)$/;

/** A `grep -v` whose patterns no rule line matches: it keeps every rule. */
function keepsRules(stage: string): boolean {
  const m = /^\s*(?:sudo\s+)?(?:\S*\/)?[ef]?grep(\s.*)?$/.exec(stage);
  if (!m) return false;
  const words = stageWords(m[1] ?? '');
  let invert = false;
  const patterns: string[] = [];
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!;
    if (w.option && w.text === '-e') patterns.push(words[++k]?.text ?? '');
    else if (w.option && /^-[vE]+$/.test(w.text)) invert ||= w.text.includes('v');
    else if (w.option && w.text === '--invert-match') invert = true;
    else if (w.option) return false;
    else patterns.push(w.text);
  }
  return invert && patterns.length > 0 && patterns.every((p) => NO_RULE_LINE.test(p));
}

/** The filter a command line's pipe applies after the listing command, where its greps have no
 * context options: a grep, or any stage not known to keep every line (`rg X`, `awk '/X/'`);
 * undefined for a line whose pipe drops no rule or with context options (see grepContext). */
/** `head` prints the first lines as they are: it may cut the output's end (the paste's end
 * says so), it picks no line by a pattern. */
const HEAD = /^\s*(?:sudo\s+)?(?:\S*\/)?head(?:\s|$)/;

export function grepFilter(line: string): GrepFilter | undefined {
  if (grepContext(line)) return undefined;
  const command = splitOutside(line, ';&(`)')
    .filter((c) => splitOutside(c, '|').length > 1)
    .at(-1);
  if (command === undefined) return undefined;
  const filters = splitOutside(command, '|')
    .slice(1)
    .filter(
      (stage) =>
        stage.trim() !== '' &&
        dropping([stage]) !== undefined &&
        !keepsRules(stage) &&
        !HEAD.test(stage),
    );
  if (filters.length === 0) return undefined;
  const grep = /^\s*(?:sudo\s+)?(?:\S*\/)?([ef]?)grep(\s.*)?$/.exec(filters[0]!);
  // a shell comment after it (`grep nginx # no rows`) is not its argument
  const args = (grep?.[2] ?? '').replace(/(?:^|\s)#.*/, '');
  const stages = filters.map((f) => f.replace(/(?:^|\s)#.*/, '').trim());
  if (!grep || filters.length > 1)
    return { command: stages.join(' | '), keeps: keepsOf(stages), ignoreCase: false };
  const words = stageWords(args);
  // `-e PATTERN` names the pattern, which may start with "-" (`grep -e '-A'`)
  const afterE = (k: number) => k > 0 && words[k - 1]!.option && words[k - 1]!.text === '-e';
  const patterns = words.filter((_, k) => afterE(k));
  const options = words.filter((w, k) => w.option && !afterE(k));
  const pattern = patterns.length > 0 ? patterns[0] : words.find((w) => !w.option);
  const text = pattern?.text;
  const fixedForm = grep![1] === 'f' || options.some((o) => /^-[a-zA-Z]*F|^--fixed/.test(o.text));
  const extended = grep![1] === 'e' || options.some((o) => /^-[a-zA-Z]*E|^--extended/.test(o.text));
  // a quote left open (`grep -E 'a|b` cut): the pattern goes on past what was read
  const split = /['"]/.test(args.replace(/'[^']*'|"[^"]*"/g, ''));
  const holding =
    !split &&
    text !== undefined &&
    text !== '' &&
    !options.some((o) => o.text !== '-e' && NOT_HOLDING.test(o.text));
  const literal = holding && patterns.length <= 1 && (fixedForm || !OPERATOR.test(text));
  // alternatives each of fixed text: grep keeps the lines holding any one of them
  const alternatives =
    holding && !literal
      ? anyOf(patterns.length > 0 ? patterns.map((p) => p.text) : [text!], fixedForm, extended)
      : undefined;
  return {
    command: `${grep![1]}grep${args}`.trim(),
    keeps: stageKeeps(stages[0]!),
    ignoreCase: options.some((o) => /^-[a-zA-Z]*i|^--ignore-case/.test(o.text)),
    ...(literal ? { fixed: fixedForm ? text : unescaped(text) } : {}),
    ...(alternatives ? { anyOf: alternatives } : {}),
  };
}

/** A fixed pattern as grep matches it: `\-` and `\.` are the characters themselves. */
const unescaped = (text: string) => text.replace(/\\([-.])/g, '$1');

/** The fixed strings a grep's patterns match any one of: each `-e` pattern, split at the
 * alternation of its syntax (`|` extended, `\|` basic, GNU's); undefined where one is not
 * fixed text (another regex operator) or empty. */
function anyOf(patterns: string[], fixedForm: boolean, extended: boolean): string[] | undefined {
  const out: string[] = [];
  for (const p of patterns) {
    const parts = fixedForm ? [p] : extended ? p.split(/(?<!\\)\|/) : p.split('\\|');
    for (const part of parts) {
      if (part === '' || (!fixedForm && OPERATOR.test(part))) return undefined;
      out.push(fixedForm ? part : unescaped(part));
    }
  }
  return out.length > 1 ? out : undefined;
}
