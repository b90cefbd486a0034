// The columns an `iptables -L` typed in a paste prints, from its options as iptables reads them
// (getopt_long: short options bundled, `-nvL`, `-nt nat`; a long option by any prefix that names
// it alone, `--verb`, `--line`): -v (--verbose) prints the packet and byte counts and the in and
// out interfaces, --line-numbers the rule's number first. iptables' printer prints no others.
import type { Columns } from './columns.js';

/** iptables' long options (iptables/xshared.c, xtables_legacy/nft's main options). */
const LONG = [
  'append',
  'check',
  'delete',
  'insert',
  'replace',
  'list',
  'list-rules',
  'flush',
  'zero',
  'new-chain',
  'delete-chain',
  'rename-chain',
  'policy',
  'source',
  'src',
  'destination',
  'dst',
  'protocol',
  'in-interface',
  'jump',
  'table',
  'match',
  'numeric',
  'out-interface',
  'verbose',
  'wait',
  'wait-interval',
  'exact',
  'fragment',
  'version',
  'help',
  'line-numbers',
  'modprobe',
  'set-counters',
  'goto',
  'ipv4',
  'ipv6',
];

/** The long option a `--word` names: itself, else the one option it is a prefix of. */
function longOption(word: string): string | undefined {
  if (LONG.includes(word)) return word;
  const all = LONG.filter((o) => o.startsWith(word));
  return all.length === 1 ? all[0] : undefined;
}

/** Options that take an argument, short and long: their argument is no option. */
const SHORT_ARG = new Set([
  't',
  'A',
  'C',
  'D',
  'I',
  'R',
  'N',
  'X',
  'E',
  'P',
  's',
  'd',
  'p',
  'i',
  'j',
  'm',
  'o',
  'g',
  'w',
  'W',
]);
const LONG_ARG = new Set([
  'append',
  'check',
  'delete',
  'insert',
  'replace',
  'new-chain',
  'rename-chain',
  'policy',
  'source',
  'src',
  'destination',
  'dst',
  'protocol',
  'in-interface',
  'jump',
  'table',
  'match',
  'out-interface',
  'goto',
  'modprobe',
  'set-counters',
]);

/** The options iptables reads in `args` (what follows `iptables` on a line, up to a pipe): -L,
 * -S, -v, --line-numbers, the table -t names, and the chain -L or -S names. Their argument is
 * optional (getopt's "L::", "S::"): the rest of its word (`-LKUBE-SERVICES`, `--list-rules=CHAIN`),
 * else the next word where it starts with neither "-" nor "!" (iptables/xshared.c, xs_has_arg);
 * a rule's number may follow the chain (`-S CHAIN 2`: that rule alone). */
export function typedOptions(args: string): {
  list: boolean;
  /** -S (--list-rules): the rules printed as iptables -S prints them. */
  rules: boolean;
  verbose: boolean;
  numbers: boolean;
  table?: string;
  /** The one chain -L or -S lists, where it names one: the chain of every row it prints. */
  chain?: string;
  /** A rule's number after the chain: the listing holds that rule alone. */
  ruleNumber?: number;
} {
  const words = args.trim().split(/\s+/);
  const o = { list: false, rules: false, verbose: false, numbers: false } as ReturnType<
    typeof typedOptions
  >;
  // the chain, where its option does not hold it: the next word, where it is no option; then
  // a rule's number, where one follows
  const listed = (value: string | undefined, k: number): number => {
    if (value !== undefined) o.chain = value;
    else if (words[k + 1] !== undefined && !/^[-!]/.test(words[k + 1]!)) o.chain = words[++k];
    if (o.chain !== undefined && /^\d+$/.test(words[k + 1] ?? '')) o.ruleNumber = +words[++k]!;
    return k;
  };
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!;
    if (w.startsWith('--')) {
      const [name, value] = w.slice(2).split('=', 2);
      const long = longOption(name ?? '');
      if (long === 'list' || long === 'list-rules') {
        o[long === 'list' ? 'list' : 'rules'] = true;
        k = listed(value, k);
      } else if (long === 'verbose') o.verbose = true;
      else if (long === 'line-numbers') o.numbers = true;
      if (long && LONG_ARG.has(long) && value === undefined) k++;
      if (long === 'table') o.table = value ?? words[k];
    } else if (/^-[a-zA-Z]/.test(w)) {
      for (let c = 1; c < w.length; c++) {
        const ch = w[c]!;
        if (ch === 'L' || ch === 'S') {
          o[ch === 'L' ? 'list' : 'rules'] = true;
          k = listed(c < w.length - 1 ? w.slice(c + 1) : undefined, k);
          break;
        }
        if (ch === 'v') o.verbose = true;
        // an option with an argument takes the rest of the word, else the next one
        if (SHORT_ARG.has(ch)) {
          const value = c < w.length - 1 ? w.slice(c + 1) : words[++k];
          if (ch === 't') o.table = value;
          break;
        }
      }
    }
  }
  if (o.table !== undefined && !/^\w+$/.test(o.table)) delete o.table;
  if (o.chain !== undefined && !/^[\w.:-]+$/.test(o.chain)) delete o.chain;
  return o;
}

