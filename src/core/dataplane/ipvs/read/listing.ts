// IPVS mode's virtual servers as `ipvsadm -Ln` lists them, or as `ipvsadm-save -n` saves them:
// each virtual server (protocol, address, port or firewall mark, scheduler, persistence) with its
// real servers (address, forwarding, weight, connections). Lines around a paste (a prompt, the
// command) are skipped and named; a line inside the listing kdebug cannot place is FILE:LINE.
import { stripColours } from '../../paste/colours.js';
import { ListingParseError } from '../../listing-error.js';
import { hostAndPort, isName } from './addresses.js';
import { ruleCommand } from './listing/rule-command.js';
import { closeRegion, regionAt } from './listing/grep-windows.js';
import { SCHEDULERS } from '../schedulers.js';
import {
  holdsIptablesLine,
  isIptablesRuleLine,
} from '../../iptables/read/paste/other-lines/iptables-lines.js';
import { kubectlKinds, kubectlLines } from '../../paste/foreign.js';
import type { KubectlKind } from '../../iptables/read/paste/other-lines/foreign-kinds.js';
import { commandTarget } from '../../paste/target.js';
import { unquoted, type Quote } from '../../iptables/read/paste/mangled/quoted.js';
import {
  countersOnly,
  settleRelistings,
  startRead,
  unreadable,
  type ListingRead,
} from './listing/state.js';
import { readElision } from './listing/elisions.js';
import { dpvsMessage, readViewLine } from './listing/views.js';
import { readVirtualServer, SERVICE } from './listing/virtual-server-line.js';
import { readRealServerLine } from './listing/real-server-line.js';
import { readSaveLine } from './listing/save-line.js';
import { endsAtVirtualServer, noun, readsLastLine } from './listing/end.js';

export interface IpvsRealServer {
  /** "10.244.1.4:80", IPv6 as "[fd00::4]:80"; `ipvsadm -l` prints names ("host:http"). */
  address: string;
  /** Masq (NAT), Route (DR), Tunnel; undefined where the view does not print it. */
  forward?: string;
  /** Undefined where the view prints no weights (--stats, --rate). */
  weight?: number;
  activeConn?: number;
  inActConn?: number;
  /** `ipvsadm -l` cut its printed name at the column's width: its port is not in the paste. */
  nameCut?: true;
  /** -L prints its Forward, Weight and connection columns after every real server's address
   * (print_service_entry): the paste shows none of them, so its weight is not known. */
  columnsMissing?: true;
  line: number;
}

export interface IpvsService {
  protocol: 'tcp' | 'udp' | 'sctp' | 'fwmark';
  /** "10.96.0.10:53", IPv6 as "[fd00::a]:53"; a firewall mark's number as text. */
  address: string;
  /** Undefined where the view does not print it (--stats, --rate). */
  scheduler?: string;
  /** Persistence timeout, seconds (session affinity). */
  persistent?: number;
  /** A firewall-mark service of IPv6 ("FWM  1481 IPv6", saved with -6): a mark may have one per
   * family. */
  ipv6?: true;
  realServers: IpvsRealServer[];
  /** Why it may have more real servers than those read: the paste is cut inside them, or
   * filtered them out (grep). */
  partial?: string;
  /** `ipvsadm -l`: another virtual server of the listing prints the same name (two addresses of
   * one host name, or names cut at the column's width): told apart by its line. */
  sharedName?: true;
  /** `ipvsadm -l` cut its printed name at the column's width: its port is not in the paste. */
  nameCut?: true;
  /** Listed only by a counter view (--stats, --rate) in a paste whose -L listing does not list
   * it: that view, which shows no scheduler and no weights. */
  countersOnly?: IpvsView;
  line: number;
}

/** Which of ipvsadm's listings this is: `-L` (with `-n` or names), `--stats`, `--rate`, the save
 * form, or counters without a header to tell which. The counter views print no scheduler and no
 * weights. */
export type IpvsView = 'list' | 'stats' | 'rate' | 'save' | 'counters';

