// One walk over a rule's tokens. At load it reads only the hot fields (byte offsets and flags,
// nothing allocated per rule); for a typed rule the same walk also collects every option as
// written, so the table's fields and the typed rule cannot read a rule two ways.
import { hostCidr } from '../../../ipv6.js';
import { Flag, LineSyntaxError, Role, type RuleLexer, SLOT, text, unescaped } from './lexer.js';
import type { MatchBase, Option, Rule } from './rule/rule.js';

/** The hot fields, in the order they are packed. */
export const H = {
  target: 0,
  comment: 1,
  src: 2,
  dst: 3,
  proto: 4,
  dport: 5,
  probability: 6,
  to: 7,
} as const;
export const HOT_FIELDS = 8;

/** Bits of the flags field. */
export const RuleFlag = {
  goto: 1,
  srcNegated: 2,
  dstNegated: 4,
  protoNegated: 8,
  dportNegated: 16,
  commentQuoted: 32,
  recentRcheck: 64,
  recentSet: 128,
  dnatQuirk: 256,
  /** Matches other than comment, the port modules and statistic. */
  hasOtherMatches: 512,
  targetDnat: 1024,
  targetMarkMasq: 2048,
  /** The line starts with iptables-save -c counters: "[packets:bytes] -A ...". */
  counters: 4096,
} as const;

/** The match modules with --dport / --sport. */
export const PORT_MODULES = ['tcp', 'udp', 'sctp', 'udplite', 'dccp'];

/** What the walk collects for a typed rule: its top-level fields and untyped matches in `rule`,
 * and the target as written. */
export interface RuleParts {
  rule: Rule;
  target?: { name: string; goto: boolean; options: Option[] };
  /** The matches by their module's token index, as the walk meets their options. */
  modules: Map<number, MatchBase>;
}

// Module and option names compared as bytes.
const enc = (s: string) => Array.from(s, (ch) => ch.charCodeAt(0));
const M_COMMENT = enc('comment');
const M_PORTS = PORT_MODULES.map(enc);
function isPortModule(b: Uint8Array, s: number, e: number): boolean {
  for (let i = 0; i < M_PORTS.length; i++) if (is(b, s, e, M_PORTS[i]!)) return true;
  return false;
}
const M_STATISTIC = enc('statistic');
const M_RECENT = enc('recent');
const O_COMMENT = enc('--comment');
const O_DPORT = enc('--dport');
const O_DPORT_LONG = enc('--destination-port');
const O_PROBABILITY = enc('--probability');
const O_RCHECK = enc('--rcheck');
const O_SET = enc('--set');
const O_TO_DEST = enc('--to-destination');
const O_TO_SRC = enc('--to-source');
const T_DNAT = enc('DNAT');
const T_MARK_MASQ = enc('KUBE-MARK-MASQ');

