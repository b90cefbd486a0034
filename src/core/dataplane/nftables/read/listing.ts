// nft's listings as typed tables, whichever form was read (its JSON: read-json.ts, its text:
// read-text.ts, kube-proxy's script: read-script.ts): chains with their hooks and rules, sets and
// maps with their elements. The rules keep nft's own JSON expressions (its stable machine format);
// what the Service trees need is read from them in ../trees.ts.
import { ListingParseError } from '../../listing-error.js';
import { excerpt } from '../../../sanitize.js';
import { familyOf, type IPFamily } from '../../../ipv6.js';
import type { KubectlKind } from '../../iptables/read/paste/other-lines/foreign-kinds.js';

export type NftFamily = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';

/** One expression of a rule, as nft -j writes it ({"match": ...}, {"dnat": ...}, ...). */
export type NftExpr = Record<string, unknown>;

export interface NftRule {
  chain: string;
  /** The listing's line it was read from (a rule wrapped over several: its first); for nft -j,
   * the line its object starts on. */
  line?: number;
  handle?: number;
  comment?: string;
  expr: NftExpr[];
  /** Pasted lines by which an author left elements of its numgen map out ("0 : goto A, ...,
   * 2 : goto C"): the map holds more than its expression shows. */
  elided?: number[];
}

export interface NftChain {
  name: string;
  /** Base chains: the netfilter hook, the chain type and its priority. */
  hook?: string;
  type?: string;
  prio?: number;
  policy?: string;
  rules: NftRule[];
  /** The paste elides lines inside this chain ("..."): more rules may be hidden there. */
  elided?: boolean;
}

/** A map or set element: its key (an address, "tcp", a port ... in order) and what it maps to. */
export interface NftElement {
  key: (string | number)[];
  /** The listing's line it was read from; unset where the reader does not know it (nft -j's
   * elements are inside their set's object). */
  line?: number;
  comment?: string;
  /** A verdict map's verdict: goto/jump to a chain, or drop/accept/... */
  verdict?: { kind: string; target?: string };
}

export interface NftSet {
  name: string;
  kind: 'set' | 'map';
  type: string[];
  /** What a map maps to ("verdict", "ipv4_addr" ...). */
  map?: string;
  flags: string[];
  /** Seconds an element lives (affinity sets). */
  timeout?: number;
  comment?: string;
  elements: NftElement[];
  /** The paste elides lines inside this set or map ("..."): more elements may be hidden there. */
  elided?: boolean;
  /** Part of kube-proxy's script adds elements to it and no line of it adds the set or map: the
   * line of the first; its type, flags and other elements are outside the paste. */
  outside?: number;
}

export interface NftTable {
  family: NftFamily;
  name: string;
  comment?: string;
  chains: NftChain[];
  sets: NftSet[];
  chain(name: string): NftChain | undefined;
  set(name: string): NftSet | undefined;
  /** The text listing ends inside this table (a paste cut short): where, and inside what; and
   * the shell's report where nft crashed there ("Segmentation fault (core dumped)"); `anywhere`
   * where its lines come in any order (a script), so the cut may hide any chain's rules; `partly`:
   * the blocks it holds in part (those past the cut it holds none of), unset where not known. */
  cut?: {
    line: number;
    inside: string;
    crash?: string;
    /** The cut line, the paste's last, has no newline after it (nft ends every line with one):
     * it may stop mid-way, its last word short (a port "8" of "80"); it is read as it stands. */
    unended?: true;
    anywhere?: true;
    partly?: NftBlockName[];
  };
  /** Elision lines ("...") inside the table: the paste left part of it out. */
  elided?: number[];
  /** The host, pod or container the nft command that listed it names (`ssh node-a nft list ...`,
   * paste/target.ts); unset where the command names none. */
  target?: string;
  /** The block kind `nft list chain|map|set` listed on its own: the table holds that block (or
   * several so listed, joined), not the rest of the table. */
  listedBlock?: 'chain' | 'map' | 'set';
  /** Lines of kube-proxy's nft script, not all of it: the first rule added to a chain, or element
   * to a set or map, no line before it adds (nft -f refuses either; kube-proxy adds each chain,
   * set and map before what goes in it). */
  scriptPart?: { line: number } & ({ chain: string } | { set: string });
  /** The script's last line, read, has no newline after it (nft -f's input and kube-proxy's log
   * end every line with one): it may be cut short, its last word too (a port "8" of "80"). */
  mayBeCut?: number;
  /** The paste starts inside this table: its `table` line is not in it (family and name unknown). */
  headless?: boolean;
  /** The paste starts inside this map, its `map` line not in it: kube-proxy's map its key and
   * verdicts are (map-above.ts), and the line its first line is on. */
  mapAbove?: { name: string; line: number; grep?: true };
  /** Lines of the text listing that were not read (not what nft prints there): said, not guessed. */
  unread?: NftUnread[];
  /** How a paste of it was read (`rules --file`): what reading it took or left out, one sentence
   * each (a diff's new side, another family's table), the lines around it skipped, and whether
   * it was a diff (a hunk holds part of the table); and the other family's kube-proxy table where
   * the listing holds both (a dual-stack node's `nft list ruleset`), read with it; the lines of
   * kubectl's output pasted with it (the API server's objects, not read with the table). */
  paste?: {
    notes: string[];
    skipped: number[];
    diff: boolean;
    kubectlLines?: number[];
    kubectlKinds?: KubectlKind[];
    also?: NftTable;
  };
}

