// Reads each listing Cilium's agent prints of its Services into one CiliumTable: `cilium(-dbg)
// service list` (text and -o json), `cilium(-dbg) bpf lb list`, the load-balancer tables of 1.17+
// (`db/show frontends`, `db/show backends`) and the maps dump of Cilium's own tests. Prompts,
// commands and other text around the listing are skipped; a row that does not read is an error
// with its line, never a guess. Each form has its own reader beside this one.
import { stripColours } from '../../paste/colours.js';
import {
  CiliumParseError,
  entryOf,
  formatAddress,
  frontendKey,
  type BackendState,
  type CiliumCut,
  type CiliumFrontend,
  type CiliumTable,
} from './listing.js';
import { withoutAgentErrors } from './other-lines/agent-errors.js';
import { withoutKubectlNoise } from './other-lines/kubectl-noise.js';
import { BPF_JSON, HEADERS, ciliumForm, ciliumOther, uncommented } from './which-listing.js';
import { serviceList } from './listings/service-list.js';
import { serviceListJson } from './listings/service-list-json.js';
import { bpfLbJson, bpfLbList } from './listings/bpf-lb-list.js';
import { BPF_GO_MAP, bpfLbGoMap } from './listings/bpf-lb-go-map.js';
import { dbBackends, dbFrontends, serviceBackendKey } from './listings/db-tables.js';
import { mapsDump } from '../maps/read-dump.js';
import { bpftoolCgroupTree } from './other-lines/other-tools.js';
import { withAgentCommands } from './other-lines/agent-commands.js';
import { laterRun, whole } from './runs.js';
import { LIST_COMMAND, filteredRuns } from './filtered.js';
import { excerpt } from '../../../sanitize.js';
import { kubectlKinds, kubectlLines } from '../../paste/foreign.js';
import { unquoted } from '../../iptables/read/paste/mangled/quoted.js';
import { commandTarget, sameTarget, saidTarget } from '../../paste/target.js';

/** One of the agent's listings, read. Throws CiliumParseError (FILE:LINE first) on a row that
 * does not read, or when no listing is found. */
export function parseCilium(coloured: string, source: string): CiliumTable {
  // grep --color's codes around each match, a markdown quote's marks: the listing is without them
  const { text, quote } = unquoted(stripColours(coloured));
  const lines = text.split('\n');
  const table = withAgentCommands(parseListings(text, source, lines), lines);
  if (quote) table.quote = quote;
  const filtered = filteredRuns(lines);
  if (filtered.length > 0) table.filtered = filtered;
  // kubectl's output pasted with it: the API server's objects, named apart from the prose; the
  // lines read marked in one array (a set of a big listing's line numbers cost its parse a tenth)
  const read = new Uint8Array(lines.length + 2);
  for (const f of table.frontends) {
    read[f.line] = 1;
    read[f.flagsLine ?? f.line] = 1;
    for (const b of f.backends) read[b.line] = 1;
  }
  for (const no of table.rowsRead ?? []) read[no] = 1;
  const unread: number[] = [];
  for (let no = 1; no <= lines.length; no++) if (read[no] === 0) unread.push(no);
  const kubectl = kubectlLines(lines, unread);
  const cgroups = bpftoolCgroupTree(lines);
  if (cgroups) table.notRead = [...(table.notRead ?? []), cgroups];
  const skipped = skippedBefore(table, text, lines, unread, kubectl);
  if (skipped.length > 0) table.skipped = skipped;
  return kubectl.length > 0
    ? { ...table, kubectlLines: kubectl, kubectlKinds: kubectlKinds(lines, kubectl) }
    : table;
}

/** The lines before the first listing's first row that no reader took and nothing else names (a
 * prompt, a command, another tool's output pasted above it): skipped, said as the iptables and
 * IPVS readers say theirs. A JSON listing's own lines hold no row of their own: not looked at. */
function skippedBefore(
  table: CiliumTable,
  text: string,
  lines: string[],
  unread: number[],
  kubectl: number[],
): number[] {
  const head = text.slice(0, 16384);
  if (table.form === 'service-list-json' || BPF_JSON.test(head) || BPF_GO_MAP.test(head)) return [];
  const first = Math.min(
    ...table.frontends.map((f) => f.line),
    ...(table.rowsRead ?? []),
    table.unreadFrom ?? Infinity,
  );
  const said = new Set([
    ...kubectl,
    ...(table.notRead ?? []).map((n) => n.line),
    ...(table.cut ?? []).map((c) => c.line),
    ...(table.filtered ?? []).map((f) => f.line),
  ]);
  return unread.filter((no) => {
    const t = lines[no - 1]?.trim() ?? '';
    return no < first && t !== '' && !said.has(no) && !HEADERS.some(([re]) => re.test(t));
  });
}

