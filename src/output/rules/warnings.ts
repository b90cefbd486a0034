// What `kdebug rules` says of a dump besides its trees: the reader's warnings (iptables'), and what
// a Cilium, IPVS or nftables listing leaves out or how it was read, one warning each; in text, at
// FILE:LINE, with many skipped lines said in one.
import {
  frontendKey,
  isDropEntry,
  type CiliumTable,
} from '../../core/dataplane/cilium/read/listing.js';
import { unreadMapText } from '../../core/dataplane/cilium/maps/read-dump.js';
import type { RunChange } from '../../core/dataplane/cilium/read/runs.js';
import type { IpvsTable } from '../../core/dataplane/ipvs/read/listing.js';
import {
  foreignForwarding,
  foreignForwardingText,
} from '../../core/dataplane/ipvs/read/not-kube-proxy.js';
import {
  missingSets,
  type NftTable,
  type NftUnread,
} from '../../core/dataplane/nftables/read/listing.js';
import { count } from '../../core/checks/check.js';
import { quoteNote } from '../../core/dataplane/iptables/read/paste/mangled/quoted.js';
import { excerpt } from '../../core/sanitize.js';
import {
  KUBECTL_COMMAND,
  type KubectlKind,
} from '../../core/dataplane/iptables/read/paste/other-lines/foreign-kinds.js';
import { isCilium, isIpvs, isNft, type RulesDump } from './dump.js';

/** A warning of a dump as `rules` says it: FILE:LINE first in the text where it has a line. */
export interface RulesWarning {
  line: number | null;
  kind: string;
  message: string;
  /** Every line a summary warning stands for. */
  lines?: number[];
}

/** Kinds of warning that are one skipped line each: summarised in one line when many. */
const SKIPPED_LINE = new Set([
  'blank',
  'prompt',
  'command',
  'prose',
  'comment',
  'stray',
  'elided',
  'fence',
  'log',
]);
const MANY = 3;

/** One warning as a line of text: at FILE:LINE where it has a line (`line N` with no file). */
const warningText = (w: RulesWarning, file: string | undefined) =>
  `warning: ${w.line === null ? '' : file !== undefined ? `${file}:${w.line}: ` : `line ${w.line}: `}${w.message}`;

