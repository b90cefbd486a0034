// What nft prints inside a table, read alike from its text listing (read-text.ts) and from
// kube-proxy's script (read-script.ts): a set's or map's declaration and its elements, a rule's
// statements, a chain's priority; and a table read, finished with its lookups.
import { walkBrackets } from '../../brackets.js';
import { ELISION } from '../../paste/elisions.js';
import type {
  NftChain,
  NftElement,
  NftExpr,
  NftFamily,
  NftRule,
  NftSet,
  NftTable,
  NftUnread,
} from './listing.js';
import {
  dnatExpr,
  markOrExpr,
  matchExprs,
  numgenDnatExpr,
  numgenVmapExpr,
  updateSaddrExpr,
  verdictExpr,
} from './expr.js';

/** A table being read from the text listing. */
export interface Building {
  family: NftFamily;
  name: string;
  comment?: string;
  chains: NftChain[];
  sets: NftSet[];
  elided?: number[];
  headless?: boolean;
  mapAbove?: { name: string; line: number; grep?: true };
  unread?: NftUnread[];
}

export function finished(t: Building): NftTable {
  const chains = new Map(t.chains.map((c) => [c.name, c]));
  const sets = new Map(t.sets.map((s) => [s.name, s]));
  return { ...t, chain: (n) => chains.get(n), set: (n) => sets.get(n) };
}

/** What nft prints of a set or map (set_print_declaration, then its elements): `say` gets each
 * line, or element, that is none of it (elided: a "..." among the elements), with its offset;
 * `lineAt` gives the pasted line of an offset (each element read keeps its line). */
export function setLine(
  s: NftSet,
  t: string,
  say: (at: number, text: string, elided?: boolean) => void,
  lineAt?: (at: number) => number,
): void {
  let m: RegExpExecArray | null;
  if ((m = /^type(?:of)? (.+?)(?: : (?:interval )?(.+?))?;?$/.exec(t))) {
    s.type = m[1]!.split(' . ');
    if (m[2]) s.map = m[2];
  } else if ((m = /^flags (\S+?);?$/.exec(t))) s.flags = m[1]!.split(',');
  else if ((m = /^timeout (\S+?);?$/.exec(t))) s.timeout = seconds(m[1]!);
  else if ((m = /^comment "(.*)";?$/.exec(t))) s.comment = m[1];
  // each element read or said; a paste cut inside them: those it holds whole (ending in a comma)
  else if ((m = /^elements = \{ (.*) \}$/.exec(t) ?? /^elements = \{ (.*,)/.exec(t))) {
    const list = m[1]!;
    let from = t.indexOf(list);
    s.elements = [];
    for (const e of splitTop(list)) {
      const at = t.indexOf(e, from);
      from = at + e.length;
      const read = ELISION.test(e) ? undefined : element(s, e);
      if (read) s.elements.push(lineAt ? { ...read, line: lineAt(at) } : read);
      else say(at, e, ELISION.test(e));
    }
  }
  // the rest of what nft declares: nothing a Service's path depends on
  else if (
    !/^(?:policy \w+|size \d+(?:\s+# count \d+)?|auto-merge|gc-interval \S+|counter|quota .+|limit rate .+|last)?;?$/.test(
      t,
    )
  )
    say(0, t);
}

/** "3h", "10800s", "1h30m" as seconds. */
function seconds(v: string): number {
  let n = 0;
  for (const [, num, unit] of v.matchAll(/(\d+)([dhms])/g))
    n += Number(num) * { d: 86400, h: 3600, m: 60, s: 1 }[unit as 'd' | 'h' | 'm' | 's'];
  return n;
}

/** An element as nft prints it (set_elem_expr_print): its key, a counter, its own timeout, when
 * it expires, its comment, then a map's " : " and value ("10.96.0.10 . udp . 53 comment \"x\" :
 * goto service-..."); undefined when it is not one of the set's. */
export function element(s: NftSet, e: string, valued = s.kind === 'map'): NftElement | undefined {
  const [keyPart, value] = valued ? splitOnce(e, ' : ') : [e, undefined];
  let key = keyPart.trim();
  let comment: string | undefined;
  const c = / comment "(.*)"$/.exec(key);
  if (c) {
    comment = c[1];
    key = key.slice(0, c.index);
  }
  key = key.replace(/(?: counter packets \d+ bytes \d+)?(?: timeout \w+)?(?: expires \w+)?$/, '');
  const parts = key.split(' . ');
  if (s.type.length > 0 && parts.length !== s.type.length) return undefined;
  if (!parts.every((p, i) => (KEY[s.type[i] ?? ''] ?? /^\S+$/).test(p))) return undefined;
  const out: NftElement = { key: parts.map(value_) };
  if (comment !== undefined) out.comment = comment;
  if (valued) {
    const v = (value ?? '').trim();
    const verdict_ = verdict(v);
    // a verdict map's value is a verdict; another map's, one token per part of its type
    if (s.map === 'verdict' || /^(?:goto|jump) /.test(v) ? !verdict_ : !/^\S+(?: \. \S+)*$/.test(v))
      return undefined;
    if (verdict_) out.verdict = verdict_;
  }
  return out;
}

/** What nft prints for a key of each type kube-proxy's sets use (an address may be a prefix or
 * a range); other types: one token. */
const KEY: Record<string, RegExp> = {
  ipv4_addr: /^\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2}|-\d{1,3}(?:\.\d{1,3}){3})?$/,
  ipv6_addr: /^[\da-f]*:[\da-f:.]*(?:\/\d{1,3}|-[\da-f:.]+)?$/i,
  inet_proto: /^(?:[a-z][\w-]*|\d+)$/,
  inet_service: /^(?:\d+(?:-\d+)?|[a-z][\w-]*)$/,
};