/** The listings of the paste, one after another where a command's output follows another's:
 * each joined to those before it, in order (a run is compared with the state before it). */
function parseListings(text: string, source: string, lines: string[]): CiliumTable {
  let table = parseListing(text, source, lines);
  // whose listing each is (the pod, container or host its command names): another agent's listing
  // is not a run of this one, nor part of it; it is said apart, not read with it
  // the last line from `from` up to the listing's first row that names one (a command, a prompt);
  // none there: the shell's as before (`kubectl exec -it POD -- bash`, then commands in it)
  const targetIn = (from: number, row: number | undefined, before: string | undefined) => {
    for (let no = (row ?? from) - 1; no >= from; no--) {
      const t = commandTarget(lines[no - 1]!);
      if (t !== undefined) return t;
    }
    return before;
  };
  const target = targetIn(1, table.frontends[0]?.line, undefined);
  // the list command typed at a line (`cilium service list | head -2`), where one is there
  const typedAt = (no: number) =>
    LIST_COMMAND.test(lines[no - 1] ?? '') ? lines[no - 1] : undefined;
  // the command of the run the next one is compared with: its pipe (a grep, a head) makes it not
  // whole, as the later run's does
  let ran = typedAt(listedAt(lines, 1, table.frontends[0]?.line));
  while (table.unreadFrom !== undefined) {
    const at = table.unreadFrom;
    // another listing follows under its own command (a paste of two): read it too, at its lines
    const rest = lines.map((l, i) => (i < at - 1 ? '' : l)).join('\n');
    let next: CiliumTable;
    try {
      next = parseListing(rest, source);
    } catch (e) {
      if (!(e instanceof CiliumParseError)) throw e;
      // a listing command whose output the paste ends in the header of: cut, not another kind
      const cut = cutInHeader(lines, at);
      if (!cut) return table; // not a listing: said as not read
      const { unreadFrom: _, ...first } = table;
      return { ...first, cut: [...(table.cut ?? []), cut] };
    }
    const { unreadFrom: _, ...first } = table;
    const command = listedAt(lines, at, next.frontends[0]?.line);
    const other = targetIn(at, next.frontends[0]?.line, target);
    if (!sameTarget(target, other)) {
      const note = {
        line: command,
        reason: `a listing of another agent (${saidTarget(other)}; the first listing's: ${saidTarget(target)}): not read with the first, nor compared with it as a run of one agent (give each agent's listing to kdebug rules --file on its own)`,
      };
      table = {
        ...first,
        notRead: [...(first.notRead ?? []), note],
        ...(next.unreadFrom !== undefined ? { unreadFrom: next.unreadFrom } : {}),
      };
      continue;
    }
    const typed = typedAt(command);
    table = joined(first, next, command, typed, ran);
    // a listing of another form read with it: a pipe of its command leaves the table not whole
    if (next.form === first.form || typed?.includes('|')) ran = typed;
  }
  return table;
}

/** Each listing's header, its words one blank apart: what a listing cut in it may end in. */
const HEADER_TEXTS = [
  'ID Frontend Service Type Backend',
  'Frontend Service Type Backend',
  'SERVICE ADDRESS BACKEND ADDRESS (REVNAT_ID) (SLOT)',
  'Address Type ServiceName PortName Backends RedirectTo Status Since Error',
];

/** The paste's last lines from `from` on: a listing command and nothing after it but the first
 * words of its header, where the paste ends (cilium#25861's last `service list`, cut at
 * "Frontend"): the cut, said at the line it is in. */
