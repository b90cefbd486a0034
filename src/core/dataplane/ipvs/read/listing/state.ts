// What reading an ipvsadm listing line by line carries from one line to the next: the virtual
// servers read so far, the view and columns its headers set, the virtual server whose real servers
// follow, and the lines said of (skipped, elided, cut). Each line's reader (the views' headers,
// a virtual server's line, a real server's, a saved rule) takes it and moves it on.
import { IpvsParseError, type IpvsService, type IpvsTable, type IpvsView } from '../listing.js';
import type { GrepRegion } from './grep-windows.js';
import type { ListingEnd } from './end.js';

/** ipvsadm -L's real-server columns when no header says otherwise. */
export const LIST_COLUMNS = ['Forward', 'Weight', 'ActiveConn', 'InActConn'];

export interface ListingRead {
  file: string;
  /** The paste's lines, without a quote's marks. */
  lines: string[];
  /** The last line that is not blank: a line that stops there may be cut. */
  last: number;
  /** Whether a newline ends that line, and whose output the listing is. */
  end: ListingEnd;
  services: IpvsService[];
  byAddress: Map<string, IpvsService>;
  skipped: number[];
  duplicates: number[];
  elided: number[];
  ownerElided: number[];
  ownerAbove: number[];
  iptablesLines: number[];
  typed: number[];
  unknownOptions: NonNullable<IpvsTable['unknownOptions']>;
  noSuchDestination: NonNullable<IpvsTable['noSuchDestination']>;
  sharedNames: Set<number>;
  cutNames: number[];
  noAddress: number[];
  dpvs: { match: number[]; realServers: number[] };
  afterElision: boolean;
  /** An elision above the listing: its own if no header follows. */
  elidedAbove?: number;
  /** An elision no ipvsadm-save line has followed yet. */
  savedAfter?: number;
  view?: IpvsView;
  /** An -L header was read: a listing that prints schedulers and weights, whatever views follow. */
  listed?: true;
  /** The views each virtual and real server was read in: a second view of one is no repeat. */
  viewsOf: WeakMap<object, Set<IpvsView>>;
  /** Each server's last row in each view, as printed: a later listing's row of it that differs
   * is a later sample (ipvsadm run again), not the same lines pasted twice. */
  rowsOf: WeakMap<object, Map<IpvsView, string>>;
  /** The rows of servers already read that a later listing (its own header, or after a prompt)
   * prints again in the same view, by the line that listing starts at. */
  relistings: Map<number, Relisting>;
  /** The host or pod the last line typed or labelled names (`ssh node-a ipvsadm -Ln`, a prompt
   * `root@node-a:~#`, a loop's `>>> 10.0.0.1`), and the one each server was first read under. */
  target?: string;
  targetOf: WeakMap<object, string | undefined>;
  /** A loop typed above the listings (`for ... do`, `xargs`): each listing one run's. */
  loopAt?: number;
  /** What the words after a real server's address are. */
  columns: string[];
  /** A real server's row showed words after its address: one at the paste's end without them
   * stopped there, maybe inside its address. */
  columnsShown: boolean;
  names: boolean;
  /** The virtual server whose real servers the next lines are. */
  current?: IpvsService;
  inListing: boolean;
  cut?: number;
  /** The column of the last word of a real server's row on the paste's last line. */
  lastColumn?: string;
  /** The cut line is a real server's row that was read: the column its last word is in, and
   * whether its weight was read whole (a word after it). */
  cutRow?: { last: string; weightRead: boolean };
  /** ipvsadm's own header lines, or the save form: a whole listing. */
  header: boolean;
  realServers: number;
  /** `ipvsadm -Lnc` or `--timeout` pasted with the listing. */
  other?: IpvsTable['other'];
  inOther: boolean;
  /** The line of a typed `ipvsadm -n`. */
  numeric?: number;
  /** The line of the last header: a listing ipvsadm printed starts there. */
  listingAt: number;
  /** The real servers that follow belong to a line without its address. */
  addressless: boolean;
  /** The output of the command last typed. */
  region: GrepRegion;
  /** The real servers that follow are a DPVS MATCH virtual server's. */
  inMatch: boolean;
}

/** A later listing's rows of servers an earlier one printed in the same view: ipvsadm run again
 * (a sample, where a row differs: counters grown, a real server gone; or where other lines come
 * between them) or the same lines pasted twice (back to back, none differing). */
export interface Relisting {
  lines: number[];
  differs: boolean;
  /** A line not of the listing (a prompt, a command, prose, a log's) comes between the earlier
   * listing and this one: ipvsadm run again, whether or not a row differs. */
  apart: boolean;
  /** The host or pod it is printed for, where it is not the earlier listing's (another node's
   * listing, not a later sample of the same). */
  otherTarget?: string;
  /** The virtual servers it lists again, and the real servers it lists of them. */
  services: Set<IpvsService>;
  realServers: Set<object>;
}

