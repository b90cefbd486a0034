// The typed form of one rule: top-level matches, -m modules with their options, and the
// target. Options a module does not model stay verbatim in `options`, so printing loses nothing.
import { RuleLexer } from './lexer.js';
import { HOT_FIELDS, PORT_MODULES, walkRule, type RuleParts } from './token-walk.js';

/** One `--name value...` of a module or target, as written. */
export interface Option {
  name: string; // without the leading "--"
  values: string[];
  negated: boolean;
  quoted: boolean[];
}

export interface Negatable {
  negated: boolean;
}
export interface Address extends Negatable {
  /** As printed: "10.244.0.0/16", "10.1.190.219/32". */
  cidr: string;
}
export interface Named extends Negatable {
  name: string;
}
export interface PortRange {
  from: number;
  to: number;
}
export interface Ports extends Negatable {
  ranges: PortRange[];
}
export interface Types extends Negatable {
  types: string[];
}

export interface MatchBase {
  module: string;
  options: Option[];
}
export interface CommentMatch extends MatchBase {
  kind: 'comment';
  comment: string;
}
/** tcp, udp, sctp, udplite and dccp: --dport / --sport (also --destination-port / --source-port). */
export interface PortMatch extends MatchBase {
  kind: 'ports';
  dport?: Ports;
  sport?: Ports;
}
export interface MultiportMatch extends MatchBase {
  kind: 'multiport';
  dports?: Ports;
  sports?: Ports;
  ports?: Ports;
}
export interface StatisticMatch extends MatchBase {
  kind: 'statistic';
  mode: 'random' | 'nth' | undefined;
  probability?: number;
  /** The probability exactly as written, e.g. "0.33333333349". */
  probabilityText?: string;
  every?: number;
  packet?: number;
  negated: boolean;
}
export interface MarkMatch extends MatchBase, Negatable {
  kind: 'mark';
  value: number;
  mask: number;
}
export interface AddrtypeMatch extends MatchBase {
  kind: 'addrtype';
  srcType?: Types;
  dstType?: Types;
  limitIfaceIn: boolean;
  limitIfaceOut: boolean;
}
export interface ConntrackMatch extends MatchBase {
  kind: 'conntrack';
  /** --ctstate (conntrack) or --state (the old state module). */
  ctstate?: Types;
}
export interface RecentMatch extends MatchBase, Negatable {
  kind: 'recent';
  action: 'set' | 'rcheck' | 'update' | 'remove' | undefined;
  name: string;
  seconds?: number;
  hitcount?: number;
  reap: boolean;
  mask?: string;
  side: 'source' | 'dest';
}
export interface SetMatch extends MatchBase, Negatable {
  kind: 'set';
  name: string;
  flags: string[];
}
export interface PhysdevMatch extends MatchBase {
  kind: 'physdev';
  in?: Named;
  out?: Named;
  isIn?: Negatable;
  isOut?: Negatable;
  isBridged?: Negatable;
}
export interface OtherMatch extends MatchBase {
  kind: 'other';
}
export type Match =
  | CommentMatch
  | PortMatch
  | MultiportMatch
  | StatisticMatch
  | MarkMatch
  | AddrtypeMatch
  | ConntrackMatch
  | RecentMatch
  | SetMatch
  | PhysdevMatch
  | OtherMatch;

/** A NAT target's --to-destination / --to-source, split. */
export interface NatTo {
  text: string;
  address?: string;
  ports?: PortRange;
}

interface TargetBase {
  name: string;
  goto: boolean;
  options: Option[];
}
export type Target =
  | (TargetBase & { kind: 'dnat'; to?: NatTo; quirk?: string })
  | (TargetBase & { kind: 'snat'; to?: NatTo })
  | (TargetBase & { kind: 'masquerade'; random: boolean; randomFully: boolean; toPorts?: string })
  /** Normalised to --set-xmark: mark = (mark & ~mask) ^ value. */
  | (TargetBase & { kind: 'mark'; value: number; mask: number })
  | (TargetBase & { kind: 'reject'; rejectWith: string })
  | (TargetBase & { kind: 'log'; prefix?: string; level?: string })
  | (TargetBase & { kind: 'verdict' }) // ACCEPT, DROP, RETURN, QUEUE
  | (TargetBase & { kind: 'chain' }) // a jump or goto to a user chain
  | (TargetBase & { kind: 'other' });

