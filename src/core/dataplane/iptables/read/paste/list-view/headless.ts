// Rows of an `iptables -L` listing above its first Chain line: -L names a row's chain only in the
// Chain line above it, so such a row is read only where what kube-proxy writes in it is written in
// one chain alone (a node port's rules, an endpoint's DNAT).
import { endpointChain } from '../../../../kube-proxy/chain-names.js';
import { HEADER, type Columns } from './columns.js';
import { lineList, type ListViewNote } from './notes.js';
import { ruleOf } from './row.js';
import type { ListViewCut } from './to-rules.js';

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
  /** Rows not read: no Chain line, typed -L or kube-proxy's writing names their chain. */
  chainless: number[];
  /** The paste's last row, where -L printed only part of it: the paste is cut there. */
  cut?: ListViewCut;
}

/** The lines above the first Chain line (or of a paste with none) that are rows in the columns
 * -L printed them in (`columnsAt` the line's 0-based index: its listing's first column header's,
 * or those the -L typed above them prints), or a column header. -L names a row's chain only in the
 * Chain line above it, so a row is read only where what kube-proxy writes in it is written in one
 * chain alone. `where` says where the rows' Chain line is. */
export function headless(
  lines: string[],
  columnsAt: (i: number) => Columns | undefined,
  where: { rows: string; rest: string } = ABOVE,
  named: (i: number) => { chain: string; line: number } | undefined = () => undefined,
  lastText = -1,
): Headless | undefined {
  const out = new Map<number, string>();
  const rows: number[] = []; // the rule rows among them, not the column header
  const read = new Map<string, { lines: number[]; why: string; typed: boolean }>();
  const notRead: number[] = [];
  const unread: number[] = [];
  let plain: number | undefined;
  let cut: ListViewCut | undefined;
  lines.forEach((l, i) => {
    // its column header too, where the paste starts between its Chain line and it
    if (HEADER.test(l)) return void out.set(i + 1, '');
    const cols = columnsAt(i);
    const rule =
      l.trim() === '' || !cols ? undefined : ruleOf(l, UNKNOWN_CHAIN, cols, i === lastText);
    if (!rule) return;
    rows.push(i + 1);
    // the paste's last row, cut mid-row: the rules parser says the cut (its chain is not known)
    if ('cut' in rule) {
      cut = { line: i + 1, reason: rule.cut, text: l.trim() };
      return void out.set(i + 1, `-A ${UNKNOWN_CHAIN}`);
    }
    // the chain the -L typed above names is where iptables printed the row: read before any
    // inference from what kube-proxy writes in it
    const typed = named(i);
    const implied = typed
      ? {
          chain: typed.chain,
          why: `the chain the \`iptables -L\` typed on line ${typed.line} lists, from the command typed`,
          typed: true,
        }
      : impliedChain(rule.text);
    if (!implied) {
      notRead.push(i + 1);
      return void out.set(i + 1, '');
    }
    out.set(i + 1, `-A ${implied.chain}${rule.text.slice(`-A ${UNKNOWN_CHAIN}`.length)}`);
    const at = read.get(implied.chain) ?? {
      lines: [],
      why: implied.why,
      typed: 'typed' in implied,
    };
    at.lines.push(i + 1);
    read.set(implied.chain, at);
    if (rule.plain) plain ??= i + 1;
    if (rule.unread) unread.push(i + 1);
  });
  if (out.size === 0) return undefined;
  const said = [...read].map(
    ([chain, r]) =>
      `${lineList(r.lines)} read as ${chain}'s, ${r.typed ? r.why : `the chain inferred from what kube-proxy writes in ${r.lines.length === 1 ? 'it' : 'them'} (${r.why})`}, ${where.rest}`,
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
            message: `${lineList(rows)}: ${where.rows}: ${said.join('; ')}`,
            lines: rows,
          },
        }
      : {}),
    plain,
    unread,
    chainless: notRead,
    ...(cut ? { cut } : {}),
  };
}

/** Rows above a listing's first Chain line. */
const ABOVE = {
  rows: 'rules of a chain whose Chain line is above the paste, not in it',
  rest: 'its rules above the paste not known',
};

/** The chain name a headless row is read with before its chain is known. */
const UNKNOWN_CHAIN = 'X';

/** A Service port's name as kube-proxy comments a node-port or endpoint rule with it, bare. */
const BARE_NAME = /^[^\s/]+\/[^\s/]+$/;

/** The chain a rule (in -S form) is in, where kube-proxy writes such a rule in that chain only
 * (pkg/proxy/iptables/proxier.go), with why; undefined where it writes it in several or none. */
function impliedChain(rule: string): { chain: string; why: string } | undefined {
  const comments = [...rule.matchAll(/ -m comment --comment "((?:[^"\\]|\\.)*)"/g)];
  const name = comments.length === 1 ? comments[0]![1]!.replace(/\\(.)/g, '$1') : undefined;
  // a cluster IP's jump to its Service chain: kube-proxy writes it in KUBE-SERVICES alone
  const bareTarget = / -j (\S+)/.exec(rule.replace(/"(?:[^"\\]|\\.)*"/g, '""'))?.[1];
  if (
    name !== undefined &&
    / cluster IP$/.test(name) &&
    BARE_NAME.test(name.slice(0, -' cluster IP'.length)) &&
    / -d [\d.:a-fA-F]+(?:\/\d+)? /.test(rule) &&
    /^KUBE-SVC-[A-Z0-9]{16}$/.test(bareTarget ?? '')
  )
    return {
      chain: 'KUBE-SERVICES',
      why: 'a cluster IP\'s jump to its Service chain, commented with the Service port\'s name and "cluster IP"',
    };
  if (name === undefined || !BARE_NAME.test(name)) return undefined;
  // what the rule matches and does, outside any quoted text a word of it could hold
  const bare = rule.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const target = / -j (\S+)/.exec(bare)?.[1];
  // a node port's rules (its jump, and before v1.24 its masquerade) are the only ones commented
  // with the bare name that match a destination port
  if (
    / -m (?:tcp|udp|sctp) --dport \d+(?: |$)/.test(bare) &&
    (target === 'KUBE-MARK-MASQ' || /^KUBE-(?:SVC|EXT|XLB)-[A-Z0-9]{16}$/.test(target ?? ''))
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
