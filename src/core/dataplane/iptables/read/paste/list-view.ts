// `iptables -L` as people paste it (`-t nat`, `-n`, `-v`, `-x`, `--line-numbers`, one chain or
// all, several listings one after another), rewritten line for line into `iptables -S` form so that
// the one rules parser reads it and its line numbers stay the paste's: a Chain header becomes -N
// (a built-in chain's -P with its policy), each rule line -A with the matches -L printed (iptables'
// own print functions for each match and target). What -L printed and kdebug does not read — a
// name where -n would print an address, a port name it does not know, a match it does not model —
// stays on the rule as `-m unread --as "…"`, so no rule reads as matching more than it does.
import { endpointChain } from '../../../chain-names.js';
import { SERVICE_PORTS } from '../../../ipvs/service-names.js';
import type { Match } from '../rule.js';

/** A paste holding an `iptables -L` listing: a Chain header, then its column header (which a
 * page may break after its first words). */
export function isListView(head: string): boolean {
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
  /** The line the paste cuts: what -L printed of it before the cut, and its text; `head` where
   * the cut is in a Chain line or column header, with the chain whose header it is. */
  cut?: ListViewCut;
}

/** A fact of the listing as read, at the first line it is about (with every such line). */
export interface ListViewNote {
  line: number;
  message: string;
  lines?: number[];
}

export interface ListViewCut {
  line: number;
  reason: string;
  text: string;
  /** A cut in or after a Chain line or column header: the chain whose rules lie past it; `read`
   * where the line is whole and read, and the paste ends after it. */
  head?: { chain: string | undefined; read?: true };
}

interface Columns {
  num: boolean;
  counters: boolean;
  interfaces: boolean;
}

const HEADER =
  /^[ \t]*(num +)?(pkts +bytes +)?target +prot +opt +(in +out +)?source +destination\s*$/;
