// The `kdebug rules` presentations: Service trees as an indented tree a person reads, or JSON.
import { frontendKey, isDropEntry, type CiliumTable } from '../core/dataplane/cilium/listing.js';
import { unreadMapText } from '../core/dataplane/cilium/maps/read-dump.js';
import type { IpvsTable } from '../core/dataplane/ipvs/listing.js';
import { missingSets, type NftTable, type NftUnread } from '../core/dataplane/nftables/listing.js';
import type { Ruleset } from '../core/dataplane/iptables/read/parse.js';
import type { SearchHit } from '../core/dataplane/search.js';
import { count } from '../core/checks/check.js';
import { portNameText } from '../core/model.js';
import { excerpt, sanitize, jsonText } from '../core/sanitize.js';
import {
  ENTRY_KIND_TEXT,
  type EntryPoint,
  type ServiceTree,
  type ServiceTrees,
  type TreeEndpoint,
} from '../core/dataplane/trees.js';
import { percent } from '../core/model.js';
import { hostPort } from '../core/ipv6.js';
import { schemaId } from './schema-id.js';
import { wrapIndented } from './wrap.js';

/** 2: Cilium's listings (mode cilium, form, frontends and backends counts, backendState). */
export const RULES_SCHEMA_VERSION = 2;
export const RULES_SEARCH_SCHEMA_VERSION = 1;

export interface RulesSource {
  /** "snapshot DIR node NODE", "file PATH", "ssh root@host" ... */
  label: string;
  node?: string;
  /** The file the warnings' lines count in: FILE:LINE in the text. */
  file?: string;
}

function entryText(e: EntryPoint): string {
  const kind = e.label ?? ENTRY_KIND_TEXT[e.kind];
  if (e.from === 'cilium') {
    const protocol = e.protocol ? `/${e.protocol}` : '';
    const where = e.address
      ? `${hostPort(e.address, e.port ?? 0)}${protocol}`
      : `${e.port}${protocol} on every node address`;
    return `${kind} ${where}  (cilium line ${e.line})`;
  }
  // an IPVS firewall-mark service: its mark alone, said in its label
  if (e.from === 'ipvs' && e.address === undefined && e.port === undefined)
    return `${kind}  (ipvs line ${e.line} -> ${e.chain})`;
  // kube-proxy writes a port on every Service entry: a rule without one lost it in printing
  const port = e.port ?? (e.from === 'ipvs' ? 'port unknown' : '?');
  const protocol = e.protocol ? `/${e.protocol}` : '';
  const where =
    e.kind === 'node-port'
      ? `${kind} ${port}${e.from === 'ipvs' ? `${protocol} on ${e.address}` : ''}`
      : `${kind} ${hostPort(e.address ?? '', port)}`;
  if (e.proxyPort !== undefined)
    return `${where}${e.from === 'ipvs' && e.kind === 'node-port' ? '' : protocol}  (${e.from} line ${e.line}) proxied by kube-proxy itself on port ${e.proxyPort} (userspace mode: endpoints are not in iptables)`;
  const proto = e.from === 'ipvs' && e.kind === 'node-port' ? '' : protocol;
  const unshown = e.port === undefined && e.from !== 'ipvs' ? ' (port not shown)' : '';
  return `${where}${proto}${unshown}  (${e.from} ${e.line ? `line ${e.line} ` : ''}-> ${e.chain})`;
}

function endpointText(ep: TreeEndpoint): string {
  if (ep.cilium) {
    const share = ep.shareUnknown ? '?' : percent(ep.probability);
    const state = `${ep.cilium.state ?? 'state not in the listing'}${ep.cilium.preferred === undefined ? '' : ep.cilium.preferred ? ', preferred' : ', not preferred'}`;
    return `${share.padStart(6)}  backend ${ep.address}  (${state}${ep.probability === 0 && !ep.shareUnknown ? ': no new connections' : ''})`;
  }
  const share = ep.shareUnknown
    ? '?'
    : ep.affinity && ep.probability === 0
      ? 'affinity'
      : percent(ep.probability);
  let to = ep.addressFromComment
    ? `DNAT -> ${ep.address} (from kube-proxy's comment on the jump: chain not in this paste)`
    : ep.address
      ? ep.forward
        ? `${ep.forward === 'route' ? 'direct routing (Route)' : 'IP-in-IP (Tunnel)'}, no DNAT -> ${ep.address}`
        : `DNAT -> ${ep.portUnknown ? hostPort(ep.address, 'port unknown') : ep.address}`
      : ep.inferredIP
        ? `DNAT -> ${ep.inferredIP}:? (address unreadable, IP from the hairpin rule)`
        : ep.hostStart
          ? `DNAT -> a host whose name starts ${ep.hostStart} (cut), port unknown`
          : 'no DNAT rule';
  if (ep.chainMissing && !ep.addressFromComment)
    to = 'chain not in this paste: DNAT target unknown';
  else if (ep.chainPartial && !ep.address && !ep.inferredIP)
    to = `DNAT target not in the paste (its chain: ${ep.chainPartial})`;
  const marks = [
    ep.shareUnknown ? `share unknown: ${ep.shareUnknown}` : '',
    ep.portUnknown ? `port unknown: ${ep.portUnknown}` : '',
    ep.hairpinMasquerade === null
      ? 'hairpin rule unknown'
      : ep.hairpinMasquerade
        ? 'hairpin masquerade'
        : 'NO hairpin masquerade',
    ep.affinity ? 'session affinity' : '',
  ].filter(Boolean);
  return `${share.padStart(6)}  ${ep.chain}  ${to}  (${marks.join(', ')})`;
}

