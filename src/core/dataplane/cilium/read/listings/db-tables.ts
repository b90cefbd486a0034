// The load-balancer tables of Cilium 1.17+ (`db/show frontends`, `db/show backends`): each cell
// read where its column's title starts, the frontends with their backends, and each backend's state.
import {
  backendState,
  formatAddress,
  frontendType,
  parseAddress,
  type BackendState,
  type CiliumBackend,
  type CiliumCut,
  type CiliumFrontend,
  type CiliumTable,
} from '../listing.js';
import { HEADERS } from '../which-listing.js';
import { backendCell, endsListing, fail, followedByRows, headerAt, leftOut } from '../row-walk.js';
import { ELISION } from '../../../paste/elisions.js';
import { excerpt } from '../../../../sanitize.js';

/** The columns of a load-balancer table, from its header: each cell starts where its title does. */
function columns(header: string): { name: string; start: number }[] {
  return [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0].toLowerCase(), start: m.index }));
}

function cells(line: string, cols: { name: string; start: number }[]): Map<string, string> {
  const out = new Map<string, string>();
  // a row out of line with its header (hand-made, re-indented) splits on runs of spaces
  const aligned = cols.every(
    (c) => c.start === 0 || line[c.start - 1] === ' ' || line[c.start - 1] === undefined,
  );
  const parts = aligned
    ? cols.map((c, i) => line.slice(c.start, cols[i + 1]?.start ?? line.length))
    : line.trim().split(/\s{2,}|\t+/);
  cols.forEach((c, i) => out.set(c.name, (parts[i] ?? '').trim()));
  return out;
}

/** The columns Cilium fills in every row of its table (a frontend's Status is its reconcile
 * state, Pending, Done or Error; a backend's Instances name the Services it serves): a row with
 * one empty, where its header has the column, is cut short. */
const FILLED = {
  frontends: ['address', 'type', 'status'],
  backends: ['address', 'instances', 'state'],
};

/** A row cut short: the first always-filled column empty in it, and the columns whose cells are
 * whole (a later cell holds text, or padding follows the cell's text); undefined for a whole row. */
function cutRow(
  row: Map<string, string>,
  raw: string,
  cols: { name: string }[],
  filled: string[],
): { empty: string; whole: Set<string> } | undefined {
  const empty = filled.find((c) => row.has(c) && row.get(c) === '');
  if (empty === undefined) return undefined;
  const last = cols.findLastIndex((c) => row.get(c.name) !== '');
  // the last cell with text is whole only where the line goes on past it in spaces
  const padded = /\s$/.test(raw);
  const whole = cols.filter((_, i) => i < last || (i === last && padded)).map((c) => c.name);
  return { empty, whole: new Set(whole) };
}

/** A cut row as the listing's cut says it: what of it is read. */
const rowCutAt = (line: number, header: string, empty: string, read: string): CiliumCut => ({
  line,
  reason: `a row cut short (its ${[...header.matchAll(/\S+/g)].find((m) => m[0].toLowerCase() === empty)?.[0]} column is empty, and Cilium fills it in every row): ${read}`,
});

/** An address anywhere on a line: a row of a table holds one in its Address column. */
const HOLDS_ADDRESS = /\d+\.\d+\.\d+\.\d+|\[[\da-f:.]+\]/i;

/** A line among the rows that holds no address ("that is all I see", a note): prose, which ends
 * the table; where rows of it follow, those are said not read (`stopped`). */
function proseRow(lines: string[], k: number, t: string): { stopped?: CiliumCut } | undefined {
  if (HOLDS_ADDRESS.test(t)) return undefined;
  for (const l of lines.slice(k + 1)) {
    const below = l.trim();
    if (endsListing(below) || HEADERS.some(([re]) => re.test(below))) break;
    if (HOLDS_ADDRESS.test(below))
      return {
        stopped: {
          line: k + 1,
          reason: `lines from here not read ("${excerpt(t)}" is no row of the listing, and rows follow it)`,
        },
      };
  }
  return {};
}

/** `db/show frontends` (Cilium 1.17+): Address, Type, ServiceName, PortName, Status, Backends,
 * in the order the release prints them. */
