// What of the agent's listings drift could not compare: a table cut short or eliding rows holds
// only part of what the agent has, so a frontend not in it is not known to be missing, and "no
// drift" is said of what was read only.
import { lineAt, type DriftFinding } from '../../drift.js';
import type { ExpectedFrontend } from '../expected/expected.js';
import { frontendKey, type CiliumFrontend, type CiliumTable } from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';
import { Frontends } from './frontends.js';
import { backendLine, frontendLine, infoNote, nameOf } from './words.js';

/** The table is not whole (cut, rows elided, another command's output after it). */
export const notWhole = (t: CiliumTable) => (t.cut?.length ?? 0) > 0 || t.unreadFrom !== undefined;

/** A note per listing not whole, with the frontends not in it that are therefore not compared. */
export function cutNotes(
  input: CiliumDriftInput,
  unlisted: ExpectedFrontend[],
  notRead: DriftFinding[],
): void {
  for (const t of [input.table, ...(input.maps ? [input.maps] : [])]) {
    if (!notWhole(t)) continue;
    const at = [
      ...(t.cut ?? []).map((c) => lineAt(t.source, c.line, c.reason)),
      ...(t.unreadFrom !== undefined ? [lineAt(t.source, t.unreadFrom, 'not read from here')] : []),
    ];
    const missing = t === input.table ? unlisted : [];
    // a frontend whose rows run past the cut: its backends are not all read
    const part = t.frontends.filter((f) => f.backendsElided || f.backendsUnread).map(frontendKey);
    notRead.push(
      infoNote(input, 'table-not-captured', {
        title: `${t.source} read in part: what it lacks not compared`,
        message: `The listing of ${input.node} (${t.source}) is not whole: what it lacks could be missing from the listing only, so nothing is said to be missing from it${missing.length > 0 ? `; frontends not in it, not compared: ${missing.map(frontendKey).join(', ')}` : ''}${part.length > 0 ? `; the backends of ${part.join(', ')} not all read, so none is said to be missing` : ''}. The rest it holds was compared.`,
        actual: at,
        expected: missing.map(
          (f) => `${frontendLine(f)} -> ${f.backends.map(backendLine).join(', ') || 'no backends'}`,
        ),
      }),
    );
  }
}

/** Why the listing may not show every backend of `f` (cut, elided, grepped, a column not shown,
 * Cilium's own "+ N more"), or undefined where it shows them all. */
export function backendsUnseen(f: CiliumFrontend): string | undefined {
  if (f.backendsElided !== undefined) return 'rows left out after its backends: more may be there';
  if (f.backendsUnread) return 'its backends are not in the listing';
  if (f.grepped !== undefined)
    return 'the listing is piped through grep: its further backends show only where they match';
  if (f.serviceRowUnseen) return "the Service's own row (slot 0) is not in the listing";
  if (f.backendsNotShown) return `${f.backendsNotShown} of its backends not shown ("+ N more")`;
  return undefined;
}

/** The lines the comparison of these Service ports (`ports`, "ns/name:port") rests on that a
 * table read in part leaves out, each "FILE:LINE: why": where one of their frontends expected is
 * not in a table that is not whole, where it was cut; where one is listed without all of its
 * backends, its line and why. None where the table holds all of them. */
export function unreadFor(
  table: CiliumTable,
  expected: readonly ExpectedFrontend[],
  ports: ReadonlySet<string>,
): string[] {
  const out = new Set<string>();
  const actual = new Frontends(table);
  const scopes = table.frontends.some((f) => f.internal);
  const cutAt = [
    ...(table.cut ?? []).map((c) => lineAt(table.source, c.line, c.reason)),
    ...(table.unreadFrom !== undefined
      ? [lineAt(table.source, table.unreadFrom, 'not read from here')]
      : []),
  ];
  for (const want of expected) {
    if (!ports.has(nameOf(want)) || (want.internal && !scopes)) continue;
    const got = actual.find(want);
    // not listed where the listing is whole: missing, which drift says
    if (got.length === 0 && notWhole(table)) for (const l of cutAt) out.add(l);
    for (const f of got) {
      const why = backendsUnseen(f);
      if (why)
        out.add(
          lineAt(
            table.source,
            f.backendsElided ?? f.grepped ?? f.line,
            `${frontendKey(f)}: ${why}`,
          ),
        );
    }
  }
  return [...out];
}