export interface IpvsTable {
  kind: 'ipvs';
  view: IpvsView;
  /** `ipvsadm -l` without -n: hosts and ports printed as names, not numbers. */
  names: boolean;
  services: IpvsService[];
  /** Lines outside the listing that were skipped (a prompt, the command), 1-based. */
  skipped: number[];
  /** Lines that repeat a virtual server or real server already read (pasted twice). */
  duplicates: number[];
  /** Rows of a later listing of servers already read, ipvsadm run again (its counts differ, or
   * other lines come between): repeated samples, the later of each read. */
  samples?: number[];
  /** Who printed the later listings, where not one node run again: other hosts or pods (their
   * prompts, commands or labels name them), or a loop's runs: read as one node's all the same. */
  samplesBy?: string;
  /** Elision lines ("...") inside the listing: virtual servers may be missing. */
  elided: number[];
  /** Real server lines after an elision and before any virtual server line: whose they are was
   * left out with it, so they are not read. */
  ownerElided?: number[];
  /** Real server lines that start the paste, before any header or virtual server line: theirs is
   * above the paste, so they are not read. */
  ownerAbove?: number[];
  /** Lines of iptables rules pasted with the listing (iptables-save / -S lines, quoted or
   * indented): another mode's rules, not read with it (among the skipped lines). */
  iptablesLines?: number[];
  /** Lines of kubectl's output pasted with the listing (`kubectl get ep`, `get endpointslices`,
   * `get svc`): the API server's objects, not the node's, not read (among the skipped lines). */
  kubectlLines?: number[];
  /** What kubectl printed on those lines, by resource (`kubectl get nodes` ...). */
  kubectlKinds?: KubectlKind[];
  /** Lines of ipvsadm commands typed (`ipvsadm -A/-a ...` after a prompt): read as what they
   * add, not a listing read back from the node. */
  typed?: number[];
  /** The last line, cut mid-way (a paste that stops inside a line): what followed was not read. */
  cut?: number;
  /** What the line cut was: "a real server's row", "a virtual server's row", ... */
  cutInside?: string;
  /** The cut line is a real server's row that was read (its address and the words before the
   * cut): the column its last word is in, and whether its weight was read whole. */
  cutRow?: { last: string; weightRead: boolean };
  /** The paste's last line, read, has no newline after it: its last word may be cut short (a
   * weight of "1" may be the start of "10"). */
  mayBeCut?: number;
  /** The column the may-be-cut line's last word is in, where it is a real server's row. */
  mayBeCutColumn?: string;
  /** Other ipvsadm listings pasted with this one (`-Lnc`'s connection entries, `--timeout`), in
   * order: no virtual server in them, so not read; each one's kind and lines. */
  other?: { what: 'connections' | 'timeouts'; lines: number[] }[];
  /** `ipset list` pasted with it (pasted-ipsets.ts): its sets' names and lines; KUBE-LOOP-BACK
   * read for the hairpin of each real server. */
  ipsets?: { lines: number[]; names: string[] };
  /** Hosts that are not addresses under a typed `ipvsadm -n` (which prints only numbers): put in
   * by hand; the line of the command. */
  renamed?: { line: number; hosts: string[] };
  /** `ipvsadm -l`: lines of virtual servers printed with a name another of the listing has. */
  sharedNames?: number[];
  /** `ipvsadm -l`: lines whose name ipvsadm cut at its column's width. */
  cutNames?: number[];
  /** Virtual and real server lines without their address ("TCP rr", "-> Masq 1 0 0": a page
   * that dropped the addresses), not read. */
  noAddress?: number[];
  /** The lines a markdown reply quotes ("> " before each), read without the marks. */
  quote?: Quote;
  /** Edits (-e) and deletes (-d) of a real server the virtual server does not have (the address
   * and port ipvsadm sends, -e's rewritten to the service's port where it forwards by -g or -i):
   * the kernel answers ENOENT and ipvsadm says "No such destination"; nothing was changed. */
  noSuchDestination?: { line: number; op: 'e' | 'd'; server: string }[];
  /** ipvsadm-save lines with options kdebug does not know, skipped (the rest of each read). */
  unknownOptions?: { line: number; options: string[] }[];
  /** DPVS's ipvsadm (iQIYI's DPDK load balancer), known by what only it prints: the lines of its
   * MATCH virtual servers (packets selected by protocol, address ranges and interfaces, as its SNAT
   * uses, not an address and port) and of their real servers, none of them read. */
  dpvs?: { match: number[]; realServers: number[] };
}

