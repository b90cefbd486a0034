// What a stage of a pipe after a listing keeps of it, said by what its tool does: grep and its
// kin (rg, ag, ack) print the lines their pattern matches, sed -n the lines its script prints,
// awk what its program prints, tail the last lines. A stage this does not know is said as
// printing what it prints, nothing more.

/** Tools that print the lines holding a match of their pattern (-v: the others). */
const LINE_MATCHERS = /^(?:[ef]?grep|rg|ag|ack|ack-grep)$/;

/** What `stage` (a command of a pipe, as typed) prints of its input, as the object of "only"
 * ("the lines matching its pattern"). */
export function stageKeeps(stage: string): string {
  const words = stage
    .trim()
    .replace(/^sudo\s+/, '')
    .split(/\s+/);
  const tool = words[0]!.replace(/^.*\//, '');
  const args = words.slice(1);
  if (LINE_MATCHERS.test(tool)) return matcherKeeps(args);
  if (tool === 'awk' || tool === 'gawk' || tool === 'mawk') return awkKeeps(stage);
  if (tool === 'sed') return sedKeeps(stage, args);
  if (tool === 'tail') return tailKeeps(args);
  if (tool === 'cut') return 'some fields of each line';
  if (tool === 'sort') return 'its lines, sorted (not in the order the listing printed them)';
  if (tool === 'uniq') return 'its lines, repeats next to each other printed once';
  return `what \`${tool}\` prints of its input`;
}

/** grep's (rg's ...) options that change which lines, or what of them, it prints: read up to
 * `--`; -e and -f (and -A, -B, -C, -m, -d, -D) take the next word, or the rest of their cluster. */
function matcherKeeps(args: string[]): string {
  const flags: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (!a.startsWith('-') || a === '-') continue;
    if (a.startsWith('--')) {
      flags.push(a.replace(/=.*$/, ''));
      if (/^--(?:regexp|file|after-context|before-context|context|max-count)$/.test(a)) i++;
      continue;
    }
    // a short cluster: letters up to the first that takes an argument
    const at = a.slice(1).search(/[efABCmdD]/);
    flags.push(at < 0 ? a : a.slice(0, at + 1));
    if (at >= 0 && at === a.length - 2) i++; // its argument is the next word
  }
  const has = (short: string, long: string) =>
    flags.some((f) => (!f.startsWith('--') && f.slice(1).includes(short)) || f === long);
  if (has('c', '--count')) return 'a count of the lines matching its pattern';
  if (has('l', '--files-with-matches')) return 'the names of files with a match';
  const which = has('v', '--invert-match') ? 'not matching' : 'matching';
  return has('o', '--only-matching')
    ? `the parts of lines ${which} its pattern`
    : `the lines ${which} its pattern`;
}

/** awk's program: a pattern alone (or with `{print}`, `{print $0}`) prints the lines it matches,
 * a `!` before it the others; any other program prints what it says. */
function awkKeeps(stage: string): string {
  const program = /'([^']*)'|"([^"]*)"/.exec(stage);
  const text = (program?.[1] ?? program?.[2] ?? '').trim();
  const m = /^(!?)\s*(?:\$0\s*~\s*)?\/.*\/\s*(?:\{\s*print(?:\s+\$0)?\s*;?\s*\})?$/.exec(text);
  if (m) return `the lines ${m[1] ? 'not matching' : 'matching'} its pattern`;
  return 'what its program prints of each line';
}

/** sed: with -n only what its script prints (`/re/p` the lines matching, `N,Mp` those lines);
 * without, every line its script does not delete or change. */
function sedKeeps(stage: string, args: string[]): string {
  const quiet = args.some((a) => /^-[a-zA-Z]*n[a-zA-Z]*$/.test(a) || a === '--quiet');
  const script = (
    /'([^']*)'|"([^"]*)"/
      .exec(stage)
      ?.slice(1)
      .find((s) => s !== undefined) ?? ''
  )
    .trim()
    .replace(/;$/, '');
  if (quiet) {
    const match = /^\/.*\/\s*p$/.test(script);
    if (match) return 'the lines matching its pattern';
    const range = /^(\d+)\s*,\s*(\d+|\$)\s*p$/.exec(script);
    if (range)
      return range[2] === '$'
        ? `its input from line ${range[1]}`
        : `lines ${range[1]} to ${range[2]} of its input`;
    return 'the lines its script prints';
  }
  if (/^\/.*\/\s*d$/.test(script)) return 'the lines not matching its pattern';
  return 'its lines as its script edits them (some may be dropped or changed)';
}

/** tail: the last N lines (10 by default) or bytes (-c), or everything from line (byte) N
 * (`-n +N`, `-c +N`); read up to `--`. */
function tailKeeps(args: string[]): string {
  let n = '10';
  let unit = 'line';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    const m = /^-(?:([nc])(\+?\d+)?|(\d+))$/.exec(a) ?? /^--(lines|bytes)(?:=(\+?\d+))?$/.exec(a);
    if (!m) continue;
    const bytes = m[1] === 'c' || m[1] === 'bytes';
    if (m[3] !== undefined) [n, unit] = [m[3], 'line'];
    else {
      const v = m[2] ?? args[++i];
      if (v !== undefined && /^\+?\d+$/.test(v)) [n, unit] = [v, bytes ? 'byte' : 'line'];
    }
  }
  return n.startsWith('+')
    ? `its input from ${unit} ${n.slice(1)}`
    : `the last ${n} ${unit}s of its input`;
}
