// `nft list table ip kube-proxy` (and the kube-proxy tables of `nft list ruleset`) read into the
// same typed tables as the JSON listing. Only what kube-proxy writes is understood: its rules
// are read into the few expressions the Service trees look at (verdicts, DNAT, numgen maps,
// affinity sets, mark sets, matches kept as their text); anything else stays as text. What nft
// prints inside a table (sets, maps, rules) is read by table-parts.ts, which the script reader
// (read-script.ts) shares; parseNftAny reads any of nft's forms.
import { ELISION } from '../../paste/elisions.js';
import { nftCrashed } from '../../paste/foreign.js';
import type {
  NftChain,
  NftFamily,
  NftListing,
  NftRule,
  NftSet,
  NftTable,
  NftUnread,
} from './listing.js';
import { NftParseError } from './listing.js';
import { isNftJson, parseNftJson } from './read-json.js';
import { isKubeProxyFragment } from './kube-proxy-names.js';
import {
  BARE_ELEMENT,
  bareElements,
  mapAbove,
  mapListed,
  typedAfterFragment,
} from './map-above.js';
import { joinListings } from './joined-listings.js';
import { commandTarget } from '../../paste/target.js';
import { isNftScript, parseNftScript, type NftReadOptions } from './read-script.js';
import {
  finished,
  priority,
  rule,
  setLine,
  understood,
  unreadDnat,
  type Building,
} from './table-parts.js';