/** An IPVS-mode listing (ipvsadm's, or kube-proxy's ipsets) that does not read, with where. */
export class IpvsParseError extends ListingParseError {
  override name = 'IpvsParseError';
  static override readonly kind = 'an ipvsadm or ipset listing';
  static override readonly namesKind = /\b(ipvsadm|ipset)\b/i;
  // an ipvsadm listing is read line by line: its error has a line
  declare readonly line: number;
  constructor(file: string, line: number, reason: string) {
    super(file, line, reason);
  }
}

/** The first line of one of ipvsadm's listings: of the virtual servers (`-Ln`, or `-Ln -t` of one),
 * of the connections (`-Lnc`); `--timeout`'s line alone is a foreign kind (classify.ts). */
const LISTING_HEAD =
  /^IP Virtual Server version |^Prot LocalAddress:Port |^IPVS connection entries$/;

/** Does this look like ipvsadm's listing or its save form? (Lines may be quoted or in a diff.)
 * `text` is the paste's head; `whole` gives all of it, read only where the head shows one virtual
 * server's line and nothing else of ipvsadm's. */
export const isIpvs = (text: string, whole: () => string = () => text) => {
  const head = text
    .slice(0, 4096)
    .split('\n')
    .map((l) => bareLine(l));
  return (
    head.some(
      (t, i) =>
        LISTING_HEAD.test(t) ||
        ruleCommand(t)?.op === 'A' ||
        (SERVICE.test(t) && /^-> /.test(head[i + 1] ?? '')),
    ) ||
    head.filter(serviceLine).length >= 2 ||
    // one virtual server's line alone (with a prompt, prose): no line of iptables' anywhere in
    // the paste beside it
    (head.some(serviceLine) && !holdsIptablesLine(whole()))
  );
};

/** A virtual server's line as `ipvsadm -L` prints it without its header (grep'd, or picked):
 * with its scheduler, or with --stats' or --rate's five counts (print_service_entry). */
const serviceLine = (t: string) => scheduled(t) || counted(t);

/** "TCP  10.96.0.10:53   2515932  125426K  0  13034M  0": a virtual server and five counts. */
function counted(t: string): boolean {
  const m = SERVICE.exec(t);
  return m !== null && m[2]!.includes(':') && /^(?:\d+[KMGT]?\s+){4}\d+[KMGT]?$/.test(m[4] ?? '');
}

/** A virtual server's line with its scheduler ("TCP  10.96.0.1:443 rr"): `ipvsadm -Ln | grep`
 * leaves only these. */
function scheduled(t: string): boolean {
  const m = SERVICE.exec(t);
  return m !== null && m[1] !== 'FWM' && SCHEDULERS.has((m[4] ?? '').split(/\s+/)[0]!);
}

/** A line without a diff's "+" or a quote's "> " before it, trimmed. */
const bareLine = (raw: string) =>
  raw
    .replace(/\r$/, '')
    .replace(/^(?:[+>] ?)+(?=\s*(?:->|TCP|UDP|SCTP|FWM|IP Virtual|Prot |-[aA] |\.\.\.))/, '')
    .trim();

/** `recorded`: the text is the raw stdout of a command kdebug ran (a snapshot's node file), whose
 * last line without a newline was cut; else a person's paste. */
export function parseIpvs(
  coloured: string,
  file = '<input>',
  o: { recorded?: boolean } = {},
): IpvsTable {
  // grep --color's codes around each match, a markdown quote's marks: the listing is without them
  const { text, quote } = unquoted(stripColours(coloured));
  const lines = text.split('\n');
  let last = lines.length;
  while (last > 0 && !bareLine(lines[last - 1]!)) last--;
  // the last piece after the last newline holds the last line: no newline ends it
  const end = { recorded: o.recorded === true, unterminated: last > 0 && last === lines.length };
  const r = startRead(file, lines, last, end);
  for (let i = 0; i < lines.length; i++) {
    const t = bareLine(lines[i]!);
    if (t && readsLastLine(r, i + 1)) readLine(r, t, i + 1);
  }
  closeRegion(r.region, lines.length + 1, lines, r.services, r.current);
  const table = tableOf(r, quote);
  // said after what grep or a lone line left out: theirs is the more telling
  endsAtVirtualServer(r);
  return table;
}

/** Reads one line of the paste, by the first reader that knows it, else as a line outside the
 * listing. */
