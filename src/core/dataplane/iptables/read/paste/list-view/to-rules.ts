// `iptables -L` as people paste it (`-t nat`, `-n`, `-v`, `-x`, `--line-numbers`, one chain or
// all, several listings one after another), rewritten line for line into `iptables -S` form so that
// the one rules parser reads it and its line numbers stay the paste's: a Chain header becomes -N
// (a built-in chain's -P with its policy), each rule line -A with the matches -L printed (iptables'
// own print functions for each match and target). What -L printed and kdebug does not read — a
// name where -n would print an address, a port name it does not know, a match it does not model —
// stays on the rule as `-m unread --as "…"`, so no rule reads as matching more than it does.
import { CHAIN, cutHead, HEADER, headerColumns, type Columns } from './columns.js';
import { bareRows } from './bare.js';
import { headless } from './headless.js';
import { lineList, type ListViewNote } from './notes.js';
import { ruleOf, runOn } from './row.js';
import { typedList } from './command.js';
import { classifyLine } from '../other-lines/classify.js';

/** A paste holding an `iptables -L` listing: a Chain header, then its column header (which a
 * page may break after its first words). */
export function isListView(head: string): boolean {
  return listedWithChain(head) || bareRows(head.split('\n')) !== undefined;
}

function listedWithChain(head: string): boolean {
  return /(?:^|\n)[ \t]*Chain \S+ \((?:policy \w+[^)]*|\d+ references)\)[ \t]*\r?\n[ \t]*(?:num +)?(?:pkts +bytes)?\s*target +prot +opt\b/.test(
    head,
  );
}

export interface ListViewRules {
  /** The same lines, each -L line replaced by its -S form (others kept as they were). */
  text: string;
  /** The lines where another listing starts (a second `iptables -L`, of another table). */
  listingStarts: number[];
  /** Rule lines that hold only the columns before the target, the rest of their row not after
   * them: a rule the paste does not hold, so its chain is not whole. */
  broken: number[];
  /** What the view leaves out, one sentence each, at the line it is about. */
  notes: ListViewNote[];
  /** Chains read from rows above the paste's first Chain line, by what kube-proxy writes in
   * them: their first rules lie above the paste. */
  above: string[];
  /** Rows of a paste with no Chain line whose chain nothing names: not read. */
  chainless: number[];
  /** The line the paste cuts: what -L printed of it before the cut, and its text; `head` where
   * the cut is in a Chain line or column header, with the chain whose header it is. */
  cut?: ListViewCut;
}

export interface ListViewCut {
  line: number;
  reason: string;
  text: string;
  /** A cut in or after a Chain line or column header: the chain whose rules lie past it; `read`
   * where the line is whole and read, and the paste ends after it. */
  head?: { chain: string | undefined; read?: true };
}

/** Rows of a paste with no Chain line. */
const NO_CHAIN = {
  rows: 'rows of an `iptables -L` listing without their Chain line (the paste holds none)',
  rest: 'its other rules not in the paste',
};

