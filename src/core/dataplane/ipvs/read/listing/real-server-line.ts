// A real server's line as ipvsadm's print_service_entry prints it under its virtual server:
// "  -> 10.244.0.2:53  Masq 1 0 0", its words after the address read by the columns its view's
// header titles (-L's Forward Weight ActiveConn InActConn, --persistent-conn's without Forward,
// none used of --stats and --rate).
import { IpvsParseError, type IpvsRealServer, type IpvsView } from '../listing.js';
import { realNameCut } from '../printing.js';
import { isName, nameHost } from '../addresses.js';
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
import { noun } from './end.js';

/** The forwarding methods ipvsadm's fwd_name prints (DPVS's ipvsadm: FullNat, SNAT). */
const FORWARDS = new Set(['Masq', 'Local', 'Tunnel', 'Route', 'FullNat', 'SNAT', 'Bypass']);

/** Reads a real server's line ("-> ADDRESS WORDS"); false for any other line. */
export function readRealServerLine(r: ListingRead, t: string, no: number): boolean {
  const m = /^->\s+(\S+)(?:\s+(.*))?$/.exec(t);
  if (!m) return false;
  bareStart(r);
  const address = m[1]!;
  const words = (m[2] ?? '').split(/\s+/).filter(Boolean);
  if (ownerUnread(r, address, m[2], no)) return true;
  const current = r.current;
  if (!current)
    throw new IpvsParseError(
      r.file,
      no,
      `a real server before any virtual server: ${t.slice(0, 200)}`,
    );
  // `ipvsadm -l` cuts a long host name at its column, port and all: a name, port unknown
  const bareName = r.names && nameHost(address.replace(/:$/, ''));
  if (!bareName && !/^(?:\[[^\]]+\]|[^\s:]+):[\w-]+$/.test(address)) {
    unreadable(r, no, `not a real server's address:port: ${t.slice(0, 200)}`);
    return true;
  }
  const again = current.realServers.find((s) => s.address === address);
  // the virtual server a later listing prints again (a sample, or the same lines pasted twice)
  const relisting = r.relistings.get(r.listingAt);
  const relisted = relisting?.services.has(current) === true;
  if (again) {
    const listed = realServer(address, words, r.view, r.columns, no);
    // -L's row of a real server a counters view (--stats, --rate) printed first: its forwarding
    // and weight, which that view leaves out; a later sample's row of it: its weight now
    if (listed.weight !== undefined && (again.weight === undefined || relisted)) {
      again.weight = listed.weight;
      if (listed.forward !== undefined) again.forward = listed.forward;
      if (listed.activeConn !== undefined) {
        again.activeConn = listed.activeConn;
        again.inActConn = listed.inActConn;
      }
    }
    const differs = noteRow(r, again, t);
    if (relisted && inView(r, again) && relistingOf(r, again.line, again)) {
      relisting!.lines.push(no);
      relisting!.realServers.add(again);
      relisting!.differs ||= differs;
    } else if (inView(r, again)) r.duplicates.push(no);
    else if (relisted) relisting!.realServers.add(again);
    noteView(r, again);
    return true;
  }
  r.names ||= isName(address);
  // ipvsadm prints columns after every real server's address: where rows above show them, the
  // last line with none may be cut inside the address itself ("10.244.0.6:d" of ":domain", ":80"
  // of ":8080")
  if (no === r.last && words.length === 0 && r.columns.length > 0 && r.columnsShown) {
    unreadable(r, no, `not a real server's row: ${t.slice(0, 200)}`);
    return true;
  }
  const rs = realServer(address, words, r.view, r.columns, no);
  if (words.length > 0) r.columnsShown = true;
  // the paste left out the columns -L printed after the address: its weight is not known
  else if ((r.view ?? 'list') === 'list' && r.columns.length > 0) rs.columnsMissing = true;
  if (r.names && realNameCut(rs.address)) {
    rs.nameCut = true;
    r.cutNames.push(no);
  }
  noteView(r, rs);
  noteRow(r, rs, t);
  noteTarget(r, rs);
  // a real server a later sample lists that the earlier did not: the sample differs
  if (relisted) {
    relisting!.realServers.add(rs);
    relisting!.differs = true;
  }
  current.realServers.push(rs);
  if (no === r.last && words.length > 0 && r.columns[words.length - 1])
    r.lastColumn = r.columns[words.length - 1];
  r.realServers++;
  if (no === r.last && (r.view ?? 'list') === 'list' && rowShort(rs, words, r.columns)) {
    r.cut = no;
    const weightAt = r.columns.indexOf('Weight');
    r.cutRow = {
      last: r.columns[words.length - 1] ?? 'address',
      weightRead: weightAt >= 0 && words.length - 1 > weightAt,
    };
    current.partial = `the ${noun(r)} is cut at line ${no} inside its real servers`;
  }
  return true;
}

/** A real server line whose virtual server is not read: its address gone from the page, or its
 * owner left out by an elision or above the paste's start. */
function ownerUnread(
  r: ListingRead,
  address: string,
  after: string | undefined,
  no: number,
): boolean {
  // "-> Masq 1 0 0": its forwarding where its address should be, or a real server of such a
  // virtual server line
  if (r.addressless || (FORWARDS.has(address) && /^\d/.test(after ?? ''))) {
    r.noAddress.push(no);
    // a real server not read under a virtual server read: the shares of the others unknown
    if (r.current && !r.addressless)
      r.current.partial ??= `its real server at line ${no} is printed without its address, not read`;
    return true;
  }
  if (!r.current && r.afterElision) {
    r.ownerElided.push(no);
    return true;
  }
  // the paste starts inside a listing, among the real servers of a virtual server above it
  if (!r.current && !r.inListing) {
    r.ownerAbove.push(no);
    return true;
  }
  return false;
}

/** ipvsadm's print_service_entry prints every column of its header on each real server's line:
 * the last line with fewer stops at a cut (a weight with no column after it may itself be cut:
 * "1" of "10"). */
const rowShort = (rs: IpvsRealServer, words: string[], columns: string[]): boolean =>
  words.length < columns.length ||
  (rs.forward !== undefined &&
    (rs.weight === undefined || (columns.includes('InActConn') && rs.inActConn === undefined)));

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
