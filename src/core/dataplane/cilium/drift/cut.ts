// What of the agent's listings drift could not compare: a table cut short or eliding rows holds
// only part of what the agent has, so a frontend not in it is not known to be missing, and "no
// drift" is said of what was read only.
import { lineAt, type DriftFinding } from '../../drift.js';
import type { ExpectedFrontend } from '../expected/expected.js';
import { frontendKey, type CiliumTable } from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';
import { backendLine, frontendLine, infoNote } from './words.js';

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
