// `cilium-dbg bpf lb list`, its table and its -o json alike: a row per Service map entry, slot 0
// the Service itself and the other slots its backends.
import {
  CiliumParseError,
  backendState,
  frontendKey,
  frontendType,
  parseAddress,
  withoutL7Flag,
  type CiliumBackend,
  type CiliumCut,
  type CiliumFrontend,
  type CiliumTable,
} from '../listing.js';
import { isRecord, jsonValue } from '../json-value.js';
import { eachRow, fail, headerAt } from '../row-walk.js';

/** `bpf lb list -o json`: the table's map (the command prints the same map either way:
 * TablePrinter the key and its entries, PrintOutput the map), each Service key to its entries,
 * each entry read as the table's row is, at the line its string is on. */
export function bpfLbJson(text: string, source: string): CiliumTable {
  const json = jsonValue(
    text,
    (v) => isRecord(v) && Object.values(v).every((e) => Array.isArray(e)),
  );
  if ('error' in json)
    throw new CiliumParseError(
      source,
      json.line,
      `not the JSON of cilium-dbg bpf lb list -o json: ${json.error}`,
    );
  const rows = bpfRows(source);
  const lineOf = linesOnward(text);
  // each key and string, in the order JSON writes them, found from where the last one was
  let at = text.indexOf(
    '{',
    text
      .split('\n')
      .slice(0, json.line - 1)
      .join('\n').length,
  );
  for (const [key, entries] of Object.entries(json.value as Record<string, unknown[]>)) {
    const found = text.indexOf(JSON.stringify(key), at);
    at = found >= 0 ? found : at;
    for (const entry of entries) {
      const line = lineOf(at);
      if (typeof entry !== 'string')
        fail(source, line, `not an entry of bpf lb list -o json under "${key}"`);
      // an entry written otherwise than JSON.stringify would (Go escapes "<", ">", "&"): at the
      // line of the last one found
      const next = text.indexOf(JSON.stringify(entry), at + 1);
      at = next >= 0 ? next : at;
      const [first, rest] = firstWord(entry as string);
      const [service, slot] = key.split(/\s+/);
      if (!rows.row(service!, first, rest, lineOf(at), slot !== undefined))
        fail(
          source,
          lineOf(at),
          `not an entry of bpf lb list -o json: "${key}": "${entry as string}"`,
        );
    }
  }
  return { form: 'bpf-lb-list', source, frontends: [...rows.byKey.values()], ...rows.swappedOf() };
}

/** The line of each position of `text` asked, counting its newlines on from the last position
 * asked (from the start again only where one is before it): the entries of a big JSON listing
 * are asked in order, and counting from the start for each made reading it quadratic. */
function linesOnward(text: string): (at: number) => number {
  let from = 0;
  let line = 1;
  return (at) => {
    if (at < from) [from, line] = [0, 1];
    for (let i = text.indexOf('\n', from); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++;
    from = at;
    return line;
  };
}

/** An entry's first word, and the rest from the space after it. */
function firstWord(entry: string): [string, string] {
  const space = entry.search(/\s/);
  return space < 0 ? [entry, ''] : [entry.slice(0, space), entry.slice(space)];
}

/** A port as a little-endian host reads the two bytes of one stored in network byte order. */
const swapped = (port: number) => ((port & 0xff) << 8) | (port >> 8);

/** Whether the Service column is printed as the lbmap of Cilium's 2021 master printed it: its
 * serviceKey wrote "ADDR:PORT/PROTO" with the port as the BPF map stores it, in network byte order
 * (`bpf lb list` calls String on the key before ToHost), and its protocol even where it is ANY;
 * the release after converts the port and leaves ANY out, and 1.17+ print the slot after the key.
 * So "/ANY" without a slot after it is that printer's: its port is byte-swapped (80 as 20480).
 * `converted` where the form the key came in says otherwise (its slot printed after it; a form
 * that cut the slot off, made after that printer). */
const networkOrder = (service: string, converted: boolean) =>
  !converted && /:\d+\/ANY$/.test(service);

// a big listing's rows each test these: made once, not on each row
/** A backend entry's columns after its address: its rev-NAT ID and slot, nothing else. */
const IDS_ALONE = /^\s+\(\d+\)(\s+\(\d+\))?\s*$/;
/** An entry's rev-NAT ID and (from 1.6) its slot. */
const IDS = /^\s+\(\d+\)(\s+\(\d+\))?/;
/** The Service entry's flags ("[ClusterIP, non-routable]"), and what they hold. */
const FLAGS = /\[[^\]]*\]/;
const BRACKET = /\[([^\]]*)\]/;
/** A parenthesis or bracket the printer closes, left open: the entry is cut short. */
const LEFT_OPEN = /\([^)]*$|\[[^\]]*$/;
/** "SERVICE [(slot)] ENTRY REST". */
const ROW = /^(\S+)(\s+\(\d+\))?\s+(\S+)(.*)$/;