function readLine(r: ListingRead, t: string, no: number): void {
  if (
    readViewLine(r, t, no) ||
    readElision(r, t, no) ||
    readVirtualServer(r, t, no) ||
    readRealServerLine(r, t, no) ||
    readSaveLine(r, t, no)
  )
    return;
  // ipvsadm's own syntax that does not read is an error; anything else (prose) is skipped
  if (r.inListing && /^(->|-[aA] )/.test(t)) {
    unreadable(r, no, `not a line of ipvsadm's listing: ${t.slice(0, 200)}`);
    return;
  }
  // the last line a real server's row cut after its indent's dash ("  -" of "  -> 10.244...."):
  // nothing else ipvsadm prints in a listing starts so, its virtual server's real servers not known
  if (r.inListing && no === r.last && r.current && t === '-') {
    unreadable(r, no, `a real server's row cut after its first character: ${t}`);
    return;
  }
  // a virtual server's line cut before its address ends ("TCP  10.96.")
  if (r.inListing && no === r.last && /^(?:TCP|UDP|SCTP|FWM)\b/.test(t)) {
    r.cut = no;
    return;
  }
  skipLine(r, t, no);
}

/** A prompt, a command or prose: skipped, and said of what it is. */
function skipLine(r: ListingRead, t: string, no: number): void {
  // `ipvsadm -ln` typed above the listing prints numbers only: a host name under it is no name
  if (NUMERIC_COMMAND.test(t)) r.numeric ??= no;
  if (isIptablesRuleLine(t)) r.iptablesLines.push(no);
  // a prompt, a command or prose between an elision and a listing: the elision is another's
  r.elidedAbove = undefined;
  // whose listing follows: the host or pod the line names (a prompt, ssh, kubectl exec, a label
  // a loop echoes); a loop typed prints one listing per run
  const target = commandTarget(t) ?? hostLabel(t);
  if (target !== undefined) r.target = target;
  if (LOOP.test(t)) r.loopAt ??= no;
  r.skipped.push(no);
  // a name met again after a line not of the listing is another output's (a command typed
  // again, a label between samples): the same virtual server, not another of one host name
  r.listingAt = no;
  // the output before it ends, grep's windows with it; a grep's output is a listing of its own
  closeRegion(r.region, no, r.lines, r.services, r.current);
  r.region = regionAt(t, no);
  if (r.region.context !== undefined) [r.inListing, r.current] = [false, undefined];
}