/** The family of kube-proxy's table: its `table` line's, or for a part whose table line is not
 * in the paste, what it holds says (its sets' address types, its elements' addresses, its rules'
 * `ip`/`ip6` matches); undefined where nothing does. */
export function tableFamily(t: NftTable): 'ip' | 'ip6' | undefined {
  if (!t.headless) return t.family === 'ip6' ? 'ip6' : t.family === 'ip' ? 'ip' : undefined;
  for (const s of t.sets) {
    if (s.type.includes('ipv6_addr')) return 'ip6';
    if (s.type.includes('ipv4_addr')) return 'ip';
    for (const e of s.elements.slice(0, 1))
      for (const k of e.key) {
        const family = typeof k === 'string' ? familyOf(k) : undefined;
        if (family) return family === 'IPv6' ? 'ip6' : 'ip';
      }
  }
  const exprs = t.chains.map((c) => c.rules.map((r) => r.expr));
  // a match on the family's protocol (nft -j), or a text listing's match kept as written
  const says = (family: 'ip' | 'ip6') =>
    anyField(exprs, 'protocol', (v) => v === family) ||
    anyField(exprs, 'text', (v) => v.startsWith(`${family} `));
  return says('ip6') ? 'ip6' : says('ip') ? 'ip' : undefined;
}

/** Whether a field `key` at any depth of `v` holds a string `is` accepts. */
function anyField(v: unknown, key: string, is: (value: string) => boolean): boolean {
  if (Array.isArray(v)) return v.some((x) => anyField(x, key, is));
  if (!isObject(v)) return false;
  for (const k in v) {
    const x = v[k];
    if ((k === key && typeof x === 'string' && is(x)) || anyField(x, key, is)) return true;
  }
  return false;
}

/** The address families of a dual-stack listing's two kube-proxy tables (tablePair's). */
export function pairFamilies(a: NftTable, b: NftTable): [IPFamily, IPFamily] {
  const of = (t: NftTable): IPFamily => (tableFamily(t) === 'ip6' ? 'IPv6' : 'IPv4');
  return [of(a), of(b)];
}

/** Whether two kube-proxy tables of one listing are a dual-stack node's pair: one of each
 * family, as their table lines or, for a part without one, their contents say. */
export function isTablePair(a: NftTable, b: NftTable): boolean {
  const fa = tableFamily(a);
  const fb = tableFamily(b);
  return fa !== undefined && fb !== undefined && fa !== fb;
}

/** A chain, set or map of a table, by name. */
export interface NftBlockName {
  kind: 'chain' | 'set' | 'map';
  name: string;
}

/** A line (or a set element) of a text listing that was not read, and the block it is in (none:
 * the table's own level). */
