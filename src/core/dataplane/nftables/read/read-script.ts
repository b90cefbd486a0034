// kube-proxy's `nft -f` script (as it feeds nft, and logs it) read into the same typed tables as
// nft's listings, by applying its lines in order to an empty ruleset as nft itself would.
import { ELISION } from '../../paste/elisions.js';
import type {
  NftChain,
  NftElement,
  NftFamily,
  NftListing,
  NftSet,
  NftTable,
  NftUnread,
} from './listing.js';
import { NftParseError } from './listing.js';
import {
  element,
  finished,
  priority,
  rule,
  setLine,
  splitTop,
  understood,
  unreadDnat,
} from './table-parts.js';

/** How a listing reached kdebug: pasted (`rules --file`), its end may be where the paste stops;
 * else written whole (kube-proxy's script as drift builds it, a node's dump). */
export interface NftReadOptions {
  pasted?: true;
}

/** Does this look like the script kube-proxy feeds `nft -f` (and logs)? */
export const isNftScript = (text: string) =>
  /^[^\S\r\n\u2028\u2029]*(?:add|create|flush) (?:table|chain|rule|set|map|element) /m.test(
    text.slice(0, 4096),
  );

/** A script line of a named stateful object: `add counter ip kube-proxy NAME`, a quota, ... */
const STATEFUL_OBJECT =
  /^(?:add|create|delete|destroy|reset) (?:counter|quota|limit|ct (?:helper|timeout|expectation)|secmark|synproxy|flowtable) (ip|ip6|inet) (\S+) /;

/**
 * The `add table / add chain / add rule / add set / add map / add element` script kube-proxy
 * gives `nft -f`, applied in order (with the `flush` and `delete` lines of a resync) to an empty
 * ruleset, as nft itself would.
 */
