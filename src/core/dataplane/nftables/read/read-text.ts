// `nft list table ip kube-proxy` (and the kube-proxy tables of `nft list ruleset`) read into the
// same typed tables as the JSON listing. Only what kube-proxy writes is understood: its rules
// are read into the few expressions the Service trees look at (verdicts, DNAT, numgen maps,
// affinity sets, mark sets, matches kept as their text); anything else stays as text.
import { walkBrackets } from '../../brackets.js';
import { ELISION } from '../../elisions.js';
import type {
  NftChain,
  NftElement,
  NftExpr,
  NftFamily,
  NftListing,
  NftRule,
  NftSet,
  NftTable,
  NftUnread,
} from './listing.js';
import { isNftJson, NftParseError, parseNftJson } from './listing.js';
import {
  dnatExpr,
  markOrExpr,
  matchExprs,
  numgenDnatExpr,
  numgenVmapExpr,
  updateSaddrExpr,
  verdictExpr,
} from './expr.js';
import { portChain } from '../trees.js';

/** Does this look like the script kube-proxy feeds `nft -f` (and logs)? */
export const isNftScript = (text: string) =>
  /^\s*(?:add|create|flush) (?:table|chain|rule|set|map|element) /m.test(text.slice(0, 4096));

/** A script line of a named stateful object: `add counter ip kube-proxy NAME`, a quota, ... */
const STATEFUL_OBJECT =
  /^(?:add|create|delete|destroy|reset) (?:counter|quota|limit|ct (?:helper|timeout|expectation)|secmark|synproxy|flowtable) (ip|ip6|inet) (\S+) /;

/**
 * The `add table / add chain / add rule / add set / add map / add element` script kube-proxy
 * gives `nft -f`, applied in order (with the `flush` and `delete` lines of a resync) to an empty
 * ruleset, as nft itself would.
 */
