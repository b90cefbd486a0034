// A pasted dump read as what printed it: a Cilium agent's listing of its Services, kube-proxy's
// nftables table (nft's text, its JSON, or the script kube-proxy feeds nft), an ipvsadm listing,
// or iptables rules (iptables-save,
// iptables -S, with whatever surrounds them). The kind is told by the text, not by the file name.
import { stripColours } from './colours.js';
import { excerpt } from '../../sanitize.js';
import type { CiliumTable } from '../cilium/read/listing.js';
import { parseCilium } from '../cilium/read/read.js';
import { ciliumForm, ciliumOther, uncommented } from '../cilium/read/which-listing.js';
import { buildCiliumTrees } from '../cilium/trees.js';
import { quoteNote, unquoted } from '../iptables/read/paste/mangled/quoted.js';
import { isListView } from '../iptables/read/paste/list-view/to-rules.js';
import { NFT_ERROR } from '../iptables/read/paste/other-lines/foreign-lines.js';
import { nftErrors, nftErrorSaid } from '../iptables/read/paste/other-lines/nft-errors.js';
import { kubectlKinds, kubectlLines } from './foreign.js';
import { parseIptables, TABLES, type Ruleset } from '../iptables/read/parse.js';
import { NoRulesError } from '../iptables/read/errors.js';
import { mapGetPortsSaid } from '../cilium/read/other-lines/map-get.js';
import { isIpvs, type IpvsTable } from '../ipvs/read/listing.js';
import { readIpvsPaste } from '../ipvs/read/pasted-ipsets.js';
import { isTablePair, pairFamilies, type NftTable } from '../nftables/read/listing.js';
import { isNftJson } from '../nftables/read/read-json.js';
import { isKubeProxyTable } from '../nftables/read/kube-proxy-names.js';
import { isNftScript } from '../nftables/read/read-script.js';
import { isNftText, parseNftAny } from '../nftables/read/read-text.js';
import { buildNftServiceTrees, entriesNotListed } from '../nftables/trees.js';
import { type ServiceTrees } from '../trees.js';
import type { IPFamily } from '../../ipv6.js';
import { buildServiceTrees } from '../iptables/trees.js';
import { saidTarget } from './target.js';

export type PasteKind = 'nftables' | 'ipvs' | 'iptables' | 'cilium';

/** Which reader a paste is for, from its first 4 KiB (`head`); `whole` gives the rest of the
 * text, read where the head alone cannot tell (Cilium's output that lists no Service, one IPVS
 * virtual server's line beside lines that may be iptables'). */
export const pasteKind = (head: string, whole: () => string = () => head): PasteKind =>
  pasteForm(head, whole).kind;

/** Which reader a paste is for, and where Cilium's output that lists no Service (its status, its
 * Services table) comes before another tool's listing, the line that listing starts at (0-based):
 * the lines above it are Cilium's, for the reader not to take its fields for rows. */
export function pasteForm(
  coloured: string,
  colouredWhole: () => string = () => coloured,
): { kind: PasteKind; from?: number } {
  // grep --color's codes hide the words each reader looks for; a markdown quote's marks too
  const head = unquoted(stripColours(coloured)).text;
  const whole = () => unquoted(stripColours(colouredWhole())).text;
  if (ciliumForm(head) || uncommented(head)) return { kind: 'cilium' };
  // Cilium's output that lists no Service, to say what it is: where no other reader's form is
  // anywhere in the paste (a status, then a listing, is that listing)
  if (ciliumOther(head)) {
    const text = whole();
    const found = formIn(text);
    if (!found) return { kind: 'cilium' };
    const from = text.slice(0, found.at).split('\n').length - 1;
    return { kind: found.kind, ...(from > 0 ? { from } : {}) };
  }
  return { kind: readerForm(head, whole) ?? 'iptables' };
}

/** The text with its first `from` lines blank (their line breaks kept, so lines keep their
 * numbers). */
export const linesFrom = (text: string, from: number): string =>
  text
    .split('\n')
    .map((l, i) => (i < from ? '' : l))
    .join('\n');

/** The reader whose form `text` (its first 4 KiB) shows: nft's, ipvsadm's, or iptables' rules
 * (iptables-save, -S, or an -L listing); undefined where none. `whole` gives all of the paste, for
 * what its head alone cannot settle. */
