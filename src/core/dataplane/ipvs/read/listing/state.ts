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
  if (r.current) r.current.partial = `the paste is cut at line ${no} inside its real servers`;
}

/** Notes that `server` was read in the current view. */
export function noteView(r: ListingRead, server: object): void {
  const views = r.viewsOf.get(server) ?? new Set<IpvsView>();
  views.add(r.view ?? 'list');
  r.viewsOf.set(server, views);
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
