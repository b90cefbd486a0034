// A table as the walks of a few packets can meet it: each set and map holds only the elements
// whose first address or number is one of theirs (an address, a port), and those keyed by a
// prefix or a range; so a walk looks up a handful of elements, not a 10,000-Service map's all.
import type { NftElement, NftSet, NftTable } from '../read/listing.js';
import { isAddress } from './rule-signature.js';

/** Makes, for the values a walk's packets carry, the table their walks can meet. */
export type Slicer = (values: Iterable<string | number>) => NftTable;

/** Indexes `t`'s elements once by their first address or number. */
export function slicer(t: NftTable): Slicer {
  const index = new Map<NftSet, { by: Map<string, NftElement[]>; always: NftElement[] }>();
  for (const s of t.sets) {
    const by = new Map<string, NftElement[]>();
    const always: NftElement[] = [];
    for (const e of s.elements) {
      const k = firstValue(e);
      if (k === undefined) always.push(e);
      else {
        const xs = by.get(k);
        if (xs) xs.push(e);
        else by.set(k, [e]);
      }
    }
    index.set(s, { by, always });
  }
  return (values) => {
    const keys = [...new Set([...values].map(String))];
    const sliced = new Map<string, NftSet | undefined>();
    const set = (name: string) => {
      if (sliced.has(name)) return sliced.get(name);
      const s = t.set(name);
      const i = s && index.get(s);
      const out = s &&
        i && { ...s, elements: [...i.always, ...keys.flatMap((k) => i.by.get(k) ?? [])] };
      sliced.set(name, out);
      return out;
    };
    return { ...t, set };
  };
}

/** An element's first plain address or number, as a string: what a packet's field equals where
 * it matches; undefined where its key holds a prefix, a range or neither (kept in every slice). */
function firstValue(e: NftElement): string | undefined {
  for (const k of e.key) {
    if (typeof k === 'number') return String(k);
    if (/^\d+$/.test(k)) return k;
    if (isAddress(k)) return k.includes('/') || k.includes('-') ? undefined : k;
    if (k.includes('/') || k.includes('-')) return undefined;
  }
  return undefined;
}
