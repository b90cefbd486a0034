// The lines by which ipvsadm says which listing it prints: its version line, the header of each
// view (-L, --stats, --rate, --persistent-conn) and the real servers' column titles under it,
// the other listings pasted beside one (`-Lnc`'s connections, `--timeout`), and DPVS's MATCH
// virtual servers, none of them a Service.
import { headerCut } from '../printing.js';
import type { ListingRead } from './state.js';
import { bareStart } from './elisions.js';

/** The header of `ipvsadm -Lnc` (connection entries) or the line of `ipvsadm -l --timeout`. */
const OTHER_LISTING =
  /^(?:IPVS connection entries|pro +expire +state +source\b.*|(Timeout \(tcp tcpfin udp\):.*))$/;

/** A connection of `ipvsadm -Lnc`: protocol, expiry (mm:ss), state, source, virtual, destination. */
const CONNECTION_ROW = /^(?:TCP|UDP|SCTP|IP)\s+\d+:\d\d\s+\S+\s+\S+\s+\S+\s+\S+$/;

/** A connection row without its header (`ipvsadm -lnc | grep ADDR`): its state in capitals and
 * three address:port columns, where a virtual server's line has a scheduler in lower case. */
const BARE_CONNECTION_ROW =
  /^(?:TCP|UDP|SCTP|IP)\s+\d+:\d\d\s+[A-Z][A-Z0-9_]*(?:\s+(?:\[[\da-fA-F:.]+\]|[\d.]+):\d+){3}$/;

/** DPVS's ipvsadm's match service (print_service_entry): "MATCH tcp,from=172.16.0.0-172.16.255.254:0-0,oif=dpdk1 rr"
 * as -L prints it, "-A -H proto=tcp,src-range=...,oif=dpdk1 -s rr" / "-a -H ... -r ADDR -J" as
 * -S saves it: its protocol and ranges, then the scheduler or counters. */
const DPVS_MATCH =
  /^(?:MATCH (?:tcp|udp|sctp|icmp|icmpv6)(?:,\S*)?|-[aA]\s+-H\s+proto=\S+)(?:\s|$)/;

/** What a paste of DPVS's ipvsadm is: none of its MATCH virtual servers is a Service. */
export const dpvsMessage = (match: number[]) =>
  `this is DPVS's ipvsadm (iQIYI's DPDK load balancer, not the kernel's IPVS, and not kube-proxy's): its MATCH virtual server${match.length === 1 ? '' : 's'} (line${match.length === 1 ? '' : 's'} ${match.join(', ')}) select${match.length === 1 ? 's' : ''} packets by protocol, address ranges and interfaces for DPVS's SNAT, not a Service's address and port: no Service is in it`;

/** Reads a line of ipvsadm's headers, of another listing or of DPVS's MATCH; false for any other. */
export const readViewLine = (r: ListingRead, t: string, no: number): boolean =>
  readVersion(r, t, no) ||
  readOtherListing(r, t, no) ||
  readHeader(r, t, no) ||
  readColumnTitles(r, t, no) ||
  readDpvsMatch(r, t, no);

/** "IP Virtual Server version 1.2.1 (size=4096)": a whole listing starts. */
function readVersion(r: ListingRead, t: string, no: number): boolean {
  if (!/^IP Virtual Server version /.test(t)) return false;
  r.inListing = r.header = true;
  r.listingAt = no;
  // the last line stopped before its ")"
  if (no === r.last && !t.endsWith(')')) r.cut = no;
  return true;
}

/** `ipvsadm -Lnc` lists connections, `--timeout` the timeouts: no virtual server in either, and
 * a connection's row starts as a virtual server's does ("UDP 04:24  UDP ..."). */
function readOtherListing(r: ListingRead, t: string, no: number): boolean {
  const otherHead = OTHER_LISTING.exec(t);
  if (!otherHead && !(r.inOther && CONNECTION_ROW.test(t)) && !BARE_CONNECTION_ROW.test(t)) {
    r.inOther = false;
    return false;
  }
  // each listing of its own kind, in order: timeouts, then the connections typed after them
  const what = otherHead?.[1] ? 'timeouts' : 'connections';
  const others = (r.other ??= []);
  if (others.at(-1)?.what !== what) others.push({ what, lines: [] });
  others.at(-1)!.lines.push(no);
  r.inOther = !otherHead?.[1];
  return true;
}

/** "Prot LocalAddress:Port Scheduler Flags": the titles say which view this is, ipvsadm printing
 * one per option. */
function readHeader(r: ListingRead, t: string, no: number): boolean {
  const m = /^Prot LocalAddress:Port\s+(.*)$/.exec(t);
  if (!m) return false;
  if (no === r.last && headerCut(m[1]!)) r.cut = no;
  r.listingAt = no;
  r.view = /^Conns\b/.test(m[1]!) ? 'stats' : /^CPS\b/.test(m[1]!) ? 'rate' : 'list';
  if (r.view === 'list') r.listed = true;
  // --persistent-conn: the real servers' columns on this line, and no Forward column
  if (/^Weight\b/.test(m[1]!)) r.columns = m[1]!.split(/\s+/);
  r.inListing = r.header = true;
  return true;
}

/** The real servers' titles, however a page or a hand re-typing spaced them ("->  RemoteAddress"). */
function readColumnTitles(r: ListingRead, t: string, no: number): boolean {
  const m = /^->\s+RemoteAddress:Port\s*(.*)$/.exec(t);
  if (!m) return false;
  if (no === r.last && headerCut(m[1]!)) r.cut = no;
  if (m[1]) r.columns = m[1].split(/\s+/);
  else if (r.view === 'stats' || r.view === 'rate') r.columns = [];
  r.inListing = true;
  return true;
}

/** DPVS's MATCH virtual server: no address and port, so no Service; nor its real servers. */
function readDpvsMatch(r: ListingRead, t: string, no: number): boolean {
  if (DPVS_MATCH.test(t)) {
    bareStart(r);
    if (t.startsWith('-a')) r.dpvs.realServers.push(no);
    else r.dpvs.match.push(no);
    r.current = undefined;
    r.inListing = r.header = r.inMatch = true;
    return true;
  }
  if (r.inMatch && /^->\s/.test(t)) {
    r.dpvs.realServers.push(no);
    return true;
  }
  r.inMatch = false;
  return false;
}
