// Rows of an `iptables -L` listing in a paste that holds no Chain line (`iptables -nt nat -L -v |
// grep 30011`): iptables' printer is fixed, so the columns a row holds are those the -L typed
// above it asks for (-v, --line-numbers), or those its column header names; where neither is in
// the paste, those the rows' own shape shows, when one set of columns reads every such row.
import { CHAIN, headerColumns, type Columns } from './columns.js';
import { columnsSaid, typedList } from './command.js';
import { lineList, type ListViewNote } from './notes.js';
import { ruleOf } from './row.js';

/** A line as -L prints a row: up to three counts (number, packets, bytes), a target (or none),
 * a protocol and the fragment column. */
const ROW =
  /^[ \t]*(?:\d+[KMGT]? +){0,3}[\w-]+ +!?(?:all|tcp|udp|sctp|icmp|ipv6-icmp|\d+) +(?:--|-f|!f) +/;
/** A dump's own lines: such a paste is iptables-save's or -S's, its -L rows among them not. */
const DUMP = /^(?:\*[a-z]+$|:KUBE-|-[AN] )/m;

/** The column sets -L prints, each tried on a row whose -L is not in the paste. */
const ALL: Columns[] = [
  { num: true, counters: true, interfaces: true },
  { num: false, counters: true, interfaces: true },
  { num: true, counters: false, interfaces: false },
  { num: false, counters: false, interfaces: false },
];

/** A row in `cols` as iptables' printer lays it out: its counts, a target (or none), the
 * protocol, the fragment column, the interfaces where -v, then source and destination. */
const shape = (cols: Columns) =>
  new RegExp(
    `^[ \\t]*${cols.num ? '\\d+ +' : ''}${cols.counters ? '\\d+[KMGT]? +\\d+[KMGT]? +' : ''}(?:[\\w-]+ +)?!?(?:all|tcp|udp|sctp|icmp|ipv6-icmp|\\d+) +(?:--|-f|!f) +${cols.interfaces ? '\\S+ +\\S+ +' : ''}\\S+ +\\S+(?:\\s|$)`,
  );

export interface BareRows {
  /** The columns of the row at each 0-based line, where it is one. */
  at: (i: number) => Columns | undefined;
  /** The chain the typed -L above the row at each 0-based line names, with that line (1-based):
   * the chain iptables printed it from. */
  chainAt: (i: number) => { chain: string; line: number } | undefined;
  /** Where the columns were taken from, said. */
  notes: ListViewNote[];
}

/** The rows of `lines` (a paste holding no Chain line) and their columns; undefined where no line
 * reads as a row in the columns that hold for it. */
export function bareRows(lines: string[]): BareRows | undefined {
  if (lines.some((l) => CHAIN.test(l)) || DUMP.test(lines.join('\n'))) return undefined;
  const cols = new Map<number, Columns>();
  const chains = new Map<number, { chain: string; line: number }>();
  const notes: ListViewNote[] = [];
  // the -L (or column header) each row is under, and the rows under none
  let under:
    | { cols: Columns; chain?: string; typed?: number; line: number; said: string; rows: number[] }
    | undefined;
  const said: NonNullable<typeof under>[] = [];
  const shapeless: number[] = [];
  lines.forEach((raw, i) => {
    const l = raw.replace(/\r$/, '');
    const header = headerColumns(l);
    const typed = header ? undefined : typedList(l);
    if (header || typed) {
      under = {
        cols: (header ?? typed?.cols)!,
        // -L of one chain prints one column header: one under it is that chain's too
        ...(typed?.chain !== undefined
          ? { chain: typed.chain, typed: i + 1 }
          : header && under?.chain !== undefined
            ? { chain: under.chain, typed: under.typed! }
            : {}),
        line: i + 1,
        said: header ? 'its column header' : `the \`iptables -L\` typed there`,
        rows: [],
      };
      said.push(under);
      return;
    }
    if (!ROW.test(l)) return;
    if (under) {
      const rule = shape(under.cols).test(l) ? ruleOf(l, 'X', under.cols, false) : undefined;
      if (rule && !('cut' in rule)) {
        cols.set(i, under.cols);
        if (under.chain !== undefined) chains.set(i, { chain: under.chain, line: under.typed! });
        under.rows.push(i + 1);
      }
    } else shapeless.push(i);
  });
  for (const u of said)
    if (u.rows.length > 0)
      notes.push({
        line: u.rows[0]!,
        message: `${lineList(u.rows)}: in the columns ${u.said} (line ${u.line}) prints (${columnsSaid(u.cols)})`,
        lines: u.rows,
      });
  // rows under no -L: the one set of columns that reads them all, as iptables' printer is fixed
  if (shapeless.length > 0) {
    const fits = ALL.filter((c) =>
      shapeless.every((i) => {
        const l = lines[i]!.replace(/\r$/, '');
        const rule = shape(c).test(l) ? ruleOf(l, 'X', c, false) : undefined;
        return rule !== undefined && !('cut' in rule);
      }),
    );
    if (fits.length === 1) {
      for (const i of shapeless) cols.set(i, fits[0]!);
      const rows = shapeless.map((i) => i + 1);
      notes.push({
        line: rows[0]!,
        message: `${lineList(rows)}: no \`iptables -L\` or column header above ${rows.length === 1 ? 'it' : 'them'} in the paste: read in the columns ${rows.length === 1 ? 'its' : 'their'} shape shows, the only ones -L prints that read ${rows.length === 1 ? 'it' : 'them all'} (${columnsSaid(fits[0]!)})`,
        lines: rows,
      });
    }
  }
  if (cols.size === 0) return undefined;
  notes.sort((a, b) => a.line - b.line);
  return { at: (i) => cols.get(i), chainAt: (i) => chains.get(i), notes };
}