/** The table a finished read gives, or the error of a paste of ipvsadm with no virtual server. */
function tableOf(r: ListingRead, quote: Quote | undefined): IpvsTable {
  const { services, other, dpvs } = r;
  if (other && services.length === 0)
    throw new IpvsParseError(
      r.file,
      other[0]!.lines[0]!,
      "this is ipvsadm's connection (-c) or timeout listing, which holds no virtual server: run `ipvsadm -Ln` for the Services",
    );
  if (dpvs.match.length > 0 && services.length === 0)
    throw new IpvsParseError(r.file, dpvs.match[0]!, dpvsMessage(dpvs.match));
  const samples = settleRelistings(r);
  const kubectl = kubectlLines(r.lines, r.skipped);
  const renamed = r.numeric !== undefined && r.names ? namedHosts(services) : [];
  const names = r.names && renamed.length === 0;
  // no real server line at all, and no header: grep filtered them out, or one line was quoted
  // alone; either way they are unknown, not none
  if (!r.header && r.realServers === 0)
    for (const vs of services)
      vs.partial ??=
        services.length === 1
          ? `the ${noun(r)} shows this virtual server's line alone, without ipvsadm's header or any real server line: its real servers are unknown`
          : `the ${noun(r)} shows no real server lines (filtered, as by grep): its real servers are unknown`;
  // a counter view beside an -L listing: the virtual servers only it lists show no weights
  if (r.listed)
    for (const vs of services) {
      const view = countersOnly(r, vs);
      if (view) vs.countersOnly = view;
    }
  return {
    kind: 'ipvs',
    // counter views beside an -L listing of the same virtual servers: -L gave their weights
    view: r.listed ? 'list' : (r.view ?? 'list'),
    names,
    services,
    skipped: r.skipped,
    duplicates: r.duplicates,
    ...(samples.lines.length > 0 ? { samples: samples.lines } : {}),
    ...(samples.by ? { samplesBy: samples.by } : {}),
    elided: r.elided,
    ...(r.ownerElided.length > 0 ? { ownerElided: r.ownerElided } : {}),
    ...(r.ownerAbove.length > 0 ? { ownerAbove: r.ownerAbove } : {}),
    ...(r.iptablesLines.length > 0 ? { iptablesLines: r.iptablesLines } : {}),
    ...(kubectl.length > 0
      ? { kubectlLines: kubectl, kubectlKinds: kubectlKinds(r.lines, kubectl) }
      : {}),
    ...(r.typed.length > 0 ? { typed: r.typed } : {}),
    ...(r.unknownOptions.length > 0 ? { unknownOptions: r.unknownOptions } : {}),
    ...(r.noSuchDestination.length > 0 ? { noSuchDestination: r.noSuchDestination } : {}),
    ...(r.cut ? { cut: r.cut, cutInside: lineKind(r.lines[r.cut - 1] ?? '') } : {}),
    ...(r.cut && r.cutRow ? { cutRow: r.cutRow } : {}),
    ...(r.end.unterminated && !r.end.recorded && r.cut !== r.last && !r.skipped.includes(r.last)
      ? { mayBeCut: r.last, ...(r.lastColumn ? { mayBeCutColumn: r.lastColumn } : {}) }
      : {}),
    ...(other ? { other } : {}),
    ...(renamed.length > 0 ? { renamed: { line: r.numeric!, hosts: renamed } } : {}),
    ...(r.noAddress.length > 0 ? { noAddress: r.noAddress } : {}),
    ...(r.sharedNames.size > 0 ? { sharedNames: [...r.sharedNames].sort((a, b) => a - b) } : {}),
    ...(r.cutNames.length > 0 && names ? { cutNames: r.cutNames } : {}),
    ...(quote ? { quote } : {}),
    ...(dpvs.match.length > 0 ? { dpvs } : {}),
  };
}

/** What a line of ipvsadm's is, for where a listing was cut. */
function lineKind(raw: string): string {
  const t = bareLine(raw);
  // print_title's second line starts with the arrow its real servers' rows start with
  if (/^->\s+RemoteAddress\b/.test(t)) return "ipvsadm's header";
  if (/^(?:->|-[aed] )/.test(t)) return "a real server's row";
  if (/^(?:TCP|UDP|SCTP|FWM)\b|^-[AED] /.test(t)) return "a virtual server's row";
  return "ipvsadm's header";
}

/** A shell loop typed (`for x in ...; do`, `while ...`, `xargs`): its command runs once per item. */
const LOOP = /(?:^|[\s;$#>])(?:for\s+\w+\s+in\b|while\s|do$)|\bxargs\b/;

/** A line that only names a host, as a loop echoes one before each run's output (`>>> 10.0.0.1`,
 * `==> node-a <==`, `[node-a]`): that host. */
function hostLabel(t: string): string | undefined {
  const m = /^[\s>=#*[\-:]*((?:\d{1,3}\.){3}\d{1,3}|[a-z][\w-]*(?:\.[\w-]+)*)[\s<=#*\]\-:]*$/i.exec(
    t,
  );
  // a name is a host's where it reads as one (a digit, a dot or a dash in it: node-1, worker2,
  // ip-10-0-1-2.ec2.internal), with the marks around it a label has; "Before:", "Output:" are prose
  return m && (/^\d/.test(m[1]!) || (m[0] !== m[1] && /[\d.-]/.test(m[1]!)))
    ? `host ${m[1]}`
    : undefined;
}

/** `ipvsadm` typed with -n (--numeric): it prints addresses and ports as numbers. */
const NUMERIC_COMMAND =
  /(?:^|[\s$#>(/])ipvsadm\b[^|;&]*\s(?:-[a-zA-Z]*n[a-zA-Z]*|--numeric)(?=\s|$)/;

/** The hosts of a listing that are not addresses, in the order first seen. */
function namedHosts(services: IpvsService[]): string[] {
  const hosts = new Set<string>();
  for (const vs of services)
    for (const address of [vs.address, ...vs.realServers.map((r) => r.address)])
      if (isName(address)) hosts.add(hostAndPort(address)?.host ?? address);
  return [...hosts];
}