function cutInHeader(lines: string[], from: number): CiliumCut | undefined {
  const rest = lines
    .map((l, i) => ({ no: i + 1, t: l.trim().replace(/\s+/g, ' ') }))
    .filter((l) => l.no >= from && l.t !== '');
  // the commands before it (a service delete) and their output are read as the agent's commands
  const last = rest.findLastIndex((l) => LIST_COMMAND.test(l.t));
  const [command, header, ...more] = rest.slice(Math.max(last, 0));
  if (!command || more.length > 0 || last < 0) return undefined;
  if (header && !HEADER_TEXTS.some((h) => h.startsWith(header.t))) return undefined;
  const listed = `\`${excerpt(command.t.replace(/^(?:\[[^\]]*\]|\S*)[#$%>] /, ''), 60)}\``;
  return header
    ? {
        line: header.no,
        reason: `the paste ends in the header of what ${listed} (line ${command.no}) printed: the listing is cut there`,
      }
    : {
        line: command.no,
        reason: `the paste ends at ${listed} (line ${command.no}): what it printed is cut off`,
      };
}

/** The line of the command that printed the listing read from `from` on (the last list command
 * typed above its first row; no row read, the run cut before one: the first typed from `from`
 * on), else `from`: a run again is said where it was run, not at a command between (a service
 * update), which lists nothing. */
function listedAt(lines: string[], from: number, row: number | undefined): number {
  if (row === undefined) {
    const first = lines.findIndex((l, i) => i >= from - 1 && LIST_COMMAND.test(l));
    return first < 0 ? from : first + 1;
  }
  for (let no = row - 1; no >= from; no--) if (LIST_COMMAND.test(lines[no - 1]!)) return no;
  return from;
}

/** Two listings of one agent in one paste: each frontend once, what the second adds (its type,
 * backends the first does not list) filled in; the same listing printed again (a command run
 * again, by `command` at line `at`, after the run `before` typed) is the later state (runs.ts). */
function joined(
  a: CiliumTable,
  b: CiliumTable,
  at: number,
  command: string | undefined,
  before: string | undefined,
): CiliumTable {
  const again = a.form === b.form;
  const cut = [...(a.cut ?? []), ...(b.cut ?? [])];
  // the run before is as whole as what it printed shows and its command (not piped) lets it be
  const run = again ? laterRun(a.frontends, b, at, command, whole(a, before)) : undefined;
  const { frontends, bare } = run
    ? { frontends: run.frontends, bare: undefined }
    : filledIn(a.frontends, b.frontends);
  const notShown = [a.protocolNotShown, bare, b.protocolNotShown].find((x) => x !== undefined);
  const portsSwapped = [...(a.portsSwapped ?? []), ...(b.portsSwapped ?? [])];
  const rowsRead = [...(a.rowsRead ?? []), ...(b.rowsRead ?? [])];
  return {
    ...a,
    frontends,
    ...(notShown !== undefined ? { protocolNotShown: notShown } : {}),
    ...(portsSwapped.length > 0 ? { portsSwapped } : {}),
    ...(rowsRead.length > 0 ? { rowsRead } : {}),
    ...(run
      ? { rerun: [...(a.rerun ?? []), at], runChanges: [...(a.runChanges ?? []), run.change] }
      : { alsoForms: [...(a.alsoForms ?? []), b.form, ...(b.alsoForms ?? [])] }),
    ...(cut.length > 0 ? { cut } : {}),
    ...(b.unreadFrom !== undefined ? { unreadFrom: b.unreadFrom } : {}),
  };
}

/** Two listings' frontends, each once, kept as the one that prints protocols has it: an entry of
 * bpf lb list before 1.17 names no protocol, and is the map entry of every protocol's frontend on
 * its address and port (its key holds none), so it fills in each of them; `bare`, the line of the
 * first so read. */
function filledIn(
  a: CiliumFrontend[],
  b: CiliumFrontend[],
): { frontends: CiliumFrontend[]; bare?: number } {
  const shows = (fs: CiliumFrontend[]) => fs.some((f) => f.protocol !== undefined);
  const [base, other] = !shows(a) && shows(b) ? [b, a] : [a, b];
  const byKey = new Map(
    base.map((f) => [frontendKey(f), { ...f, flags: [...f.flags], backends: [...f.backends] }]),
  );
  const kept = [...byKey.values()];
  let bare: number | undefined;
  for (const f of other) {
    const exact = byKey.get(frontendKey(f));
    const known = exact
      ? [exact]
      : f.protocol === undefined
        ? kept.filter((k) => entryOf(k, f))
        : [];
    if (known.length === 0) byKey.set(frontendKey(f), f);
    if (!exact && known.length > 0) bare ??= f.line;
    for (const k of known) fill(k, f);
  }
  return { frontends: [...byKey.values()], ...(bare !== undefined ? { bare } : {}) };
}