const CHAIN = /^[ \t]*Chain (\S+) \((?:policy (\w+)[^)]*|\d+ references)\)\s*$/;
/** A markdown fence: the quoted block's first or last line. */
const FENCE = /^[ \t]*(?:```|~~~)/;
/** The built-in chains in the order -L lists them. */
const BUILT_IN = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];
const PROTOCOLS: Record<string, string> = {
  all: 'all',
  '0': 'all',
  tcp: 'tcp',
  '6': 'tcp',
  udp: 'udp',
  '17': 'udp',
  sctp: 'sctp',
  '132': 'sctp',
  icmp: 'icmp',
  '1': 'icmp',
  'ipv6-icmp': 'ipv6-icmp',
  icmpv6: 'ipv6-icmp',
  '58': 'ipv6-icmp',
};
/** The fragment column: `--`, `-f`, `!f`; ip6tables before 1.8.8 leaves it blank. */
const OPT = /^(?:--|-f|!f)$/;

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
  // the paste's last line with text: a rule -L printed only part of is where the paste was cut
  let lastText = lines.length - 1;
  while (lastText > 0 && lines[lastText]!.trim() === '') lastText--;
  let cut: ListViewRules['cut'];
  const notes: ListViewNote[] = [];
  // rules above the first Chain line belong to a chain whose Chain line the paste does not hold
  const first = lines.findIndex((l) => CHAIN.test(l));
  const firstHeader = lines.find((l) => HEADER.test(l));
  const above = first > 0 && firstHeader ? headless(lines.slice(0, first), firstHeader) : undefined;
  if (above?.note) notes.push(above.note);
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
    const rule = ruleOf(line, chain, columns, i === lastText);
    // cut mid-rule: the rules parser says so, and takes its chain as read only in part
    if (rule && 'cut' in rule) {
      cut = { line: i + 1, reason: rule.cut, text: line.trim() };
      return `-A ${chain}`;
    }
    if (!rule) return line;
    if (rule.plain) plain ??= i + 1;
    if (rule.unread) unread.push(i + 1);
    return rule.text;
  });
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
    ...(cut ? { cut } : {}),
  };
}

interface Headless {
  /** Each such line's -S form by its 1-based number: a rule in the chain kube-proxy's writing
   * implies, else blank (a rule not read, or the column header). */
  lines: Map<number, string>;
  /** The chains read from them, each said as inferred. */
  chains: string[];
  /** What the rows are and how they were read, at the first; none where no row is above (a
   * header alone). */
  note?: ListViewNote;
  /** The first row that prints a name where -n would print a number. */
  plain: number | undefined;
  /** Lines read that keep a match -L printed as not read. */
  unread: number[];
}

/** The lines above the first Chain line that are rows in the columns of the listing's first
 * column header (or that header). -L names a row's chain only in the Chain line above it, so
 * a row is read only where what kube-proxy writes in it is written in one chain alone. */
function headless(lines: string[], header: string): Headless | undefined {
  const h = HEADER.exec(header)!;
  const cols = { num: !!h[1], counters: !!h[2], interfaces: !!h[3] };
  const out = new Map<number, string>();
  const rows: number[] = []; // the rule rows among them, not the column header
  const read = new Map<string, { lines: number[]; why: string }>();
  const notRead: number[] = [];
  const unread: number[] = [];
  let plain: number | undefined;
  lines.forEach((l, i) => {
    // its column header too, where the paste starts between its Chain line and it
    if (HEADER.test(l)) return void out.set(i + 1, '');
    const rule = l.trim() === '' ? undefined : ruleOf(l, UNKNOWN_CHAIN, cols, false);
    if (!rule || 'cut' in rule) return;
    rows.push(i + 1);
    const implied = impliedChain(rule.text);
    if (!implied) {
      notRead.push(i + 1);
      return void out.set(i + 1, '');
    }
    out.set(i + 1, `-A ${implied.chain}${rule.text.slice(`-A ${UNKNOWN_CHAIN}`.length)}`);
    const at = read.get(implied.chain) ?? { lines: [], why: implied.why };
    at.lines.push(i + 1);
    read.set(implied.chain, at);
    if (rule.plain) plain ??= i + 1;
    if (rule.unread) unread.push(i + 1);
  });
  if (out.size === 0) return undefined;
  const said = [...read].map(
    ([chain, r]) =>
      `${lineList(r.lines)} read as ${chain}'s, the chain inferred from what kube-proxy writes in ${r.lines.length === 1 ? 'it' : 'them'} (${r.why}), its rules above the paste not known`,
  );
  if (read.size === 0) said.push('not read (their chain is not known)');
  else if (notRead.length > 0)
    said.push(
      `${lineList(notRead)} not read (nothing kube-proxy writes in ${notRead.length === 1 ? 'it' : 'them'} names one chain: ${notRead.length === 1 ? 'its' : 'their'} chain is not known)`,
    );
  return {
    lines: out,
    chains: [...read.keys()],
    ...(rows.length > 0
      ? {
          note: {
            line: rows[0]!,
            message: `${lineList(rows)}: rules of a chain whose Chain line is above the paste, not in it: ${said.join('; ')}`,
            lines: rows,
          },
        }
      : {}),
    plain,
    unread,
  };
}

const lineList = (at: number[]) => `line${at.length === 1 ? '' : 's'} ${at.join(', ')}`;

/** The chain name a headless row is read with before its chain is known. */
const UNKNOWN_CHAIN = 'X';

/** A Service port's name as kube-proxy comments a node-port or endpoint rule with it, bare. */
const BARE_NAME = /^[^\s/]+\/[^\s/]+$/;

/** The chain a rule (in -S form) is in, where kube-proxy writes such a rule in that chain only
 * (pkg/proxy/iptables/proxier.go), with why; undefined where it writes it in several or none. */
