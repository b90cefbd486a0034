// IPVS mode's virtual servers as `ipvsadm -Ln` lists them, or as `ipvsadm-save -n` saves them:
// each virtual server (protocol, address, port or firewall mark, scheduler, persistence) with its
// real servers (address, forwarding, weight, connections). Lines around a paste (a prompt, the
// command) are skipped and named; a line inside the listing kdebug cannot place is FILE:LINE.
import { stripColours } from '../../colours.js';
import { ListingParseError } from '../../listing-error.js';
import { ELISION } from '../../elisions.js';
import { headerCut, realNameCut, virtualNameCut } from './printing.js';
import { hostAndPort, hostName, isName, nameHost } from './addresses.js';
import { ruleCommand } from './rule-command.js';
import { closeRegion, regionAt, type GrepRegion } from './grep-windows.js';
import { SCHEDULERS } from '../schedulers.js';
import { holdsIptablesLine, isIptablesRuleLine } from '../../iptables/read/paste/iptables-lines.js';
import { kubectlLines } from '../../paste-foreign.js';
import { unquoted, type Quote } from '../../iptables/read/paste/quoted.js';

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
  /** Lines of ipvsadm commands typed (`ipvsadm -A/-a ...` after a prompt): read as what they
   * add, not a listing read back from the node. */
  typed?: number[];
  /** The last line, cut mid-way (a paste that stops inside a line): what followed was not read. */
  cut?: number;
  /** Another ipvsadm listing pasted with this one (`-Lnc`'s connection entries, `--timeout`):
   * no virtual server in it, so not read; its lines. */
  other?: { what: 'connections' | 'timeouts'; lines: number[] };
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
  // an ipvsadm listing is read line by line: its error has a line
  declare readonly line: number;
  constructor(file: string, line: number, reason: string) {
    super(file, line, reason);
  }
}

/** DPVS's ipvsadm's match service (print_service_entry): "MATCH tcp,from=172.16.0.0-172.16.255.254:0-0,oif=dpdk1 rr"
 * as -L prints it, "-A -H proto=tcp,src-range=...,oif=dpdk1 -s rr" / "-a -H ... -r ADDR -J" as
 * -S saves it: its protocol and ranges, then the scheduler or counters. */
const DPVS_MATCH =
  /^(?:MATCH (?:tcp|udp|sctp|icmp|icmpv6)(?:,\S*)?|-[aA]\s+-H\s+proto=\S+)(?:\s|$)/;

/** What a paste of DPVS's ipvsadm is: none of its MATCH virtual servers is a Service. */
const dpvsMessage = (match: number[]) =>
  `this is DPVS's ipvsadm (iQIYI's DPDK load balancer, not the kernel's IPVS, and not kube-proxy's): its MATCH virtual server${match.length === 1 ? '' : 's'} (line${match.length === 1 ? '' : 's'} ${match.join(', ')}) select${match.length === 1 ? 's' : ''} packets by protocol, address ranges and interfaces for DPVS's SNAT, not a Service's address and port: no Service is in it`;

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

/** "TCP  10.96.0.10:53 rr persistent 10800", "UDP  10.96.0.10:53   0   0 ..." (--stats/--rate),
 * "FWM  1481 IPv6 rr" (print_service_entry's "FWM  %d IPv6"): protocol, address, IPv6, the rest. */
const SERVICE = /^(TCP|UDP|SCTP|FWM)\s+(\S+)(?:(?<=^FWM\s+\d+)\s+(IPv6)(?=\s|$))?(?:\s+(.*))?$/;

/** A virtual server's address as /proc/net/ip_vs prints it (ip_vs_info_seq_show): "%08X:%04X",
 * "[%pI6]:%04X" (every group of four digits), a mark as "%08X"; ipvsadm prints none of them
 * (its numbers are decimal, its IPv6 addresses shortened). */
const PROC_HOST_PORT = /^[\dA-F]{8}:[\dA-F]{4}$|^\[(?:[\da-f]{4}:){7}[\da-f]{4}\]:[\dA-F]{4}$/;
const PROC_ADDRESS: Record<string, RegExp> = {
  TCP: PROC_HOST_PORT,
  UDP: PROC_HOST_PORT,
  SCTP: PROC_HOST_PORT,
  // a decimal mark of eight digits is ipvsadm's: the kernel's has a leading 0 or a letter
  FWM: /^(?=0|.*[A-F])[\dA-F]{8}$/,
};