function treeText(t: ServiceTree): string[] {
  const head = [t.name ? portNameText(t.name) : t.id];
  if (t.name && t.clusterIP)
    head.push(
      `${hostPort(t.clusterIP, t.port ?? '?')}${t.protocol ? `/${t.protocol}` : ''}${t.port === undefined ? ' (port not shown)' : ''}`,
    );
  if (t.nodePorts.length > 0 && t.name) head.push(`node port ${t.nodePorts.join(', ')}`);
  if (t.family) head.push(`(${t.family})`);
  const out = [head.join('  ')];
  if (t.entryAbsent)
    out.push(
      `  entry not in this paste (${t.chains.svc && !t.chains.svc.startsWith('KUBE-') ? 'no service-ips element for it' : 'no KUBE-SERVICES rules in it'})`,
    );
  for (const e of t.entries) out.push(`  entry  ${entryText(e)}`);
  for (const c of t.absentChains ?? [])
    out.push(`  ${c}  (chain not in this paste: its endpoints are unknown)`);
  for (const m of t.masquerade)
    out.push(`  masquerade  ${m.condition}  (${m.chain}${m.line ? ` line ${m.line}` : ''})`);
  for (const v of t.verdicts)
    out.push(
      `  ${v.kind.toUpperCase()}  ${v.comment ?? ''}  (${[v.table, v.chain].filter(Boolean).join(' ')}${v.line ? ` line ${v.line}` : ''})`,
    );
  const list = (title: string | undefined, eps: TreeEndpoint[], empty = 'no endpoints') => {
    if (!title) return;
    const none = t.partial
      ? `  (the paste may not hold all its rules: ${t.partial})`
      : eps.length === 0
        ? `  (${empty})`
        : '';
    out.push(`  ${title}${none}`);
    eps.forEach((ep, i) => out.push(`  ${i === eps.length - 1 ? '└─' : '├─'}${endpointText(ep)}`));
  };
  // Cilium's frontends have no chains: their backends are the frontend's own
  const cilium = t.entries.some((e) => e.from === 'cilium');
  list(cilium ? 'backends' : t.chains.svc, t.endpoints);
  list(t.chains.svl ?? t.chains.xlb, t.localEndpoints ?? [], 'no local endpoints');
  if (t.fallThrough > 0 && !t.partial)
    out.push(
      // kube-proxy's last endpoint rule has no probability and takes the rest: here it is not
      `  ${percent(t.fallThrough)} of new connections match none of the endpoint rules shown: kube-proxy ends this chain with a rule that takes the rest, and it is not here (the listing is cut or filtered, or the chain was edited)`,
    );
  if (t.affinitySeconds !== undefined)
    out.push(`  session affinity: ClientIP, ${t.affinitySeconds}s`);
  // a quirk of the virtual server is every real server's: said once
  const quirks = new Set([...t.endpoints, ...(t.localEndpoints ?? [])].map((ep) => ep.quirk));
  for (const quirk of quirks) if (quirk) out.push(`  note: ${quirk}`);
  return out;
}

/** A warning of a dump as `rules` says it: FILE:LINE first in the text where it has a line. */
export interface RulesWarning {
  line: number | null;
  kind: string;
  message: string;
  /** Every line a summary warning stands for. */
  lines?: number[];
}

/** Kinds of warning that are one skipped line each: summarised in one line when many. */
const SKIPPED_LINE = new Set(['blank', 'prompt', 'command', 'prose', 'elided', 'fence', 'log']);
const MANY = 3;

/** One warning as a line of text: at FILE:LINE where it has a line (`line N` with no file). */
const warningText = (w: RulesWarning, file: string | undefined) =>
  `warning: ${w.line === null ? '' : file !== undefined ? `${file}:${w.line}: ` : `line ${w.line}: `}${w.message}`;

