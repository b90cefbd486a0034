// `cilium-dbg service list` as text: a row per frontend with its first backend, further backends
// on lines of their own; columns a build prints after Backend are not read.
import {
  frontendKey,
  frontendType,
  parseAddress,
  type CiliumFrontend,
  type CiliumTable,
} from '../listing.js';
import { backendCell, eachRow, fail, headerAt } from '../row-walk.js';
import { grepContext } from '../../../paste/grep-context.js';
import { hiddenRow, isHidden } from '../redacted.js';

/** `cilium-dbg service list`: "ID  Frontend  Service Type  Backend", each backend "N => ADDR
 * (state)", further backends on lines of their own. */
export function serviceList(lines: string[], source: string): CiliumTable {
  const { index } = headerAt(lines, 'service-list');
  const frontends: CiliumFrontend[] = [];
  let current: CiliumFrontend | undefined;
  let elided = false;
  const beyond = index >= 0 ? beyondBackend(lines[index]!) : undefined;
  // from 1.6 every frontend's row has its Service Type (the header says so, or a row above)
  let typed = index >= 0 && /\bService Type\b/.test(lines[index]!);
  // a release that prints backends' states prints one on each (" (active)"): one without is cut
  let stated = false;
  // a release that prints none, as its rows above show; one that prints protocols ("/TCP")
  let stateless = false;
  let protocols = false;
  const hidden: { line: number; reason: string }[] = []; // rows whose address the author hid
  let hiddenFrontend = false; // the rows under a hidden frontend are its backends': not read
  const backend = (address: string, rest: string, at: number) => {
    const b = backendCell(address, rest, at, source);
    if (stated && !b.state)
      fail(source, at, `a backend without its state, cut short: "${address}"`);
    stated ||= b.state !== undefined;
    stateless ||= b.state === undefined;
    protocols ||= b.protocol !== undefined;
    return b;
  };
  /** The paste's last row, no newline after it, is whole where every column its release prints
   * (as the rows above show them) is there: a backend's state closes it ("(active)"); a release
   * that prints none ends it at the address, with its protocol where it prints one; a frontend
   * without backends ends at its Service Type, whose word the row's reading checks. */
  const closed = (t: string) => {
    if (t.endsWith(')')) return true;
    const last = /\d+ => (\S+)$/.exec(t);
    if (!last) return /^\d+\s+\S+\s+[A-Za-z]+$/.test(t);
    const a = parseAddress(last[1]!);
    return stateless && !stated && a !== undefined && (!protocols || a.protocol !== undefined);
  };
  const { cut, unreadFrom, stopped, endsInRow } = eachRow(
    lines,
    index,
    'service-list',
    (row) => {
      const { at } = row;
      if (row.elided) {
        // its backends may go on past the elision, on the lines left out
        if (current) current.backendsElided ??= at;
        elided = true;
        current = undefined;
        return;
      }
      // columns the header has after Backend are not read: each row is cut where they start
      const t = beyond === undefined ? row.t : beforeColumn(lines[at - 1]!, beyond);
      if (t === '') return;
      const be = /^(\d+) => (\S+)(.*)$/.exec(t);
      if (be) {
        if (!current && (elided || hiddenFrontend)) return; // the rest of a frontend not read
        if (!current) fail(source, at, 'a backend before any frontend');
        if (isHidden(be[2]!)) {
          hidden.push(hiddenRow(at, be[2]!, 'backend'));
          current!.backendsElided ??= at;
        } else current!.backends.push(backend(be[2]!, be[3]!, at));
        return;
      }
      const m =
        /^(?:(\d+)\s+)?(\S+?)(?: =>)?(?:\s+([A-Za-z]+(?: \(Remote\))?))?(?:\s+(\d+) => (\S+)(.*))?$/.exec(
          t,
        );
      hiddenFrontend = m !== null && isHidden(m[2]!);
      if (hiddenFrontend) {
        hidden.push(hiddenRow(at, m![2]!, 'frontend'));
        current = undefined;
        return;
      }
      const addr = m && parseAddress(m[2]!);
      if (!m || !addr) {
        if (frontends.length > 0 && !/\d/.test(t)) return false; // prose after the listing
        fail(source, at, `not a row of cilium service list: "${t.slice(0, 80)}"`);
      }
      // a row that stops before the type its listing prints on every row is cut short
      if (typed && !m![3] && !t.includes('=>'))
        fail(
          source,
          at,
          `a frontend's row without its Service Type, cut short: "${t.slice(0, 80)}"`,
        );
      typed ||= m![3] !== undefined;
      // the printer writes its type's whole name (ClusterIP, NodePort ...): a word it never
      // writes ("Cluster", "NodePor") is one cut short
      const type = frontendType(m![3]?.replace(' (Remote)', ''));
      if (m![3] !== undefined && !type)
        fail(source, at, `a Service Type Cilium does not print, cut short: "${m![3]}"`);
      current = {
        ...addr!,
        ...(m![1] !== undefined ? { id: Number(m![1]) } : {}),
        type,
        flags: m![3]?.endsWith('(Remote)') ? ['remote'] : [],
        backends: [],
        line: at,
      };
      if (m![5] && isHidden(m![5])) {
        hidden.push(hiddenRow(at, m![5], 'backend'));
        current.backendsElided ??= at;
      } else if (m![5]) current.backends.push(backend(m![5], m![6]!, at));
      frontends.push(current);
    },
    closed,
  );
  // its backends may go on in the rows not read
  if (stopped && current) current.backendsElided ??= stopped.line;
  // a row cut short is a new frontend's only where its ID and address start it ("16   10.9")
  if (endsInRow && current && !/^\d+\s+[\d[]/.test(endsInRow.text))
    current.backendsElided ??= endsInRow.cut.line;
  // piped through grep: a frontend's rows past grep's window (its backends after the first, on
  // rows of their own that do not hold its address) are not printed
  const grep = grepAbove(lines, index);
  if (grep) for (const f of frontends) if (f.backends.length > grep.after) f.grepped = grep.line;
  const cuts = [cut, stopped, endsInRow?.cut].filter((c) => c !== undefined);
  return {
    form: 'service-list',
    source,
    frontends: merged(frontends),
    ...(cuts.length > 0 ? { cut: cuts } : {}),
    ...notRead(lines, index, beyond, stateless && !stated, hidden),
    ...(unreadFrom ? { unreadFrom } : {}),
  };
}

/** The grep the listing was piped through, typed on the command line right above it (its
 * header, where grep printed it, between): its line and how many lines after a match it prints. */
function grepAbove(lines: string[], index: number): { line: number; after: number } | undefined {
  for (let k = index; k >= 0 && k >= index - 2; k--) {
    const context = grepContext(lines[k]!);
    if (context !== undefined && /\bservice\s+list\b/.test(lines[k]!))
      return { line: k + 1, after: context?.after ?? 0 };
  }
  return undefined;
}

/** Where the header's first column after Backend starts (tabs expanded), if it has one: a
 * build that prints more than ID, Frontend, Service Type and Backend ("Source Ranges"). */
function beyondBackend(header: string): number | undefined {
  const wide = expandTabs(header);
  const backend = /\bBackend\b/.exec(wide);
  if (!backend) return undefined;
  const next = /\S/.exec(wide.slice(backend.index + 'Backend'.length));
  return next ? backend.index + 'Backend'.length + next.index : undefined;
}

/** What the listing's lines hold that is not read, or lack that its printer writes: columns
 * after Backend; backends without their state under cilium-dbg, whose every release (1.15 on)
 * writes "N => ADDR (state)": states its author took out, not a release that prints none. */
function notRead(
  lines: string[],
  index: number,
  beyond: number | undefined,
  stateless: boolean,
  hidden: { line: number; reason: string }[],
): { notRead?: { line: number; reason: string }[] } {
  const out = beyond !== undefined ? [columnsNotRead(lines[index]!, beyond, index + 1)] : [];
  out.push(...hidden);
  const typed = lines
    .slice(Math.max(0, index - 2), index + 1)
    .some((l) => /\bcilium-dbg\s+service\s+(?:list|ls)\b/.test(l));
  if (stateless && typed)
    out.push({
      line: index + 1,
      reason:
        'cilium-dbg (Cilium 1.15 on) prints each backend\'s state ("1 => ADDR (active)"); these rows carry none, taken out by their author: which backends are active is not known',
    });
  return out.length > 0 ? { notRead: out } : {};
}

/** The header's columns after Backend, said not read: no release's printServiceList writes any
 * (ID, Frontend, Service Type, Backend), so what a build's column means is not known here. */
function columnsNotRead(
  header: string,
  at: number,
  line: number,
): { line: number; reason: string } {
  const names = expandTabs(header)
    .slice(at)
    .trim()
    .split(/\s{2,}|\t/);
  const quoted = names.map((n) => `"${n}"`).join(', ');
  return {
    line,
    reason: `the column${names.length === 1 ? '' : 's'} ${quoted} after Backend, which no released cilium service list prints (a build's own), ${names.length === 1 ? 'is' : 'are'} not read: what ${names.length === 1 ? 'it holds' : 'they hold'} (${/source range/i.test(quoted) ? 'which clients a frontend admits' : "each row's value"}) is not said`,
  };
}

/** A row's text up to the column at `at` (tabs expanded, as a tabwriter's columns line up),
 * trimmed; the whole row where nothing starts there after a space (a row out of line). */
function beforeColumn(line: string, at: number): string {
  const wide = expandTabs(line);
  return (wide.length > at && wide[at - 1] === ' ' ? wide.slice(0, at) : wide).trim();
}

/** Tabs to the next multiple of 8, as a terminal shows them. */
function expandTabs(line: string): string {
  if (!line.includes('\t')) return line;
  let out = '';
  for (const c of line) out += c === '\t' ? ' '.repeat(8 - (out.length % 8)) : c;
  return out;
}

/** One frontend listed twice (a paste holding the listing twice) is one frontend. */
function merged(frontends: CiliumFrontend[]): CiliumFrontend[] {
  const byKey = new Map<string, CiliumFrontend>();
  for (const f of frontends) if (!byKey.has(frontendKey(f))) byKey.set(frontendKey(f), f);
  return [...byKey.values()];
}