function impliedChain(rule: string): { chain: string; why: string } | undefined {
  const comments = [...rule.matchAll(/ -m comment --comment "((?:[^"\\]|\\.)*)"/g)];
  const name = comments.length === 1 ? comments[0]![1]!.replace(/\\(.)/g, '$1') : undefined;
  if (name === undefined || !BARE_NAME.test(name)) return undefined;
  // what the rule matches and does, outside any quoted text a word of it could hold
  const bare = rule.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const target = / -j (\S+)/.exec(bare)?.[1];
  // a node port's rules (its jump, and before v1.24 its masquerade) are the only ones commented
  // with the bare name that match a destination port
  if (
    / -m (?:tcp|udp|sctp) --dport \d+(?: |$)/.test(bare) &&
    (target === 'KUBE-MARK-MASQ' || /^KUBE-(?:SVC|EXT|XLB)-[A-Z2-7]{16}$/.test(target ?? ''))
  )
    return {
      chain: 'KUBE-NODEPORTS',
      why: "a node port's rules, commented with the Service port's name alone and matching the port",
    };
  // an endpoint's DNAT: its chain's name is the hash of the Service port, protocol and endpoint
  const protocol = / -p (tcp|udp|sctp) /.exec(bare)?.[1];
  const to = / -j DNAT --to-destination ((?:\[[0-9a-fA-F:.]+\]|[\d.]+):\d+)$/.exec(bare)?.[1];
  if (protocol && to)
    return {
      chain: endpointChain(name, protocol, to),
      why: "an endpoint's DNAT, in the chain named by the hash of its Service port, protocol and address",
    };
  return undefined;
}

/** A last line cut inside a Chain line ("Chain", "Chain KUBE-SEP-… (") or a column header, or
 * in its first word ("Cha": a Chain line, or a rule's target). */
function cutHead(
  line: string,
): 'a Chain line' | 'a column header' | "a Chain line or a rule's target" | undefined {
  const t = line.trim();
  if (/^Chain(?: \S+(?: \([^)]*)?)?$/.test(t)) return 'a Chain line';
  if (/^C(?:h(?:ai?)?)?$/.test(t)) return "a Chain line or a rule's target";
  const words = t.split(/\s+/);
  // its last word may be cut too ("tar", "destin"): the words of one of the headers -L prints
  const cut =
    words.length > 1 &&
    HEADERS.some((header) =>
      words.every((w, k) => (k === words.length - 1 ? header[k]?.startsWith(w) : header[k] === w)),
    );
  return cut ? 'a column header' : undefined;
}

/** The column headers -L prints: with --line-numbers (num), -v (pkts bytes, in out), or neither. */
const HEADERS = [true, false].flatMap((num) =>
  [true, false].map((v) => [
    ...(num ? ['num'] : []),
    ...(v ? ['pkts', 'bytes'] : []),
    'target',
    'prot',
    'opt',
    ...(v ? ['in', 'out'] : []),
    'source',
    'destination',
  ]),
);

/** What kdebug keeps of text -L printed and it does not read: a match no packet is known to meet. */
const unreadMatch = (shown: string) => `-m ${UNREAD} --as ${quoted(shown)}`;
const UNREAD = 'unread';

/** The text of such a match as -L printed it; undefined for any other match. */
export function unreadText(m: Match): string | undefined {
  return m.kind === 'other' && m.module === UNREAD
    ? (m.options.find((o) => o.name === 'as')?.values[0] ?? '')
    : undefined;
}

const PRINTED = { number: 'number', packets: 'packet count', bytes: 'byte count' };

/** The numeric columns a cut line holds, said: "packet count", "number and packet and byte counts". */
function printedNumbers(numbers: (keyof typeof PRINTED)[]): string {
  const said = numbers.map((n) => PRINTED[n]).join(' and ');
  return said.replace('packet count and byte count', 'packet and byte counts');
}

/** Where a second row starts on a row's line, run on after its first (after the blank or the
 * comment's end it follows): its columns up to the protocol and option columns, as -L prints
 * them; undefined where the line holds one row. */
