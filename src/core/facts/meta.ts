// meta.json as kdebug reads it: the fields it names are strings or absent. A field of another
// type (a hand-edited file, `"context": 42`) is ignored, with a note, never passed on to a report
// whose schema says string or null.
import type { SnapshotMeta } from '../model.js';

/** The fields of meta.json kdebug reads as text. */
const TEXT_FIELDS = [
  'context',
  'server',
  'namespace',
  'service',
  'capturedAt',
  'kdebugVersion',
] as const;

/** Where the notes of the fields ignored are kept, for the command to tell. */
export const IGNORED = 'ignoredFields';

/** The meta with each text field of another type left out, and a note for each. */
export function typedMeta(raw: Record<string, unknown>): SnapshotMeta {
  const meta: Record<string, unknown> = { ...raw };
  const ignored: string[] = [];
  for (const key of TEXT_FIELDS) {
    const v = meta[key];
    if (v === undefined || typeof v === 'string') continue;
    delete meta[key];
    // null is no value: absent, nothing to say
    if (v !== null)
      ignored.push(
        `"${key}" is ${Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`}, not a string: ignored`,
      );
  }
  return ignored.length > 0 ? { ...meta, [IGNORED]: ignored } : meta;
}

/** The notes of the meta fields ignored on reading. */
export const ignoredMeta = (meta: SnapshotMeta): string[] => {
  const v = meta[IGNORED];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
};