/** Does this look like nft's text listing of a table (so `rules --file` reads it as such)? */
export const isNftText = (text: string) =>
  /^[^\S\r\n\u2028\u2029]*table (?:ip|ip6|inet) \S+ \{/m.test(text.slice(0, 4096)) ||
  isKubeProxyFragment(text);

interface Line {
  text: string;
  no: number;
  /** Where each line joined to it (a wrapped element list, a rule) starts in text, and its number. */
  joined: { at: number; no: number }[];
}

/** The number of the pasted line that holds this offset of a joined line. */
const lineOf = (l: Line, at: number) => l.joined.reduce((no, j) => (j.at <= at ? j.no : no), l.no);

/** `nft -a` ends a line with its handle ("... # handle 12"): not part of the rule. */
const withoutHandle = (line: string) => line.replace(/(?<!\s)\s+# handle \d+$/, '');

/** grep's "--" at `k` between two windows, the second starting a block or its header lines
 * ("map service-ips {", "type ..."): the list open above is cut there, not continued. */
const anotherBlock = (raw: string[], k: number) =>
  raw[k]!.trim() === '--' &&
  /^(?:(?:table|chain|set|map) \S+(?: \S+)? \{|(?:type|flags|comment|elements =|timeout|size|policy) )/.test(
    raw[k + 1]?.trim() ?? '',
  );

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
    while (
      open(text) > 0 &&
      i + 1 < raw.length &&
      !/^(chain|set|map|table) /.test(text) &&
      !anotherBlock(raw, i + 1)
    ) {
      i++;
      joined.push({ at: text.length + 1, no: i + 1 });
      const next = withoutHandle(raw[i]!.trim());
      // an elision line among wrapped elements is an element of its own, not the next one's start
      text += ELISION.test(next) ? ` ${next},` : ` ${next}`;
    }
    if (text) lines.push({ text, no, joined });
  }
  const tables: NftTable[] = [];
  // whose listing each table is: the host (or pod, container) its nft command names (target.ts)
  let target: string | undefined;
  // the block the last nft command typed lists on its own (`nft list chain|map|set ...`)
  let block: NftTable['listedBlock'];
  const add = (t: NftTable) => {
    if (target !== undefined) t.target = target;
    if (block !== undefined) t.listedBlock = block;
    tables.push(t);
  };
  const typedNft = (t: string) => {
    if (!/\bnft\b/.test(t)) return;
    target = commandTarget(t) ?? target;
    block = /\bnft\b.*\blist\s+(chain|map|set)\s/.exec(t)?.[1] as NftTable['listedBlock'];
  };
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
    const what = chain ? unreadDnat(text) : undefined;
    (table!.unread ??= []).push({
      line: no,
      text,
      ...(block ? { block } : {}),
      ...(what ? { what } : {}),
    });
  };
  // the input ended inside the table (or nft crashed there): a paste cut short, read as far as
  // it goes
  const cutShort = (at: { line: number; crash?: string } | undefined) => {
    const open = table!;
    const inside = [
      open.headless
        ? 'a table whose first line is not in the paste'
        : `table ${open.family} ${open.name}`,
    ];
    if (chain) inside.push(`chain ${chain.name}`);
    if (set) inside.push(`${set.kind} ${set.name}`);
    let last = at?.line ?? raw.length;
    while (last > 1 && !raw[last - 1]!.trim()) last--;
    // a last line not read is the cut's, and the cut says it (nft printed more there than it
    // holds); a crash's report is the shell's, not a line nft cut
    const end = at ? Infinity : lines.at(-1)!.no;
    const unread = open.unread?.filter((u) => u.line < end) ?? [];
    if (unread.length > 0) open.unread = unread;
    else delete open.unread;
    // a paste that ends in "..." is cut there too: what follows is not compared (its warning is
    // the elision's, said once)
    // the block open at the cut holds the rules or elements before it; those after it are absent
    const within = chain
      ? { kind: 'chain' as const, name: chain.name }
      : set && { kind: set.kind, name: set.name };
    // nft ends every line it prints with a newline: a last line without one may stop mid-way
    const unended = !at && last === raw.length;
    const cut = {
      line: last,
      inside: inside.join(', '),
      ...(at?.crash ? { crash: at.crash } : {}),
      ...(unended ? { unended: true as const } : {}),
      partly: within ? [within] : [],
    };
    add({ ...finished(open), cut });
    table = chain = set = undefined;
  };
  // a block's header while another is open (grep's "--" between their windows, an elision): the
  // open one's end is not in the paste, and what follows is the new block's, not its
  const endOpenBlock = (l: Line) => {
    const open = chain ?? set;
    if (!open) return;
    if (!open.elided) (table!.elided ??= []).push(l.no);
    open.elided = true;
    chain = set = undefined;
  };
  const fragments = new Set<NftTable>(); // parts without a table line a typed command ended
  // a part without its table line ends (the next command typed, or grep's output at the paste's
  // end): grep kept what it matched of the open block (a map's elements), more of it may be above
  const endFragment = () => {
    const open = chain ?? set;
    if (open) open.elided = true;
    const part = finished(table!);
    fragments.add(part);
    add(part);
    table = chain = set = undefined;
  };
  let typed: string | undefined; // the last line outside a table: the command typed, if any
  let crash: { line: number; text: string } | undefined;
  // a paste that starts inside one of kube-proxy's maps: read as that map from its first line
  const inMap = mapAbove(input);
  for (const l of lines) {
    const t = l.text;
    let m: RegExpExecArray | null;
    if (inMap && !table && tables.length === 0 && l.no === inMap.line) {
      table = { ...headless(tables, l, fail), mapAbove: inMap };
      set = { name: inMap.name, kind: 'map', type: [], flags: [], elements: [] };
      table.sets.push(set);
    }
    // the shell's report that nft crashed: what it printed before is all that listing holds; a
    // command typed after it prints a listing of its own, read as any other
    if (nftCrashed(t, typed)) {
      if (table) cutShort({ line: l.no, crash: t });
      else crash ??= { line: l.no, text: t };
      typed = undefined;
      continue;
    }
    // a later command's grep of one of kube-proxy's maps (`nft list map ip kube-proxy service-ips
    // | grep X`): its element lines, read into that map as a first command's are (mapAbove)
    const listed =
      !table && typed !== undefined && BARE_ELEMENT.test(t) ? mapListed(typed) : undefined;
    if (listed) {
      const inMap = { name: listed.name, line: l.no, grep: true as const };
      table = {
        family: listed.family,
        name: '',
        chains: [],
        sets: [],
        headless: true,
        mapAbove: inMap,
      };
      table.sets.push(
        (set = { name: listed.name, kind: 'map', type: [], flags: [], elements: [] }),
      );
    }
    if (!table && !t.endsWith('{')) typed = t;
    if (!table) typedNft(t);
    // a command typed after a part without its table line (a grep's window): that part ends here
    if (table?.headless && typedAfterFragment(t)) {
      endFragment();
      typed = t;
      typedNft(t);
      skipped.push(l.no);
      continue;
    }
    if ((m = /^table (ip|ip6|inet|arp|bridge|netdev) (\S+) \{$/.exec(t))) {
      if (table) fail(l, 'a table inside a table');
      table = { family: m[1] as NftFamily, name: m[2]!, chains: [], sets: [] };
    } else if ((m = /^chain (\S+) \{$/.exec(t))) {
      table ??= headless(tables, l, fail);
      endOpenBlock(l);
      table.chains.push((chain = { name: m[1]!, rules: [] }));
    } else if ((m = /^(set|map) (\S+) \{$/.exec(t))) {
      table ??= headless(tables, l, fail);
      endOpenBlock(l);
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
        add(finished(table));
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
    else if (set && table?.mapAbove?.name === set.name && BARE_ELEMENT.test(t))
      bareElements(
        set,
        t,
        (at, text) => unread(lineOf(l, at), text),
        (at) => lineOf(l, at),
      );
    else if (set)
      setLine(
        set,
        t,
        (at, text, elided) => {
          if (elided) {
            (table!.elided ??= []).push(lineOf(l, at));
            set!.elided = true;
          } else unread(lineOf(l, at), text);
        },
        (at) => lineOf(l, at),
      );
    else if (chain) {
      const read = chainLine(chain, t, (at) => lineOf(l, at));
      if (!read) unread(l.no, t);
      // elements of a rule's numgen map left out by its author: part of the table elided
      else if (read !== true && read.elided) (table!.elided ??= []).push(...read.elided);
    } else if (table && (m = /^comment "(.*)"$/.exec(t))) table.comment = m[1];
    else if (!table)
      skipped.push(l.no); // a prompt, the command, prose around the paste
    else unread(l.no, t); // another object (a flowtable, a named counter), or not nft's
  }
  // grep's output ends where its matches do: the map it listed is not cut there
  if (table?.mapAbove?.grep) endFragment();
  else if (table) cutShort(undefined);
  if (tables.length === 0)
    throw new NftParseError(file, undefined, 'the nft listing holds no table');
  const listed = joinListings(tables, fragments);
  return {
    tables: listed,
    table: (family, name) => listed.find((t) => t.family === family && t.name === name),
    ...(skipped.length > 0 ? { skipped } : {}),
    ...(crash ? { crash } : {}),
  };
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

/** A chain's line read into it (its rule, or true for its declaration); false when nft prints
 * no such line (its rules start with an expression or a statement), or when a DNAT or numgen
 * statement is not one the reader knows. */
function chainLine(c: NftChain, t: string, lineAt: (at: number) => number): NftRule | boolean {
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
  const r = rule(c.name, t, lineAt);
  if (!understood(t, r)) return false;
  c.rules.push(r);
  return r;
}

/** The words nft starts a rule with: a match's left-hand side (payload, meta, ct, fib …), or a
 * statement (a verdict, counter, log, NAT, a set update …); iptables-nft's rules print xt. */
const RULE_START =
  /^(?:ip6?|tcp|udp|udplite|sctp|dccp|th|ah|esp|comp|icmp|icmpv6|igmp|ether|vlan|arp|rt[06]?|hbh|frag|dst|mh|srh|ipsec|meta|ct|fib|numgen|jhash|symhash|socket|osf|tproxy|synproxy|exthdr|iif|oif|iifname|oifname|iiftype|oiftype|iifgroup|oifgroup|mark|skuid|skgid|nfproto|l4proto|pkttype|cpu|cgroup|counter|log|limit|quota|last|reject|drop|accept|return|continue|jump|goto|queue|dup|fwd|dnat|snat|masquerade|redirect|notrack|update|add|delete|flow|xt)(?: |$)|^@[lnt]h,/;

/** Any form nft's tables come in: its JSON (`nft -j list`), the script kube-proxy feeds `nft -f`,
 * or the text listing (`nft list`). */
export function parseNftAny(text: string, file = '<input>', o: NftReadOptions = {}): NftListing {
  if (isNftJson(text)) return parseNftJson(text, file);
  return isNftScript(text) ? parseNftScript(text, file, o) : parseNftText(text, file);
}