/** What an `iptables` (`ip6tables`) command typed on `line` lists with -L: the columns its rows
 * hold; undefined where the line types no `-L` (--list). */
export function listColumns(line: string): Columns | undefined {
  return typedList(line)?.cols;
}

/** What an `iptables` (`ip6tables`) command typed on `line` lists with -L: the columns its rows
 * hold, and the chain they are in where -L names one; undefined where the line types no -L. */
export function typedList(line: string): { cols: Columns; chain?: string } | undefined {
  const m = /(?:^|[\s`$#(])(?:sudo +)?ip6?tables(?:-legacy|-nft)? +([^|;&`]*)/.exec(line);
  if (!m) return undefined;
  const o = typedOptions(m[1]!);
  if (!o.list) return undefined;
  const cols = { num: o.numbers, counters: o.verbose, interfaces: o.verbose };
  return o.chain !== undefined ? { cols, chain: o.chain } : { cols };
}

/** The options that gave `cols`, said as iptables names them. */
export function columnsSaid(cols: Columns): string {
  const said = [
    ...(cols.num ? ['--line-numbers: the rule number'] : []),
    ...(cols.counters ? ['-v: the packet and byte counts, the in and out interfaces'] : []),
  ];
  return said.length > 0
    ? said.join('; ')
    : 'neither -v nor --line-numbers: no counts, no interfaces, no number';
}

/** A pipe `grep PATTERN` whose pattern every rule `-S CHAIN` prints holds ('-A', the chain's
 * name): it drops the -N line alone. Inverted (-v), other commands after it: not known. */
function keepsEveryRule(pipe: string, chain: string): boolean {
  const g = /^\s*grep(\s+-e|\s+--)?\s+(?:'([^']+)'|"([^"]+)"|([^\s'"|]+))\s*$/.exec(pipe);
  const pattern = g?.[2] ?? g?.[3] ?? g?.[4];
  // a pattern starting with "-" after neither -e nor "--" is an option to grep
  if (pattern === undefined || (pattern.startsWith('-') && g![1] === undefined)) return false;
  try {
    return new RegExp(pattern).test(`-A ${chain} `);
  } catch {
    return `-A ${chain} `.includes(pattern);
  }
}

/** The part of a chain `iptables -S CHAIN N` (rule N alone) or `-S CHAIN | grep ...` lists. */
export interface ListedPart {
  chain: string;
  rule?: number;
  /** What the listing is piped through (grep, head): any of its rules may be left out. */
  pipe?: string;
}

/** The table an `iptables -L` / `-S` command typed on this line lists (`-t TABLE`, else filter,
 * iptables' default), whether ip6tables lists it (the IPv6 family's table), and the command, or
 * undefined when the line types no such command; with the chain `-S CHAIN` lists whole, or the
 * part of it `-S CHAIN N` (rule N alone) or a pipe after it lists. */
export function listedTable(line: string):
  | {
      table: string;
      ip6: boolean;
      command: string;
      chain?: string;
      part?: ListedPart;
    }
  | undefined {
  const m = /(?:sudo )?ip(6?)tables(?:-legacy|-nft)? +([^|;&`]*)/.exec(line);
  if (!m || (m.index > 0 && !/[\s`$#(]/.test(line[m.index - 1]!))) return undefined;
  const o = typedOptions(m[2]!);
  if (!o.list && !o.rules) return undefined;
  // `-S CHAIN` prints CHAIN's -N (or -P) line, then all its rules; `-S CHAIN N` rule N alone,
  // and a pipe (grep, head) may keep any of them
  const pipe = line[m.index + m[0].length] === '|' ? line.slice(m.index + m[0].length + 1) : '';
  const piped = pipe !== '' && !(o.chain !== undefined && keepsEveryRule(pipe, o.chain));
  const whole = o.rules && o.chain !== undefined && o.ruleNumber === undefined && !piped;
  return {
    table: o.table ?? 'filter',
    ip6: m[1] === '6',
    command: m[0].trim(),
    ...(whole ? { chain: o.chain } : {}),
    ...(o.rules && o.chain !== undefined && !whole
      ? {
          part: {
            chain: o.chain,
            ...(o.ruleNumber !== undefined ? { rule: o.ruleNumber } : {}),
            ...(piped ? { pipe: pipe.trim() } : {}),
          },
        }
      : {}),
  };
}