/** A markdown fence: the quoted block's first or last line. */
const FENCE = /^[ \t]*(?:```|~~~)/;
/** An arrow an author draws before a row to point at it: two dashes or equals signs or more. */
const ARROW = /^[ \t]*(?:-{2,}|={2,})>[ \t]+/;
/** Rows after a command typed, under no Chain line of their own. */
const AFTER_COMMAND = {
  rows: 'rows after a command typed, under no Chain line of their own (another output, not the chain above)',
  rest: 'its other rules not in the paste',
};

/** A line typed at a shell: a prompt and its command, or the command alone. */
const typedCommand = (line: string) => {
  const kind = classifyLine(line.trim()).kind;
  return kind === 'prompt' || kind === 'command';
};

/** The built-in chains in the order -L lists them. */
const BUILT_IN = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

export function listViewToRules(text: string): ListViewRules {
  const lines = text.split('\n');
  let columns: Columns | undefined;
  let chain: string | undefined;
  let seen = new Set<string>();
  let lastBuiltIn = -1;
  const listingStarts: number[] = [];
  const unread: number[] = [];
  const broken: number[] = [];
  // a row (or column header) a page or an editor broke after its first columns: the next line
  // is read with them, and the lines joined so are said
  let carried: string | undefined;
  const joined: number[] = [];
  const joinedHeads: number[] = [];
  let noInterfaces: number | undefined; // the first column header without in/out columns
  const arrows: number[] = [];
  const placeholders: number[] = []; // rows with a template's {{ placeholder }} for a value
  // -L prints a column header once under each Chain line: another under the same chain is the
  // next chain's, its Chain line left out, so the rows under it are no chain's the paste names
  let chainless: number | undefined;
  const chainlessRows: number[] = [];
  // a command typed below a chain's rows ends its listing: the rows after it, under no Chain line
  // of their own (`$ iptables -t nat -nvL KUBE-SERVICES | grep VIP`), are another output's, read
  // as rows whose Chain line is not in the paste (headless.ts), in the columns it prints
  let typedAfter: { line: number; cols: Columns; chain?: string } | undefined;
  const afterCommand = new Map<number, { line: number; cols: Columns; chain?: string }>();
  // the paste's last line with text: a rule -L printed only part of is where the paste was cut
  let lastText = lines.length - 1;
  while (lastText > 0 && lines[lastText]!.trim() === '') lastText--;
  const notes: ListViewNote[] = [];
  // rules above the first Chain line belong to a chain whose Chain line the paste does not hold
  const first = lines.findIndex((l) => CHAIN.test(l));
  const firstHeader = lines.find((l) => HEADER.test(l));
  // rows of a paste that holds no Chain line (`iptables -L -v | grep PORT`): in the columns the -L
  // typed above them prints, else those their shape shows
  const bare = first < 0 ? bareRows(lines) : undefined;
  const above = bare
    ? headless(lines, bare.at, NO_CHAIN, bare.chainAt, lastText)
    : first > 0 && firstHeader
      ? headless(lines.slice(0, first), () => headerColumns(firstHeader))
      : undefined;
  if (bare) notes.push(...bare.notes);
  if (above?.note) notes.push(above.note);
  let cut: ListViewRules['cut'] = above?.cut;
  // a listing without -n: names where addresses would be, from this line
  let plain = above?.plain;
  const out = lines.map((raw, i) => {
    const before = above?.lines.get(i + 1);
    if (before !== undefined) return before;
    const line = carried ?? raw.replace(/\r$/, '');
    carried = undefined;
    const next = i < lastText ? lines[i + 1]!.replace(/\r$/, '').trim() : '';
    const withNext = `${line.trimEnd()} ${next}`;
    const c = CHAIN.exec(line);
    if (c) typedAfter = undefined;
    if (c) {
      const name = c[1]!;
      const builtIn = BUILT_IN.indexOf(name);
      // -L lists the built-in chains first, in their order: one out of it, or a chain listed
      // again, starts the next listing (one-chain listings pasted together stay one)
      if (seen.has(name) || (builtIn >= 0 && builtIn <= lastBuiltIn)) {
        listingStarts.push(i + 1);
        seen = new Set();
        lastBuiltIn = -1;
      }
      seen.add(name);
      if (builtIn >= 0) lastBuiltIn = builtIn;
      chain = name;
      columns = undefined;
      chainless = undefined;
      // -L prints a column header under every Chain line: a paste that ends on one is cut there
      if (i === lastText)
        cut = {
          line: i + 1,
          reason: `after the Chain line of ${name}, before its column header: its rules are not in it`,
          text: line.trim(),
          head: { chain: name, read: true },
        };
      return c[2] ? `-P ${name} ${c[2]}` : `-N ${name}`;
    }
    if (chain && line.trim() && next && !HEADER.test(line) && HEADER.test(withNext)) {
      joinedHeads.push(i + 1);
      carried = withNext;
      return '';
    }
    const h = HEADER.exec(line);
    if (h && (chain || chainless !== undefined) && columns) {
      chain = undefined;
      chainless = i + 1;
      return '';
    }
    if (h && chain) {
      columns = { num: !!h[1], counters: !!h[2], interfaces: !!h[3] };
      if (!h[3]) noInterfaces ??= i + 1;
      // the last chain listed may be empty, or the paste cut under its header: not claimed empty
      if (i === lastText)
        cut = {
          line: i + 1,
          reason: `after the column header of ${chain}: its rules, if it has any, are not in it`,
          text: line.trim(),
          head: { chain, read: true },
        };
      return '';
    }
    const head = i === lastText ? cutHead(line) : undefined;
    if (head) {
      // a Chain line cut ends the chain before it whole; a column header under its Chain line, its
      // own chain (the rules are past the cut)
      // "Cha" may be a Chain line or a rule's target: its chain is not claimed whole
      const own =
        (head === 'a column header' && !columns) || head === "a Chain line or a rule's target"
          ? chain
          : undefined;
      cut = { line: i + 1, reason: `inside ${head}`, text: line.trim(), head: { chain: own } };
      return '';
    }
    // -L ends a chain's rows with a blank line; a line that reads as no row ends them too
    if (chainless !== undefined && (line.trim() === '' || FENCE.test(line))) chainless = undefined;
    if (chainless !== undefined) {
      const row = columns ? ruleOf(line, 'X', columns, false) : undefined;
      if (row && 'text' in row) {
        chainlessRows.push(i + 1);
        return '';
      }
      chainless = undefined;
    }
    // a command typed (a prompt, or the command alone) ends the listing above it
    if (line.trim() !== '' && (columns || typedAfter) && typedCommand(line)) {
      const typed = typedList(line);
      const cols = typed?.cols ?? columns ?? typedAfter?.cols;
      typedAfter = cols
        ? { line: i + 1, cols, ...(typed?.chain ? { chain: typed.chain } : {}) }
        : undefined;
      chain = undefined;
      columns = undefined;
      return line;
    }
    if (typedAfter && !chain && line.trim() !== '' && !FENCE.test(line)) {
      const row = ruleOf(line, 'X', typedAfter.cols, i === lastText);
      if (row) {
        afterCommand.set(i, typedAfter);
        return '';
      }
    }
    // a markdown fence closes the block the listing is quoted in: never a rule, kept as it is
    if (!columns || !chain || line.trim() === '' || FENCE.test(line)) return line;
    if (columns.num || columns.counters) {
      const numbers = line.trim().split(/\s+/);
      const before = (columns.num ? 1 : 0) + (columns.counters ? 2 : 0);
      if (
        i < lastText &&
        numbers.length === before &&
        numbers.every((w) => /^\d+[KMGT]?$/.test(w))
      ) {
        // a next row whole by itself (its own counters first) is no rest of this one
        const alone = next ? ruleOf(next, chain, columns, i + 1 === lastText) : undefined;
        const whole =
          next && !(alone && !('cut' in alone))
            ? ruleOf(withNext, chain, columns, i + 1 === lastText)
            : undefined;
        if (whole) {
          joined.push(i + 1);
          carried = withNext;
          return '';
        }
        broken.push(i + 1);
        return `-A ${chain}`;
      }
    }
    // the next row run on from this one's end (its line end lost in copying): both read, on
    // this line, as the rules parser reads rules run together
    const on = runOn(line, columns);
    if (on !== undefined) {
      const [a, b] = [
        ruleOf(line.slice(0, on), chain, columns, false),
        ruleOf(line.slice(on), chain, columns, false),
      ];
      if (a && b && !('cut' in a) && !('cut' in b)) {
        if (a.unread || b.unread) unread.push(i + 1);
        return `${a.text} ${b.text}`;
      }
    }
    // an arrow the author drew before a row to point at it ("--> 9   540 KUBE-MARK-MASQ ..."):
    // the row after it is read
    const arrow = ARROW.exec(line)?.[0];
    const pointed = arrow ? ruleOf(line.slice(arrow.length), chain, columns, false) : undefined;
    if (pointed && !('cut' in pointed)) {
      arrows.push(i + 1);
      if (pointed.plain) plain ??= i + 1;
      if (pointed.unread) unread.push(i + 1);
      return pointed.text;
    }
    const rule = ruleOf(line, chain, columns, i === lastText);
    // cut mid-rule: the rules parser says so, and takes its chain as read only in part
    if (rule && 'cut' in rule) {
      cut = { line: i + 1, reason: rule.cut, text: line.trim() };
      return `-A ${chain}`;
    }
    if (!rule) return line;
    if (rule.plain) plain ??= i + 1;
    if (rule.unread) unread.push(i + 1);
    if (rule.placeholder) placeholders.push(i + 1);
    return rule.text;
  });
  // the rows after a command typed, under no Chain line: their chain from that command, else
  // from what kube-proxy writes in them
  if (afterCommand.size > 0) {
    const rows = headless(
      lines,
      (i) => afterCommand.get(i)?.cols,
      AFTER_COMMAND,
      (i) => {
        const typed = afterCommand.get(i);
        return typed?.chain ? { chain: typed.chain, line: typed.line } : undefined;
      },
      lastText,
    );
    for (const i of afterCommand.keys()) out[i] = rows?.lines.get(i + 1) ?? '';
    if (rows?.note) notes.push(rows.note);
    if (rows?.cut) cut = rows.cut;
  }
  // the listing starts at its first row above a Chain line, else at its first Chain line
  notes.unshift({
    line: above?.note?.line ?? first + 1,
    message: 'read from an `iptables -L` listing, rewritten as `iptables -S` rules',
  });
  if (noInterfaces !== undefined)
    notes.push({
      line: noInterfaces,
      message: '-L without -v prints no interfaces: rules limited to one are shown as for all',
    });
  if (plain !== undefined)
    notes.push({
      line: plain,
      message:
        '-L without -n prints names, not numbers: a name kdebug cannot turn back into an address or port is kept on its rule as not read',
    });
  if (placeholders.length > 0)
    notes.push({
      line: placeholders[0]!,
      message: `${lineList(placeholders)}: a template's placeholder ({{ … }}) where -L prints a value: the author's, not what the node holds, kept on its rule as not read`,
      lines: placeholders,
    });
  if (arrows.length > 0)
    notes.push({
      line: arrows[0]!,
      message: `${lineList(arrows)}: an arrow drawn before the row, read without it`,
      lines: arrows,
    });
  for (const [at, what] of [
    [joined, "a rule's first columns (its counters or number)"],
    [joinedHeads, "a column header's first words"],
  ] as const)
    if (at.length > 0)
      notes.push({
        line: at[0]!,
        message: `${lineList(at)}: ${what} on a line of their own, the rest of the row on the next: read as one row`,
        lines: at,
      });
  if (chainlessRows.length > 0)
    notes.push({
      line: chainlessRows[0]!,
      message: `${lineList(chainlessRows)}: rows under a column header whose Chain line is not in the paste: whose rules they are is not in it, so they are not read`,
      lines: chainlessRows,
    });
  unread.push(...(above?.unread ?? []));
  unread.sort((a, b) => a - b);
  if (unread.length > 0)
    notes.push({
      line: unread[0]!,
      message: `line${unread.length === 1 ? '' : 's'} ${unread.slice(0, 12).join(', ')}${unread.length > 12 ? ' …' : ''}: a match -L printed that kdebug does not read, kept on its rule as not read`,
      lines: unread,
    });
  return {
    text: out.join('\n'),
    listingStarts,
    broken,
    notes,
    above: above?.chains ?? [],
    chainless: bare ? (above?.chainless ?? []) : [],
    ...(cut ? { cut } : {}),
  };
}