export interface Rule {
  table: string;
  chain: string;
  /** 1-based line in the input. */
  line: number;
  source?: Address;
  destination?: Address;
  inInterface?: Named;
  outInterface?: Named;
  protocol?: Named;
  fragment?: Negatable;
  counters?: { packets: number; bytes: number };
  matches: Match[];
  target?: Target;
}

export const DNAT_QUIRK =
  'this iptables binary (1.4.x) cannot print the DNAT target it reads back (":0 --persistent ..."): the endpoint address is not in the dump; read the rules with iptables 1.6 or newer';

const VERDICTS = new Set(['ACCEPT', 'DROP', 'RETURN', 'QUEUE']);
const EXTENSIONS = new Set([
  'CHECKSUM',
  'CLASSIFY',
  'CLUSTERIP',
  'CONNMARK',
  'CONNSECMARK',
  'CT',
  'DSCP',
  'HL',
  'HMARK',
  'IDLETIMER',
  'LED',
  'NETMAP',
  'NFLOG',
  'NFQUEUE',
  'NOTRACK',
  'REDIRECT',
  'SECMARK',
  'SET',
  'SYNPROXY',
  'TCPMSS',
  'TCPOPTSTRIP',
  'TEE',
  'TOS',
  'TPROXY',
  'TRACE',
  'TTL',
  'ULOG',
  'AUDIT',
]);

// scratch for the hot fields' offsets, which buildRule does not read: zeroed on each call
const hot = new Int32Array(HOT_FIELDS * 2);

/** Builds the typed rule from the rule specification bytes in `lexer.buf` (the chain name
 * onwards): the walk that reads the hot fields at load collects its parts. */
export function buildRule(
  lexer: RuleLexer,
  start: number,
  end: number,
  at: { table: string; chain: string; line: number },
): Rule {
  const buf = lexer.buf;
  lexer.lex(start, end);
  const parts: RuleParts = {
    rule: { table: at.table, chain: at.chain, line: at.line, matches: [] },
    modules: new Map(),
  };
  walkRule(buf, lexer, hot.fill(0), parts);
  const rule = parts.rule;
  for (let i = 0; i < rule.matches.length; i++) rule.matches[i] = typeMatch(rule.matches[i]!);
  if (parts.target)
    rule.target = typeTarget(parts.target.name, parts.target.goto, parts.target.options);
  return rule;
}

/** Parses one rule line ("-A CHAIN ...") on its own (the tests type rules with it). */
export function parseRuleLine(line: string, table = 'filter'): Rule {
  const buf = new TextEncoder().encode(line.trim());
  if (buf[0] !== 45 || buf[1] !== 65 || buf[2] !== 32) throw new Error(`not a rule: ${line}`);
  const rule = buildRule(new RuleLexer(buf), 3, buf.length, { table, chain: '', line: 1 });
  const sp = line.trim().indexOf(' ', 3);
  rule.chain = line.trim().slice(3, sp < 0 ? undefined : sp);
  return rule;
}

const opt = (m: MatchBase | Option[], name: string) =>
  (Array.isArray(m) ? m : m.options).find((o) => o.name === name);

function ports(o: Option | undefined): Ports | undefined {
  if (!o || o.values.length === 0) return undefined;
  const ranges = o.values[0]!.split(',').map((p) => {
    const [a, b] = p.split(':');
    const from = Number(a);
    return { from, to: b === undefined ? from : Number(b) };
  });
  return { ranges, negated: o.negated };
}

function types(o: Option | undefined): Types | undefined {
  return o && o.values.length > 0
    ? { types: o.values[0]!.split(','), negated: o.negated }
    : undefined;
}

function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const v = Number(s);
  return Number.isNaN(v) ? undefined : v;
}

/** "0x4000/0x4000" -> value and mask (mask defaults to all ones). */
export function parseMark(s: string): { value: number; mask: number } {
  const [v, m] = s.split('/');
  return { value: Number(v) >>> 0, mask: m === undefined ? 0xffffffff : Number(m) >>> 0 };
}