export function dbFrontends(lines: string[], source: string): CiliumTable {
  const { index, column } = headerAt(lines, 'db-frontends');
  const cols = columns(lines[index]!.slice(column));
  const frontends: CiliumFrontend[] = [];
  let cut: CiliumCut | undefined;
  let unreadFrom: number | undefined;
  for (let k = index + 1; k < lines.length; k++) {
    const raw = lines[k]!.slice(column);
    const t = raw.trim();
    if (t === '') continue;
    if (endsListing(t) || HEADERS.some(([re]) => re.test(t))) {
      unreadFrom = followedByRows(lines, k);
      break;
    }
    const at = k + 1;
    if (ELISION.test(t)) {
      cut ??= leftOut(at, t);
      continue;
    }
    const prose = proseRow(lines, k, t);
    if (prose) {
      if (prose.stopped) cut ??= prose.stopped;
      break;
    }
    const row = cells(raw, cols);
    const short = cutRow(row, raw, cols, FILLED.frontends);
    if (short && !(short.whole.has('address') && short.whole.has('type'))) {
      cut ??= rowCutAt(at, lines[index]!, short.empty, 'not read');
      continue;
    }
    if (short) {
      // the frontend is in the agent's table; its backends and status are past the cut
      cut ??= rowCutAt(
        at,
        lines[index]!,
        short.empty,
        'its frontend is read, its backends and status are not',
      );
      const addr =
        parseAddress(row.get('address')!) ??
        fail(source, at, `not a frontend address: "${row.get('address')}"`);
      const whole = (c: string) => (short.whole.has(c) ? row.get(c) : undefined);
      frontends.push({
        ...addr,
        type: frontendType(row.get('type')),
        ...(whole('servicename') ? { service: whole('servicename') } : {}),
        ...(whole('portname') ? { portName: whole('portname') } : {}),
        flags: [],
        backends: [],
        backendsUnread: true,
        line: at,
      });
      continue;
    }
    const addr =
      parseAddress(row.get('address') ?? '') ??
      fail(source, at, `not a frontend address: "${row.get('address')}"`);
    const cell = row.get('backends') ?? '';
    // the table shows the first few and "+ N more ...": the rest is not in the listing
    const more = /\+ (\d+) more/.exec(cell);
    const backends = cell
      .replace(/(?<!\s)\s*\+ \d+ more.*$/, '')
      .split(/,\s*/)
      .filter((b) => b !== '')
      .map((b): CiliumBackend => {
        const [address, ...rest] = b.split(/\s+/);
        return backendCell(address!, rest.join(' '), at, source);
      });
    // its reconcile status, with the Error column's text where it failed ("Error: map full")
    const error = row.get('error');
    const status =
      row.get('status') && error ? `${row.get('status')}: ${error}` : row.get('status');
    const redirectTo = row.get('redirectto');
    frontends.push({
      ...addr,
      type: frontendType(row.get('type')),
      ...(row.get('servicename') ? { service: row.get('servicename') } : {}),
      ...(row.get('portname') ? { portName: row.get('portname') } : {}),
      ...(status ? { status } : {}),
      ...(redirectTo ? { redirectTo } : {}),
      flags: [],
      backends,
      ...(more ? { backendsNotShown: Number(more[1]) } : {}),
      ...(cols.some((c) => c.name === 'backends') ? {} : { backendsUnread: true as const }),
      line: at,
    });
  }
  return {
    form: 'db-frontends',
    source,
    frontends,
    ...(cut ? { cut: [cut] } : {}),
    ...(unreadFrom ? { unreadFrom } : {}),
  };
}

/** The key of a backend's state in one Service's frontends (serviceBackendKey), beside its
 * address alone: a backend of two Services may be in a state of its own in each. */
export const serviceBackendKey = (service: string, address: string) => `${service} ${address}`;

/** `db/show backends`: each backend's state, from its Instances ("ns/name [terminating] (port)")
 * or, in later releases, its own State column; where rows are left out, the first elision. The
 * states are kept by address and by Service and address (serviceBackendKey). */
export function dbBackends(
  text: string[],
  source: string,
): {
  backendStates: Map<string, BackendState>;
  backendStateLines: Map<string, number>;
  rowsRead: number[];
  cut?: CiliumCut[];
} {
  const { index, column } = headerAt(text, 'db-backends');
  const cols = columns(text[index]!.slice(column));
  const states = new Map<string, BackendState>();
  // the line each state was read at, by the same keys: the evidence of a state
  const lines = new Map<string, number>();
  const set = (key: string, state: BackendState) => {
    states.set(key, state);
    lines.set(key, k + 1);
  };
  let k = index + 1;
  const rowsRead: number[] = [];
  let cut: CiliumCut | undefined;
  for (; k < text.length; k++) {
    const raw = text[k]!.slice(column);
    const t = raw.trim();
    if (t === '') continue;
    if (endsListing(t) || HEADERS.some(([re]) => re.test(t))) break;
    if (ELISION.test(t)) {
      cut ??= leftOut(k + 1, t);
      continue;
    }
    const prose = proseRow(text, k, t);
    if (prose) {
      if (prose.stopped) cut ??= prose.stopped;
      break;
    }
    const row = cells(raw, cols);
    const short = cutRow(row, raw, cols, FILLED.backends);
    if (short) {
      // its state may be past the cut: the backend is not read
      cut ??= rowCutAt(k + 1, text[index]!, short.empty, 'not read');
      continue;
    }
    const a =
      parseAddress(row.get('address') ?? '') ??
      fail(source, k + 1, `not a backend address: "${row.get('address')}"`);
    const address = formatAddress(a);
    rowsRead.push(k + 1);
    const instances = row.get('instances') ?? '';
    const marked = /\[([^\]]+)\]/.exec(instances)?.[1];
    const state = backendState(row.get('state')) ?? backendState(marked) ?? 'active';
    // the backend's state by address alone, for a frontend whose Service is not named
    set(address, state);
    // and each Service's own: 1.18 to 1.19.6 name each in Instances ("ns/a [terminating] (http),
    // ns/b (http)"), each with its own state; 1.19.7 on print a row per Service and backend
    const service = row.get('service');
    if (service) set(serviceBackendKey(service, address), state);
    for (const instance of instances.split(/,\s+/)) {
      const m = /^(\S+\/\S+)(?:\s+\[([^\]]+)\])?/.exec(instance.trim());
      if (m && !row.has('state'))
        set(serviceBackendKey(m[1]!, address), backendState(m[2]) ?? 'active');
    }
  }
  return {
    backendStates: states,
    backendStateLines: lines,
    rowsRead,
    ...(cut ? { cut: [cut] } : {}),
  };
}