function runOn(line: string, cols: Columns): number | undefined {
  const numbers = (cols.num ? 1 : 0) + (cols.counters ? 2 : 0);
  const row = new RegExp(
    `(?:\\s|\\*/)((?:\\d+[KMGT]? +){${numbers}}[\\w-]+ +!?(?:all|tcp|udp|sctp|icmp|ipv6-icmp|\\d+) +(?:--|-f|!f) )`,
    'g',
  );
  const first = line.search(/\S/);
  for (const m of line.matchAll(row)) {
    const at = m.index + m[0].length - m[1]!.length;
    if (at > first) return at;
  }
  return undefined;
}

/** One rule line of the listing in -S form; undefined when it is not one. */
function ruleOf(
  line: string,
  chain: string,
  cols: Columns,
  last: boolean,
): { text: string; plain: boolean; unread: boolean } | { cut: string } | undefined {
  const words = [...line.matchAll(/\S+/g)];
  let k = 0;
  const word = () => words[k]?.[0] ?? '';
  // the paste's last line, cut before its protocol: the columns -L printed up to there
  const ended = () => last && k === words.length && k > 0;
  // the columns -L prints before the target: --line-numbers' number, -v's packet and byte counts
  const numbers: (keyof typeof PRINTED)[] = [];
  for (const [what, shown, re] of [
    ['number', cols.num, /^\d+$/],
    ['packets', cols.counters, /^\d+[KMGT]?$/],
    ['bytes', cols.counters, /^\d+[KMGT]?$/],
  ] as const) {
    if (!shown || ended()) continue;
    if (!re.test(word())) return undefined;
    numbers.push(what);
    k++;
  }
  if (ended()) return { cut: `-L printed only its ${printedNumbers(numbers)}` };
  // a rule without a target leaves its column blank: the protocol comes first
  const isProtocol = (w: string | undefined) =>
    PROTOCOLS[(w ?? '').replace(/^!/, '')] !== undefined;
  const target = isProtocol(word()) && !isProtocol(words[k + 1]?.[0]) ? undefined : word();
  if (target !== undefined) k++;
  const prot = word();
  if (ended()) return { cut: `-L printed its target ${target}, then the cut` };
  if (!isProtocol(prot)) return undefined;
  k++;
  if (OPT.test(word())) k++;
  const inIf = cols.interfaces ? words[k++]?.[0] : undefined;
  const outIf = cols.interfaces ? words[k++]?.[0] : undefined;
  const source = words[k++]?.[0];
  const destination = words[k]?.[0];
  // what -L printed of the paste's last line before the cut: its target, protocol, addresses
  const printed = `-L printed ${target ? `its target ${target}, ` : ''}protocol ${prot}`;
  if (source === undefined || destination === undefined)
    return last ? { cut: `${printed}, then the cut` } : undefined;
  const after = words[k]!.index! + destination.length;
  let plain = false;
  let unread = false;
  const parts = [`-A ${chain}`];
  const v6 = source.includes(':') || destination.includes(':');
  for (const [flag, what, value] of [
    ['-s', 'source', source],
    ['-d', 'destination', destination],
  ] as const) {
    const a = address(value, v6);
    // the paste's last line, cut mid-address after its target and protocol
    if (a === 'cut' && last) return { cut: `${printed}, and its ${what} cut at "${value}"` };
    if (a === 'name' || a === 'cut') {
      plain = true;
      parts.push(unreadMatch(`${what} ${value}`));
    } else if (a) parts.push(`${a.not ? '! ' : ''}${flag} ${a.cidr}`);
  }
  // "*" with -n, "any" without: no interface
  for (const [flag, value] of [
    ['-i', inIf],
    ['-o', outIf],
  ] as const)
    if (value !== undefined && value !== '*' && value !== 'any')
      parts.push(value.startsWith('!') ? `! ${flag} ${value.slice(1)}` : `${flag} ${value}`);
  const protocol = PROTOCOLS[prot.replace(/^!/, '')]!;
  if (protocol !== 'all') parts.push(`${prot.startsWith('!') ? '! ' : ''}-p ${protocol}`);
  const extras = extrasOf(line.slice(after).trim(), target);
  // the paste's last line, cut inside what a match or its target prints
  if (last && extras.incomplete !== undefined)
    return {
      cut: `${printed}, its addresses, then the cut inside "${excerptEnd(extras.incomplete)}"`,
    };
  if (last && missingOption(target, extras))
    return { cut: `${printed} and its addresses, not the option -L prints for ${target}` };
  plain ||= extras.plain;
  unread ||= extras.unread;
  parts.push(...extras.matches);
  if (target) parts.push(`-j ${target}`, ...extras.targetOptions);
  return { text: parts.join(' '), plain, unread };
}

