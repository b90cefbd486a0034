// `iptables -L` as people paste it (`-t nat`, `-n`, `-v`, `-x`, `--line-numbers`, one chain or
// all), rewritten line for line into `iptables -S` form so that the one rules parser reads it and
// its line numbers stay the paste's: a Chain header becomes -N (a built-in chain's -P), each rule
// line -A with the matches -L printed (iptables' own print functions for each match and target).
// What the view does not print (interfaces without -v, numbers without -n) is said, never guessed.

/** A paste holding an `iptables -L` listing: a Chain header, then its column header. */
export function isListView(head: string): boolean {
  return /(?:^|\n)[ \t]*Chain \S+ \((?:policy \w+[^)]*|\d+ references)\)[ \t]*\r?\n[ \t]*(?:num +)?(?:pkts +bytes +)?target +prot +opt\b/.test(
    head,
  );
}

export interface ListViewRules {
  /** The same lines, each -L line replaced by its -S form (others kept as they were). */
  text: string;
  /** What the view leaves out, one sentence each. */
  notes: string[];
}

interface Columns {
  num: boolean;
  counters: boolean;
  interfaces: boolean;
}

const HEADER =
  /^[ \t]*(num +)?(pkts +bytes +)?target +prot +opt +(in +out +)?source +destination\s*$/;
const CHAIN = /^[ \t]*Chain (\S+) \((?:policy (\w+)[^)]*|\d+ references)\)\s*$/;
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
  '58': 'ipv6-icmp',
};
/** The ports -L without -n names (its /etc/services), for the ones Services commonly use. */
const PORT_NAMES: Record<string, number> = {
  http: 80,
  https: 443,
  domain: 53,
  'http-alt': 8080,
  webcache: 8080,
  'sun-sr-https': 6443,
  'kube-apiserver': 6443,
  mysql: 3306,
  postgresql: 5432,
  redis: 6379,
  'pcsync-https': 8443,
};

export function listViewToRules(text: string): ListViewRules {
  const lines = text.split('\n');
  let columns: Columns | undefined;
  let chain: string | undefined;
  let names = false;
  let unread = 0;
  const out = lines.map((raw) => {
    const line = raw.replace(/\r$/, '');
    const c = CHAIN.exec(line);
    if (c) {
      chain = c[1]!;
      columns = undefined;
      // a built-in chain too: -P lines would read as the start of another listing
      return `-N ${chain}`;
    }
    const h = HEADER.exec(line);
    if (h && chain) {
      columns = { num: !!h[1], counters: !!h[2], interfaces: !!h[3] };
      return '';
    }
    if (!columns || !chain || line.trim() === '') {
      if (line.trim() === '') columns = columns && chain ? columns : undefined;
      return line;
    }
    const rule = ruleOf(line, chain, columns);
    if (!rule) return line;
    names ||= rule.names;
    if (rule.unread) unread++;
    return rule.text;
  });
  const notes = ['read from an `iptables -L` listing, rewritten as `iptables -S` rules'];
  const all = lines.map((l) => HEADER.exec(l)).filter((h) => h !== null);
  if (all.some((h) => !h[3]))
    notes.push('-L without -v prints no interfaces: rules limited to one are shown as for all');
  if (names)
    notes.push(
      '-L without -n prints names, not numbers: an address shown as a name is not read, and the rule is read without it',
    );
  if (unread > 0)
    notes.push(
      `${unread} rule${unread === 1 ? '' : 's'} printed a match kdebug does not know in -L form: read without it`,
    );
  return { text: out.join('\n'), notes };
}