/** The Services of `bpf lb list` as its rows are read, table or JSON: `row` takes a row's
 * Service column (its address) and its entry, as its first word and the rest ("ADDR",
 * " (revnat) (slot) [flags]"; or "backend", " N not found"), and gives the frontend it is of,
 * undefined where the two are no such row. `converted`, asked of every caller: whether the key's
 * form proves its port converted to host order (its slot printed after it, or a form newer than
 * the 2021 printer); where not, an "ADDR:PORT/ANY" key's port is read byte-swapped back. */
export function bpfRows(source: string) {
  const byKey = new Map<string, CiliumFrontend>();
  const swaps: NonNullable<CiliumTable['portsSwapped']> = [];
  // newer releases print the Service address on every row: each is parsed once
  const byToken = new Map<string, CiliumFrontend>();
  const withServiceRow = new Set<CiliumFrontend>();
  // the row before's Service column and frontend: a Service's rows follow one another
  let last: { service: string; fe: CiliumFrontend } | undefined;
  const row = (
    service: string,
    first: string,
    rest: string,
    at: number,
    converted: boolean,
  ): CiliumFrontend | undefined => {
    let fe = last?.service === service ? last.fe : byToken.get(service);
    if (!fe) {
      const a = parseAddress(service);
      if (!a || (first !== 'backend' && parseAddress(first) === undefined)) return undefined;
      if (networkOrder(service, converted) && a.port !== swapped(a.port)) {
        swaps.push({ line: at, printed: a.port, port: swapped(a.port) });
        a.port = swapped(a.port);
      }
      const key = frontendKey(a);
      fe = byKey.get(key);
      if (!fe) {
        // field by field, not `...a`: that spread cost a fifth of a big listing's parse
        fe = { ip: a.ip, port: a.port, flags: [], backends: [], line: at };
        if (a.protocol) fe.protocol = a.protocol;
        if (a.internal) fe.internal = true;
        // kept only once its first row reads: a row cut short makes no frontend
        slot(fe, first, rest, at);
        byKey.set(key, fe);
        byToken.set(service, fe);
        last = { service, fe };
        return fe;
      }
      byToken.set(service, fe);
    }
    slot(fe, first, rest, at);
    if (last?.fe !== fe) last = { service, fe };
    return fe;
  };

  // the columns the listing's release prints: its rev-NAT ID always; from 1.6 the slot after it,
  // and the Service entry's flags
  const printed = { slot: false, flags: false };
  /** Throws where the entry lacks a column its printer writes (its release's, as its other
   * entries show them) or leaves one open: it is cut short, not a backend or flags to read. */
  function whole(entry: string, rest: string, service: boolean, at: number): void {
    // a backend's row as printed, its IDs alone: nothing else to look for (most rows of a listing)
    const plain = service ? null : IDS_ALONE.exec(rest);
    if (plain) {
      if (printed.slot && !plain[1]) fail(source, at, `an entry cut short: "${entry}${rest}"`);
      printed.slot ||= plain[1] !== undefined;
      return;
    }
    const ids = IDS.exec(rest);
    const flags = FLAGS.test(rest);
    if (
      !ids ||
      (printed.slot && !ids[1]) ||
      (service && printed.flags && !flags) ||
      LEFT_OPEN.test(rest)
    )
      fail(source, at, `an entry cut short: "${entry}${rest}"`);
    printed.slot ||= ids![1] !== undefined;
    printed.flags ||= service && flags;
  }

  /** One map slot: "ADDR (revnat) (slot) [flags]", or "backend N not found". */
  function slot(fe: CiliumFrontend, entry: string, rest: string, at: number): void {
    if (entry === 'backend') {
      fe.flags.push(`backend${rest.replace(/ not found.*$/, '')} not found`);
      return;
    }
    const a = parseAddress(entry) ?? fail(source, at, `not an address: "${entry}"`);
    const bracket = rest.includes('[') ? BRACKET.exec(rest)?.[1] : undefined;
    const service = a.port === 0 && (a.ip === '0.0.0.0' || a.ip === '::');
    whole(entry, rest, service, at);
    if (service) {
      withServiceRow.add(fe);
      // the Service entry: its flags name the frontend's type
      // 1.6 prints them "[FLAGS: NONE]", "[FLAGS: ExternalIPs]": its word for none is no flag
      const listed = (bracket?.replace(/^FLAGS:\s*/, '').split(/,\s*/) ?? []).filter(
        (f) => f !== 'NONE',
      );
      const proxy = /\(L7LB Proxy Port: (\d+)\)/.exec(rest);
      const flags = withoutL7Flag(fe, listed, proxy ? Number(proxy[1]) : undefined);
      fe.type ??= flags.map(frontendType).find((f) => f !== undefined);
      fe.flags.push(...flags.filter((f) => !frontendType(f) && !fe.flags.includes(f)));
      return;
    }
    const state = backendState(bracket);
    // its protocol in the literal: a field added after it costs each backend a second allocation
    const backend: CiliumBackend = a.protocol
      ? { ip: a.ip, port: a.port, line: at, protocol: a.protocol }
      : { ip: a.ip, port: a.port, line: at };
    if (state) backend.state = state;
    fe.backends.push(backend);
  }
  const swappedOf = () => (swaps.length > 0 ? { portsSwapped: swaps } : {});
  return { byKey, row, slot, withServiceRow, swappedOf };
}