const value_ = (v: string): string | number => (/^\d+$/.test(v) ? Number(v) : v);

function verdict(v: string): { kind: string; target?: string } | undefined {
  const m = /^(goto|jump) (\S+)$/.exec(v);
  if (m) return { kind: m[1]!, target: m[2]! };
  return /^(drop|accept|reject|return|continue)$/.test(v) ? { kind: v } : undefined;
}

/** nft's named priorities ("dstnat - 10") as numbers. */
export function priority(p: string): number {
  const NAMED: Record<string, number> = {
    raw: -300,
    mangle: -150,
    dstnat: -100,
    filter: 0,
    security: 50,
    srcnat: 100,
  };
  const m = /^(-?\d+|[a-z]+)(?: ([+-]) (\d+))?$/.exec(p.trim());
  if (!m) return 0;
  const base = NAMED[m[1]!] ?? Number(m[1]);
  return m[2] ? base + (m[2] === '+' ? 1 : -1) * Number(m[3]) : base;
}

/** A rule's text read into the expressions the trees look at; the rest kept as match text.
 * `lineAt` gives the pasted line of an offset in it (a wrapped rule spans several). */
export function rule(chain: string, text: string, lineAt: (at: number) => number): NftRule {
  let t = text;
  let comment: string | undefined;
  const c = t.includes(' comment "') ? / comment "(.*)"$/.exec(t) : null;
  if (c) {
    comment = c[1];
    t = t.slice(0, c.index);
  }
  const expr: NftExpr[] = [];
  let m: RegExpExecArray | null;
  let elided: number[] = [];
  // each statement's regex runs only on a rule naming it: a table of 10,000 Services has
  // hundreds of thousands of rules
  const numgen = t.includes('numgen random mod ');
  const dnat = t.includes('dnat ');
  // the statement at the end: a verdict, a numgen vmap, a DNAT, a mark, masquerade
  let pairs: ReturnType<typeof numgenPairs>;
  if (
    numgen &&
    (m = /(?:^| )numgen random mod (\d+) vmap \{ (.*) \}$/.exec(t)) &&
    (pairs = numgenPairs(t, m, 2, VMAP_PAIR, lineAt))
  ) {
    const set = pairs.shown.map((p): [number, NftExpr] => {
      const [k, v] = splitOnce(p, ' : ');
      return [Number(k), toVerdictExpr(v.trim())];
    });
    elided = pairs.elided;
    t = t.slice(0, m.index);
    expr.push(...matchExprs(t), numgenVmapExpr(Number(m[1]), set));
  } else if (
    // the listing's "dnat ip to numgen ..."; the script's "dnat ip addr . port to numgen ..."
    numgen &&
    dnat &&
    (m = /(?:^| )dnat (ip6?)(?: addr \. port)? to numgen random mod (\d+) map \{ (.*) \}$/.exec(
      t,
    )) &&
    (pairs = numgenPairs(t, m, 3, DNAT_PAIR, lineAt))
  ) {
    const set = pairs.shown.map((p): [number, (string | number)[]] => {
      const [k, v] = splitOnce(p, ' : ');
      return [Number(k), v.trim().split(' . ').map(value_)];
    });
    elided = pairs.elided;
    t = t.slice(0, m.index);
    expr.push(...matchExprs(t), numgenDnatExpr(m[1]!, Number(m[2]), set));
  } else if (dnat && (m = /(?:^| )dnat (?:ip6? )?to \[?([^\s\]]+?)\]?:(\d+)$/.exec(t))) {
    t = t.slice(0, m.index);
    expr.push(...matchExprs(t), dnatExpr(m[1]!, Number(m[2])));
  } else if ((m = /(?:^| )(goto|jump) (\S+)$/.exec(t))) {
    t = t.slice(0, m.index);
    expr.push(...matchExprs(t), verdictExpr(m[1]!, m[2]));
  } else if (
    // the listing's "meta mark set meta mark | 0x00004000"; the script's "mark set mark or 0x4000"
    t.includes('mark set ') &&
    (m = /(?:^| )(?:meta mark set meta mark \||mark set mark or) (0x[0-9a-f]+)(.*)$/.exec(t))
  ) {
    t = t.slice(0, m.index);
    expr.push(...matchExprs(t), markOrExpr(Number(m[1])));
  } else if ((m = /^update (@\S+) \{ (ip6?) saddr \}$/.exec(t))) {
    expr.push(updateSaddrExpr(m[2]!, m[1]!));
  } else expr.push(...matchExprs(t));
  return {
    chain,
    line: lineAt(0),
    ...(comment !== undefined ? { comment } : {}),
    expr,
    ...(elided.length > 0 ? { elided } : {}),
  };
}