/** The warnings, one a line; skipped lines in one summary line when there are many. */
function warningLines(warnings: RulesWarning[], file: string | undefined): string[] {
  const skipped = warnings.filter((w) => SKIPPED_LINE.has(w.kind));
  const out: string[] = [];
  if (skipped.length > MANY) {
    const lines = skipped.map((w) => w.line);
    const shown = lines.length > 12 ? `${lines.slice(0, 12).join(', ')} ...` : lines.join(', ');
    out.push(
      `warning: ${count(skipped.length, 'line')} skipped: ${shown} — not rules (-o json lists each)`,
    );
  }
  for (const w of warnings)
    if (skipped.length <= MANY || !SKIPPED_LINE.has(w.kind)) out.push(warningText(w, file));
  return out;
}

/** A dump as read: iptables rules, kube-proxy's nftables table, IPVS's virtual servers, or
 * Cilium's frontends. */
export type RulesDump = Ruleset | NftTable | IpvsTable | CiliumTable;
const isNft = (d: RulesDump): d is NftTable => 'sets' in d;
const isIpvs = (d: RulesDump): d is IpvsTable => 'kind' in d && d.kind === 'ipvs';
const isCilium = (d: RulesDump): d is CiliumTable => 'frontends' in d;
const ciliumBackends = (d: CiliumTable) => d.frontends.reduce((n, f) => n + f.backends.length, 0);
const dropEntries = (d: CiliumTable) => d.frontends.filter(isDropEntry).length;

const CILIUM_FORM: Record<CiliumTable['form'], string> = {
  'service-list': 'service list',
  'service-list-json': 'service list -o json',
  'bpf-lb-list': 'bpf lb list (the BPF maps)',
  'db-frontends': 'load-balancer table (db/show frontends)',
  'db-backends': 'backends table (db/show backends)',
  'maps-dump': 'BPF maps dump',
};

/** What a Cilium listing leaves out, one warning each, at the line it starts at where one does. */
function ciliumWarnings(d: CiliumTable): RulesWarning[] {
  const out: RulesWarning[] = [];
  const say = (message: string, line: number | null = null) =>
    out.push({ line, kind: 'cilium', message });
  for (const c of d.cut ?? [])
    say(`${c.reason}: what is not in the paste is not shown, and nothing is said about it`, c.line);
  for (const kind of d.unreadMaps ?? []) say(`${unreadMapText(kind)}: nothing is said about it`);
  if (d.unreadFrom !== undefined)
    say(
      "another command's output starts here; only the listing before it was read (give each listing to kdebug rules --file on its own)",
      d.unreadFrom,
    );
  if (d.form === 'db-backends')
    say('a backends table alone names no frontend: paste db/show frontends with it');
  if (d.frontends.length > 0 && d.frontends.every((f) => f.protocol === undefined))
    say(
      'this listing prints no protocols (Cilium before 1.17): TCP and UDP frontends of one port are not told apart',
    );
  const drops = d.frontends.filter(isDropEntry);
  if (drops.length > 0)
    say(
      `${count(drops.length, 'wildcard drop entry', 'wildcard drop entries')} (${listed(drops.map((f) => frontendKey(f)))}): Cilium 1.19+ drops traffic from outside the node to the other ports of that address; no Service port, so no tree`,
      Math.min(...drops.map((f) => f.line)),
    );
  // the drop entries are said above: the flags are the Service frontends'
  const flagged = d.frontends.filter((f) => f.flags.length > 0 && !isDropEntry(f));
  if (flagged.length > 0)
    say(
      `flags of the listing, kept as listed and not compared here: ${listed(flagCounts(flagged))}`,
      Math.min(...flagged.map((f) => f.flagsLine ?? f.line)),
    );
  return out;
}

/** Each flag these frontends carry (the BPF map's "non-routable", "Local" ...), with how many. */
function flagCounts(frontends: CiliumTable['frontends']): string[] {
  const n = new Map<string, number>();
  for (const f of frontends) for (const flag of f.flags) n.set(flag, (n.get(flag) ?? 0) + 1);
  return [...n].map(([flag, k]) => `${flag} (${count(k, 'frontend')})`);
}

const listed = (items: string[]) =>
  items.length > 5
    ? `${items.slice(0, 5).join(', ')} and ${items.length - 5} more`
    : items.join(', ');
/** Lines as a range where they run on ("14-18"), else listed. */
const lineRange = (lines: number[]) =>
  lines.every((l, i) => i === 0 || l === lines[i - 1]! + 1) && lines.length > 2
    ? `${lines[0]}-${lines.at(-1)}`
    : lines.join(', ');
const realServers = (d: IpvsTable) => d.services.reduce((n, s) => n + s.realServers.length, 0);

