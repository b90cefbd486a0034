// What an `iptables -L` row prints after its destination, read back into -S form: the matches
// (iptables' print function of each) and its target's options; text it does not read is kept as
// unread, and a print cut short is where the paste was cut.
import { SERVICE_PORTS } from '../../../../ipvs/read/service-names.js';
import { quoted, unreadMatch } from './unread.js';

/** An address (and port) its author hid in a `to:`: x's or stars for digits, a <placeholder>. */
const HIDDEN =
  /^(?:[\dxX*]{1,3}(?:\.[\dxX*]{1,3}){3}|<[^<>]+>|\[[\da-fA-FxX*:]+\])(?::\d+(?:-\d+)?)?$/;

/** DNAT's and SNAT's `to:` as -L prints it: an address (a range), then a port (a range). */
const TO =
  /^(?:\d{1,3}(?:\.\d{1,3}){3}(?:-\d{1,3}(?:\.\d{1,3}){3})?|\[[0-9a-fA-F:.]+\](?:-\[[0-9a-fA-F:.]+\])?|[0-9a-fA-F:]*:[0-9a-fA-F:.]+)(?::\d+(?:-\d+)?)?$/;

interface Extras {
  matches: string[];
  targetOptions: string[];
  plain: boolean;
  unread: boolean;
  /** A value is a template's placeholder ("{{ service port }}"): kept as not read. */
  placeholder?: true;
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
  'nfacct-name ',
];

/** Targets whose -L print always carries an option (`to:`, `reject-with`, MARK's operation). */
const TARGET_PRINTS: Record<string, RegExp> = {
  DNAT: /^--to-destination /,
  SNAT: /^--to-source /,
  REJECT: /^--reject-with /,
  MARK: /^--(?:set-xmark|and-mark) /,
};

/** A target whose option -L always prints, without it: the last line was cut before it. */
export function missingOption(target: string | undefined, x: Extras): boolean {
  const option = target === undefined ? undefined : TARGET_PRINTS[target];
  return option !== undefined && !x.targetOptions.some((o) => option.test(o));
}

export const excerptEnd = (s: string) => (s.length > 40 ? `…${s.slice(-40)}` : s);

/** A template's placeholder typed where -L prints a value: one value, blanks and all. */
export const PLACEHOLDER = /^\{\{[^{}]*\}\}$/;

/** The matches and target options -L printed after the destination, in -S form. */
export function extrasOf(rest: string, target: string | undefined): Extras {
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
    // a template's placeholder ("{{ service port }}") is no name -n would have turned to a number
    if (!PLACEHOLDER.test(p) && p.split(':').some((v) => !/^\d+$/.test(v))) x.plain = true;
    return n.every((v) => v !== undefined) ? n.join(':') : undefined;
  };
  while (s.length > 0) {
    let m: RegExpExecArray | null;
    if (s.startsWith('/* ')) {
      x.matches.push(`-m comment --comment ${quoted(commentOf())}`);
    } else if (
      (m = take(/^(tcp|udp|sctp)((?: (?:spts?|dpts?):!?(?:\{\{[^{}]*\}\}|\S+))*)(?=\s|$)/))
    ) {
      const opts: string[] = [];
      const unreadPorts: string[] = [];
      for (const [p] of m[2]!.matchAll(/(?:spts?|dpts?):!?(?:\{\{[^{}]*\}\}|\S+)/g)) {
        const [, dir, not, value] = /^(s|d)pts?:(!?)(.+)$/.exec(p) ?? [];
        const v = value === undefined ? undefined : port(value);
        if (v !== undefined) opts.push(`${not ? '! ' : ''}--${dir}port ${v}`);
        else {
          const placed = PLACEHOLDER.test(value!);
          if (placed) x.placeholder = true;
          else x.unread = true;
          const of = dir === 's' ? 'sport' : 'dport';
          unreadPorts.push(unreadMatch(`${m[1]} ${p}`, placed ? { of, value: value! } : undefined));
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
    // libxt_nfacct prints " nfacct-name " and the name as xtables_save_string writes it (a blank
    // before it, quoted where it holds one): kube-proxy's localhost node port and INVALID counters
    else if ((m = take(/^nfacct-name\s+("(?:[^"\\]|\\.)*"|\S+)/)))
      x.matches.push(`-m nfacct --nfacct-name ${m[1]}`);
    else if ((m = take(/^multiport dports (\S+)/))) x.matches.push(`-m multiport --dports ${m[1]}`);
    else if ((m = take(/^to:(\S+)/))) {
      // an address its author hid ("to:<IP>:8080", "to:x.x.x.x:80") is no print cut short: the
      // rule is read as it stands, its target said hidden (unread-rules.ts)
      if (!TO.test(m[1]!) && !HIDDEN.test(m[1]!)) x.incomplete = m[0];
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