function typeMatch(m: MatchBase): Match {
  const o = (name: string) => opt(m, name);
  if (PORT_MODULES.includes(m.module))
    return {
      ...m,
      kind: 'ports',
      dport: ports(o('dport') ?? o('destination-port')),
      sport: ports(o('sport') ?? o('source-port')),
    };
  switch (m.module) {
    case 'comment':
      return { ...m, kind: 'comment', comment: o('comment')?.values[0] ?? '' };
    case 'multiport':
      return {
        ...m,
        kind: 'multiport',
        dports: ports(o('dports') ?? o('destination-ports')),
        sports: ports(o('sports') ?? o('source-ports')),
        ports: ports(o('ports')),
      };
    case 'statistic': {
      const mode = o('mode')?.values[0];
      const p = o('probability');
      return {
        ...m,
        kind: 'statistic',
        mode: mode === 'random' || mode === 'nth' ? mode : undefined,
        probability: num(p?.values[0]),
        probabilityText: p?.values[0],
        every: num(o('every')?.values[0]),
        packet: num(o('packet')?.values[0]),
        negated: (p ?? o('every'))?.negated ?? false,
      };
    }
    case 'mark': {
      const mk = o('mark');
      return {
        ...m,
        kind: 'mark',
        ...parseMark(mk?.values[0] ?? '0'),
        negated: mk?.negated ?? false,
      };
    }
    case 'addrtype':
      return {
        ...m,
        kind: 'addrtype',
        srcType: types(o('src-type')),
        dstType: types(o('dst-type')),
        limitIfaceIn: o('limit-iface-in') !== undefined,
        limitIfaceOut: o('limit-iface-out') !== undefined,
      };
    case 'conntrack':
    case 'state':
      return { ...m, kind: 'conntrack', ctstate: types(o('ctstate') ?? o('state')) };
    case 'recent': {
      const action = (['set', 'rcheck', 'update', 'remove'] as const).find(
        (a) => o(a) !== undefined,
      );
      return {
        ...m,
        kind: 'recent',
        action,
        negated: action ? o(action)!.negated : false,
        name: o('name')?.values[0] ?? 'DEFAULT',
        seconds: num(o('seconds')?.values[0]),
        hitcount: num(o('hitcount')?.values[0]),
        reap: o('reap') !== undefined,
        mask: o('mask')?.values[0],
        side: o('rdest') !== undefined ? 'dest' : 'source',
      };
    }
    case 'set': {
      const s = o('match-set') ?? o('set');
      return {
        ...m,
        kind: 'set',
        name: s?.values[0] ?? '',
        flags: (s?.values[1] ?? '').split(',').filter(Boolean),
        negated: s?.negated ?? false,
      };
    }
    case 'physdev': {
      const named = (x: Option | undefined) =>
        x ? { name: x.values[0] ?? '', negated: x.negated } : undefined;
      const flag = (x: Option | undefined) => (x ? { negated: x.negated } : undefined);
      return {
        ...m,
        kind: 'physdev',
        in: named(o('physdev-in')),
        out: named(o('physdev-out')),
        isIn: flag(o('physdev-is-in')),
        isOut: flag(o('physdev-is-out')),
        isBridged: flag(o('physdev-is-bridged')),
      };
    }
    default:
      return { ...m, kind: 'other' };
  }
}

function natTo(o: Option | undefined): NatTo | undefined {
  const v = o?.values[0];
  if (v === undefined) return undefined;
  // "10.0.0.1:80", "[fd00::1]:80", "10.0.0.1", ":80"
  const m = /^(?:\[([^\]]+)\]|([^:]*|[0-9a-fA-F:]*::?[0-9a-fA-F:]*))(?::(\d+)(?:-(\d+))?)?$/.exec(
    v,
  );
  const bracketed = v.startsWith('[');
  if (!bracketed && (v.match(/:/g) ?? []).length > 1) return { text: v, address: v }; // bare IPv6
  if (!m) return { text: v };
  const address = (m[1] ?? m[2]) || undefined;
  const from = m[3] === undefined ? undefined : Number(m[3]);
  return {
    text: v,
    address,
    ports: from === undefined ? undefined : { from, to: m[4] === undefined ? from : Number(m[4]) },
  };
}

