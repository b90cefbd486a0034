// A virtual server's line as ipvsadm's print_service_entry prints it: "TCP  10.96.0.10:53 rr
// persistent 10800" under -L, "UDP  10.96.0.10:53   0   0 ..." under --stats and --rate, "FWM  1481
// IPv6 rr" of an IPv6 mark; one cut before its port ends the paste, the kernel's
// /proc/net/ip_vs is refused.
import { IpvsParseError, type IpvsService } from '../listing.js';
import { virtualNameCut } from '../printing.js';
import { hostName, isName } from '../addresses.js';
import { SCHEDULERS } from '../../schedulers.js';
import {
  inView,
  noteRow,
  noteTarget,
  noteView,
  relistingOf,
  unreadable,
  type ListingRead,
} from './state.js';
import { bareStart } from './elisions.js';
import { schedulerCut } from './end.js';

/** "TCP  10.96.0.10:53 rr persistent 10800", "UDP  10.96.0.10:53   0   0 ..." (--stats/--rate),
 * "FWM  1481 IPv6 rr" (print_service_entry's "FWM  %d IPv6"): protocol, address, IPv6, the rest. */
export const SERVICE =
  /^(TCP|UDP|SCTP|FWM)\s+(\S+)(?:(?<=^FWM\s+\d+)\s+(IPv6)(?=\s|$))?(?:\s+(.*))?$/;

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
export const serviceKey = (protocol: string, address: string, ipv6: boolean | undefined) =>
  `${protocol} ${address}${ipv6 ? ' IPv6' : ''}`;

/** The protocols ipvsadm prints, as kdebug names them. */
const PROTOCOLS: Record<string, IpvsService['protocol']> = {
  TCP: 'tcp',
  UDP: 'udp',
  SCTP: 'sctp',
  FWM: 'fwmark',
};

/** Reads a virtual server's line (or one cut, or the kernel's); false for any other line. */
export function readVirtualServer(r: ListingRead, t: string, no: number): boolean {
  const m = SERVICE.exec(t);
  if (!m) return false;
  // an address cut before its port ("TCP  19", "TCP  10.96.0."): the paste ends there, or the
  // line does not read
  if (m[1] !== 'FWM' && /^[\d.]+$/.test(m[2]!)) {
    if (no === r.last) r.cut = no;
    else unreadable(r, no, `not a virtual server's address:port: ${t.slice(0, 200)}`);
    return true;
  }
  if (PROC_ADDRESS[m[1]!]?.test(m[2]!))
    throw new IpvsParseError(
      r.file,
      no,
      "this is /proc/net/ip_vs, the kernel's own listing: addresses and ports in hex and persistence in jiffies (seconds times the kernel's HZ, which it does not say): run `ipvsadm -Ln` for the virtual servers",
    );
  bareStart(r);
  const rest = (m[4] ?? '').split(/\s+/).filter(Boolean);
  const counters = rest.length > 0 && /^\d+[KMGT]?$/.test(rest[0]!);
  r.view ??= counters ? 'counters' : 'list';
  r.addressless = false;
  // "TCP rr": its scheduler where its address should be, the address gone from the page
  if (m[1] !== 'FWM' && SCHEDULERS.has(m[2]!) && !/\S/.test(m[4] ?? '')) {
    r.noAddress.push(no);
    r.addressless = true;
    r.current = undefined;
    r.inListing = true;
    return true;
  }
  // the last line cut inside a name, before its ":port" and scheduler ("TCP  ip-1")
  if (no === r.last && rest.length === 0 && !m[2]!.includes(':') && m[1] !== 'FWM') {
    r.cut = no;
    return true;
  }
  // the last row stopping inside its scheduler's name ("wl" of wlc): not read
  if (no === r.last && !counters && rest[0] !== undefined && schedulerCut(rest[0])) {
    r.cut = no;
    return true;
  }
  addService(r, m, counters ? undefined : rest[0], no, t);
  return true;
}

/** The virtual server of a line that reads, or the one it repeats. */
function addService(
  r: ListingRead,
  m: RegExpExecArray,
  scheduler: string | undefined,
  no: number,
  row: string,
): void {
  const protocol = PROTOCOLS[m[1]!]!;
  r.names ||= isName(m[2]!);
  const nameCut = r.names && m[1] !== 'FWM' && virtualNameCut(m[1]!, m[2]!);
  if (nameCut) r.cutNames.push(no);
  const key = serviceKey(protocol, m[2]!, m[3] !== undefined);
  const seen = r.byAddress.get(key);
  r.inListing = true;
  // ipvsadm prints each virtual server once: in its names view a name met again in the same
  // listing is another virtual server (an address of the same host name, or a cut name)
  const another = seen !== undefined && (nameCut || hostName(m[2]!)) && seen.line > r.listingAt;
  if (seen && !another) {
    // the same virtual server again: its real servers are read once; a later listing's row of it
    // is a later sample where it differs (ipvsadm run again), else the same lines pasted twice
    const relisting = inView(r, seen) ? relistingOf(r, seen.line, seen) : undefined;
    const differs = noteRow(r, seen, row);
    if (relisting) {
      relisting.lines.push(no);
      relisting.services.add(seen);
      relisting.differs ||= differs;
    } else if (inView(r, seen)) r.duplicates.push(no);
    noteView(r, seen);
    // -L's line of it after a counters view's (--stats, --rate): the scheduler that view leaves out
    if (seen.scheduler === undefined && scheduler !== undefined && SCHEDULERS.has(scheduler))
      seen.scheduler = scheduler;
    r.current = seen;
    return;
  }
  if (seen) {
    seen.sharedName = true;
    r.sharedNames.add(seen.line).add(no);
  }
  const persistent = /\bpersistent (\d+)/.exec(m[4] ?? '');
  r.current = {
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
  noteView(r, r.current);
  noteRow(r, r.current, row);
  noteTarget(r, r.current);
  r.services.push(r.current);
  r.byAddress.set(key, r.current);
}