const IPVS_VIEW: Record<IpvsTable['view'], string> = {
  list: '',
  save: ' (ipvsadm-save)',
  stats: ' (ipvsadm --stats: counters, no scheduler, no weights)',
  rate: ' (ipvsadm --rate: rates, no scheduler, no weights)',
  counters: ' (ipvsadm counters: no scheduler, no weights)',
};

/** What an IPVS listing leaves out, one warning each. */
function ipvsWarnings(d: IpvsTable): RulesWarning[] {
  const out: RulesWarning[] = [];
  const say = (message: string, line: number | null = null) =>
    out.push({ line, kind: 'ipvs', message });
  // one warning for many lines: at the first, with every line it stands for
  const sayAt = (lines: number[], message: string) =>
    out.push({ line: lines[0]!, kind: 'ipvs', message, lines });
  if (d.names)
    say(
      '`ipvsadm -l` without -n prints host and port names: addresses are shown as printed, ports only where the name is a well-known one; run `ipvsadm -Ln` for numbers',
    );
  if (d.renamed)
    say(
      `the command on line ${d.renamed.line} gives -n, and ipvsadm -n prints addresses: ${listed(d.renamed.hosts)} ${d.renamed.hosts.length === 1 ? 'is a name' : 'are names'} put in by hand where it printed ${d.renamed.hosts.length === 1 ? 'an address' : 'addresses'}, shown as pasted; what ${d.renamed.hosts.length === 1 ? 'it stands' : 'they stand'} for is not said`,
      d.renamed.line,
    );
  if (d.other)
    sayAt(
      d.other.lines,
      d.other.what === 'connections'
        ? `line${d.other.lines.length === 1 ? '' : 's'} ${lineRange(d.other.lines)}: ipvsadm's connection entries (-c), flows through the virtual servers and not virtual servers: not read`
        : `line ${d.other.lines[0]}: ipvsadm's timeouts (--timeout), no virtual server: not read`,
    );
  if (d.typed)
    sayAt(
      d.typed,
      `line${d.typed.length === 1 ? '' : 's'} ${lineRange(d.typed)}: ipvsadm command${d.typed.length === 1 ? '' : 's'} typed, read as the virtual and real servers ${d.typed.length === 1 ? 'it adds' : 'they add (edits and deletes applied in order)'}: what was typed, not read back from the node (\`ipvsadm -Ln\` shows what it holds)`,
    );
  for (const u of d.unknownOptions ?? [])
    sayAt(
      [u.line],
      `line ${u.line}: ${u.options.join(', ')}: not an option kdebug knows (a newer ipvsadm's?), skipped; the rest of the line is read`,
    );
  if (d.iptablesLines)
    sayAt(
      d.iptablesLines,
      `line${d.iptablesLines.length === 1 ? '' : 's'} ${lineRange(d.iptablesLines)}: iptables rules (iptables-save or -S lines) pasted with the IPVS listing: not read with it; give them to kdebug on their own`,
    );
  if (d.duplicates.length > 0)
    sayAt(
      d.duplicates,
      `line${d.duplicates.length === 1 ? '' : 's'} ${d.duplicates.join(', ')} repeat${d.duplicates.length === 1 ? 's' : ''} a virtual or real server already read (pasted twice?): read once`,
    );
  if (d.noAddress)
    sayAt(
      d.noAddress,
      `line${d.noAddress.length === 1 ? '' : 's'} ${lineRange(d.noAddress)}: virtual or real server line${d.noAddress.length === 1 ? '' : 's'} without ${d.noAddress.length === 1 ? 'its' : 'their'} address (a scheduler or forwarding method where ipvsadm prints the address: a page that dropped the addresses?): not read (a virtual server one belongs to states no share)`,
    );
  if (d.sharedNames)
    sayAt(
      d.sharedNames,
      `lines ${d.sharedNames.join(', ')} print the same name for virtual servers of one listing: ipvsadm prints each once, so these are distinct (addresses of one host name, or names it cut), each read with its own real servers and told apart by its line`,
    );
  if (d.cutNames)
    sayAt(
      d.cutNames,
      `line${d.cutNames.length === 1 ? '' : 's'} ${lineRange(d.cutNames)}: \`ipvsadm -l\` cuts an IPv4 host:port at 28 characters (a virtual server's with its protocol at 33): ${d.cutNames.length === 1 ? 'its' : 'their'} port${d.cutNames.length === 1 ? ' is' : 's are'} not in the paste; run \`ipvsadm -Ln\``,
    );
  if (d.elided.length > 0)
    sayAt(
      d.elided,
      `line${d.elided.length === 1 ? '' : 's'} ${d.elided.join(', ')} elide${d.elided.length === 1 ? 's' : ''} part of the listing: virtual servers not in the paste are not shown`,
    );
  if (d.cut)
    say(
      `the listing ends mid-line at line ${d.cut}: it was cut there, and what came after was not read`,
      d.cut,
    );
  return out;
}