/** A numgen map's pairs (group `at` of `m`): those shown, and the pasted lines of an author's
 * elisions among them ("0 : goto A, ..., 2 : goto C"); undefined where a pair is not nft's. */
function numgenPairs(
  t: string,
  m: RegExpExecArray,
  at: number,
  pair: RegExp,
  lineAt: (at: number) => number,
): { shown: string[]; elided: number[] } | undefined {
  const shown: string[] = [];
  const elided: number[] = [];
  let from = m.index + m[0].lastIndexOf(m[at]!);
  for (const p of splitTop(m[at]!)) {
    from = t.indexOf(p, from);
    if (pair.test(p)) shown.push(p);
    else if (ELISION.test(p)) elided.push(lineAt(from));
    else return undefined;
    from += p.length;
  }
  return { shown, elided };
}

/** A numgen map's pairs as nft prints them: "0 : goto CHAIN"; "0 : 10.244.1.4 . 80". */
const VMAP_PAIR = /^\d+ : (?:(?:goto|jump) \S+|drop|accept|return|continue)$/;
const DNAT_PAIR = /^\d+ : \S+(?: \. \d+)?$/;

/** What a DNAT kdebug does not read is, where nft's grammar names its form: its address and port
 * looked up in a map by a key the rule builds (`dnat ip addr . port to KEY map @MAP`). */
export function unreadDnat(text: string): string | undefined {
  const m = /(?:^| )dnat (?:ip6? )?(?:addr \. port )?to (.+?) map (@\S+|\{.*\})$/.exec(text);
  if (!m) return undefined;
  const map = m[2]!.startsWith('@') ? `map ${m[2]}` : 'a map written in the rule';
  return `a DNAT to the address and port ${map} gives for the key ${m[1]} (nft's \`dnat to KEY map MAP\`; kube-proxy's released proxiers write no such rule): its endpoints are not read`;
}

/** Does the rule hold what its text says of DNAT and numgen (a statement the reader knows)? */
export const understood = (text: string, r: NftRule) =>
  !(text.includes('dnat ') || text.includes('numgen ')) ||
  !/(?:^| )(?:dnat (?:ip6? )?to|numgen) /.test(text) ||
  r.expr.some((e) => 'dnat' in e || 'vmap' in e);

function toVerdictExpr(v: string): NftExpr {
  const x = verdict(v);
  return verdictExpr(x?.kind ?? v, x?.target);
}

/** Splits "a, b { c, d }, e" at the top-level commas (nft's strings hold no escapes). */
export function splitTop(s: string): string[] {
  const out: string[] = [];
  let from = 0;
  walkBrackets(
    s,
    0,
    (ch, i, depth) => {
      if (depth === 0 && ch === ',') {
        out.push(s.slice(from, i).trim());
        from = i + 1;
      }
    },
    false,
  );
  const last = s.slice(from).trim();
  if (last) out.push(last);
  return out;
}

function splitOnce(s: string, sep: string): [string, string] {
  // the last " : " outside quotes separates a map key from its value
  let quoted = false;
  for (let i = s.length - sep.length; i >= 0; i--) {
    if (s[i] === '"') quoted = !quoted;
    if (!quoted && s.startsWith(sep, i)) return [s.slice(0, i), s.slice(i + sep.length)];
  }
  return [s, ''];
}
