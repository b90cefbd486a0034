// `nft -j list table ip kube-proxy` (or `nft -j list ruleset`) read into the typed tables of
// listing.ts: each item of nft's "nftables" array parsed on its own, so a fragment or a paste cut
// short gives the items it holds in full. Bad input gets FILE:LINE, as the iptables parser gives.
import { walkBrackets } from '../../brackets.js';
import {
  isObject,
  NftParseError,
  scalar,
  verdictOf,
  type JsonObject,
  type NftChain,
  type NftElement,
  type NftFamily,
  type NftBlockName,
  type NftListing,
  type NftSet,
  type NftTable,
  type NftUnread,
} from './listing.js';

/** Does this text look like nft's JSON output (so `rules --file` reads it as such)? A prompt or
 * prose may come first, and a fragment may be items of the "nftables" array without it. */
export const isNftJson = (text: string) => jsonStart(text.slice(0, 4096)) >= 0;

/** Where nft's JSON starts: `{"nftables": [...]}`, or an item (`{"rule": {...}}`) or an array of
 * them (`jq '.nftables'`), at the start of a line; or the paste ends inside the wrapper's key, cut
 * in the first bytes nft prints (json.c's `{"nftables": [`, "{\"nf" at least); -1 when none. */
function jsonStart(text: string): number {
  const m =
    /(?:^|\n)[ \t]*(\{\s*"nftables"\s*:|(?:\[\s*)?\{\s*"(?:metainfo|table|chain|rule|set|map|element)"\s*:|\{\s*"nf(?:t(?:a(?:b(?:l(?:e(?:s"?)?)?)?)?)?)?\s*$)/.exec(
      text,
    );
  return m ? m.index + m[0].length - m[1]!.length : -1;
}

export function parseNftJson(text: string, file = '<input>'): NftListing {
  const at = Math.max(0, jsonStart(text));
  const { items, cut } = jsonItems(text, at, file);
  const listing = listingOf(items, cut === undefined ? undefined : lineAt(text, cut), (k) =>
    lineAt(text, k),
  );
  if (listing) return listing;
  if (cut === undefined) throw new NftParseError(file, undefined, 'the nft listing holds no table');
  // cut before any table: where the text ends, and no word of what its rest would have held
  const end = text.trimEnd();
  const line = lineAt(text, end.length);
  throw new NftParseError(
    file,
    line,
    `the nft -j listing is cut at byte ${Buffer.byteLength(end)} (line ${line}, inside its JSON), before any table: nothing after the cut was read`,
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
  // JSON that is whole and names none of them; cut before its first item, it is a cut listing
  if (!known && start < 0 && depth <= 0)
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

/** The tables the items hold; undefined where they hold none. */
function listingOf(
  items: Item[],
  cutLine: number | undefined,
  lineOf: (at: number) => number,
): NftListing | undefined {
  interface Building {
    family: NftFamily;
    name: string;
    comment?: string;
    chains: Map<string, NftChain>;
    sets: Map<string, NftSet>;
    unread: NftUnread[];
  }
  const tables = new Map<string, Building>();
  const tableOf = (o: JsonObject): Building => {
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
        line: lineOf(item.at),
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
    ...(cutLine !== undefined
      ? { cut: { line: cutLine, inside: 'the nft -j listing', partly: cutBlocks(t) } }
      : {}),
  }));
  if (list.length === 0) return undefined;
  return {
    ...(version ? { version } : {}),
    tables: list,
    table: (family, name) => list.find((t) => t.family === family && t.name === name),
  };
}

/** The blocks a cut -j listing holds in part: nft -j lists the sets, then the chains, then each
 * chain's rules in the chains' order, so the chain of the last rule read and those after it may
 * have rules past the cut (with no chain read, the last set its elements). */
function cutBlocks(t: {
  chains: Map<string, NftChain>;
  sets: Map<string, NftSet>;
}): NftBlockName[] {
  const chains = [...t.chains.values()];
  if (chains.length === 0) {
    const set = [...t.sets.values()].at(-1);
    return set ? [{ kind: set.kind, name: set.name }] : [];
  }
  const from = chains.findLastIndex((c) => c.rules.length > 0);
  return chains.slice(Math.max(0, from)).map((c) => ({ kind: 'chain', name: c.name }));
}

function setOf(kind: 'set' | 'map', o: JsonObject): NftSet {
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