/** What an nftables listing leaves out or how it was read, one warning each. */
function nftWarnings(t: NftTable): RulesWarning[] {
  const leftOut = leftOutText(t);
  return [
    ...(t.paste?.notes ?? []).map((message) => ({ line: null, kind: 'view', message })),
    ...skippedWarning(t.paste?.skipped ?? []),
    // a listing that ends in "..." is cut at its elision: said once, as the elision
    ...(t.cut && !t.elided?.includes(t.cut.line)
      ? [{ line: t.cut.line, kind: 'cut-short', message: cutText(t) }]
      : []),
    // the part of the table an elision leaves out, not a line skipped: never summarised away
    ...(t.elided ?? []).map((line) => ({
      line,
      kind: 'elided',
      message:
        'part of the table is elided here: what is not in the paste is not shown, and nothing is said about it',
    })),
    ...(leftOut ? [{ line: null, kind: 'abridged', message: leftOut }] : []),
    ...(t.unread ?? []).map((u) => ({ line: u.line, kind: 'unread', message: unreadText(u) })),
  ];
}

/** The dump's warnings, in the order the text and JSON say them. */
function dumpWarnings(d: RulesDump): RulesWarning[] {
  if (isCilium(d)) return ciliumWarnings(d);
  if (isIpvs(d)) return ipvsWarnings(d);
  if (!isNft(d)) return d.warnings;
  // the other family's table read with it: what its part of the paste lacks, after
  const also = d.paste?.also;
  return also ? [...nftWarnings(d), ...nftWarnings(also)] : nftWarnings(d);
}

/** What an nft paste holds: its kube-proxy table, and the other family's where it was read too. */
function nftCounts(d: NftTable): { tables: number; chains: number; rules: number; sets: number } {
  const tables = [d, ...(d.paste?.also ? [d.paste.also] : [])];
  const sum = (f: (t: NftTable) => number) => tables.reduce((n, t) => n + f(t), 0);
  return {
    tables: tables.length,
    chains: sum((t) => t.chains.length),
    rules: sum((t) => t.chains.reduce((n, c) => n + c.rules.length, 0)),
    sets: sum((t) => t.sets.length),
  };
}