/** One rule line of the listing in -S form; undefined when it is not one. */
function ruleOf(
  line: string,
  chain: string,
  cols: Columns,
): { text: string; names: boolean; unread: boolean } | undefined {
  const words = [...line.matchAll(/\S+/g)];
  let k = 0;
  const word = () => words[k]?.[0] ?? '';
  if (cols.num && !/^\d+$/.test(words[k++]?.[0] ?? '')) return undefined;
  if (cols.counters) {
    if (!/^\d+[KMGT]?$/.test(word())) return undefined;
    k++;
    if (!/^\d+[KMGT]?$/.test(word())) return undefined;
    k++;
  }
  // a rule without a target leaves its column blank: the protocol comes first
  const opt = /^(?:--|-f|!f)$/;
  const target = PROTOCOLS[word()] && opt.test(words[k + 1]?.[0] ?? '') ? undefined : word();
  if (target !== undefined) k++;
  const protocol = PROTOCOLS[word()];
  k++;
  if (!protocol || !opt.test(word())) return undefined;
  k++;
  const inIf = cols.interfaces ? words[k++]?.[0] : undefined;
  const outIf = cols.interfaces ? words[k++]?.[0] : undefined;
  const source = words[k++]?.[0];
  const destination = words[k]?.[0];
  if (source === undefined || destination === undefined) return undefined;
  const after = words[k]!.index! + destination.length;
  let names = false;
  const parts = [`-A ${chain}`];
  for (const [flag, value] of [
    ['-s', source],
    ['-d', destination],
  ] as const) {
    const a = address(value);
    if (a === 'name') names = true;
    else if (a) parts.push(`${a.not ? '! ' : ''}${flag} ${a.cidr}`);
  }
  for (const [flag, value] of [
    ['-i', inIf],
    ['-o', outIf],
  ] as const)
    if (value !== undefined && value !== '*')
      parts.push(value.startsWith('!') ? `! ${flag} ${value.slice(1)}` : `${flag} ${value}`);
  if (protocol !== 'all') parts.push(`-p ${protocol}`);
  const extras = extrasOf(line.slice(after).trim(), target);
  names ||= extras.names;
  parts.push(...extras.matches);
  if (target) parts.push(`-j ${target}`, ...extras.targetOptions);
  return { text: parts.join(' '), names, unread: extras.unread };
}

/** A source or destination column: none for "any", a CIDR, or a name -L printed for it. */
function address(value: string): { cidr: string; not: boolean } | 'name' | undefined {
  const not = value.startsWith('!');
  const v = not ? value.slice(1) : value;
  if (v === '0.0.0.0/0' || v === '::/0' || v === 'anywhere') return undefined;
  const [ip, bits] = v.split('/');
  const v4 = /^\d{1,3}(?:\.\d{1,3}){3}$/.test(ip ?? '');
  const v6 = !v4 && /^[0-9a-fA-F:]+$/.test(ip ?? '') && (ip ?? '').includes(':');
  if (!v4 && !v6) return 'name';
  return { cidr: `${ip}/${bits ?? (v4 ? '32' : '128')}`, not };
}

