// The context a grep typed on a command line prints (`grep -A N`, `-B N`, `-C N`): every reader
// of a listing piped through grep (iptables', ipvsadm's, nft's) asks it how far a window reaches.

/** The context a grep typed on a command line prints: lines after and before each match. */
export interface GrepContext {
  after: number;
  before: number;
}

/** The context options of the last grep of a command line (`-A 3`, `-B2`, `-nC 1`, `-3`,
 * `--after-context=3`); null for a grep without them, undefined for a line without grep. */
export function grepContext(line: string): GrepContext | null | undefined {
  const greps = [...line.matchAll(/(?:^|[\s|;&(`])[ef]?grep((?:\s+[^|;&)`]*)?)/g)];
  const args = greps.at(-1)?.[1];
  if (args === undefined) return undefined;
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
  return said && Number.isFinite(context.after + context.before) ? context : null;
}

/** A window's size as grep's options say it. */
export const windowText = (c: GrepContext) =>
  c.after === c.before
    ? `-C ${c.after}`
    : [c.before > 0 ? `-B ${c.before}` : '', c.after > 0 ? `-A ${c.after}` : '']
        .filter(Boolean)
        .join(' ');