function headline(d: RulesDump, label: string): string {
  if (isCilium(d))
    return `${label}: Cilium ${CILIUM_FORM[d.form]}, ${count(d.frontends.length - dropEntries(d), 'frontend')}, ${count(ciliumBackends(d), 'backend')}${dropEntries(d) > 0 ? `, ${count(dropEntries(d), 'wildcard drop entry', 'wildcard drop entries')}` : ''}`;
  if (isIpvs(d))
    return `${label}: IPVS${d.view === 'save' && d.typed ? ' (ipvsadm commands)' : IPVS_VIEW[d.view]}, ${count(d.services.length, 'virtual server')}, ${count(realServers(d), 'real server')}`;
  if (isNft(d)) {
    const n = nftCounts(d);
    const named = (t: NftTable) =>
      t.headless ? 'part of a table whose table line is not in the paste' : `${t.family} ${t.name}`;
    const also = d.paste?.also;
    const table = also
      ? `nftables tables ${named(d)} and ${named(also)}`
      : d.headless
        ? 'part of an nftables table (its table line is not in the paste)'
        : `nftables table ${named(d)}`;
    return `${label}: ${table}, ${count(n.chains, 'chain')}, ${count(n.rules, 'rule')}, ${count(n.sets, 'set')} and maps`;
  }
  return `${label}: ${count(d.tables.length, 'table')} (${d.tables.map((t) => tableText(d, t)).join(', ')}), ${count(d.chainCount, 'chain')}, ${count(d.ruleCount, 'rule')}${d.generator ? ` — ${d.generator.replace(/^# Generated by /, '').replace(/ on .*/, '')}` : ''}`;
}

/** A table as the headline names it: with its family where the dump holds ip6tables' tables. */
const tableText = (rs: Ruleset, t: Ruleset['tables'][number]) =>
  rs.families().length > 1 || t.family === 'IPv6' ? `${t.name} ${t.family}` : t.name;

/** Whether a dump holds only part of its nat table: cut, a segment, or some chains without the
 * built-in ones (iptables-save, -S and -L print every built-in chain of a table they list). */
function natInPart(rs: Ruleset): boolean {
  // each family's nat table: where the dump holds both, either in part is a part
  const families = rs.families();
  if (families.length > 1) return families.some((f) => natInPart(rs.ofFamily(f)));
  const nat = rs.table('nat');
  if (!nat) return false;
  const declared = (name: string) =>
    nat.indexOf(name) >= 0 && nat.chainLine(nat.indexOf(name)) !== undefined;
  return (
    nat.partial.size > 0 ||
    rs.warnings.some((w) => w.kind === 'truncated') ||
    !['PREROUTING', 'OUTPUT', 'POSTROUTING'].every(declared)
  );
}

/** Why an iptables dump shows no Service: its KUBE-SERVICES is past a cut or outside the part of
 * the nat table pasted, or Cilium replaced kube-proxy (its CILIUM_ chains and no KUBE-SERVICES:
 * GKE Dataplane V2, kube-proxy-free). */
function noServiceRules(rs: Ruleset): string {
  // each family's tables on their own (kube-proxy writes them alike, a paste may hold them apart)
  const families = rs.families();
  if (families.length > 1) {
    const said = families.map((f) => noServiceRules(rs.ofFamily(f)));
    return said.every((s) => s === said[0])
      ? said[0]!
      : families.map((f, i) => `${f}: ${said[i]}`).join('; ');
  }
  const nat = rs.table('nat');
  const cut = nat?.partial.get('KUBE-SERVICES');
  if (cut) return `no Service entry in the paste: KUBE-SERVICES (${cut})`;
  if (!nat)
    return `no Service rules in the paste: it holds no nat table (only ${rs.tables.map((t) => t.name).join(', ')}), where kube-proxy's Service rules are`;
  // KUBE-SERVICES jumped to, or the paste cut, and the chain itself not in it: nothing is known
  const jumped = nat.jumpsTo(['KUBE-SERVICES']);
  // a chain whose first rules lie above the paste is no cut: the paste is a part of the table
  const truncated =
    [...nat.partial.keys()].some((c) => !nat.cutAbove.has(c)) ||
    rs.warnings.some((w) => w.kind === 'truncated');
  if (nat.indexOf('KUBE-SERVICES') < 0 && (jumped || truncated))
    return `no Service entry in the paste: KUBE-SERVICES${jumped ? ', which the nat table jumps to,' : ''} is not in it`;
  const cilium = rs.tables.some((t) => t.chains.some((c) => c.name.startsWith('CILIUM_')));
  if (cilium && !rs.tables.some((t) => t.indexOf('KUBE-SERVICES') >= 0))
    return 'no Service rules found: the CILIUM_ chains and no KUBE-SERVICES say Cilium replaces kube-proxy on this node (GKE Dataplane V2, kube-proxy-free Cilium): its Services are BPF map entries; `cilium-dbg service list` in the Cilium agent Pod (anetd on GKE) shows them';
  if (nat.indexOf('KUBE-SERVICES') < 0 && natInPart(rs))
    return 'no Service entry in the paste: it holds part of the nat table (not its built-in chains), and KUBE-SERVICES is not in it';
  return 'no Service rules found (no KUBE-SERVICES entries in the nat table)';
}

/** The node's Service trees as text at `width` columns (none: unwrapped). */
export function rulesText(
  dump: RulesDump,
  trees: ServiceTrees,
  source: RulesSource,
  width = Infinity,
): string {
  const out = [headline(dump, source.label)];
  // an nft paste's skipped lines are told on stderr as it is read
  const said = dumpWarnings(dump).filter((w) => !isNft(dump) || w.kind !== 'skipped');
  out.push(...warningLines(said, source.file));
  out.push('');
  if (trees.services.length === 0)
    out.push(
      isCilium(dump)
        ? 'no Service found (no frontend in the listing)'
        : isIpvs(dump)
          ? dump.noAddress
            ? `no Service found: the listing's virtual server lines hold no address (line ${dump.noAddress[0]})`
            : dump.cut !== undefined
              ? `no Service found: the paste is cut at line ${dump.cut}, before any virtual server line (what the node holds is not in it)`
              : 'no Service found (no virtual server in the listing)'
          : isNft(dump)
            ? nftNoService(dump)
            : noServiceRules(dump),
    );
  for (const t of trees.services) out.push(...treeText(t), '');
  if (!isCilium(dump))
    out.push(
      trees.orphans.length === 0
        ? 'orphan chains: none'
        : `orphan chains (no entry point ${!isNft(dump) && !isIpvs(dump) && natInPart(dump) ? 'in the paste ' : ''}reaches them): ${trees.orphans.map((o) => `${o.chain} (${o.family ? `${o.family}, ` : ''}${o.partial ? `${count(o.rules, 'rule')} in the paste, ${o.partial}` : count(o.rules, 'rule')})`).join(', ')}`,
    );
  const shown = new Set<ServiceTree>();
  for (const o of trees.orphans)
    if (o.tree && !shown.has(o.tree)) {
      shown.add(o.tree);
      out.push('', `what ${o.tree.chains.svc ?? o.chain} would do if an entry point reached it:`);
      out.push(...treeText(o.tree));
    }
  return wrapIndented(out, width).join('\n') + '\n'; // wrap sanitises
}

/** An endpoint in the document `rules -o json` prints (schema/rules.vN.json), in its order. */
interface EndpointDoc {
  address: string | null;
  inferredIP?: string;
  chain: string;
  probability: number | null;
  shareUnknown?: string;
  addressFromComment?: boolean;
  portUnknown?: TreeEndpoint['portUnknown'];
  hostStart?: TreeEndpoint['hostStart'];
  hairpinMasquerade: boolean | null;
  backendState?: string | null;
  preferred?: boolean;
  affinity: boolean;
  chainMissing?: boolean;
  chainPartial?: string;
  quirk?: string;
  forward?: TreeEndpoint['forward'];
  line: number;
}

/** The document `rules -o json` prints (schema/rules.vN.json). */
export function rulesDoc(dump: RulesDump, trees: ServiceTrees, source: RulesSource) {
  const endpoint = (ep: TreeEndpoint): EndpointDoc => {
    // field by field, in the document's order: a spread per optional field made a big listing's
    // endpoints cost as much as their JSON
    const out: EndpointDoc = { address: ep.address ?? null } as EndpointDoc;
    if (ep.inferredIP) out.inferredIP = ep.inferredIP;
    out.chain = ep.chain;
    out.probability = ep.shareUnknown ? null : ep.probability;
    if (ep.shareUnknown) out.shareUnknown = ep.shareUnknown;
    if (ep.addressFromComment) out.addressFromComment = true;
    if (ep.portUnknown) out.portUnknown = ep.portUnknown;
    if (ep.hostStart) out.hostStart = ep.hostStart;
    out.hairpinMasquerade = ep.hairpinMasquerade;
    if (ep.cilium) out.backendState = ep.cilium.state ?? null;
    if (ep.cilium?.preferred !== undefined) out.preferred = ep.cilium.preferred;
    out.affinity = ep.affinity;
    if (ep.chainMissing) out.chainMissing = true;
    if (ep.chainPartial) out.chainPartial = ep.chainPartial;
    if (ep.quirk) out.quirk = ep.quirk;
    if (ep.forward) out.forward = ep.forward;
    out.line = ep.line;
    return out;
  };
  const tree = (t: ServiceTree) => ({
    name: t.name ?? null,
    id: t.id,
    protocol: t.protocol,
    clusterIP: t.clusterIP ?? null,
    port: t.port ?? null,
    nodePort: t.nodePorts[0] ?? null,
    externalIPs: t.externalIPs,
    loadBalancerIPs: t.loadBalancerIPs,
    chains: t.chains,
    ...(t.absentChains ? { absentChains: t.absentChains } : {}),
    ...(t.entryAbsent ? { entryAbsent: true } : {}),
    ...(t.partial ? { partial: t.partial } : {}),
    entries: t.entries.map((e) => ({ ...e, port: e.port ?? null })),
    masquerade: t.masquerade,
    endpoints: t.endpoints.map(endpoint),
    ...(t.localEndpoints ? { localEndpoints: t.localEndpoints.map(endpoint) } : {}),
    fallThrough: t.partial ? null : t.fallThrough,
    ...(t.affinitySeconds !== undefined ? { affinitySeconds: t.affinitySeconds } : {}),
    verdicts: t.verdicts,
    ...(t.family ? { family: t.family } : {}),
  });
  return {
    $schema: schemaId('rules', RULES_SCHEMA_VERSION),
    schemaVersion: RULES_SCHEMA_VERSION,
    source: source.label,
    node: source.node ?? null,
    ...(isCilium(dump)
      ? {
          mode: 'cilium',
          form: dump.form,
          counts: {
            frontends: dump.frontends.length - dropEntries(dump),
            backends: ciliumBackends(dump),
            ...(dropEntries(dump) > 0 ? { dropEntries: dropEntries(dump) } : {}),
          },
          warnings: dumpWarnings(dump),
        }
      : isIpvs(dump)
        ? {
            mode: 'ipvs',
            view: dump.view,
            counts: { virtualServers: dump.services.length, realServers: realServers(dump) },
            warnings: dumpWarnings(dump),
          }
        : isNft(dump)
          ? {
              mode: 'nftables',
              counts: nftCounts(dump),
              warnings: dumpWarnings(dump),
            }
          : {
              mode: 'iptables',
              counts: {
                tables: dump.tables.length,
                chains: dump.chainCount,
                rules: dump.ruleCount,
              },
              warnings: dumpWarnings(dump),
              ...(dump.foreign.length > 0 ? { foreign: dump.foreign } : {}),
              tables: dump.tables.map((t) => ({
                name: t.name,
                family: t.family,
                line: t.startLine ?? null,
              })),
            }),
    services: trees.services.map(tree),
    orphans: trees.orphans.map((o) => ({
      chain: o.chain,
      ...(o.family ? { family: o.family } : {}),
      rules: o.rules,
      ...(o.partial ? { partial: o.partial } : {}),
      ...(o.tree ? { tree: tree(o.tree) } : {}),
    })),
  };
}

export const rulesJson = (dump: RulesDump, trees: ServiceTrees, source: RulesSource): string =>
  jsonText(rulesDoc(dump, trees, source));

export function searchText(query: string, hits: SearchHit[], width = Infinity): string {
  if (hits.length === 0) return `no match for "${sanitize(query)}"\n`;
  const out = [`${hits.length} matches for "${query}", best first:`]; // sanitised with the rest
  for (const h of hits) {
    const where = [
      h.table && h.chain && h.kind === 'rule'
        ? `${h.table} ${h.chain}${h.line ? ` line ${h.line}` : ''}`
        : '',
      h.service && h.service !== h.text ? `Service ${h.service}` : '',
    ]
      .filter(Boolean)
      .join('  ');
    out.push(`  ${h.kind.padEnd(8)} ${h.text}${where ? `   ${where}` : ''}`);
  }
  return wrapIndented(out, width).join('\n') + '\n';
}

/** The document `rules --search -o json` prints (schema/rules-search.vN.json). */
export const searchDoc = (query: string, hits: SearchHit[]) => ({
  $schema: schemaId('rules-search', RULES_SEARCH_SCHEMA_VERSION),
  schemaVersion: RULES_SEARCH_SCHEMA_VERSION,
  query,
  hits,
});

export const searchJson = (query: string, hits: SearchHit[]): string =>
  jsonText(searchDoc(query, hits));

/** A listing without sets or maps its rules use (abridged, or `nft list chain`): said so. */
const leftOutText = (t: NftTable): string | undefined => {
  const missing = missingSets(t);
  if (missing.length === 0) return undefined;
  return `the rules use ${missing.length === 1 ? 'a set or map' : 'sets or maps'} this listing does not hold (${missing.join(', ')}): what ${missing.length === 1 ? 'it holds' : 'they hold'} is not shown or said`;
};

/** Why an nft listing shows no Service: of a whole table, its service-ips map is empty or absent;
 * of part of one (its table line, its end or lines elided, a diff's hunk, maps its rules use not
 * in it), the map or its elements are not in the paste, and nothing is said of the table. */
function nftNoService(t: NftTable): string {
  const part = [
    t.headless && 'its table line is not in it',
    t.cut && 'it is cut',
    (t.elided?.length ?? 0) > 0 && 'it elides lines',
    t.paste?.diff && "it is a diff's hunk",
    missingSets(t).length > 0 && 'its rules use maps it does not hold',
    (t.unread?.length ?? 0) > 0 && 'lines of it were not read',
  ].filter((x): x is string => typeof x === 'string');
  const map = t.set('service-ips');
  if (part.length === 0)
    return map
      ? 'no Service rules found (no service-ips elements in the table)'
      : 'no Service rules found (the listing holds no service-ips map)';
  const absent = map
    ? 'no element of the service-ips map is in it'
    : 'the service-ips map is not in it';
  return `no Service entry in the paste: ${absent} (the paste holds part of the table: ${part.join(', ')})`;
}

/** A line of an nft listing the reader could not read (its line said apart): in which block,
 * quoted. */
const unreadText = (u: NftUnread) =>
  `not read${u.block ? ` (in ${u.block.kind} ${u.block.name})` : ''}: "${excerpt(u.text, 120)}"; nothing is said of what it holds, and the Services it may bear on are said partial`;

/** The lines around a pasted nft listing that are not part of it, as one JSON warning. */
const skippedWarning = (lines: number[]) =>
  lines.length === 0
    ? []
    : [
        {
          line: lines[0]!,
          kind: 'skipped',
          message: `line${lines.length === 1 ? '' : 's'} ${lines.length > 10 ? `${lines.slice(0, 10).join(', ')} …` : lines.join(', ')}: not part of the nft table (a prompt, a command, prose), skipped`,
          lines,
        },
      ];

/** A text listing that ends inside its table: read as far as it goes, said so. */
export const cutText = (t: NftTable) =>
  `the listing ends at line ${t.cut!.line} inside ${t.cut!.inside}: it was cut there, and what came after was not read`;