function is(b: Uint8Array, s: number, e: number, word: number[]): boolean {
  if (e - s !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (b[s + k] !== word[k]) return false;
  return true;
}

/** The value token at slot offset k, unquoted and unescaped. */
function value(b: Uint8Array, t: Int32Array, k: number): string {
  return (t[k + 3]! & Flag.Quoted) !== 0
    ? unescaped(b, t[k]!, t[k + 1]!)
    : text(b, t[k]!, t[k + 1]!);
}

/** The option at slot offset k with the values that follow it. */
function option(b: Uint8Array, t: Int32Array, k: number, n: number): Option {
  const o: Option = {
    name: text(b, t[k]! + 2, t[k + 1]!),
    values: [],
    negated: (t[k + 3]! & Flag.Negated) !== 0,
    quoted: [],
  };
  for (let v = k + SLOT; v < n && t[v + 2] === Role.Value; v += SLOT) {
    o.values.push(value(b, t, v));
    o.quoted.push((t[v + 3]! & Flag.Quoted) !== 0);
  }
  return o;
}

/** A top-level option (-s -d -i -o -p -f -c) at slot offset k, into the typed rule. */
function topOption(rule: Rule, b: Uint8Array, t: Int32Array, k: number): void {
  const letter = String.fromCharCode(t[k + 4]!);
  const negated = (t[k + 3]! & Flag.Negated) !== 0;
  if (letter === 'f') rule.fragment = { negated };
  else if (letter === 'c')
    rule.counters = {
      packets: Number(value(b, t, k + SLOT)),
      bytes: Number(value(b, t, k + 2 * SLOT)),
    };
  else {
    const v = value(b, t, k + SLOT);
    if (letter === 's') rule.source = { cidr: hostCidr(v), negated };
    else if (letter === 'd') rule.destination = { cidr: hostCidr(v), negated };
    else if (letter === 'i') rule.inInterface = { name: v, negated };
    else if (letter === 'o') rule.outInterface = { name: v, negated };
    else rule.protocol = { name: v, negated };
  }
}

function addMatch(parts: RuleParts, token: number, module: string): void {
  const m: MatchBase = { module, options: [] };
  parts.modules.set(token, m);
  parts.rule.matches.push(m as Rule['matches'][number]);
}

/**
 * Walks the lexer's tokens once: the offsets of the hot fields into `c` (pairs in H order, `c`
 * zeroed by the caller) and the rule's flags returned; with `parts`, the typed rule's parts too.
 * Throws LineSyntaxError where a hot field does not read (an address, a port, a probability).
 */
export function walkRule(b: Uint8Array, lex: RuleLexer, c: Int32Array, parts?: RuleParts): number {
  const t = lex.tokens;
  const n = lex.count * SLOT;
  let flags = 0;
  let toCount = 0;
  for (let k = SLOT; k < n; k += SLOT) {
    const role = t[k + 2]!;
    const f = t[k + 3]!;
    if (role === Role.Top) {
      const letter = t[k + 4]!;
      const vs = t[k + SLOT]!;
      const ve = t[k + SLOT + 1]!;
      const neg = (f & Flag.Negated) !== 0;
      if (letter === 115 || letter === 100) {
        checkAddress(b, vs, ve);
        const slot = letter === 115 ? 2 * H.src : 2 * H.dst;
        if (c[slot + 1]! === 0) {
          c[slot] = vs;
          c[slot + 1] = ve;
          if (neg) flags |= letter === 115 ? RuleFlag.srcNegated : RuleFlag.dstNegated;
        }
      } else if (letter === 112) {
        c[2 * H.proto] = vs;
        c[2 * H.proto + 1] = ve;
        if (neg) flags |= RuleFlag.protoNegated;
      } else if (letter === 105 || letter === 111) flags |= RuleFlag.hasOtherMatches; // -i / -o
      if (parts) topOption(parts.rule, b, t, k);
    } else if (role === Role.Module) {
      const s = t[k]!;
      const e = t[k + 1]!;
      if (!is(b, s, e, M_COMMENT) && !isPortModule(b, s, e) && !is(b, s, e, M_STATISTIC)) {
        flags |= RuleFlag.hasOtherMatches;
      }
      if (parts) addMatch(parts, k / SLOT, text(b, s, e));
    } else if (role === Role.ModuleOption) {
      const s = t[k]!;
      const e = t[k + 1]!;
      const m = t[k + 4]! * SLOT;
      const ms = t[m]!;
      const me = t[m + 1]!;
      const hasValue = k + SLOT < n && t[k + SLOT + 2] === Role.Value;
      const vs = hasValue ? t[k + SLOT]! : 0;
      const ve = hasValue ? t[k + SLOT + 1]! : 0;
      if (is(b, s, e, O_COMMENT) && is(b, ms, me, M_COMMENT)) {
        if (!hasValue) throw new LineSyntaxError('--comment without text');
        if (c[2 * H.comment + 1] === 0) {
          c[2 * H.comment] = vs;
          c[2 * H.comment + 1] = ve;
          if ((t[k + SLOT + 3]! & Flag.Quoted) !== 0) flags |= RuleFlag.commentQuoted;
        }
      } else if ((is(b, s, e, O_DPORT) || is(b, s, e, O_DPORT_LONG)) && isPortModule(b, ms, me)) {
        if (!hasValue) throw new LineSyntaxError(`${text(b, s, e)} without a port`);
        checkPorts(b, vs, ve);
        c[2 * H.dport] = vs;
        c[2 * H.dport + 1] = ve;
        if ((f & Flag.Negated) !== 0) flags |= RuleFlag.dportNegated;
      } else if (is(b, s, e, O_PROBABILITY) && is(b, ms, me, M_STATISTIC)) {
        if (!hasValue) throw new LineSyntaxError('--probability without a value');
        checkProbability(b, vs, ve);
        c[2 * H.probability] = vs;
        c[2 * H.probability + 1] = ve;
      } else if (is(b, ms, me, M_RECENT)) {
        if (is(b, s, e, O_RCHECK)) flags |= RuleFlag.recentRcheck;
        else if (is(b, s, e, O_SET)) flags |= RuleFlag.recentSet;
      }
      if (parts) parts.modules.get(t[k + 4]!)!.options.push(option(b, t, k, n));
    } else if (role === Role.Target) {
      c[2 * H.target] = t[k]!;
      c[2 * H.target + 1] = t[k + 1]!;
      if ((f & Flag.Goto) !== 0) flags |= RuleFlag.goto;
      if (is(b, t[k]!, t[k + 1]!, T_DNAT)) flags |= RuleFlag.targetDnat;
      else if (is(b, t[k]!, t[k + 1]!, T_MARK_MASQ)) flags |= RuleFlag.targetMarkMasq;
      if (parts)
        parts.target = {
          name: text(b, t[k]!, t[k + 1]!),
          goto: (f & Flag.Goto) !== 0,
          options: [],
        };
    } else if (role === Role.TargetOption) {
      const s = t[k]!;
      const e = t[k + 1]!;
      if (is(b, s, e, O_TO_DEST) || is(b, s, e, O_TO_SRC)) {
        toCount++;
        // iptables 1.4.x reading a range it did not write prints one range per bit of its flags
        // (three for kube-proxy's address:port), each empty, ":0", "0.0.0.0" or "0.0.0.0:0": a
        // second range, an empty one or port 0 (which iptables refuses to write) is that print
        if (toCount > 1) flags |= RuleFlag.dnatQuirk;
        const hasValue = k + SLOT < n && t[k + SLOT + 2] === Role.Value;
        if (!hasValue) {
          if (toCount === 1 && k + SLOT >= n)
            throw new LineSyntaxError(`${text(b, s, e)} without an address`);
          flags |= RuleFlag.dnatQuirk;
        } else {
          const vs = t[k + SLOT]!;
          const ve = t[k + SLOT + 1]!;
          if (toCount === 1) {
            c[2 * H.to] = vs;
            c[2 * H.to + 1] = ve;
          }
          checkNatTarget(b, vs, ve);
          // port 0 after an address; a bare IPv6 address's ":0" is its last group (rule/target.ts)
          if (ve - vs >= 2 && b[ve - 1] === 48 /* 0 */ && b[ve - 2] === 58 /* : */) {
            const colon = b.subarray(vs, ve - 2).indexOf(58);
            if (b[ve - 3] === 93 /* ] */ || colon < 0) flags |= RuleFlag.dnatQuirk;
          }
        }
      }
      if (parts) parts.target!.options.push(option(b, t, k, n));
    }
  }
  return flags;
}

/** A NAT target whose address its author hid ("<IP>:8080", "x.x.x.x:80", "10.244.x.x:8080",
 * "{{ pod ip }}:80"): iptables prints every address as numbers, so it is none the node holds;
 * thrown with the address, as an -s or -d hidden so is (unread-rules.ts says it). */
const HIDDEN_NAT_TARGET =
  /^(?=[^:]*[xX*<{]|\[[^\]]*[xX*])(?:[\dxX*]{1,3}(?:\.[\dxX*]{1,3}){3}|<[^<>]+>|\{\{[^{}]*\}\}|\[[\da-fA-FxX*:]+\])(?::\d+(?:-\d+)?)?$/;

function checkNatTarget(b: Uint8Array, s: number, e: number): void {
  // the bytes iptables prints in one are digits, dots, colons, a dash and brackets, hex digits
  for (let k = s; k < e; k++) {
    const ch = b[k]!;
    if (ch === 120 || ch === 88 || ch === 42 || ch === 60 || ch === 123) {
      const to = text(b, s, e);
      if (HIDDEN_NAT_TARGET.test(to)) throw new LineSyntaxError(`"${to}" is not an address`, to);
      return;
    }
  }
}

function checkAddress(b: Uint8Array, s: number, e: number): void {
  for (let k = s; k < e; k++) {
    const ch = b[k]!;
    const ok =
      (ch >= 48 && ch <= 58) ||
      ch === 46 ||
      ch === 47 ||
      (ch >= 97 && ch <= 102) ||
      (ch >= 65 && ch <= 70);
    if (!ok) {
      const address = text(b, s, e);
      throw new LineSyntaxError(`"${address}" is not an address`, address);
    }
  }
}

function checkPorts(b: Uint8Array, s: number, e: number): void {
  for (let k = s; k < e; k++) {
    const ch = b[k]!;
    if (!((ch >= 48 && ch <= 57) || ch === 58))
      throw new LineSyntaxError(`"${text(b, s, e)}" is not a port`);
  }
}

function checkProbability(b: Uint8Array, s: number, e: number): void {
  // "0.33333333349", "1", "1.0", ".5": a number from 0 to 1
  let k = s;
  let whole = 0;
  for (; k < e && b[k] !== 46; k++) {
    if (b[k]! < 48 || b[k]! > 57) break;
    whole = whole * 10 + b[k]! - 48;
  }
  let ok = k > s || (k < e && b[k] === 46);
  if (k < e && b[k] === 46) {
    for (k++; k < e && ok; k++) ok = b[k]! >= 48 && b[k]! <= 57 && (whole === 0 || b[k] === 48);
  }
  if (!ok || k !== e || whole > 1)
    throw new LineSyntaxError(`"${text(b, s, e)}" is not a probability`);
}