function readerForm(
  text: string,
  whole: () => string = () => text,
): Exclude<PasteKind, 'cilium'> | undefined {
  // nft's error report quotes the rules it refused, in nft's syntax: a listing beside it is read
  // without it (an ipvsadm listing too), else the iptables reader names what it is
  const errors = nftErrorLines(text);
  const rest = errors.length > 0 ? withoutLines(text, errors) : '';
  if (errors.length > 0)
    return isNft(rest)
      ? 'nftables'
      : isIpvs(rest, () => withoutLines(whole(), errors))
        ? 'ipvs'
        : 'iptables';
  if (isNft(text) || isNft(newSide(text) ?? '')) return 'nftables';
  if (isIpvs(text, whole)) return 'ipvs';
  const head = text.slice(0, 4096);
  return /^(?:\*[a-z]+$|:KUBE-|-[AN] )/m.test(head) || isListView(head) ? 'iptables' : undefined;
}

/** The first form of another reader in `text` and the line it starts at: the first window of
 * 4 KiB (each starting at a line, halfway into the last, so that no form's lines are split
 * between two) that shows one, from the first line at which the window's lines up to the
 * form's show it to the last from which they still do. */
function formIn(text: string): { kind: Exclude<PasteKind, 'cilium'>; at: number } | undefined {
  for (let at = 0; at < text.length;) {
    const window = text.slice(at, at + 4096);
    const kind = readerForm(window);
    if (kind) {
      // the lines that show it: up to the first line after which they do, from the last line
      // from which they still do
      const starts = [0, ...[...window.matchAll(/\n/g)].map((m) => m.index + 1)];
      const upTo = starts.find((e) => e > 0 && readerForm(window.slice(0, e)) === kind);
      const end = upTo ?? window.length;
      const from = starts.filter((f) => f < end && readerForm(window.slice(f, end)) === kind).pop();
      return { kind, at: at + (from ?? 0) };
    }
    const next = text.indexOf('\n', at + 2048);
    if (next < 0) break;
    at = next + 1;
  }
  return undefined;
}

/** The lines (0-based) of nft's error reports: each its FILE:LINE:COL line, the input line it
 * quotes and the line of carets under it, as nft's erec_print writes them. */
export function nftErrorLines(text: string): number[] {
  if (!/: (?:Error|Warning): /.test(text)) return [];
  const lines = text.split('\n');
  const out: number[] = [];
  let last = lines.length - 1;
  while (last > 0 && lines[last]!.trim() === '') last--;
  for (let i = 0; i < lines.length; i++) {
    if (!NFT_ERROR.test(lines[i]!)) continue;
    out.push(i);
    // the quoted input only where its carets follow: a report without them quotes none; nft
    // prints the input line and its carets after every located error, so a line after the
    // error that ends the paste is its quote, the carets cut off
    const quote =
      CARETS.test(lines[i + 2] ?? '') || (i + 1 === last && lines[i + 1]!.trim() !== '');
    if (quote && !NFT_ERROR.test(lines[i + 1]!)) out.push(++i);
    if (CARETS.test(lines[i + 1] ?? '')) out.push(++i);
  }
  return out;
}

const CARETS = /^\s*~*\^[~^]*\s*$/;

/** The text with the given lines (0-based) blank, so the others keep their numbers. */
const withoutLines = (text: string, blank: number[]): string => {
  const set = new Set(blank);
  return text
    .split('\n')
    .map((l, i) => (set.has(i) ? '' : l))
    .join('\n');
};

const isNft = (text: string) => isNftJson(text) || isNftText(text) || isNftScript(text);

/** A unified diff's lines that are neither side: its headers (git's too) and its "\\ No newline at
 * end of file" marks. */
const DIFF_HEADER =
  /^(?:@@|diff |index |--- |\+\+\+ |(?:new|deleted) file mode |old mode |new mode |similarity index |rename (?:from|to) |\\ )/;