/** A virtual service's identity: a firewall mark's family is part of it. */
const serviceKey = (protocol: string, address: string, ipv6: boolean | undefined) =>
  `${protocol} ${address}${ipv6 ? ' IPv6' : ''}`;

/** The forwarding methods ipvsadm's fwd_name prints (DPVS's ipvsadm: FullNat, SNAT). */
const FORWARDS = new Set(['Masq', 'Local', 'Tunnel', 'Route', 'FullNat', 'SNAT', 'Bypass']);

/** The protocols ipvsadm prints, as kdebug names them. */
const PROTOCOLS: Record<string, IpvsService['protocol']> = {
  TCP: 'tcp',
  UDP: 'udp',
  SCTP: 'sctp',
  FWM: 'fwmark',
};

export function parseIpvs(coloured: string, file = '<input>'): IpvsTable {
  // grep --color's codes around each match, a markdown quote's marks: the listing is without them
  const { text, quote } = unquoted(stripColours(coloured));
  const services: IpvsService[] = [];
  const byAddress = new Map<string, IpvsService>();
  const skipped: number[] = [];
  const duplicates: number[] = [];
  const elided: number[] = [];
  const ownerElided: number[] = [];
  const ownerAbove: number[] = [];
  let afterElision = false;
  let elidedAbove: number | undefined; // an elision above the listing: its own if no header follows
  let savedAfter: number | undefined; // an elision no ipvsadm-save line has followed yet
  const iptablesLines: number[] = [];
  const typed: number[] = [];
  let view: IpvsView | undefined;
  let columns = LIST_COLUMNS; // what the words after a real server's address are
  let names = false;
  let current: IpvsService | undefined;
  let inListing = false;
  const lines = text.split('\n');
  let last = lines.length;
  while (last > 0 && !bareLine(lines[last - 1]!)) last--;
  let cut: number | undefined;
  // ipvsadm's own syntax that does not read: the paste's last line cut mid-way, else an error
  const unreadable = (no: number, why: string) => {
    if (no !== last) throw new IpvsParseError(file, no, why);
    cut = no;
    if (current) current.partial = `the paste is cut at line ${no} inside its real servers`;
  };
  // the listing starts without its header below an elision: that elision left its start out
  const bareStart = () => {
    if (inListing || elidedAbove === undefined) return;
    skipped.splice(skipped.indexOf(elidedAbove), 1);
    elided.push(elidedAbove);
    afterElision = inListing = true;
  };
  let header = false; // ipvsadm's own header lines, or the save form: a whole listing
  const unknownOptions: NonNullable<IpvsTable['unknownOptions']> = [];
  let realServers = 0;
  let other: IpvsTable['other']; // `ipvsadm -Lnc` or `--timeout` pasted with the listing
  let inOther = false;
  let numeric: number | undefined; // the line of a typed `ipvsadm -n`
  let listingAt = 0; // the line of the last header: a listing ipvsadm printed starts there
  const sharedNames = new Set<number>();
  const cutNames: number[] = [];
  const noAddress: number[] = [];
  let addressless = false; // the real servers that follow belong to a line without its address
  let region: GrepRegion = { line: 0 }; // the output of the command last typed
  const dpvs = { match: [] as number[], realServers: [] as number[] };
  let inMatch = false; // the real servers that follow are a DPVS MATCH virtual server's
  for (let i = 0; i < lines.length; i++) {
    const no = i + 1;
    const t = bareLine(lines[i]!);
    if (!t) continue;
    let m: RegExpExecArray | null;
    if (/^IP Virtual Server version /.test(t)) {
      inListing = header = true;
      listingAt = no;
      // "IP Virtual Server version 1.2.1 (size=4096)": the last line stopped before its ")"
      if (no === last && !t.endsWith(')')) cut = no;
      continue;
    }
    // `ipvsadm -Lnc` lists connections, `--timeout` the timeouts: no virtual server in either,
    // and a connection's row starts as a virtual server's does ("UDP 04:24  UDP ...")
    const otherHead = OTHER_LISTING.exec(t);
    if (otherHead || (inOther && CONNECTION_ROW.test(t))) {
      other ??= { what: otherHead?.[1] ? 'timeouts' : 'connections', lines: [] };
      other.lines.push(no);
      inOther = !otherHead?.[1];
      continue;
    }
    inOther = false;
    // the headers say which view this is: ipvsadm prints one per option
    if ((m = /^Prot LocalAddress:Port\s+(.*)$/.exec(t))) {
      if (no === last && headerCut(m[1]!)) cut = no;
      listingAt = no;
      view = /^Conns\b/.test(m[1]!) ? 'stats' : /^CPS\b/.test(m[1]!) ? 'rate' : 'list';
      // --persistent-conn: the real servers' columns on this line, and no Forward column
      if (/^Weight\b/.test(m[1]!)) columns = m[1]!.split(/\s+/);
      inListing = header = true;
      continue;
    }
    // the real servers' titles, however a page or a hand re-typing spaced them ("->  RemoteAddress")
    if ((m = /^->\s+RemoteAddress:Port\s*(.*)$/.exec(t))) {
      if (no === last && headerCut(m[1]!)) cut = no;
      if (m[1]) columns = m[1].split(/\s+/);
      else if (view === 'stats' || view === 'rate') columns = [];
      inListing = true;
      continue;
    }
    // DPVS's MATCH virtual server: no address and port, so no Service; nor its real servers
    if (DPVS_MATCH.test(t)) {
      bareStart();
      if (t.startsWith('-a')) dpvs.realServers.push(no);
      else dpvs.match.push(no);
      current = undefined;
      inListing = header = inMatch = true;
      continue;
    }
    if (inMatch && /^->\s/.test(t)) {
      dpvs.realServers.push(no);
      continue;
    }
    inMatch = false;
    if (ELISION.test(t) && !inListing) {
      elidedAbove = no;
      skipped.push(no);
      continue;
    }
    if (ELISION.test(t)) {
      elided.push(no);
      // the virtual server above may have more real servers past it, and those below may be
      // another's, left out with it
      if (current)
        current.partial ??= `an elision follows it at line ${no}: it may have more real servers`;
      current = undefined;
      afterElision = true;
      savedAfter = no;
      continue;
    }
    // ipvsadm -Ln: "TCP  10.96.0.10:53 rr persistent 10800" / "  -> 10.244.0.2:53  Masq 1 0 0"
    // an address cut before its port ("TCP  19", "TCP  10.96.0."): the paste ends there, or the
    // line does not read
    if ((m = SERVICE.exec(t)) && m[1] !== 'FWM' && /^[\d.]+$/.test(m[2]!)) {
      if (no === last) cut = no;
      else unreadable(no, `not a virtual server's address:port: ${t.slice(0, 200)}`);
      continue;
    }
    if ((m = SERVICE.exec(t)) && PROC_ADDRESS[m[1]!]?.test(m[2]!))
      throw new IpvsParseError(
        file,
        no,
        "this is /proc/net/ip_vs, the kernel's own listing: addresses and ports in hex and persistence in jiffies (seconds times the kernel's HZ, which it does not say): run `ipvsadm -Ln` for the virtual servers",
      );
    if ((m = SERVICE.exec(t))) {
      bareStart();
      const rest = (m[4] ?? '').split(/\s+/).filter(Boolean);
      const counters = rest.length > 0 && /^\d+[KMGT]?$/.test(rest[0]!);
      if (counters) view ??= 'counters';
      else view ??= 'list';
      const protocol = PROTOCOLS[m[1]!]!;
      addressless = false;
      // "TCP rr": its scheduler where its address should be, the address gone from the page
      if (m[1] !== 'FWM' && SCHEDULERS.has(m[2]!) && !/\S/.test(m[4] ?? '')) {
        noAddress.push(no);
        addressless = true;
        current = undefined;
        inListing = true;
        continue;
      }
      // the last line cut inside a name, before its ":port" and scheduler ("TCP  ip-1")
      if (no === last && rest.length === 0 && !m[2]!.includes(':') && m[1] !== 'FWM') {
        cut = no;
        continue;
      }
      names ||= isName(m[2]!);
      const nameCut = names && m[1] !== 'FWM' && virtualNameCut(m[1]!, m[2]!);
      if (nameCut) cutNames.push(no);
      const key = serviceKey(protocol, m[2]!, m[3] !== undefined);
      const seen = byAddress.get(key);
      inListing = true;
      // ipvsadm prints each virtual server once: in its names view a name met again in the same
      // listing is another virtual server (an address of the same host name, or a cut name)
      const another = seen !== undefined && (nameCut || hostName(m[2]!)) && seen.line > listingAt;
      if (seen && !another) {
        duplicates.push(no); // the same virtual server again: its real servers are read once
        current = seen;
        continue;
      }
      if (seen) {
        seen.sharedName = true;
        sharedNames.add(seen.line).add(no);
      }
      const scheduler = counters ? undefined : rest[0];
      const persistent = /\bpersistent (\d+)/.exec(m[4] ?? '');
      current = {
        protocol,
        address: m[2]!,
        ...(scheduler !== undefined && SCHEDULERS.has(scheduler) ? { scheduler } : {}),
        ...(persistent ? { persistent: Number(persistent[1]) } : {}),
        ...(m[3] ? { ipv6: true as const } : {}),
        ...(seen ? { sharedName: true as const } : {}),
        ...(nameCut ? { nameCut: true as const } : {}),
        realServers: [],
        line: no,
      };
      services.push(current);
      byAddress.set(key, current);
      continue;
    }
    if ((m = /^->\s+(\S+)(?:\s+(.*))?$/.exec(t))) {
      bareStart();
      // "-> Masq 1 0 0": its forwarding where its address should be, or a real server of such a
      // virtual server line
      if (addressless || (FORWARDS.has(m[1]!) && /^\d/.test(m[2] ?? ''))) {
        noAddress.push(no);
        // a real server not read under a virtual server read: the shares of the others unknown
        if (current && !addressless)
          current.partial ??= `its real server at line ${no} is printed without its address, not read`;
        continue;
      }
      if (!current && afterElision) {
        ownerElided.push(no);
        continue;
      }
      // the paste starts inside a listing, among the real servers of a virtual server above it
      if (!current && !inListing) {
        ownerAbove.push(no);
        continue;
      }
      if (!current)
        throw new IpvsParseError(
          file,
          no,
          `a real server before any virtual server: ${t.slice(0, 200)}`,
        );
      // `ipvsadm -l` cuts a long host name at its column, port and all: a name, port unknown
      const bareName = names && nameHost(m[1]!.replace(/:$/, ''));
      if (!bareName && !/^(?:\[[^\]]+\]|[^\s:]+):[\w-]+$/.test(m[1]!)) {
        unreadable(no, `not a real server's address:port: ${t.slice(0, 200)}`);
        continue;
      }
      if (current.realServers.some((r) => r.address === m![1])) {
        duplicates.push(no);
        continue;
      }
      names ||= isName(m[1]!);
      const words = (m[2] ?? '').split(/\s+/).filter(Boolean);
      // ipvsadm prints columns after every real server's address: the last line with none may
      // be cut inside the address itself ("10.244.0.6:d" of ":domain", ":80" of ":8080")
      if (no === last && words.length === 0 && columns.length > 0) {
        unreadable(no, `not a real server's row: ${t.slice(0, 200)}`);
        continue;
      }
      const rs = realServer(m[1]!, words, view, columns, no);
      if (names && realNameCut(rs.address)) {
        rs.nameCut = true;
        cutNames.push(no);
      }
      current.realServers.push(rs);
      realServers++;
      // ipvsadm's print_service_entry prints every column of its header on each real server's
      // line: the last line with fewer stops at a cut (a weight with no column after it may itself
      // be cut: "1" of "10")
      const short =
        words.length < columns.length ||
        (rs.forward !== undefined &&
          (rs.weight === undefined ||
            (columns.includes('InActConn') && rs.inActConn === undefined)));
      if (no === last && (view ?? 'list') === 'list' && short) {
        cut = no;
        current.partial = `the paste is cut at line ${no} inside its real servers`;
      }
      continue;
    }
    // ipvsadm's rule language: what `ipvsadm-save -n` prints ("-A -t 10.96.0.10:53 -s rr -p 10800",
    // "-a -t 10.96.0.10:53 -r 10.244.0.2:53 -m -w 1"), or the same options typed as ipvsadm
    // commands, in any order as ipvsadm's getopt takes them: applied in order, as ipvsadm would
    const command = ruleCommand(t);
    if (command) {
      bareStart();
      const op = command.op;
      // ipvsadm-save prints each virtual server's real servers after it: one named first after an
      // elision by its real server may have more in it
      const elision = savedAfter;
      savedAfter = undefined;
      if (command.typed) typed.push(no);
      if (command.unknown) unknownOptions.push({ line: no, options: command.unknown });
      // `ipvsadm-save` without -n saves names as `ipvsadm -l` prints them
      if (!command.typed)
        names ||=
          (command.protocol !== 'fwmark' && isName(command.address)) ||
          (command.server !== undefined && isName(command.server));
      view ??= 'save';
      header = true; // the commands say every real server they add
      inListing = true;
      const key = serviceKey(command.protocol, command.address, command.ipv6);
      const owner = byAddress.get(key);
      if (op === 'A' || op === 'E') {
        if (op === 'A' && owner) {
          duplicates.push(no);
          current = owner;
          continue;
        }
        if (op === 'E' && !owner) {
          unreadable(no, `an edit of a virtual server not added before: ${t.slice(0, 200)}`);
          continue;
        }
        const s: IpvsService = owner ?? {
          protocol: command.protocol,
          address: command.address,
          ...(command.ipv6 ? { ipv6: true as const } : {}),
          realServers: [],
          line: no,
        };
        s.scheduler = command.scheduler ?? (op === 'E' ? s.scheduler : undefined) ?? 'wlc';
        if (command.persistent !== undefined) s.persistent = command.persistent;
        else if (op === 'A') delete s.persistent;
        if (!owner) {
          services.push(s);
          byAddress.set(key, s);
        }
        current = s;
        continue;
      }
      if (op === 'D') {
        if (owner) {
          services.splice(services.indexOf(owner), 1);
          byAddress.delete(key);
        }
        continue;
      }
      // its virtual server's line may be among the lines an elision left out
      if (!owner && afterElision) {
        ownerElided.push(no);
        continue;
      }
      if (!owner) {
        unreadable(no, `a real server of a virtual server not added before: ${t.slice(0, 200)}`);
        continue;
      }
      current = owner;
      if (elision !== undefined)
        owner.partial ??= `an elision precedes its real servers at line ${elision}: it may have more`;
      const server = command.server!;
      const at = owner.realServers.findIndex((r) => r.address === server);
      if (op === 'd') {
        if (at >= 0) owner.realServers.splice(at, 1);
        continue;
      }
      if (op === 'a' && at >= 0) {
        duplicates.push(no);
        continue;
      }
      const before = at >= 0 ? owner.realServers[at] : undefined;
      const rs: IpvsRealServer = {
        address: server,
        forward: command.forward ?? before?.forward ?? 'Masq',
        weight: command.weight ?? before?.weight ?? 1,
        line: no,
      };
      if (before) owner.realServers.splice(at, 1, rs);
      else owner.realServers.push(rs);
      continue;
    }
    // ipvsadm's own syntax that does not read is an error; anything else (prose) is skipped
    if (inListing && /^(->|-[aA] )/.test(t)) {
      unreadable(no, `not a line of ipvsadm's listing: ${t.slice(0, 200)}`);
      continue;
    }
    // the last line a real server's row cut after its indent's dash ("  -" of "  -> 10.244...."):
    // nothing else ipvsadm prints in a listing starts so, its virtual server's real servers not known
    if (inListing && no === last && current && t === '-') {
      unreadable(no, `a real server's row cut after its first character: ${t}`);
      continue;
    }
    // a virtual server's line cut before its address ends ("TCP  10.96.")
    if (inListing && no === last && /^(?:TCP|UDP|SCTP|FWM)\b/.test(t)) {
      cut = no;
      continue;
    }
    // `ipvsadm -ln` typed above the listing prints numbers only: a host name under it is no name
    if (NUMERIC_COMMAND.test(t)) numeric ??= no;
    if (isIptablesRuleLine(t)) iptablesLines.push(no);
    // a prompt, a command or prose between an elision and a listing: the elision is another's
    elidedAbove = undefined;
    skipped.push(no);
    // a name met again after a line not of the listing is another output's (a command typed
    // again, a label between samples): the same virtual server, not another of one host name
    listingAt = no;
    // the output before it ends, grep's windows with it; a grep's output is a listing of its own
    closeRegion(region, no, lines, services, current);
    region = regionAt(t, no);
    if (region.context !== undefined) [inListing, current] = [false, undefined];
  }
  closeRegion(region, lines.length + 1, lines, services, current);
  if (other && services.length === 0)
    throw new IpvsParseError(
      file,
      other.lines[0]!,
      "this is ipvsadm's connection (-c) or timeout listing, which holds no virtual server: run `ipvsadm -Ln` for the Services",
    );
  if (dpvs.match.length > 0 && services.length === 0)
    throw new IpvsParseError(file, dpvs.match[0]!, dpvsMessage(dpvs.match));
  const kubectl = kubectlLines(lines, skipped);
  const renamed = numeric !== undefined && names ? namedHosts(services) : [];
  if (renamed.length > 0) names = false;
  // no real server line at all, and no header: grep filtered them out, or one line was quoted
  // alone; either way they are unknown, not none
  if (!header && realServers === 0)
    for (const vs of services)
      vs.partial ??=
        services.length === 1
          ? "the paste shows this virtual server's line alone, without ipvsadm's header or any real server line: its real servers are unknown"
          : 'the paste shows no real server lines (filtered, as by grep): its real servers are unknown';
  return {
    kind: 'ipvs',
    view: view ?? 'list',
    names,
    services,
    skipped,
    duplicates,
    elided,
    ...(ownerElided.length > 0 ? { ownerElided } : {}),
    ...(ownerAbove.length > 0 ? { ownerAbove } : {}),
    ...(iptablesLines.length > 0 ? { iptablesLines } : {}),
    ...(kubectl.length > 0 ? { kubectlLines: kubectl } : {}),
    ...(typed.length > 0 ? { typed } : {}),
    ...(unknownOptions.length > 0 ? { unknownOptions } : {}),
    ...(cut ? { cut } : {}),
    ...(other ? { other } : {}),
    ...(renamed.length > 0 ? { renamed: { line: numeric!, hosts: renamed } } : {}),
    ...(noAddress.length > 0 ? { noAddress } : {}),
    ...(sharedNames.size > 0 ? { sharedNames: [...sharedNames].sort((a, b) => a - b) } : {}),
    ...(cutNames.length > 0 && names ? { cutNames } : {}),
    ...(quote ? { quote } : {}),
    ...(dpvs.match.length > 0 ? { dpvs } : {}),
  };
}

