// The typed form of one rule: top-level matches, -m modules with their options (matches.ts),
// and the target (target.ts). Options a module does not model stay verbatim in `options`,
// so printing (print.ts) loses nothing.
import { RuleLexer } from '../lexer.js';
import { HOT_FIELDS, walkRule, type RuleParts } from '../token-walk.js';
import { typeMatch } from './matches.js';
import { typeTarget } from './target.js';

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