export function parseNftScript(input: string, file = '<input>'): NftListing {
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
  };
  const tables = new Map<string, Building>();
  const skipped: number[] = [];
  // the element keys of each set's current elements (rebuilt when the array is replaced)
  const keyIndex = new Map<NftSet, { of: NftElement[]; keys: Set<string> }>();
  const keysOf = (st: NftSet) => {
    let k = keyIndex.get(st);
    if (k?.of !== st.elements)
      keyIndex.set(st, (k = { of: st.elements, keys: new Set(st.elements.map(keyOf)) }));
    return k.keys;
  };
  const lines = input.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const no = i + 1;
    const t = lines[i]!.trim();
    // a comment; "# --- snip ---" is an elision, skipped as "..." is
    if (!t || (t.startsWith('#') && !ELISION.test(t))) continue;
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
          const h = /^\s*type (\S+) hook (\S+) priority (.+?)\s*$/.exec(part);
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
      const st = setNamed(name);
      if (!st)
        throw new NftParseError(file, no, `element of a set or map not added before: ${name}`);
      // a deleted element is named by its key alone, a map's too
      const valued = st.kind === 'map' && verb !== 'delete' && verb !== 'destroy';
      const elems = splitTop(body.replace(/^\{\s*|\s*\}$/g, '')).map(
        (e) =>
          element(st, e, valued) ??
          raise(new NftParseError(file, no, `not an element of ${name}: ${e.slice(0, 200)}`)),
      );
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
      const c = chainNamed(name) ?? newChain(name);
      if (verb === 'add' || verb === 'insert') {
        const r = rule(name, body);
        if (!understood(body, r))
          throw new NftParseError(
            file,
            no,
            `a DNAT or numgen statement not read: ${t.slice(0, 200)}`,
          );
        if (verb === 'insert') c.rules.unshift(r);
        else c.rules.push(r);
      }
    }
  }
  const list = [...tables.values()].map(({ chainByName: _c, setByName: _s, ...t }) => finished(t));
  if (list.length === 0) throw new NftParseError(file, undefined, 'the nft script adds no table');
  return {
    tables: list,
    table: (family, name) => list.find((t) => t.family === family && t.name === name),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

const keyOf = (e: NftElement) => JSON.stringify(e.key);

const raise = (e: Error): never => {
  throw e;
};

/** "NAME rest..." for the words after the table (a chain, set or map name, then its body). */
function splitName(rest: string): [string, string] {
  const at = rest.indexOf(' ');
  return at < 0 ? [rest, ''] : [rest.slice(0, at), rest.slice(at + 1).trim()];
}

/** Does this look like nft's text listing of a table (so `rules --file` reads it as such)? */
export const isNftText = (text: string) =>
  /^\s*table (?:ip|ip6|inet) \S+ \{/m.test(text.slice(0, 4096)) || isKubeProxyFragment(text);

/** The sets and maps of kube-proxy's nftables table (pkg/proxy/nftables): no other table has them. */
const KUBE_PROXY_SETS = [
  'cluster-ips',
  'nodeport-ips',
  'service-ips',
  'service-nodeports',
  'no-endpoint-services',
  'no-endpoint-nodeports',
  'firewall-ips',
  'hairpin-connections',
];
/** The chains of kube-proxy's table that are not a Service port's: its base chains (by hook),
 * and the chains they jump to (pkg/proxy/nftables, 1.29 on). */
const KUBE_PROXY_CHAINS = new Set([
  'filter-prerouting',
  'filter-prerouting-pre-dnat',
  'filter-input',
  'filter-forward',
  'filter-output',
  'filter-output-pre-dnat',
  'filter-output-post-dnat',
  'nat-prerouting',
  'nat-output',
  'nat-postrouting',
  'services',
  'masquerading',
  'mark-for-masquerade',
  'firewall-check',
  'cluster-ips-check',
  'service-endpoints-check',
  'nodeport-endpoints-check',
  'endpoints-check',
  'reject-chain',
]);

/** One of kube-proxy's own chains, or a Service port's ("service-<hash>-ns/name/proto/port"). */
const isKubeProxyChain = (name: string) =>
  KUBE_PROXY_CHAINS.has(name) || portChain(name) !== undefined;

/** A paste that starts inside kube-proxy's table: no table line, one of its sets, maps or chains. */
const isKubeProxyFragment = (text: string) =>
  [...text.slice(0, 4096).matchAll(/^\s*(set|map|chain) (\S+) \{$/gm)].some(([, kind, name]) =>
    kind === 'chain' ? isKubeProxyChain(name!) : KUBE_PROXY_SETS.includes(name!),
  );

/** A table (or a paste of part of one) that is kube-proxy's, by the names only it uses. */
export const isKubeProxyTable = (t: NftTable) =>
  t.sets.some((s) => KUBE_PROXY_SETS.includes(s.name)) ||
  t.chains.some((c) => isKubeProxyChain(c.name));

interface Line {
  text: string;
  no: number;
  /** Where each line joined to it (a wrapped element list, a rule) starts in text, and its number. */
  joined: { at: number; no: number }[];
}

/** The number of the pasted line that holds this offset of a joined line. */
const lineOf = (l: Line, at: number) => l.joined.reduce((no, j) => (j.at <= at ? j.no : no), l.no);

/** A table being read from the text listing. */
interface Building {
  family: NftFamily;
  name: string;
  comment?: string;
  chains: NftChain[];
  sets: NftSet[];
  elided?: number[];
  headless?: boolean;
  unread?: NftUnread[];
}

/** `nft -a` ends a line with its handle ("... # handle 12"): not part of the rule. */
const withoutHandle = (line: string) => line.replace(/\s+# handle \d+$/, '');

/** "... }", "[snip] }": elided lines, then the brace that ends their block. */
const elidedEnd = (t: string) => t.endsWith('}') && ELISION.test(t.slice(0, -1).trim());

/** A chain or map before any `table` line: the paste starts inside a table (only the first). */
function headless(tables: NftTable[], l: Line, fail: (l: Line, why: string) => never): Building {
  if (tables.length > 0) fail(l, 'a chain or map outside a table');
  return { family: 'ip', name: '', chains: [], sets: [], headless: true };
}

export function parseNftText(input: string, file = '<input>'): NftListing {
  // elements and rules may wrap: join a line to the next while its braces are open
  const lines: Line[] = [];
  const raw = input.split('\n');
  for (let i = 0; i < raw.length; i++) {
    let text = withoutHandle(raw[i]!.trim());
    const no = i + 1;
    const joined: Line['joined'] = [];
    while (open(text) > 0 && i + 1 < raw.length && !/^(chain|set|map|table) /.test(text)) {
      i++;
      joined.push({ at: text.length + 1, no: i + 1 });
      const next = withoutHandle(raw[i]!.trim());
      // an elision line among wrapped elements is an element of its own, not the next one's start
      text += ELISION.test(next) ? ` ${next},` : ` ${next}`;
    }
    if (text) lines.push({ text, no, joined });
  }
  const tables: NftTable[] = [];
  let table: Building | undefined;
  let chain: NftChain | undefined;
  let set: NftSet | undefined;
  const skipped: number[] = [];
  const fail = (l: Line, why: string): never => {
    throw new NftParseError(file, l.no, `${why}: ${l.text.slice(0, 200)}`);
  };
  // a line inside the table that is not what nft prints there: said with its block, not guessed at
  const unread = (no: number, text: string) => {
    const block: NftUnread['block'] = chain
      ? { kind: 'chain', name: chain.name }
      : set
        ? { kind: set.kind, name: set.name }
        : undefined;
    (table!.unread ??= []).push({ line: no, text, ...(block ? { block } : {}) });
  };
  for (const l of lines) {
    const t = l.text;
    let m: RegExpExecArray | null;
    if ((m = /^table (ip|ip6|inet|arp|bridge|netdev) (\S+) \{$/.exec(t))) {
      if (table) fail(l, 'a table inside a table');
      table = { family: m[1] as NftFamily, name: m[2]!, chains: [], sets: [] };
    } else if ((m = /^chain (\S+) \{$/.exec(t))) {
      table ??= headless(tables, l, fail);
      table.chains.push((chain = { name: m[1]!, rules: [] }));
    } else if ((m = /^(set|map) (\S+) \{$/.exec(t))) {
      table ??= headless(tables, l, fail);
      table.sets.push(
        (set = { name: m[2]!, kind: m[1] as 'set' | 'map', type: [], flags: [], elements: [] }),
      );
    } else if (t === '}' || elidedEnd(t)) {
      if (t !== '}' && table) {
        (table.elided ??= []).push(l.no);
        // the elided lines end the block: more of its rules or elements may be there
        const block = chain ?? set;
        if (block) block.elided = true;
      }
      if (chain) chain = undefined;
      else if (set) set = undefined;
      else if (table && !(table.headless && table.chains.length + table.sets.length === 0)) {
        tables.push(finished(table));
        table = undefined;
      } else if (table)
        continue; // a further block above the paste ends
      else if (tables.length === 0 && !lines.some((x) => x.no < l.no && /\{$/.test(x.text)))
        // the paste starts inside a block: this brace ends one above it, in a table it holds
        (table = headless(tables, l, fail)).elided = [l.no];
      else fail(l, 'a closing brace that closes nothing');
    } else if (table && ELISION.test(t)) {
      (table.elided ??= []).push(l.no);
      const block = chain ?? set;
      if (block) block.elided = true;
    }
    // a comment (iptables-nft's "# Warning: table ... managed by iptables-nft"); outside a table
    // "# --- snip ---" is skipped as any elision there is
    else if (/^#/.test(t) && !ELISION.test(t)) continue;
    else if (set)
      setLine(set, t, (at, text, elided) => {
        if (elided) {
          (table!.elided ??= []).push(lineOf(l, at));
          set!.elided = true;
        } else unread(lineOf(l, at), text);
      });
    else if (chain) {
      if (!chainLine(chain, t)) unread(l.no, t);
    } else if (table && (m = /^comment "(.*)"$/.exec(t))) table.comment = m[1];
    else if (!table)
      skipped.push(l.no); // a prompt, the command, prose around the paste
    else unread(l.no, t); // another object (a flowtable, a named counter), or not nft's
  }
  // the input ended inside the table: a paste cut short, read as far as it goes
  if (table) {
    const inside = [
      table.headless
        ? 'a table whose first line is not in the paste'
        : `table ${table.family} ${table.name}`,
    ];
    if (chain) inside.push(`chain ${chain.name}`);
    if (set) inside.push(`${set.kind} ${set.name}`);
    let last = raw.length;
    while (last > 1 && !raw[last - 1]!.trim()) last--;
    // a last line not read is the cut's, and the cut says it (nft printed more there than it holds)
    const end = lines.at(-1)!.no;
    const unread = table.unread?.filter((u) => u.line < end) ?? [];
    if (unread.length > 0) table.unread = unread;
    else delete table.unread;
    // a paste that ends in "..." is cut there too: what follows is not compared (its warning is
    // the elision's, said once)
    tables.push({ ...finished(table), cut: { line: last, inside: inside.join(', ') } });
  }
  if (tables.length === 0)
    throw new NftParseError(file, undefined, 'the nft listing holds no table');
  return {
    tables,
    table: (family, name) => tables.find((t) => t.family === family && t.name === name),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

function finished(t: Building): NftTable {
  const chains = new Map(t.chains.map((c) => [c.name, c]));
  const sets = new Map(t.sets.map((s) => [s.name, s]));
  return { ...t, chain: (n) => chains.get(n), set: (n) => sets.get(n) };
}

/** How many braces a line leaves open. */
function open(text: string): number {
  let n = 0;
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '{') n++;
    else if (!quoted && ch === '}') n--;
  }
  return n;
}

/** What nft prints of a set or map (set_print_declaration, then its elements): `say` gets each
 * line, or element, that is none of it (elided: a "..." among the elements), with its offset. */
function setLine(
  s: NftSet,
  t: string,
  say: (at: number, text: string, elided?: boolean) => void,
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
      if (read) s.elements.push(read);
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
function element(s: NftSet, e: string, valued = s.kind === 'map'): NftElement | undefined {
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

/** A chain's line read into it; false when nft prints no such line (its rules start with an
 * expression or a statement), or when a DNAT or numgen statement is not one the reader knows. */
function chainLine(c: NftChain, t: string): boolean {
  let m: RegExpExecArray | null;
  if ((m = /^type (\S+) hook (\S+) priority (.+?); policy (\S+);$/.exec(t))) {
    c.type = m[1];
    c.hook = m[2];
    c.prio = priority(m[3]!);
    c.policy = m[4];
    return true;
  }
  if (/^comment "(.*)"$/.test(t)) return true;
  if (!RULE_START.test(t)) return false;
  const r = rule(c.name, t);
  if (!understood(t, r)) return false;
  c.rules.push(r);
  return true;
}

/** The words nft starts a rule with: a match's left-hand side (payload, meta, ct, fib …), or a
 * statement (a verdict, counter, log, NAT, a set update …); iptables-nft's rules print xt. */
const RULE_START =
  /^(?:ip6?|tcp|udp|udplite|sctp|dccp|th|ah|esp|comp|icmp|icmpv6|igmp|ether|vlan|arp|rt[06]?|hbh|frag|dst|mh|srh|ipsec|meta|ct|fib|numgen|jhash|symhash|socket|osf|tproxy|synproxy|exthdr|iif|oif|iifname|oifname|iiftype|oiftype|iifgroup|oifgroup|mark|skuid|skgid|nfproto|l4proto|pkttype|cpu|cgroup|counter|log|limit|quota|last|reject|drop|accept|return|continue|jump|goto|queue|dup|fwd|dnat|snat|masquerade|redirect|notrack|update|add|delete|flow|xt)(?: |$)|^@[lnt]h,/;

/** nft's named priorities ("dstnat - 10") as numbers. */
function priority(p: string): number {
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

/** A rule's text read into the expressions the trees look at; the rest kept as match text. */
function rule(chain: string, text: string): NftRule {
  let t = text;
  let comment: string | undefined;
  const c = t.includes(' comment "') ? / comment "(.*)"$/.exec(t) : null;
  if (c) {
    comment = c[1];
    t = t.slice(0, c.index);
  }
  const expr: NftExpr[] = [];
  let m: RegExpExecArray | null;
  // each statement's regex runs only on a rule naming it: a table of 10,000 Services has
  // hundreds of thousands of rules
  const numgen = t.includes('numgen random mod ');
  const dnat = t.includes('dnat ');
  // the statement at the end: a verdict, a numgen vmap, a DNAT, a mark, masquerade
  if (
    numgen &&
    (m = /(?:^| )numgen random mod (\d+) vmap \{ (.*) \}$/.exec(t)) &&
    splitTop(m[2]!).every((p) => VMAP_PAIR.test(p))
  ) {
    const set = splitTop(m[2]!).map((p): [number, NftExpr] => {
      const [k, v] = splitOnce(p, ' : ');
      return [Number(k), toVerdictExpr(v.trim())];
    });
    t = t.slice(0, m.index);
    expr.push(...matchExprs(t), numgenVmapExpr(Number(m[1]), set));
  } else if (
    // the listing's "dnat ip to numgen ..."; the script's "dnat ip addr . port to numgen ..."
    numgen &&
    dnat &&
    (m = /(?:^| )dnat (ip6?)(?: addr \. port)? to numgen random mod (\d+) map \{ (.*) \}$/.exec(
      t,
    )) &&
    splitTop(m[3]!).every((p) => DNAT_PAIR.test(p))
  ) {
    const set = splitTop(m[3]!).map((p): [number, (string | number)[]] => {
      const [k, v] = splitOnce(p, ' : ');
      return [Number(k), v.trim().split(' . ').map(value_)];
    });
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
  return { chain, ...(comment !== undefined ? { comment } : {}), expr };
}

/** A numgen map's pairs as nft prints them: "0 : goto CHAIN"; "0 : 10.244.1.4 . 80". */
const VMAP_PAIR = /^\d+ : (?:(?:goto|jump) \S+|drop|accept|return|continue)$/;
const DNAT_PAIR = /^\d+ : \S+(?: \. \d+)?$/;

/** Does the rule hold what its text says of DNAT and numgen (a statement the reader knows)? */
const understood = (text: string, r: NftRule) =>
  !(text.includes('dnat ') || text.includes('numgen ')) ||
  !/(?:^| )(?:dnat (?:ip6? )?to|numgen) /.test(text) ||
  r.expr.some((e) => 'dnat' in e || 'vmap' in e);

function toVerdictExpr(v: string): NftExpr {
  const x = verdict(v);
  return verdictExpr(x?.kind ?? v, x?.target);
}

/** Splits "a, b { c, d }, e" at the top-level commas (nft's strings hold no escapes). */
function splitTop(s: string): string[] {
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

/** Any form nft's tables come in: its JSON (`nft -j list`), the script kube-proxy feeds `nft -f`,
 * or the text listing (`nft list`). */
export function parseNftAny(text: string, file = '<input>'): NftListing {
  if (isNftJson(text)) return parseNftJson(text, file);
  return isNftScript(text) ? parseNftScript(text, file) : parseNftText(text, file);
}