const quoted = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The matches and target options -L printed after the destination, in -S form. */
function extrasOf(
  rest: string,
  target: string | undefined,
): { matches: string[]; targetOptions: string[]; names: boolean; unread: boolean } {
  const matches: string[] = [];
  const targetOptions: string[] = [];
  let names = false;
  let s = rest;
  const take = (re: RegExp): RegExpExecArray | null => {
    const m = re.exec(s);
    if (m) s = s.slice(m[0].length).trimStart();
    return m;
  };
  const port = (p: string): string | undefined => {
    const n = p
      .split(':')
      .map((x) => (/^\d+$/.test(x) ? x : PORT_NAMES[x]?.toString()))
      .filter((x) => x !== undefined);
    if (n.length !== p.split(':').length) names = true;
    return n.length === p.split(':').length ? n.join(':') : undefined;
  };
  while (s.length > 0) {
    let m: RegExpExecArray | null;
    if ((m = take(/^\/\* (.*?) \*\//))) matches.push(`-m comment --comment ${quoted(m[1]!)}`);
    else if ((m = take(/^(tcp|udp|sctp)((?: (?:spts?|dpts?):!?\S+)*)(?=\s|$)/))) {
      const opts: string[] = [];
      for (const p of m[2]!.trim().split(' ')) {
        const [, dir, not, value] = /^(s|d)pts?:(!?)(\S+)$/.exec(p) ?? [];
        const v = value === undefined ? undefined : port(value);
        if (v !== undefined) opts.push(`${not ? '! ' : ''}--${dir}port ${v}`);
      }
      matches.push(`-m ${m[1]}`, ...opts);
    } else if ((m = take(/^statistic mode random probability ([\d.]+)/)))
      matches.push(`-m statistic --mode random --probability ${m[1]}`);
    else if ((m = take(/^statistic mode nth every (\d+)(?: packet (\d+))?/)))
      matches.push(`-m statistic --mode nth --every ${m[1]}${m[2] ? ` --packet ${m[2]}` : ''}`);
    else if ((m = take(/^ADDRTYPE match (src|dst)-type (!?)(\w+)( limit-in| limit-out)?/)))
      matches.push(
        `-m addrtype ${m[2] ? '! ' : ''}--${m[1]}-type ${m[3]}${m[4] ? ` --limit-iface-${m[4].trim().slice(6)}` : ''}`,
      );
    else if ((m = take(/^mark match (! ?)?(\S+)/)))
      matches.push(`-m mark ${m[1] ? '! ' : ''}--mark ${m[2]}`);
    else if (
      (m = take(
        /^recent: (CHECK|SET|UPDATE|REMOVE)(?: seconds: (\d+))?( reap)?(?: hit_count: \d+)?(?: TTL-Match)? name: (\S+) side: (source|dest)(?: mask: (\S+))?/,
      ))
    ) {
      const action = { CHECK: 'rcheck', SET: 'set', UPDATE: 'update', REMOVE: 'remove' }[
        m[1] as 'CHECK'
      ];
      matches.push(
        `-m recent --${action}${m[2] ? ` --seconds ${m[2]}` : ''}${m[3] ? ' --reap' : ''} --name ${m[4]}${m[6] ? ` --mask ${m[6]}` : ''} --${m[5] === 'source' ? 'r' : 'd'}source`,
      );
    } else if ((m = take(/^(! )?match-set (\S+) (\S+)/)))
      matches.push(`-m set ${m[1] ? '! ' : ''}--match-set ${m[2]} ${m[3]}`);
    else if ((m = take(/^ctstate (\S+)/))) matches.push(`-m conntrack --ctstate ${m[1]}`);
    else if ((m = take(/^state (\S+)/))) matches.push(`-m state --state ${m[1]}`);
    else if ((m = take(/^multiport dports (\S+)/))) matches.push(`-m multiport --dports ${m[1]}`);
    else if ((m = take(/^to:(\S+)/)))
      targetOptions.push(`--to-${target === 'SNAT' ? 'source' : 'destination'} ${m[1]}`);
    else if ((m = take(/^MARK (or|xor|set) (0x[0-9a-f]+)/i))) {
      const mask = { or: m[2], xor: '0x0', set: '0xffffffff' }[m[1]!.toLowerCase() as 'or'];
      targetOptions.push(`--set-xmark ${m[2]}/${mask}`);
    } else if ((m = take(/^MARK set (0x[0-9a-f]+)\/(0x[0-9a-f]+)/i)))
      targetOptions.push(`--set-xmark ${m[1]}/${m[2]}`);
    else if ((m = take(/^masq ports: (\S+)/))) targetOptions.push(`--to-ports ${m[1]}`);
    else if ((m = take(/^random-fully\b/))) targetOptions.push('--random-fully');
    else if ((m = take(/^random\b/))) targetOptions.push('--random');
    else if ((m = take(/^reject-with (\S+)/))) targetOptions.push(`--reject-with ${m[1]}`);
    else return { matches, targetOptions, names, unread: true };
  }
  return { matches, targetOptions, names, unread: false };
}
