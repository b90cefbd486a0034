// `nft -j list table ip kube-proxy` (or `nft -j list ruleset`) read into typed tables: chains
// with their hooks and rules, sets and maps with their elements. The rules keep nft's own JSON
// expressions (its stable machine format); what the Service trees need is read from them in
// ../trees.ts. Bad input gets FILE:LINE, as the iptables parser gives.
import { walkBrackets } from '../../brackets.js';
import { ListingParseError } from '../../listing-error.js';
import { excerpt } from '../../../sanitize.js';
import { familyOf, type IPFamily } from '../../../ipv6.js';

export type NftFamily = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';

/** One expression of a rule, as nft -j writes it ({"match": ...}, {"dnat": ...}, ...). */
export type NftExpr = Record<string, unknown>;

export interface NftRule {
  chain: string;
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
   * the shell's report where nft crashed there ("Segmentation fault (core dumped)"). */
  cut?: { line: number; inside: string; crash?: string };
  /** Elision lines ("...") inside the table: the paste left part of it out. */
  elided?: number[];
  /** The paste starts inside this table: its `table` line is not in it (family and name unknown). */
  headless?: boolean;
  /** The paste starts inside this map, its `map` line not in it: kube-proxy's map its key and
   * verdicts are (map-above.ts), and the line its first line is on. */
  mapAbove?: { name: string; line: number };
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
  const said = JSON.stringify(t.chains.map((c) => c.rules.map((r) => r.expr)));
  if (/"protocol":"ip6"|"text":"ip6 /.test(said)) return 'ip6';
  if (/"protocol":"ip"|"text":"ip /.test(said)) return 'ip';
  return undefined;
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

/** A line (or a set element) of a text listing that was not read, and the block it is in (none:
 * the table's own level). */
export interface NftUnread {
  line: number;
  text: string;
  block?: { kind: 'chain' | 'set' | 'map'; name: string };
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
}

type J = Record<string, unknown>;
const isObject = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The sets and maps the table's rules refer to (`@name`) that the listing does not hold. */
export function missingSets(t: NftTable): string[] {
  const used = new Set<string>();
  const walk = (v: unknown): void => {
    // "@name" in nft -j's JSON, or inside a text listing's match kept as written; a name may hold
    // / _ . - (kube-proxy names an affinity set after its endpoint: "…/tcp/http__10.244.1.4/80")
    if (typeof v === 'string') {
      if (v.includes('@')) for (const m of v.matchAll(/(?:^|[\s{,])@([\w./-]+)/g)) used.add(m[1]!);
    } else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (isObject(v)) for (const k in v) walk(v[k]);
  };
  for (const c of t.chains) for (const r of c.rules) walk(r.expr);
  return [...used].filter((name) => !t.set(name)).sort();
}

/** Does this text look like nft's JSON output (so `rules --file` reads it as such)? A prompt or
 * prose may come first, and a fragment may be items of the "nftables" array without it. */
export const isNftJson = (text: string) => jsonStart(text.slice(0, 4096)) >= 0;

/** Where nft's JSON starts: `{"nftables": [...]}`, or an item (`{"rule": {...}}`) or an array of
 * them (`jq '.nftables'`), at the start of a line; -1 when there is none. */
function jsonStart(text: string): number {
  const m =
    /(?:^|\n)[ \t]*(\{\s*"nftables"\s*:|\[?\s*\{\s*"(?:metainfo|table|chain|rule|set|map|element)"\s*:)/.exec(
      text,
    );
  return m ? m.index + m[0].length - m[1]!.length : -1;
}

export function parseNftJson(text: string, file = '<input>'): NftListing {
  const at = Math.max(0, jsonStart(text));
  const { items, cut } = jsonItems(text, at, file);
  return listingOf(items, file, cut === undefined ? undefined : lineAt(text, cut), (k) =>
    lineAt(text, k),
  );
}

const lineAt = (text: string, at: number) => text.slice(0, at).split('\n').length;

/**
 * The items of nft's "nftables" array, each parsed on its own, so that a fragment (a paste cut
 * in the middle, or items without the wrapper) gives the items it holds in full: `cut` is where
 * the last, incomplete one starts. JSON that is whole but not nft's is an error with its line.
 */
function jsonItems(text: string, at: number, file: string): { items: Item[]; cut?: number } {
  const wrapped = /^\{\s*"nftables"\s*:/.test(text.slice(at));
  const itemDepth = wrapped ? 2 : text[at] === '[' ? 1 : 0;
  const items: Item[] = [];
  let depth = 0;
  let start = -1;
  walkBrackets(text, at, (ch, k, d) => {
    depth = d;
    if (ch === '{' || ch === '[') {
      if (d === itemDepth + 1 && ch === '{') start = k;
    } else if (ch === '}' || ch === ']') {
      if (d === itemDepth && start >= 0) {
        try {
          items.push({ value: JSON.parse(text.slice(start, k + 1)), at: start });
        } catch (e) {
          throw new NftParseError(
            file,
            lineAt(text, start),
            `not valid JSON: ${(e as Error).message}`,
          );
        }
        start = -1;
      }
      if (d < 0) return false; // text after the JSON (prose, a prompt)
      if (d === 0 && itemDepth > 0) return false;
    } else if (d === 0 && itemDepth === 0 && !/\s|,/.test(ch)) return false; // prose after the items
    return true;
  });
  // an item whose end is cut or elided ("..." where its closing braces were): the part of it
  // that is whole, its open brackets closed, when that parses
  if (start >= 0) {
    const whole = closedPrefix(text.slice(start));
    if (whole !== undefined) items.push({ value: whole, at: start });
  }
  const known = items.some(
    ({ value: i }) => isObject(i) && Object.keys(i).some((k) => NFT_ITEMS.includes(k)),
  );
  if (!known && start < 0)
    throw new NftParseError(
      file,
      lineAt(text, at),
      'not an nft -j listing: no table, chain, rule, set or map in it',
    );
  return start >= 0 ? { items, cut: start } : depth > 0 ? { items, cut: text.length } : { items };
}

/** JSON cut after a closing bracket: up to the last one, with the brackets still open closed,
 * parsed; undefined when that is not JSON (cut inside a value). */
function closedPrefix(text: string): unknown {
  const last = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
  if (last < 0) return undefined;
  const open: string[] = [];
  const { quoted } = walkBrackets(text.slice(0, last + 1), 0, (ch) => {
    if (ch === '{' || ch === '[') open.push(ch === '{' ? '}' : ']');
    else if (ch === '}' || ch === ']') open.pop();
  });
  if (quoted) return undefined;
  try {
    return JSON.parse(text.slice(0, last + 1) + open.reverse().join(''));
  } catch {
    return undefined;
  }
}

/** The kinds of item in nft's JSON array that a listing holds. */
const NFT_ITEMS = ['metainfo', 'table', 'chain', 'rule', 'set', 'map', 'element'];

/** An item of the JSON array, and where in the text it starts. */
interface Item {
  value: unknown;
  at: number;
}

function listingOf(
  items: Item[],
  file: string,
  cutLine: number | undefined,
  lineOf: (at: number) => number,
): NftListing {
  interface Building {
    family: NftFamily;
    name: string;
    comment?: string;
    chains: Map<string, NftChain>;
    sets: Map<string, NftSet>;
    unread: NftUnread[];
  }
  const tables = new Map<string, Building>();
  const tableOf = (o: J): Building => {
    const family = String(o['family']) as NftFamily;
    const name = String(o['table'] ?? o['name']);
    const key = `${family} ${name}`;
    let t = tables.get(key);
    if (!t) tables.set(key, (t = { family, name, chains: new Map(), sets: new Map(), unread: [] }));
    return (last = t);
  };
  let last: Building | undefined; // the table the items before this one were of
  // an item not read (a named counter, a flowtable, an element to add): said where it is, as
  // the text listing says its lines, in the table it names or else the one before it
  const notRead: { item: Item; table?: Building }[] = [];
  let version: string | undefined;
  for (const item of items) {
    const [kind, body] = isObject(item.value) ? (Object.entries(item.value)[0] ?? []) : [];
    if (!isObject(body) || !['metainfo', 'table', 'chain', 'rule', 'set', 'map'].includes(kind!)) {
      const named = isObject(body) && typeof body['table'] === 'string';
      notRead.push({ item, ...(named ? { table: tableOf(body) } : last ? { table: last } : {}) });
      continue;
    }
    if (kind === 'metainfo')
      version = typeof body['version'] === 'string' ? body['version'] : undefined;
    else if (kind === 'table') {
      const t = tableOf({ ...body, table: body['name'] });
      if (typeof body['comment'] === 'string') t.comment = body['comment'];
    } else if (kind === 'chain') {
      const t = tableOf(body);
      const name = String(body['name']);
      if (t.chains.has(name)) continue;
      t.chains.set(name, {
        name,
        ...(typeof body['hook'] === 'string' ? { hook: body['hook'] } : {}),
        ...(typeof body['type'] === 'string' ? { type: body['type'] } : {}),
        ...(typeof body['prio'] === 'number' ? { prio: body['prio'] } : {}),
        ...(typeof body['policy'] === 'string' ? { policy: body['policy'] } : {}),
        rules: [],
      });
    } else if (kind === 'set' || kind === 'map') {
      const set = setOf(kind, body);
      tableOf(body).sets.set(set.name, set);
    } else if (kind === 'rule') {
      const t = tableOf(body);
      const chainName = String(body['chain']);
      let chain = t.chains.get(chainName);
      if (!chain) t.chains.set(chainName, (chain = { name: chainName, rules: [] }));
      chain.rules.push({
        chain: chainName,
        ...(typeof body['handle'] === 'number' ? { handle: body['handle'] } : {}),
        ...(typeof body['comment'] === 'string' ? { comment: body['comment'] } : {}),
        expr: Array.isArray(body['expr']) ? (body['expr'] as unknown[]).filter(isObject) : [],
      });
    }
  }
  for (const { item, table } of notRead)
    (table ?? [...tables.values()][0])?.unread.push({
      line: lineOf(item.at),
      text: JSON.stringify(item.value),
    });
  const list: NftTable[] = [...tables.values()].map((t) => ({
    family: t.family,
    name: t.name,
    ...(t.comment !== undefined ? { comment: t.comment } : {}),
    ...(t.unread.length > 0 ? { unread: t.unread } : {}),
    chains: [...t.chains.values()],
    sets: [...t.sets.values()],
    chain: (n) => t.chains.get(n),
    set: (n) => t.sets.get(n),
    // a fragment cut in the middle of an item: what came after it was not read
    ...(cutLine !== undefined ? { cut: { line: cutLine, inside: 'the nft -j listing' } } : {}),
  }));
  if (list.length === 0) throw new NftParseError(file, undefined, 'the nft listing holds no table');
  return {
    ...(version ? { version } : {}),
    tables: list,
    table: (family, name) => list.find((t) => t.family === family && t.name === name),
  };
}

function setOf(kind: 'set' | 'map', o: J): NftSet {
  const type = Array.isArray(o['type'])
    ? (o['type'] as unknown[]).map(String)
    : [String(o['type'])];
  const elements = (Array.isArray(o['elem']) ? (o['elem'] as unknown[]) : []).map((e) =>
    elementOf(kind, e),
  );
  return {
    name: String(o['name']),
    kind,
    type,
    ...(typeof o['map'] === 'string' ? { map: o['map'] } : {}),
    flags: Array.isArray(o['flags']) ? (o['flags'] as unknown[]).map(String) : [],
    ...(typeof o['timeout'] === 'number' ? { timeout: o['timeout'] } : {}),
    ...(typeof o['comment'] === 'string' ? { comment: o['comment'] } : {}),
    elements,
  };
}

/** `[key, value]` for map elements, `key` for sets; a key is a value or {"concat": [...]},
 * possibly wrapped in {"elem": {"val": ..., "comment": ...}}. */
function elementOf(kind: 'set' | 'map', e: unknown): NftElement {
  const [rawKey, value] = kind === 'map' && Array.isArray(e) ? e : [e, undefined];
  let key: unknown = rawKey;
  let comment: string | undefined;
  if (isObject(key) && isObject(key['elem'])) {
    const el = key['elem'];
    if (typeof el['comment'] === 'string') comment = el['comment'];
    key = el['val'];
  }
  const parts =
    isObject(key) && Array.isArray(key['concat']) ? (key['concat'] as unknown[]) : [key];
  const out: NftElement = { key: parts.map(scalar) };
  if (comment !== undefined) out.comment = comment;
  const verdict = verdictOf(value);
  if (verdict) out.verdict = verdict;
  return out;
}

/** A verdict expression: {"goto": {"target": "x"}}, {"jump": ...}, {"drop": null} ... */
export function verdictOf(v: unknown): { kind: string; target?: string } | undefined {
  if (!isObject(v)) return undefined;
  for (const kind of ['goto', 'jump', 'drop', 'accept', 'reject', 'return', 'continue']) {
    if (!(kind in v)) continue;
    const body = v[kind];
    const target =
      isObject(body) && typeof body['target'] === 'string' ? body['target'] : undefined;
    return target ? { kind, target } : { kind };
  }
  return undefined;
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