export function parseNftScript(
  input: string,
  file = '<input>',
  o: NftReadOptions = {},
): NftListing {
  // each table's chains and sets also by name: a table of 10,000 Services is a script of tens of
  // thousands of lines, each naming one
  type Building = {
    family: NftFamily;
    name: string;
    comment?: string;
    chains: NftChain[];
    sets: NftSet[];
    chainByName: Map<string, NftChain>;
    setByName: Map<string, NftSet>;
    unread?: NftUnread[];
    /** Lines of its rules' numgen maps whose elements an author left out. */
    inRules?: number[];
    scriptPart?: NftTable['scriptPart'];
    mayBeCut?: number;
  };
  const tables = new Map<string, Building>();
  const skipped: number[] = [];
  const elisions: number[] = [];
  // the element keys of each set's current elements (rebuilt when the array is replaced)
  const keyIndex = new Map<NftSet, { of: NftElement[]; keys: Set<string> }>();
  const keysOf = (st: NftSet) => {
    let k = keyIndex.get(st);
    if (k?.of !== st.elements)
      keyIndex.set(st, (k = { of: st.elements, keys: new Set(st.elements.map(keyOf)) }));
    return k.keys;
  };
  const lines = input.split('\n');
  const last = lastLine(lines);
  // a paste whose last line is the script's and no newline ends it: it may stop mid-word
  const unended = o.pasted === true && last === lines.length && !input.endsWith('\n');
  let cut: { line: number; text: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const no = i + 1;
    const t = lines[i]!.trim();
    // the paste's last line, short of what nft's grammar needs: cut there, not read
    if (no === last && cutShort(t)) {
      cut = { line: no, text: t };
      break;
    }
    if (ELISION.test(t)) {
      elisions.push(no);
      continue;
    }
    if (!t || t.startsWith('#')) continue; // a comment
    const m =
      /^(add|create|insert|flush|delete|destroy) (table|chain|rule|set|map|element) (ip|ip6|inet) (\S+)(?: (.*))?$/.exec(
        t,
      );
    if (!m) {
      // a named stateful object (kube-proxy 1.37's localhost NodePort rejects count in named
      // counters): not read, as the text and JSON listings say theirs, in the table it names
      const object = STATEFUL_OBJECT.exec(t);
      if (object) {
        const named = tables.get(`${object[1]} ${object[2]}`);
        if (named) (named.unread ??= []).push({ line: no, text: t });
        else skipped.push(no); // a table the script has not added (yet): said as skipped, not lost
        continue;
      }
      if (!/^(add|create|insert|flush|delete|destroy) /.test(t)) skipped.push(no);
      else throw new NftParseError(file, no, `not a line of an nft script: ${t.slice(0, 200)}`);
      continue;
    }
    const [, verb, what, family, tableName, rest = ''] = m;
    const key = `${family} ${tableName}`;
    let table = tables.get(key);
    if (!table)
      tables.set(
        key,
        (table = {
          family: family as NftFamily,
          name: tableName!,
          chains: [],
          sets: [],
          chainByName: new Map(),
          setByName: new Map(),
        }),
      );
    const chainNamed = (n: string) => table!.chainByName.get(n);
    const setNamed = (n: string) => table!.setByName.get(n);
    const newChain = (n: string) => {
      const c: NftChain = { name: n, rules: [] };
      table!.chains.push(c);
      table!.chainByName.set(n, c);
      return c;
    };
    const [name = '', body = ''] = splitName(rest);
    if (no === last && unended) table.mayBeCut = no;
    if (what === 'table') {
      const c = /comment "(.*?)"/.exec(rest);
      if (c) table.comment = c[1];
      if (verb === 'flush') {
        for (const ch of table.chains) ch.rules = [];
        for (const st of table.sets) st.elements = [];
      } else if (verb === 'delete' || verb === 'destroy') tables.delete(key);
    } else if (what === 'chain') {
      let c = chainNamed(name);
      if (verb === 'add' || verb === 'create') {
        c ??= newChain(name);
        for (const part of body.replace(/^\{|\}$/g, '').split(';')) {
          const h = /^\s*type (\S+) hook (\S+) priority (.*\S|.)\s*$/.exec(part);
          if (h) [c.type, c.hook, c.prio] = [h[1], h[2], priority(h[3]!)];
          const pol = /^\s*policy (\S+)\s*$/.exec(part);
          if (pol) c.policy = pol[1];
        }
      } else if (verb === 'flush' && c) c.rules = [];
      else if ((verb === 'delete' || verb === 'destroy') && c) {
        table.chains.splice(table.chains.indexOf(c), 1);
        table.chainByName.delete(name);
      }
    } else if (what === 'set' || what === 'map') {
      let st = setNamed(name);
      if (verb === 'add' || verb === 'create') {
        if (!st) {
          table.sets.push((st = { name, kind: what, type: [], flags: [], elements: [] }));
          table.setByName.set(name, st);
        }
        for (const part of body.replace(/^\{|\}$/g, '').split(';'))
          setLine(st, part.trim(), (_, what) => {
            throw new NftParseError(file, no, `not a line of an nft set or map: ${what}`);
          });
      } else if (verb === 'flush' && st) st.elements = [];
      else if ((verb === 'delete' || verb === 'destroy') && st) {
        table.sets.splice(table.sets.indexOf(st), 1);
        table.setByName.delete(name);
      }
    } else if (what === 'element') {
      if (!name || !body)
        throw new NftParseError(file, no, `element of a set or map not added before: ${name}`);
      // part of a script: the set or map's own `add` line is outside it, read as one it holds
      const st = setNamed(name) ?? outsideSet(table, name, body, no);
      if (st.outside === no) table.scriptPart ??= { line: no, set: name };
      // a deleted element is named by its key alone, a map's too
      const valued = st.kind === 'map' && verb !== 'delete' && verb !== 'destroy';
      const elems = splitTop(body.replace(/^\{\s*|\s*\}$/g, '')).map((e) => {
        const read =
          element(st, e, valued) ??
          raise(new NftParseError(file, no, `not an element of ${name}: ${e.slice(0, 200)}`));
        return { ...read, line: no };
      });
      const keys = new Set(elems.map(keyOf));
      const held = keysOf(st);
      if (
        (verb === 'add' || verb === 'create' || verb === 'insert') &&
        ![...keys].some((k) => held.has(k))
      ) {
        // new keys (every line of a script kube-proxy writes at once): appended
        st.elements.push(...elems);
        for (const k of keys) held.add(k);
      } else if (verb === 'add' || verb === 'create' || verb === 'insert')
        st.elements = [...st.elements.filter((e) => !keys.has(keyOf(e))), ...elems];
      else if (verb === 'delete' || verb === 'destroy')
        st.elements = st.elements.filter((e) => !keys.has(keyOf(e)));
    } else if (what === 'rule') {
      // a rule to a chain no line adds: lines of a script, the chain's `add chain` not among them
      if (!chainNamed(name)) table.scriptPart ??= { line: no, chain: name };
      const c = chainNamed(name) ?? newChain(name);
      if (verb === 'add' || verb === 'insert') {
        const r = rule(name, body, () => no);
        if (!understood(body, r)) {
          // a form of nft's grammar kdebug does not read: that line named, the rest read; one nft
          // would not take (a pair without its colon) is an error at its line
          const what = unreadDnat(body);
          if (!what)
            throw new NftParseError(
              file,
              no,
              `a DNAT or numgen statement not read: ${t.slice(0, 200)}`,
            );
          (table.unread ??= []).push({ line: no, text: t, block: { kind: 'chain', name }, what });
          continue;
        }
        if (verb === 'insert') c.rules.unshift(r);
        else c.rules.push(r);
        if (r.elided) (table.inRules ??= []).push(no);
      }
    }
  }
  // a script's lines may come in any order: what an elision left out may belong to any chain,
  // set or map, so no content of any is claimed whole
  for (const t of elisions.length > 0 ? tables.values() : [])
    for (const part of [...t.chains, ...t.sets]) part.elided = true;
  // an elision inside a rule's map hides elements of that map alone
  const list = [...tables.values()].map(({ chainByName: _c, setByName: _s, inRules, ...t }) => {
    const elided = [...elisions, ...(inRules ?? [])].sort((a, b) => a - b);
    return finished({
      ...t,
      ...(elided.length > 0 ? { elided } : {}),
      // the lines after a cut may be any table's
      ...(cut ? { cut: { line: cut.line, inside: cutInside(cut.text), anywhere: true } } : {}),
    });
  });
  if (list.length === 0) throw new NftParseError(file, undefined, 'the nft script adds no table');
  return {
    tables: list,
    table: (family, name) => list.find((t) => t.family === family && t.name === name),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

const keyOf = (e: NftElement) => JSON.stringify(e.key);

/** The set or map an element line of a script's part adds to where no line adds it: a map where
 * its elements carry values (" : "), a verdict map where those are verdicts; its type unknown. */
function outsideSet(
  table: { sets: NftSet[]; setByName: Map<string, NftSet> },
  name: string,
  body: string,
  no: number,
): NftSet {
  const first = splitTop(body.replace(/^\{\s*|\s*\}$/g, ''))[0] ?? '';
  const value = / : (.*)$/.exec(first)?.[1]?.trim();
  const st: NftSet = {
    name,
    kind: value === undefined ? 'set' : 'map',
    type: [],
    ...(value !== undefined && /^(?:goto|jump) /.test(value) ? { map: 'verdict' } : {}),
    flags: [],
    elements: [],
    outside: no,
  };
  table.sets.push(st);
  table.setByName.set(name, st);
  return st;
}

/** The number of the script's last line (0 for none): prose or a fence after it is no more of it. */
const lastLine = (lines: string[]) => {
  let at = lines.length;
  while (at > 0 && !VERB.test(lines[at - 1]!.trim())) at--;
  return at;
};

const VERB = /^(?:add|create|insert|flush|delete|destroy)(?: |$)/;

/** A script line that stops short of what nft's grammar needs: a verb without its object, family,
 * table and name (or with one of them cut mid-word); a rule or element without its body; braces
 * or quotes left open. */
function cutShort(t: string): boolean {
  const m = /^(?:add|create|insert|flush|delete|destroy)(?: (.*))?$/.exec(t);
  if (!m) return false;
  const [what = '', family = '', table = '', name = '', ...body] = (m[1] ?? '').split(' ');
  if (!OBJECTS.includes(what)) return OBJECTS.some((o) => o.startsWith(what));
  if (!FAMILIES.includes(family)) return FAMILIES.some((f) => f.startsWith(family));
  if (!table || (what !== 'table' && !name)) return true;
  const rest = (what === 'table' ? [name, ...body] : body).join(' ');
  if ((what === 'rule' || what === 'element') && /^(?:add|create|insert)/.test(t) && !rest)
    return true;
  const open = (rest.match(/\{/g) ?? []).length > (rest.match(/\}/g) ?? []).length;
  return open || (rest.match(/"/g) ?? []).length % 2 === 1;
}

const OBJECTS = ['table', 'chain', 'rule', 'set', 'map', 'element'];
const FAMILIES = ['ip', 'ip6', 'inet'];

/** Where a script was cut, as its cut says it. */
const cutInside = (t: string) => `the nft script's line "${t.slice(0, 80)}", which stops short`;

const raise = (e: Error): never => {
  throw e;
};

/** "NAME rest..." for the words after the table (a chain, set or map name, then its body). */
function splitName(rest: string): [string, string] {
  const at = rest.indexOf(' ');
  return at < 0 ? [rest, ''] : [rest.slice(0, at), rest.slice(at + 1).trim()];
}