/** A source or destination column: none for "any", a CIDR, or a name -L printed for it. */
function address(
  value: string,
  family6: boolean,
): { cidr: string; not: boolean } | 'name' | 'cut' | undefined {
  const not = value.startsWith('!');
  const v = not ? value.slice(1) : value;
  if (v === '0.0.0.0/0' || v === '::/0' || v === 'anywhere') return undefined;
  const [name, bits] = v.split('/');
  // ip6tables names ::1 "localhost" as iptables does 127.0.0.1
  const known = (name ?? '').toLowerCase();
  const ip = (family6 ? WELL_KNOWN_V6[known] : WELL_KNOWN[known]) ?? name;
  const v4 = /^\d{1,3}(?:\.\d{1,3}){3}$/.test(ip ?? '');
  const v6 = !v4 && /^[0-9a-fA-F:]+$/.test(ip ?? '') && (ip ?? '').includes(':');
  // digits and dots that are no address ("10.152.183."): a line cut there (else a name)
  if (!v4 && /^[\d.]+$/.test(ip ?? '')) return 'cut';
  if (!v4 && !v6) return 'name';
  return { cidr: `${ip}/${bits ?? (v4 ? '32' : '128')}`, not };
}

/** Names -L prints for addresses every node names alike: its /etc/networks' (iptables asks
 * getnetbyaddr for a network, as kube-proxy's node-port rule's 127.0.0.0/8), /etc/hosts', and the
 * multicast base's public reverse name. */
const WELL_KNOWN: Record<string, string> = {
  loopback: '127.0.0.0',
  'link-local': '169.254.0.0',
  localhost: '127.0.0.1',
  'base-address.mcast.net': '224.0.0.0',
};
const WELL_KNOWN_V6: Record<string, string> = { localhost: '::1', 'ip6-localhost': '::1' };

/** DNAT's and SNAT's `to:` as -L prints it: an address (a range), then a port (a range). */
const TO =
  /^(?:\d{1,3}(?:\.\d{1,3}){3}(?:-\d{1,3}(?:\.\d{1,3}){3})?|\[[0-9a-fA-F:.]+\](?:-\[[0-9a-fA-F:.]+\])?|[0-9a-fA-F:]*:[0-9a-fA-F:.]+)(?::\d+(?:-\d+)?)?$/;

const quoted = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

interface Extras {
  matches: string[];
  targetOptions: string[];
  plain: boolean;
  unread: boolean;
  /** What -L printed of a match or target option that is not whole: the line was cut in it. */
  incomplete?: string;
}

/** The fixed text each match and target option -L prints starts with (iptables' print functions,
 * as extrasOf reads them): a line that ends inside one, or whose value does not read after one,
 * was cut there. */