const FENCE = /^[ \t]*(?:```|~~~)/;

/** A diff's new side, line for line: its `+` and context lines without their mark, its `-` lines
 * and headers blank, markdown fences and the prose outside them (or above the diff's first
 * header) as they are, for the reader to skip; undefined when the text is no diff (a line
 * outside the marks, or no `+`). */
export function newSide(text: string): string | undefined {
  const lines = text.split('\n');
  const fenced = lines.some((l) => FENCE.test(l));
  // unfenced, a diff starts at its first header: what is above it is prose (a prompt, a message)
  const start = fenced
    ? 0
    : Math.max(
        0,
        lines.findIndex((l) => /^(?:diff |--- |@@ )/.test(l)),
      );
  let inside = false; // between a fence and the next
  const ofDiff = lines.map((l, i) => {
    if (FENCE.test(l)) inside = !inside;
    else if (fenced ? inside : i >= start) return true;
    return false;
  });
  const diff = lines.filter((_, i) => ofDiff[i]);
  const added = diff.some((l) => l.startsWith('+') && !DIFF_HEADER.test(l));
  // a tab is no mark: a context line (Go's tab-indented source) whose leading space a copy lost
  if (!added || !diff.every((l) => l.trim() === '' || /^[+\- \t]/.test(l) || DIFF_HEADER.test(l)))
    return undefined;
  return lines
    .map((l, i) =>
      !ofDiff[i] || l.startsWith('\t')
        ? l
        : DIFF_HEADER.test(l) || l.startsWith('-')
          ? ''
          : l.slice(1),
    )
    .join('\n');
}

/** kube-proxy's table of an nft paste, or why the paste holds none (one line, the kind named). */
export type NftPaste =
  | { table: NftTable; skipped: number[]; notes: string[] }
  | { notKubeProxy: string; iptablesNft: boolean };

const IPTABLES_CHAINS = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

export function readNftPaste(coloured: string, file: string): NftPaste {
  // grep --color's codes around each match, a markdown quote's marks: the listing is without them
  const { text, quote } = unquoted(stripColours(coloured));
  // nft's listing inside a diff: its new side is read, said so
  const diff = newSide(text);
  const side = diff !== undefined && isNft(diff.slice(0, 4096)) ? diff : undefined;
  // nft's error report beside the listing quotes rules it refused to load: not the table's
  const errors = nftErrorLines(side ?? text);
  const listing = parseNftAny(withoutLines(side ?? text, errors), file, { pasted: true });
  // kube-proxy's tables in the order listed: a dual-stack node's `nft list ruleset` holds one per
  // family; a paste that starts inside one is known by its chains and maps
  const kubeProxy = listing.tables.filter(
    (t) => t.name === 'kube-proxy' || (t.headless && isKubeProxyTable(t)),
  );
  const named = kubeProxy.filter((t) => !t.headless);
  const table =
    named.find((t) => t.family === 'ip') ?? named.find((t) => t.family === 'ip6') ?? kubeProxy[0];
  // the other family's table is read with it; a third (an inet copy, a repeat) is said, not read
  const also = kubeProxy.find(
    (t) => t !== table && t.target === table!.target && isTablePair(table!, t),
  );
  const notes = kubeProxy
    .filter((t) => t !== table && t !== also)
    .map((t) =>
      t.target !== table!.target
        ? `this listing also holds ${t.headless ? 'part of a kube-proxy table' : `table ${t.family} kube-proxy`} as another node lists it (${saidTarget(t.target)}; the one read: ${saidTarget(table!.target)}): not read with it, nor joined to it (give each node's listing to kdebug rules --file on its own)`
        : t.headless
          ? 'this listing also holds part of a kube-proxy table whose table line is not in it, not read here (give that part to kdebug rules --file on its own)'
          : `this listing also holds table ${t.family} kube-proxy, not read here: \`nft list table ${t.family} kube-proxy\` on its own is read`,
    );
  const said = errors.length > 0 ? nftErrors(side ?? text) : undefined;
  if (errors.length > 0)
    notes.unshift(
      `line${errors.length === 1 ? '' : 's'} ${errors.map((i) => i + 1).join(', ')}: nft's error report (FILE:LINE:COL: Error: ..., the input it quotes), not the listed table: skipped${said ? `; nft said on ${nftErrorSaid(said)}` : ''}`,
    );
  if (quote) notes.unshift(quoteNote(quote));
  const inMap = table?.mapAbove;
  if (inMap)
    notes.unshift(
      inMap.grep
        ? `line ${inMap.line}: the elements of kube-proxy's ${inMap.name} that the command above picked (\`nft list map ... | grep\`), without the map's own lines: read into that map; its other elements are not in the paste`
        : `line ${inMap.line}: the paste starts inside a map, its \`map\` line not in it: read as kube-proxy's ${inMap.name} (its key, comment and verdicts are that map's); the rest of the table is not in the paste`,
    );
  if (side !== undefined)
    notes.unshift('a diff: its new side is read (its + and context lines), not the - lines');
  if (listing.crash)
    notes.push(
      `line ${listing.crash.line}: nft crashed ("${excerpt(listing.crash.text)}") after the tables above that line: they are read, and what that listing did not print is not in the paste`,
    );
  // maps listed without their elements beside Service chains: `nft -t` (--terse) omits them
  if ([table, also].some((t) => t?.set('service-ips') && entriesNotListed(t)))
    notes.push(
      "the listing's maps hold no elements though Service ports' chains are there (`nft -t` / `--terse` omits them): which address and port lead to each Service port is not in the paste; list without -t for them",
    );
  // kubectl's output pasted with it: the API server's objects, named apart from the prose
  const kubectl = kubectlLines((side ?? text).split('\n'), listing.skipped ?? []);
  if (table) {
    const named = new Set(kubectl);
    const skipped = (listing.skipped ?? []).filter((l) => !named.has(l));
    table.paste = {
      notes,
      skipped,
      diff: side !== undefined,
      ...(kubectl.length > 0
        ? {
            kubectlLines: kubectl,
            kubectlKinds: kubectlKinds((side ?? text).split('\n'), kubectl),
          }
        : {}),
      ...(also ? { also } : {}),
    };
    return { table, skipped, notes };
  }
  const names = listing.tables.map((t) =>
    t.headless ? 'a table whose first line is not in the paste' : `${t.family} ${t.name}`,
  );
  // iptables-nft keeps iptables' own tables in nftables (nat, filter ...), their base chains
  // named as iptables' built-in ones (xtables' nft.c): a table nft wrote by those names with base
  // chains of its own ("chain pre { type nat hook prerouting ...") is no iptables-nft table
  const iptablesNft = listing.tables.every(
    (t) =>
      ((TABLES as readonly string[]).includes(t.name) &&
        t.chains.every((c) => c.hook === undefined || IPTABLES_CHAINS.includes(c.name))) ||
      (t.headless === true && t.chains.some((c) => IPTABLES_CHAINS.includes(c.name))),
  );
  return {
    iptablesNft,
    notKubeProxy: iptablesNft
      ? `${file}: these are iptables-nft's tables (${names.join(', ')}), iptables rules seen through nft: read them with iptables-save`
      : `${file}: no kube-proxy table in this nft listing (tables: ${names.join(', ')})`,
  };
}