function typeTarget(name: string, goto: boolean, options: Option[]): Target {
  const base = { name, goto, options };
  const o = (n: string) => opt(options, n);
  switch (name) {
    case 'DNAT': {
      const tos = options.filter((x) => x.name === 'to-destination');
      const quirk =
        tos.some((x) => x.values[0] === ':0') && (tos.length > 1 || o('persistent') !== undefined);
      return quirk
        ? { ...base, kind: 'dnat', quirk: DNAT_QUIRK }
        : { ...base, kind: 'dnat', to: natTo(tos[0]) };
    }
    case 'SNAT':
      return { ...base, kind: 'snat', to: natTo(o('to-source')) };
    case 'MASQUERADE':
      return {
        ...base,
        kind: 'masquerade',
        random: o('random') !== undefined,
        randomFully: o('random-fully') !== undefined,
        toPorts: o('to-ports')?.values[0],
      };
    case 'MARK':
      return { ...base, kind: 'mark', ...markTarget(options) };
    case 'REJECT':
      return {
        ...base,
        kind: 'reject',
        rejectWith: o('reject-with')?.values[0] ?? 'icmp-port-unreachable',
      };
    case 'LOG':
      return {
        ...base,
        kind: 'log',
        prefix: o('log-prefix')?.values[0],
        level: o('log-level')?.values[0],
      };
    default:
      if (VERDICTS.has(name)) return { ...base, kind: 'verdict' };
      if (EXTENSIONS.has(name)) return { ...base, kind: 'other' };
      return { ...base, kind: 'chain' };
  }
}

function markTarget(options: Option[]): { value: number; mask: number } {
  const [first] = options;
  const v = first?.values[0] ?? '0';
  const { value, mask } = parseMark(v);
  switch (first?.name) {
    case 'set-xmark':
      return { value, mask };
    case 'set-mark':
      return { value, mask: (mask | value) >>> 0 };
    case 'or-mark':
      return { value, mask: value };
    case 'and-mark':
      return { value: 0, mask: ~value >>> 0 };
    case 'xor-mark':
      return { value, mask: 0 };
    default:
      return { value: 0, mask: 0 };
  }
}

/** Options whose values iptables-save always quotes. */
const ALWAYS_QUOTED = new Set(['comment', 'log-prefix', 'nflog-prefix']);

function printValue(optName: string, v: string, quoted: boolean): string {
  if (quoted || ALWAYS_QUOTED.has(optName) || v === '' || /[\s"'\\]/.test(v)) {
    return `"${v.replace(/(["\\])/g, '\\$1')}"`;
  }
  return v;
}

function printOptions(options: Option[]): string {
  let out = '';
  for (const o of options) {
    out += o.negated ? ` ! --${o.name}` : ` --${o.name}`;
    // iptables-save prints nfacct's name after two spaces
    if (o.name === 'nfacct-name') out += ' ';
    o.values.forEach((v, i) => (out += ' ' + printValue(o.name, v, o.quoted[i] ?? false)));
  }
  return out;
}

/** The rule in iptables-save's canonical form ("-A CHAIN ..."). */
export function printRule(rule: Rule): string {
  const neg = (x: Negatable) => (x.negated ? '! ' : '');
  let out = `-A ${rule.chain}`;
  if (rule.source) out += ` ${neg(rule.source)}-s ${rule.source.cidr}`;
  if (rule.destination) out += ` ${neg(rule.destination)}-d ${rule.destination.cidr}`;
  if (rule.inInterface) out += ` ${neg(rule.inInterface)}-i ${rule.inInterface.name}`;
  if (rule.outInterface) out += ` ${neg(rule.outInterface)}-o ${rule.outInterface.name}`;
  if (rule.protocol) out += ` ${neg(rule.protocol)}-p ${rule.protocol.name}`;
  if (rule.fragment) out += ` ${neg(rule.fragment)}-f`;
  for (const m of rule.matches) out += ` -m ${m.module}${printOptions(m.options)}`;
  if (rule.counters) out += ` -c ${rule.counters.packets} ${rule.counters.bytes}`;
  if (rule.target)
    out += ` ${rule.target.goto ? '-g' : '-j'} ${rule.target.name}${printOptions(rule.target.options)}`;
  return out;
}