const PRINTS = [
  '/* ',
  'tcp ',
  'udp ',
  'sctp ',
  'dpt:',
  'spt:',
  'dpts:',
  'spts:',
  'statistic mode random probability ',
  'statistic mode nth every ',
  'ADDRTYPE match src-type ',
  'ADDRTYPE match dst-type ',
  'mark match ',
  'recent: ',
  'match-set ',
  '! match-set ',
  'ctstate ',
  'state ',
  'multiport dports ',
  'to:',
  'MARK or ',
  'MARK set ',
  'MARK xset ',
  'MARK and ',
  'MARK xor ',
  'masq ports: ',
  'random-fully',
  'reject-with ',
];

/** Targets whose -L print always carries an option (`to:`, `reject-with`, MARK's operation). */
const TARGET_PRINTS: Record<string, RegExp> = {
  DNAT: /^--to-destination /,
  SNAT: /^--to-source /,
  REJECT: /^--reject-with /,
  MARK: /^--(?:set-xmark|and-mark) /,
};

/** A target whose option -L always prints, without it: the last line was cut before it. */
function missingOption(target: string | undefined, x: Extras): boolean {
  const option = target === undefined ? undefined : TARGET_PRINTS[target];
  return option !== undefined && !x.targetOptions.some((o) => option.test(o));
}

const excerptEnd = (s: string) => (s.length > 40 ? `…${s.slice(-40)}` : s);