/** A paste as read, with its Service trees. */
export type PasteReading =
  | { mode: 'iptables'; dump: Ruleset; trees: ServiceTrees }
  | { mode: 'nftables'; dump: NftTable; trees: ServiceTrees; skipped: number[]; notes: string[] }
  | { mode: 'ipvs'; dump: IpvsTable; trees: ServiceTrees }
  | { mode: 'cilium'; dump: CiliumTable; trees: ServiceTrees }
  | { mode: 'not-kube-proxy'; message: string; iptablesNft: boolean };

/** The Service trees of an nft paste: of kube-proxy's table, and where the listing holds both
 * families' tables, of each, every tree and orphan saying its family. */
export function nftPasteTrees(table: NftTable): ServiceTrees {
  const also = table.paste?.also;
  const trees = buildNftServiceTrees(table);
  if (!also) return trees;
  const other = buildNftServiceTrees(also);
  const [mine, theirs] = pairFamilies(table, also);
  const mark = (x: ServiceTrees, family: IPFamily) => {
    for (const t of x.services) t.family = family;
    for (const o of x.orphans) o.family = family;
  };
  mark(trees, mine);
  mark(other, theirs);
  return {
    services: [...trees.services, ...other.services],
    orphans: [...trees.orphans, ...other.orphans],
  };
}

/** Reads a paste as `kdebug rules --file` does; input it cannot read throws the parser's error
 * (FILE:LINE, or the other tool's listing named). */
export function readPaste(input: string, o: { file: string; table?: string }): PasteReading {
  const form = pasteForm(input.slice(0, 4096), () => input);
  const kind = form.kind;
  if (form.from !== undefined) input = linesFrom(input, form.from);
  if (kind === 'nftables') {
    const nft = readNftPaste(input, o.file);
    if ('notKubeProxy' in nft)
      return { mode: 'not-kube-proxy', message: nft.notKubeProxy, iptablesNft: nft.iptablesNft };
    return {
      mode: 'nftables',
      dump: nft.table,
      trees: nftPasteTrees(nft.table),
      skipped: nft.skipped,
      notes: nft.notes,
    };
  }
  if (kind === 'cilium') {
    const dump = parseCilium(input, o.file);
    return { mode: 'cilium', dump, trees: buildCiliumTrees(dump, new Map()) };
  }
  if (kind === 'ipvs') {
    return { mode: 'ipvs', ...readIpvsPaste(input, o.file) };
  }
  const dump = withMapPorts(
    () => input,
    () => parseIptables(input, { file: o.file, ...(o.table ? { table: o.table } : {}) }),
  );
  return { mode: 'iptables', dump, trees: buildServiceTrees(dump) };
}

/** `read` of iptables' reader, whose refusal of Cilium's `map get` of its load-balancer maps also
 * says how their ports are printed (network byte order through 1.8); `text`, the paste, asked
 * only then. */
export function withMapPorts(text: () => string, read: () => Ruleset): Ruleset {
  try {
    return read();
  } catch (e) {
    const said = e instanceof NoRulesError && e.foreign === 'cilium-map' && mapGetPortsSaid(text());
    if (!said) throw e;
    throw new NoRulesError(e.file, e.foreign, { ...e.detail!, ports: said });
  }
}