/** A read not started, of `lines` from `file`. */
export function startRead(
  file: string,
  lines: string[],
  last: number,
  end: ListingEnd,
): ListingRead {
  return {
    file,
    lines,
    last,
    end,
    services: [],
    byAddress: new Map(),
    viewsOf: new WeakMap(),
    rowsOf: new WeakMap(),
    relistings: new Map(),
    targetOf: new WeakMap(),
    skipped: [],
    duplicates: [],
    elided: [],
    ownerElided: [],
    ownerAbove: [],
    iptablesLines: [],
    typed: [],
    unknownOptions: [],
    noSuchDestination: [],
    sharedNames: new Set(),
    cutNames: [],
    noAddress: [],
    dpvs: { match: [], realServers: [] },
    afterElision: false,
    columns: LIST_COLUMNS,
    columnsShown: false,
    names: false,
    inListing: false,
    header: false,
    realServers: 0,
    inOther: false,
    listingAt: 0,
    addressless: false,
    region: { line: 0 },
    inMatch: false,
  };
}

/** ipvsadm's own syntax that does not read: the paste's last line cut mid-way, else an error. */
export function unreadable(r: ListingRead, no: number, why: string): void {
  if (no !== r.last) throw new IpvsParseError(r.file, no, why);
  r.cut = no;
  if (r.current)
    r.current.partial = `the ${r.end.recorded ? 'listing' : 'paste'} is cut at line ${no} inside its real servers`;
}

/** Notes that `server` was read in the current view. */
export function noteView(r: ListingRead, server: object): void {
  const views = r.viewsOf.get(server) ?? new Set<IpvsView>();
  views.add(r.view ?? 'list');
  r.viewsOf.set(server, views);
}

/** Notes `server`'s row as the current view printed it; true where the row differs from the last
 * one of it in that view. */
export function noteRow(r: ListingRead, server: object, row: string): boolean {
  const rows = r.rowsOf.get(server) ?? new Map<IpvsView, string>();
  const view = r.view ?? 'list';
  const differs = rows.has(view) && rows.get(view) !== row;
  rows.set(view, row);
  r.rowsOf.set(server, rows);
  return differs;
}

/** The later listing being read, where one started after `server` was first read: its rows of
 * servers read before are samples or repeats (see Relisting), not lines of one listing printed
 * twice. */
export function relistingOf(r: ListingRead, line: number, server: object): Relisting | undefined {
  if (line >= r.listingAt || r.listingAt === 0) return undefined;
  let group = r.relistings.get(r.listingAt);
  if (!group) {
    const apart = r.skipped.some((l) => l > line);
    group = { lines: [], differs: false, apart, services: new Set(), realServers: new Set() };
    r.relistings.set(r.listingAt, group);
  }
  const earlier = r.targetOf.get(server);
  if (r.target !== undefined && earlier !== undefined && r.target !== earlier)
    group.otherTarget = r.target;
  return group;
}

/** Notes the host or pod `server` is first read under. */
export const noteTarget = (r: ListingRead, server: object) => r.targetOf.set(server, r.target);

/** The later listings read: those with a row that differs are samples, the later kept (a real
 * server a sample no longer lists is gone); the others repeat earlier lines (pasted twice). */
export function settleRelistings(r: ListingRead): { lines: number[]; by?: string } {
  const samples: number[] = [];
  const targets = new Set<string>();
  for (const group of r.relistings.values()) {
    if (!group.differs && !group.apart) {
      r.duplicates.push(...group.lines);
      continue;
    }
    samples.push(...group.lines);
    if (group.otherTarget !== undefined) targets.add(group.otherTarget);
    for (const vs of group.services)
      vs.realServers = vs.realServers.filter((rs) => group.realServers.has(rs));
  }
  r.duplicates.sort((a, b) => a - b);
  samples.sort((a, b) => a - b);
  // who printed the later listings: other hosts or pods, or the runs of a loop
  const by =
    targets.size > 0
      ? `${[...targets].join(', ')} (not the host or pod of the first listing)`
      : r.loopAt !== undefined
        ? `the loop typed at line ${r.loopAt} (each run's host or pod not said)`
        : undefined;
  return { lines: samples, ...(by ? { by } : {}) };
}

/** Whether a server met again was read in this view before (printed twice): -L after --stats of
 * the same server is a second view of it, not a repeat. */
export const inView = (r: ListingRead, server: object): boolean =>
  r.viewsOf.get(server)?.has(r.view ?? 'list') ?? false;

/** The counter view (--stats, --rate) that alone listed `vs`, where no -L listing of it was read. */
export function countersOnly(r: ListingRead, vs: IpvsService): IpvsView | undefined {
  const views = r.viewsOf.get(vs);
  return views && !views.has('list') ? [...views][0] : undefined;
}