/** The warnings, one a line; skipped lines in one summary line when there are many. */
export function warningLines(warnings: RulesWarning[], file: string | undefined): string[] {
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

/** What a Cilium listing leaves out, one warning each, at the line it starts at where one does. */
function ciliumWarnings(d: CiliumTable): RulesWarning[] {
  const out: RulesWarning[] = [];
  const say = (message: string, line: number | null = null) =>
    out.push({ line, kind: 'cilium', message });
  if (d.quote) say(quoteNote(d.quote), d.quote.lines[0]);
  for (const c of d.cut ?? [])
    say(`${c.reason}: what is not in the paste is not shown, and nothing is said about it`, c.line);
  for (const n of d.notRead ?? []) say(n.reason, n.line);
  for (const kind of d.unreadMaps ?? []) say(`${unreadMapText(kind)}: nothing is said about it`);
  if (d.unreadFrom !== undefined)
    say(
      "another command's output starts here; only the listing before it was read (give each listing to kdebug rules --file on its own)",
      d.unreadFrom,
    );
  if (d.rerun)
    say(
      `the same listing is printed again by the command at line${d.rerun.length === 1 ? '' : 's'} ${d.rerun.join(', ')} (run again): each frontend is read as the last run lists it`,
      d.rerun[0],
    );
  for (const c of d.runChanges ?? []) say(runChangeText(c), c.at);
  // as kube-proxy's pastes say a filter: by what each of its stages keeps
  for (const f of d.filtered ?? [])
    say(
      `${f.from === f.to ? `line ${f.from} is` : `lines ${f.from}-${f.to} are`} the output of \`${excerpt(f.command, 60)}\` (line ${f.line}): only ${f.keeps}, so the frontends they show need not be all the agent holds, nor their backends all of theirs: no share or count of their backends is stated`,
      f.line,
    );
  if (d.form === 'db-backends')
    say('a backends table alone names no frontend: paste db/show frontends with it');
  if (d.frontends.length > 0 && d.frontends.every((f) => f.protocol === undefined))
    say(
      'this listing prints no protocols (Cilium before 1.17): TCP and UDP frontends of one port are not told apart',
    );
  if (d.protocolNotShown !== undefined)
    say(
      "the BPF map listing prints no protocols (bpf lb list before 1.17): each entry is read as the one of every protocol's frontend on its address and port, which protocol's it is not shown",
      d.protocolNotShown,
    );
  if (d.portsSwapped)
    say(
      `frontend ports printed in network byte order, each read with its two bytes swapped back: ${listed(d.portsSwapped.map((s) => `${s.printed} as ${s.port}`))} (this bpf lb list writes its Service column "ADDR:PORT/ANY" without a slot after it, as Cilium's lbmap printed it in 2021, before its serviceKey converted the port: the port as the BPF map stores it; a little-endian node's 80 shows as 20480; backends' ports are printed right)`,
      d.portsSwapped[0]!.line,
    );
  const drops = d.frontends.filter(isDropEntry);
  if (drops.length > 0)
    say(
      `${count(drops.length, 'wildcard drop entry', 'wildcard drop entries')} (${listed(drops.map((f) => frontendKey(f)))}): Cilium 1.19+ drops traffic from outside the node to the other ports of that address; no Service port, so no tree`,
      Math.min(...drops.map((f) => f.line)),
    );
  // a frontend the agent has not written to its BPF maps: they hold an older state of it or none
  for (const f of d.frontends.filter((x) => x.status !== undefined && x.status !== 'Done'))
    say(
      `frontend ${frontendKey(f)}: reconcile status ${excerpt(f.status!, 120)}: the agent has not written it to its BPF maps, which the datapath looks up; they hold an older state of it or none (bpf lb list shows what they hold)`,
      f.line,
    );
  out.push(...kubectlWarning(d.kubectlLines, d.kubectlKinds, 'cilium'));
  out.push(...skippedWarning(d.skipped ?? [], 'a Cilium listing'));
  // the drop entries are said above: the flags are the Service frontends' (l7-load-balancer is
  // none: its reader takes it as the frontend's l7Proxy, whose walk ends at the proxy)
  const flagged = d.frontends.filter((f) => f.flags.length > 0 && !isDropEntry(f));
  if (flagged.length > 0)
    say(
      `flags of the listing, kept as listed and not compared here: ${listed(flagCounts(flagged))}`,
      Math.min(...flagged.map((f) => f.flagsLine ?? f.line)),
    );
  return out;
}

/** What changed between a run of the listing and the one before it (read/runs.ts). */
function runChangeText(c: RunChange): string {
  const parts = [
    c.deleted.length > 0 ? `deleted ${listed(c.deleted)}` : '',
    c.added.length > 0 ? `added ${listed(c.added)}` : '',
    c.onlyLater.length > 0
      ? `listed only by the run at line ${c.at}, the run before not being whole (cut, elided or filtered), so not known to be new: ${listed(c.onlyLater)}`
      : '',
    c.changed.length > 0
      ? `changed (backends, their states, type or flags) ${listed(c.changed)}`
      : '',
  ].filter(Boolean);
  const kept =
    c.kept.length > 0
      ? `; not in the run at line ${c.at}, which is not whole (cut, elided or filtered), so read as the run before lists them: ${listed(c.kept)}`
      : '';
  // a run that is not whole shows no change of what it leaves out: not "no frontend changed"
  if (parts.length === 0 && c.kept.length > 0)
    return `between the run before and the one at line ${c.at}, which is not whole (cut, elided or filtered): what changed is not known; not in it, so read as the run before lists them: ${listed(c.kept)}`;
  return `between the run before and the one at line ${c.at}: ${parts.length > 0 ? parts.join('; ') : 'no frontend changed'}${kept}`;
}

/** Each flag these frontends carry (the BPF map's "non-routable", "Local" ...), with how many. */
function flagCounts(frontends: CiliumTable['frontends']): string[] {
  const n = new Map<string, number>();
  for (const f of frontends) for (const flag of f.flags) n.set(flag, (n.get(flag) ?? 0) + 1);
  return [...n].map(([flag, k]) => `${flag} (${count(k, 'frontend')})`);
}

/** kubectl's output pasted beside a listing (any reader's), named by what kubectl printed: one
 * warning at its first line, with every line it stands for. */
const kubectlWarning = (
  lines: number[] | undefined,
  kinds: KubectlKind[] | undefined,
  kind: string,
): RulesWarning[] =>
  lines && lines.length > 0
    ? [
        {
          line: lines[0]!,
          kind,
          message: `line${lines.length === 1 ? '' : 's'} ${lineRange(lines)}: ${kubectlNamed(kinds ?? [])}: the cluster's objects as the API server holds them, not the node's rules: not read with the listing`,
          lines,
        },
      ]
    : [];

/** "`kubectl get nodes` output", each command kubectl's lines are of named. */
const kubectlNamed = (kinds: KubectlKind[]) =>
  kinds.length === 0
    ? 'kubectl output'
    : `${kinds.map((k) => `\`${KUBECTL_COMMAND[k]}\``).join(' and ')} output`;

const listed = (items: string[]) =>
  items.length > 5
    ? `${items.slice(0, 5).join(', ')} and ${items.length - 5} more`
    : items.join(', ');
/** Lines as a range where they run on ("14-18"), else listed. */
const lineRange = (lines: number[]) =>
  lines.every((l, i) => i === 0 || l === lines[i - 1]! + 1) && lines.length > 2
    ? `${lines[0]}-${lines.at(-1)}`
    : lines.join(', ');

/** What an IPVS listing leaves out, one warning each. */
function ipvsWarnings(d: IpvsTable): RulesWarning[] {
  const out: RulesWarning[] = [];
  const say = (message: string, line: number | null = null) =>
    out.push({ line, kind: 'ipvs', message });
  // one warning for many lines: at the first, with every line it stands for
  const sayAt = (lines: number[], message: string) =>
    out.push({ line: lines[0]!, kind: 'ipvs', message, lines });
  if (d.quote) sayAt(d.quote.lines, quoteNote(d.quote));
  if (d.names)
    say(
      d.view === 'save'
        ? '`ipvsadm-save` without -n saves host and port names: addresses are shown as saved, ports only where the name is a well-known one; run `ipvsadm-save -n` for numbers'
        : '`ipvsadm -l` without -n prints host and port names: addresses are shown as printed, ports only where the name is a well-known one; run `ipvsadm -Ln` for numbers',
    );
  if (d.renamed)
    say(
      `the command on line ${d.renamed.line} gives -n, and ipvsadm -n prints addresses: ${listed(d.renamed.hosts)} ${d.renamed.hosts.length === 1 ? 'is a name' : 'are names'} put in by hand where it printed ${d.renamed.hosts.length === 1 ? 'an address' : 'addresses'}, shown as pasted; what ${d.renamed.hosts.length === 1 ? 'it stands' : 'they stand'} for is not said`,
      d.renamed.line,
    );
  if (d.dpvs)
    sayAt(
      [...d.dpvs.match, ...d.dpvs.realServers].sort((a, b) => a - b),
      `line${d.dpvs.match.length === 1 ? '' : 's'} ${d.dpvs.match.join(', ')}: DPVS's MATCH virtual server${d.dpvs.match.length === 1 ? '' : 's'} (iQIYI's DPDK load balancer: packets selected by protocol, address ranges and interfaces for its SNAT), with ${d.dpvs.realServers.length} real server line${d.dpvs.realServers.length === 1 ? '' : 's'}: not read; this is DPVS's ipvsadm, not the kernel's IPVS nor kube-proxy's, so its virtual servers are DPVS's, none kube-proxy's`,
    );
  const foreign = foreignForwarding(d);
  if (foreign)
    sayAt(
      foreign.lines,
      `line${foreign.lines.length === 1 ? '' : 's'} ${lineRange(foreign.lines)}: ${foreignForwardingText(foreign)}`,
    );
  if (d.ipsets)
    sayAt(
      d.ipsets.lines,
      `lines ${d.ipsets.lines[0]}-${d.ipsets.lines.at(-1)}: \`ipset list\` output (${d.ipsets.names.join(', ')}), kube-proxy's IPVS-mode sets: ${d.ipsets.names.includes('KUBE-LOOP-BACK') ? "KUBE-LOOP-BACK read for each real server's hairpin masquerade, the others not compared" : 'not compared (no KUBE-LOOP-BACK among them)'}`,
    );
  for (const other of d.other ?? [])
    sayAt(
      other.lines,
      other.what === 'connections'
        ? `line${other.lines.length === 1 ? '' : 's'} ${lineRange(other.lines)}: ipvsadm's connection entries (-c), flows through the virtual servers and not virtual servers: not read`
        : `line ${other.lines[0]}: ipvsadm's timeouts (--timeout), no virtual server: not read`,
    );
  if (d.typed)
    sayAt(
      d.typed,
      `line${d.typed.length === 1 ? '' : 's'} ${lineRange(d.typed)}: ipvsadm command${d.typed.length === 1 ? '' : 's'} typed, read as the virtual and real servers ${d.typed.length === 1 ? 'it adds' : 'they add (edits and deletes applied in order)'}: what was typed, not read back from the node (\`ipvsadm -Ln\` shows what it holds)`,
    );
  for (const n of d.noSuchDestination ?? [])
    sayAt(
      [n.line],
      `line ${n.line}: ipvsadm -${n.op} names the real server ${n.server}${n.op === 'e' ? " (as ipvsadm sends it: forwarding by -g, ipvsadm's default, or -i, it takes the virtual server's port)" : ''}, which its virtual server does not have: the kernel answers ENOENT and ipvsadm says "No such destination"; nothing changed (${n.op === 'e' ? 'an edit never adds a real server' : 'its real servers as before'})`,
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
  out.push(...kubectlWarning(d.kubectlLines, d.kubectlKinds, 'ipvs'));
  // the lines around it (a prompt, the command, prose): the text tells them on stderr as it reads
  const named = new Set([...(d.iptablesLines ?? []), ...(d.kubectlLines ?? [])]);
  out.push(
    ...skippedWarning(
      d.skipped.filter((l) => !named.has(l)),
      'an ipvsadm listing',
    ),
  );
  if (d.duplicates.length > 0)
    sayAt(
      d.duplicates,
      `line${d.duplicates.length === 1 ? '' : 's'} ${d.duplicates.join(', ')} repeat${d.duplicates.length === 1 ? 's' : ''} a virtual or real server already read (pasted twice?): read once`,
    );
  if (d.samples)
    sayAt(
      d.samples,
      d.samplesBy
        ? `line${d.samples.length === 1 ? '' : 's'} ${lineRange(d.samples)} list${d.samples.length === 1 ? 's' : ''} again virtual or real servers already listed, printed by ${d.samplesBy}: read as one node's, the later listing of each kept`
        : `line${d.samples.length === 1 ? '' : 's'} ${lineRange(d.samples)} list${d.samples.length === 1 ? 's' : ''} again virtual or real servers already listed, in a later listing of the same view: ipvsadm run again (repeated samples, counters grown): the later sample of each read`,
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
  if (d.ownerElided)
    sayAt(
      d.ownerElided,
      `line${d.ownerElided.length === 1 ? '' : 's'} ${lineRange(d.ownerElided)}: real servers after an elision, before any virtual server line: whose they are was left out with it, so ${d.ownerElided.length === 1 ? 'it is' : 'they are'} not read`,
    );
  if (d.ownerAbove)
    sayAt(
      d.ownerAbove,
      `line${d.ownerAbove.length === 1 ? '' : 's'} ${lineRange(d.ownerAbove)}: the paste starts inside a listing, with real servers of a virtual server above it: whose they are is not in the paste, so ${d.ownerAbove.length === 1 ? 'it is' : 'they are'} not read`,
    );
  if (d.cut && d.cutRow)
    say(
      `the listing ends mid-line at line ${d.cut}, inside a real server's row: the row is read (its address${d.cutRow.weightRead ? ', its weight' : ''}), but its columns after ${d.cutRow.last} are cut and its ${d.cutRow.last} may be short${d.cutRow.weightRead ? '' : ': its weight is not known'}; real servers after it are not in the paste, so no share is stated`,
      d.cut,
    );
  else if (d.cut)
    say(
      `the listing ends mid-line at line ${d.cut}${d.cutInside ? `, inside ${d.cutInside}` : ''}: it was cut there, and that line and what came after were not read`,
      d.cut,
    );
  if (d.mayBeCut)
    say(
      `line ${d.mayBeCut}, the paste's last, has no newline after it (ipvsadm ends every line with one): the paste may be cut there, ${mayBeCutWord(d.mayBeCutColumn)}; it is read as it stands`,
      d.mayBeCut,
    );
  return out;
}

/** What an nftables listing leaves out or how it was read, one warning each. */
function nftWarnings(t: NftTable): RulesWarning[] {
  const leftOut = leftOutText(t);
  return [
    ...(t.paste?.notes ?? []).map((message) => ({ line: null, kind: 'view', message })),
    ...kubectlWarning(t.paste?.kubectlLines, t.paste?.kubectlKinds, 'view'),
    ...skippedWarning(t.paste?.skipped ?? [], 'the nft table'),
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
    ...t.sets
      .filter((st) => st.outside !== undefined)
      .map((st) => ({
        line: st.outside!,
        kind: 'abridged',
        message: `line ${st.outside} adds an element to ${st.kind} ${st.name}, which no line of the paste adds: part of kube-proxy's script, the ${st.kind}'s other elements outside it, not said`,
      })),
    ...(t.mayBeCut
      ? [
          {
            line: t.mayBeCut,
            kind: 'cut-short',
            message: `line ${t.mayBeCut}, the script's last, has no newline after it (nft -f's input ends every line with one): the paste may be cut there, its last word short (a port "8" of "80"); it is read as it stands`,
          },
        ]
      : []),
  ];
}

/** The dump's warnings, in the order the text and JSON say them. */
export function dumpWarnings(d: RulesDump): RulesWarning[] {
  if (isCilium(d)) return ciliumWarnings(d);
  if (isIpvs(d)) return ipvsWarnings(d);
  // what the text and JSON say of a reader's warning (its typed reason is the message's own)
  if (!isNft(d))
    return d.warnings.map(({ line, kind, message, lines }) =>
      lines ? { line, kind, message, lines } : { line, kind, message },
    );
  // the other family's table read with it: what its part of the paste lacks, after
  const also = d.paste?.also;
  return also ? [...nftWarnings(d), ...nftWarnings(also)] : nftWarnings(d);
}

/** A listing without sets or maps its rules use (abridged, or `nft list chain`): said so. */
const leftOutText = (t: NftTable): string | undefined => {
  const missing = missingSets(t);
  if (missing.length === 0) return undefined;
  return `the rules use ${missing.length === 1 ? 'a set or map' : 'sets or maps'} this listing does not hold (${missing.join(', ')}): what ${missing.length === 1 ? 'it holds' : 'they hold'} is not shown or said`;
};

/** A line of an nft listing the reader could not read (its line said apart): in which block,
 * quoted. */
const unreadText = (u: NftUnread) =>
  `not read${u.block ? ` (in ${u.block.kind} ${u.block.name})` : ''}: ${u.what ? `${u.what}: ` : ''}"${excerpt(u.text, 120)}"; nothing is said of what it holds, and the Services it may bear on are said partial`;

/** The lines around a pasted listing that are not part of it, as one JSON warning. */
const skippedWarning = (lines: number[], what: string) =>
  lines.length === 0
    ? []
    : [
        {
          line: lines[0]!,
          kind: 'skipped',
          message: `line${lines.length === 1 ? '' : 's'} ${lines.length > 10 ? `${lines.slice(0, 10).join(', ')} …` : lines.join(', ')}: not part of ${what} (a prompt, a command, prose), skipped`,
          lines,
        },
      ];

/** A text listing that ends inside its table: read as far as it goes, said so. */
export const cutText = (t: NftTable) =>
  t.cut!.crash
    ? `nft crashed at line ${t.cut!.line} ("${excerpt(t.cut!.crash)}") inside ${t.cut!.inside}: what it printed before is read, what it did not print is not in the paste`
    : `the listing ends at line ${t.cut!.line} inside ${t.cut!.inside}: it was cut there${t.cut!.unended ? ` (no newline ends that line, and nft ends every line with one: it may be cut mid-way, its last word short, a port "8" of "80"; it is read as it stands)` : ''}, and what came after was not read`;

/** The word of a paste's last line that may be cut short, by the column it is in. */
const mayBeCutWord = (column: string | undefined): string =>
  column === 'ActiveConn' || column === 'InActConn'
    ? `its last word, the ${column} count, short (a "1" of "10"): a connection count carries no routing fact, so its weight and the shares stand`
    : column === 'Weight'
      ? 'its last word, the weight, short (a "1" of "10")'
      : 'its last word short (a weight "1" of "10")';
