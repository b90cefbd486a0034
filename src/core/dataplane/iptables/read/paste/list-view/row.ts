// One row of an `iptables -L` listing as the -S rule it shows: its counters and number, target,
// protocol, addresses and interfaces, then what it printed after them; a row cut short, or a
// second row run on after it.
import type { Columns } from './columns.js';
import { extrasOf, excerptEnd, missingOption, PLACEHOLDER } from './extras.js';
import { unreadMatch } from './unread.js';

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

const PRINTED = { number: 'number', packets: 'packet count', bytes: 'byte count' };

/** The numeric columns a cut line holds, said: "packet count", "number and packet and byte counts". */
function printedNumbers(numbers: (keyof typeof PRINTED)[]): string {
  const said = numbers.map((n) => PRINTED[n]).join(' and ');
  return said.replace('packet count and byte count', 'packet and byte counts');
}

/** Where a second row starts on a row's line, run on after its first (after the blank or the
 * comment's end it follows): its columns up to the protocol and option columns, as -L prints
 * them; undefined where the line holds one row. */
export function runOn(line: string, cols: Columns): number | undefined {
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
export function ruleOf(
  line: string,
  chain: string,
  cols: Columns,
  last: boolean,
):
  | { text: string; plain: boolean; unread: boolean; placeholder?: true }
  | { cut: string }
  | undefined {
  // a template's placeholder typed where -L prints an address ("{{ node's external ip }}"): one
  // column, blanks and all (-L prints none inside a column)
  const words = [...line.matchAll(/\{\{[^{}]*\}\}|\S+/g)];
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
  let placeholder = false;
  const parts = [`-A ${chain}`];
  const v6 = source.includes(':') || destination.includes(':');
  for (const [flag, what, value] of [
    ['-s', 'source', source],
    ['-d', 'destination', destination],
  ] as const) {
    const a = address(value, v6);
    // the paste's last line, cut mid-address after its target and protocol
    if (a === 'cut' && last) return { cut: `${printed}, and its ${what} cut at "${value}"` };
    if (PLACEHOLDER.test(value.replace(/^!/, ''))) {
      placeholder = true;
      parts.push(unreadMatch(`${what} ${value}`, { of: what, value: value.replace(/^!/, '') }));
    } else if (a === 'name' || a === 'cut') {
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
  return {
    text: parts.join(' '),
    plain,
    unread,
    ...(placeholder || extras.placeholder ? { placeholder: true as const } : {}),
  };
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