/** The matches and target options -L printed after the destination, in -S form. */
function extrasOf(rest: string, target: string | undefined): Extras {
  const x: Extras = { matches: [], targetOptions: [], plain: false, unread: false };
  let s = rest;
  const take = (re: RegExp): RegExpExecArray | null => {
    const m = re.exec(s);
    if (m) s = s.slice(m[0].length).trimStart();
    return m;
  };
  /** A port or range as -S writes it; undefined for a name /etc/services does not give. */
  const port = (p: string): string | undefined => {
    const n = p.split(':').map((v) => (/^\d+$/.test(v) ? v : SERVICE_PORTS.get(v)?.toString()));
    if (p.split(':').some((v) => !/^\d+$/.test(v))) x.plain = true;
    return n.every((v) => v !== undefined) ? n.join(':') : undefined;
  };
  while (s.length > 0) {
    let m: RegExpExecArray | null;
    if (s.startsWith('/* ')) {
      x.matches.push(`-m comment --comment ${quoted(commentOf())}`);
    } else if ((m = take(/^(tcp|udp|sctp)((?: (?:spts?|dpts?):!?\S+)*)(?=\s|$)/))) {
      const opts: string[] = [];
      const unreadPorts: string[] = [];
      for (const p of m[2]!.trim().split(' ').filter(Boolean)) {
        const [, dir, not, value] = /^(s|d)pts?:(!?)(\S+)$/.exec(p) ?? [];
        const v = value === undefined ? undefined : port(value);
        if (v !== undefined) opts.push(`${not ? '! ' : ''}--${dir}port ${v}`);
        else {
          x.unread = true;
          unreadPorts.push(unreadMatch(`${m[1]} ${p}`));
        }
      }
      // the module's own options right after it: an unread match after them owns none
      x.matches.push(`-m ${m[1]}`, ...opts, ...unreadPorts);
    } else if ((m = take(/^statistic mode random probability ([\d.]+)/)))
      x.matches.push(`-m statistic --mode random --probability ${m[1]}`);
    else if ((m = take(/^statistic mode nth every (\d+)(?: packet (\d+))?/)))
      x.matches.push(`-m statistic --mode nth --every ${m[1]}${m[2] ? ` --packet ${m[2]}` : ''}`);
    else if ((m = take(/^ADDRTYPE match (src|dst)-type (!?)(\w+)( limit-in| limit-out)?/)))
      x.matches.push(
        `-m addrtype ${m[2] ? '! ' : ''}--${m[1]}-type ${m[3]}${m[4] ? ` --limit-iface-${m[4].trim().slice(6)}` : ''}`,
      );
    else if ((m = take(/^mark match (! ?)?(\S+)/)))
      x.matches.push(`-m mark ${m[1] ? '! ' : ''}--mark ${m[2]}`);
    else if (
      (m = take(
        /^recent: (CHECK|SET|UPDATE|REMOVE)(?: seconds: (\d+))?( reap)?(?: hit_count: \d+)?(?: TTL-Match)? name: (\S+) side: (source|dest)(?: mask: (\S+))?/,
      ))
    ) {
      const action = { CHECK: 'rcheck', SET: 'set', UPDATE: 'update', REMOVE: 'remove' }[
        m[1] as 'CHECK'
      ];
      x.matches.push(
        `-m recent --${action}${m[2] ? ` --seconds ${m[2]}` : ''}${m[3] ? ' --reap' : ''} --name ${m[4]}${m[6] ? ` --mask ${m[6]}` : ''} --${m[5] === 'source' ? 'r' : 'd'}source`,
      );
    } else if ((m = take(/^(! )?match-set (\S+) (\S+)/)))
      x.matches.push(`-m set ${m[1] ? '! ' : ''}--match-set ${m[2]} ${m[3]}`);
    else if ((m = take(/^(! )?ctstate (\S+)/)))
      x.matches.push(`-m conntrack ${m[1] ? '! ' : ''}--ctstate ${m[2]}`);
    else if ((m = take(/^(! )?state (\S+)/)))
      x.matches.push(`-m state ${m[1] ? '! ' : ''}--state ${m[2]}`);
    else if ((m = take(/^multiport dports (\S+)/))) x.matches.push(`-m multiport --dports ${m[1]}`);
    else if ((m = take(/^to:(\S+)/))) {
      if (!TO.test(m[1]!)) x.incomplete = m[0];
      x.targetOptions.push(`--to-${target === 'SNAT' ? 'source' : 'destination'} ${m[1]}`);
    } else if ((m = take(/^MARK (or|xor|and|set) (0x[0-9a-f]+)(?=\s|$)/i))) {
      const v = m[2]!;
      const op = m[1]!.toLowerCase();
      x.targetOptions.push(
        op === 'or'
          ? `--set-xmark ${v}/${v}`
          : op === 'xor'
            ? `--set-xmark ${v}/0x0`
            : op === 'and'
              ? `--and-mark ${v}`
              : `--set-xmark ${v}/0xffffffff`,
      );
    } else if ((m = take(/^MARK xset (0x[0-9a-f]+)\/(0x[0-9a-f]+)/i)))
      x.targetOptions.push(`--set-xmark ${m[1]}/${m[2]}`);
    else if ((m = take(/^masq ports: (\S+)/))) x.targetOptions.push(`--to-ports ${m[1]}`);
    else if (take(/^random-fully(?=\s|$)/)) x.targetOptions.push('--random-fully');
    else if (take(/^random(?=\s|$)/)) x.targetOptions.push('--random');
    else if ((m = take(/^reject-with (\S+)/))) x.targetOptions.push(`--reject-with ${m[1]}`);
    else {
      // a print cut inside its fixed text, or after it before its value reads
      if (PRINTS.some((p) => p.startsWith(s) || s.startsWith(p))) x.incomplete = s;
      x.unread = true;
      x.matches.push(unreadMatch(s));
      s = '';
    }
  }
  return x;

  /** A `/* … *\/` comment: a comment may hold " *\/" itself, so the end taken is the last one
   * after which the rest reads. */
  function commentOf(): string {
    const ends: number[] = [];
    for (let at = s.indexOf(' */', 3); at >= 0; at = s.indexOf(' */', at + 1)) ends.push(at);
    const end =
      [...ends].reverse().find((at) => {
        const after = s.slice(at + 3).trim();
        return after === '' || !extrasOf(after, target).unread;
      }) ?? ends[0];
    if (end === undefined) {
      const all = s.slice(3);
      x.incomplete = s;
      s = '';
      return all;
    }
    const text = s.slice(3, end);
    s = s.slice(end + 3).trimStart();
    return text;
  }
}