/** The header of `ipvsadm -Lnc` (connection entries) or the line of `ipvsadm -l --timeout`. */
const OTHER_LISTING =
  /^(?:IPVS connection entries|pro +expire +state +source\b.*|(Timeout \(tcp tcpfin udp\):.*))$/;

/** A connection of `ipvsadm -Lnc`: protocol, expiry (mm:ss), state, source, virtual, destination. */
const CONNECTION_ROW = /^(?:TCP|UDP|SCTP|IP)\s+\d+:\d\d\s+\S+\s+\S+\s+\S+\s+\S+$/;

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

/** ipvsadm -L's real-server columns when no header says otherwise. */
const LIST_COLUMNS = ['Forward', 'Weight', 'ActiveConn', 'InActConn'];

/** A real server's words read by the columns its view prints (counter views have none we use). */
function realServer(
  address: string,
  words: string[],
  view: IpvsView | undefined,
  columns: string[],
  line: number,
): IpvsRealServer {
  const forwards = columns[0] !== 'Weight';
  if (
    view === 'stats' ||
    view === 'rate' ||
    view === 'counters' ||
    (forwards && !/^[A-Za-z]/.test(words[0] ?? ''))
  )
    return { address, line };
  const at = (name: string) => {
    const k = columns.indexOf(name);
    return k >= 0 && words[k] !== undefined && /^\d+$/.test(words[k]!)
      ? Number(words[k])
      : undefined;
  };
  const weight = at('Weight');
  const active = at('ActiveConn');
  const inactive = at('InActConn');
  return {
    address,
    ...(forwards ? { forward: words[0]! } : {}),
    ...(weight !== undefined ? { weight } : {}),
    ...(active !== undefined && inactive !== undefined
      ? { activeConn: active, inActConn: inactive }
      : {}),
    line,
  };
}