/** What `f`, another listing's, adds to `known`: its type, its flags, backends it lacks. */
function fill(known: CiliumFrontend, f: CiliumFrontend): void {
  known.type ??= f.type;
  if (f.l7Proxy) known.l7Proxy = { ...known.l7Proxy, ...f.l7Proxy };
  // the BPF map's flags (Local, non-routable ...) are kept with the frontend they belong to
  if (known.flags.length === 0 && f.flags.length > 0) known.flagsLine = f.line;
  for (const flag of f.flags) if (!known.flags.includes(flag)) known.flags.push(flag);
  for (const be of f.backends)
    if (!known.backends.some((x) => x.ip === be.ip && x.port === be.port)) known.backends.push(be);
}

/** One listing: the first the text holds (its lines, where they are split already); where the
 * agent's CLI said it could not print some entries, the listing is said to lack them. */
function parseListing(text: string, source: string, lines?: string[]): CiliumTable {
  const plain = text.replace(/\r/g, '');
  const quiet = withoutKubectlNoise(uncommented(plain) ?? plain);
  const { text: clean, first } = withoutAgentErrors(quiet.text);
  // the text as it came, most often: its lines are not split again (a big listing's many)
  const table = parseForm(clean, source, clean === text ? lines : undefined);
  const cut: CiliumCut[] = [];
  if (first) {
    const more = first.count > 1 ? ` and ${first.count - 1} more such errors` : '';
    cut.push({
      line: first.line,
      reason: `Cilium's CLI printed "${excerpt(first.what)}"${more}: the entries it could not parse are not in its listing`,
    });
  }
  // kubectl's word that the command failed in the Pod, where it comes after the listing's start
  const failed = quiet.failed;
  if (
    failed &&
    failed.line > (table.frontends[0]?.line ?? 0) &&
    failed.line < (table.unreadFrom ?? Infinity)
  )
    cut.push({
      line: failed.line,
      reason: `kubectl said "command terminated with exit code ${failed.code}": what the command printed may not be all of its listing`,
    });
  return cut.length === 0 ? table : { ...table, cut: [...(table.cut ?? []), ...cut] };
}

function parseForm(text: string, source: string, split?: string[]): CiliumTable {
  const form = ciliumForm(text);
  const lines = split ?? text.split('\n');
  switch (form) {
    case 'service-list-json':
      return serviceListJson(text, source);
    case 'service-list':
      return serviceList(lines, source);
    case 'bpf-lb-list':
      if (BPF_JSON.test(text.slice(0, 16384))) return bpfLbJson(text, source);
      return BPF_GO_MAP.test(text.slice(0, 16384))
        ? bpfLbGoMap(text, source)
        : bpfLbList(lines, source);
    case 'db-frontends':
      return dbFrontends(lines, source);
    case 'db-backends':
      return { form, source, frontends: [], ...dbBackends(lines, source) };
    case 'maps-dump':
      return mapsDump(lines, source);
    default: {
      const other = ciliumOther(text);
      throw new CiliumParseError(
        source,
        other?.line,
        other?.message ??
          'not a Cilium listing (cilium-dbg service list, bpf lb list, db/show frontends)',
      );
    }
  }
}

/** The frontends table with each backend's state from the backends table (kept with it: the
 * states were read, however few). */
export function withBackendStates(
  frontends: CiliumTable,
  states: Map<string, BackendState>,
  /** The backends table they were read from: each state's line is its evidence. */
  from?: CiliumTable,
): CiliumTable {
  return {
    ...frontends,
    backendStates: states,
    frontends: frontends.frontends.map((f) => ({
      ...f,
      backends: f.backends.map((b) => {
        const address = formatAddress({ ...b, protocol: b.protocol ?? f.protocol });
        // the backend's state in this frontend's Service, where the backends table names it
        const byService =
          f.service !== undefined ? serviceBackendKey(f.service, address) : undefined;
        const key = byService !== undefined && states.has(byService) ? byService : address;
        const state = states.get(key);
        const line = from?.backendStateLines?.get(key);
        if (!state) return b;
        return line !== undefined && from
          ? { ...b, state, stateAt: { source: from.source, line } }
          : { ...b, state };
      }),
    })),
  };
}