/** `cilium-dbg bpf lb list`: a row per Service map entry. Slot 0 ("0.0.0.0:0 (revnat) (0)
 * [flags]") is the Service itself; the other slots name its backends. Older releases print the
 * Service address once, newer ones on every row with its slot. */
export function bpfLbList(lines: string[], source: string): CiliumTable {
  const { index } = headerAt(lines, 'bpf-lb-list');
  const rows = bpfRows(source);
  let current: CiliumFrontend | undefined;
  let headless: CiliumCut | undefined;
  let elided = false;
  const { cut, unreadFrom, stopped, endsInRow } = eachRow(lines, index, 'bpf-lb-list', (row) => {
    const { t, at } = row;
    if (row.elided) {
      // its backends may go on past the elision, on the lines left out
      if (current) current.backendsElided ??= at;
      elided = true;
      current = undefined;
      return;
    }
    // "SERVICE [(slot)] ENTRY REST": a row of a Service; else the next entry of the one above
    const m = ROW.exec(t);
    const fe = m ? rows.row(m[1]!, m[3]!, m[4]!, at, m[2] !== undefined) : undefined;
    if (fe) {
      current = fe;
      return;
    }
    const first = m ? parseAddress(m[1]!) : parseAddress(t);
    // a backend's row has its rev-NAT ID after its address: one without is cut short
    if (((first && /\(\d+\)/.test(t)) || /^backend \d+ not found/.test(t)) && current) {
      const [entry, ...rest] = t.split(/\s+/);
      return rows.slot(current, entry!, ` ${rest.join(' ')}`, at);
    }
    // a backend row of a Service whose own rows are not in the paste (a grep's context)
    if (first && !current && rows.byKey.size === 0) {
      headless ??= { line: at, reason: 'rows of a Service whose first row is not in the paste' };
      return;
    }
    if (first && !current && elided) return; // the rest of a Service the author left out
    if (rows.byKey.size > 0 && !/\d/.test(t)) return false;
    fail(source, at, `not a row of cilium bpf lb list: "${t.slice(0, 80)}"`);
  });
  // its backends may go on in the rows not read
  if (stopped && current) current.backendsElided ??= stopped.line;
  // a row cut short may be one more of the Service above: indented under it, or (where every
  // row names its Service) starting as its address does
  if (endsInRow && current) {
    const word = endsInRow.text.split(/\s/)[0]!;
    const key = frontendKey(current);
    if (endsInRow.indented || key.startsWith(word) || word.startsWith(key))
      current.backendsElided ??= endsInRow.cut.line;
  }
  const cuts = [cut ?? headless, stopped, endsInRow?.cut].filter((c) => c !== undefined);
  // every Service has its slot 0 row: where it is not in the paste, its other rows may not be all
  for (const fe of rows.byKey.values())
    if (!rows.withServiceRow.has(fe)) fe.serviceRowUnseen = true;
  return {
    form: 'bpf-lb-list',
    source,
    frontends: [...rows.byKey.values()],
    ...(cuts.length > 0 ? { cut: cuts } : {}),
    ...(unreadFrom ? { unreadFrom } : {}),
    ...rows.swappedOf(),
  };
}