export interface NftUnread {
  line: number;
  text: string;
  block?: { kind: 'chain' | 'set' | 'map'; name: string };
  /** What the line is, where the reader knows its form but does not read it. */
  what?: string;
}

/** A line not read, as evidence names it: "FILE:LINE (in map NAME): \"TEXT\"". */
export const unreadAt = (source: string, u: NftUnread) =>
  `${source}:${u.line}${u.block ? ` (in ${u.block.kind} ${u.block.name})` : ''}: "${excerpt(u.text)}"`;

export interface NftListing {
  /** The nft that printed it ("1.0.6"), when it said. */
  version?: string;
  tables: NftTable[];
  table(family: NftFamily, name: string): NftTable | undefined;
  /** Lines outside any table that were skipped (a prompt, the command, prose), 1-based. */
  skipped?: number[];
  /** The shell's report that nft crashed after its last table ended: the tables it would have
   * printed after are not in the paste. */
  crash?: { line: number; text: string };
}

/** Input that is not an nft JSON listing, with where and why. */
export class NftParseError extends ListingParseError {
  override name = 'NftParseError';
  static override readonly kind = 'an nft listing';
  static override readonly namesKind = /\bnft\b/i;
}

/** An object of nft's JSON (not an array). */
export type JsonObject = Record<string, unknown>;
export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The sets and maps the table's rules refer to (`@name`) that the listing does not hold. */
export function missingSets(t: NftTable): string[] {
  const used = new Set<string>();
  const walk = (v: unknown): void => {
    // "@name" in nft -j's JSON, or inside a text listing's match kept as written; a name may hold
    // / _ . - (kube-proxy names an affinity set after its endpoint: "…/tcp/http__10.244.1.4/80")
    if (typeof v === 'string') {
      if (v.includes('@')) for (const m of v.matchAll(/(?:^|[\s{,])@([\w./-]+)/g)) used.add(m[1]!);
    } else if (typeof v !== 'object' || v === null)
      return; // numbers and booleans: most leaves
    else if (Array.isArray(v)) for (let i = 0; i < v.length; i++) walk(v[i]);
    else for (const k in v) walk((v as JsonObject)[k]);
  };
  for (const c of t.chains) for (const r of c.rules) walk(r.expr);
  return [...used].filter((name) => !t.set(name)).sort();
}

/** The verdicts, the first of them an expression holds is its verdict. */
const VERDICTS = ['goto', 'jump', 'drop', 'accept', 'reject', 'return', 'continue'];

/** A verdict expression: {"goto": {"target": "x"}}, {"jump": ...}, {"drop": null} ... */
export function verdictOf(v: unknown): { kind: string; target?: string } | undefined {
  if (!isObject(v)) return undefined;
  // its own keys (one, as nft writes it) are read, not every verdict asked for: every
  // expression of every rule is asked
  let rank = VERDICTS.length;
  for (const key in v) {
    const i = VERDICTS.indexOf(key);
    if (i >= 0 && i < rank) rank = i;
  }
  const kind = VERDICTS[rank];
  if (kind === undefined) return undefined;
  const body = v[kind];
  const target = isObject(body) && typeof body['target'] === 'string' ? body['target'] : undefined;
  return target ? { kind, target } : { kind };
}

/** An address prefix {"prefix": {"addr", "len"}} as "a/len"; numbers and strings as they are. */
export function scalar(v: unknown): string | number {
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (isObject(v) && isObject(v['prefix']))
    return `${String(v['prefix']['addr'])}/${String(v['prefix']['len'])}`;
  if (isObject(v) && Array.isArray(v['range']))
    return (v['range'] as unknown[]).map((x) => String(scalar(x))).join('-');
  return JSON.stringify(v);
}

/** A match against a named set: `… @NAME` (nft JSON: {"match": {"right": "@NAME", …}}). */
export function matchesSet(e: Record<string, unknown>, name: string): boolean {
  const m = e['match'];
  return (
    typeof m === 'object' && m !== null && (m as Record<string, unknown>)['right'] === `@${name}`
  );
}
