// A chain's name as the dump's bytes hold it: which kube-proxy chain its shape says it is, whether
// its author hid its hash, and its hash for the table's lookup by name.
import { text } from './lexer.js';
import { hiddenKind, mayHideHash } from './paste/mangled/hidden-hashes.js';

export type ChainKind =
  'KUBE-SVC' | 'KUBE-SVL' | 'KUBE-EXT' | 'KUBE-FW' | 'KUBE-XLB' | 'KUBE-SEP' | undefined;

export const KINDS = [
  'KUBE-SVC-',
  'KUBE-SVL-',
  'KUBE-EXT-',
  'KUBE-FW-',
  'KUBE-XLB-',
  'KUBE-SEP-',
].map((p) => ({
  bytes: Array.from(p, (c) => c.charCodeAt(0)),
  kind: p.slice(0, -1) as ChainKind,
}));

/** Which kube-proxy chain a name is (1 + its index in KINDS, 0 for none): prefix plus a
 * 16-character hash, base32 as kube-proxy writes it or with digits a person redacted it to. */
export function chainKind(b: Uint8Array, s: number, e: number): number {
  if (b[s] !== 75 /* K */ || b[s + 4] !== 45) return 0;
  for (let i = 0; i < KINDS.length; i++) {
    const bytes = KINDS[i]!.bytes;
    if (e - s !== bytes.length + 16) continue;
    let k = 5;
    while (k < bytes.length && b[s + k] === bytes[k]) k++;
    if (k < bytes.length) continue;
    for (; k < e - s; k++) {
      const ch = b[s + k]!;
      if (!((ch >= 65 && ch <= 90) || (ch >= 48 && ch <= 57))) return 0;
    }
    return i + 1;
  }
  return 0;
}

const encoder = new TextEncoder();

/** Whether the bytes [s, e) name a kube-proxy chain whose hash its author hid. */
export const hides = (b: Uint8Array, s: number, e: number) =>
  mayHideHash(b, s, e) && hiddenKind(text(b, s, e)) !== undefined;

const nameScratch = new Uint8Array(64); // chain names are at most 28 bytes

/** hashBytes of a name's UTF-8 bytes; an ASCII name is copied as is (no TextEncoder call). */
export function hashName(name: string): number {
  const n = name.length;
  let ascii = n <= nameScratch.length;
  for (let k = 0; k < n && ascii; k++) ascii = (nameScratch[k] = name.charCodeAt(k)) < 0x80;
  if (ascii) return hashBytes(nameScratch, 0, n);
  const bytes = encoder.encode(name);
  return hashBytes(bytes, 0, bytes.length);
}

/** A hash of bytes four at a time (names are long and alike up to their last 16 characters). */
export const textHash = (b: Uint8Array, s: number, e: number): number => hashBytes(b, s, e);

export function hashBytes(b: Uint8Array, s: number, e: number): number {
  let h = HASH_SEED ^ (e - s);
  let k = s;
  for (; k + 4 <= e; k += 4)
    h = Math.imul(
      h ^ (b[k]! | (b[k + 1]! << 8) | (b[k + 2]! << 16) | (b[k + 3]! << 24)),
      HASH_PRIME,
    );
  for (; k < e; k++) h = Math.imul(h ^ b[k]!, HASH_PRIME);
  return avalanche(h);
}

const HASH_SEED = 0x811c9dc5 | 0;
const HASH_PRIME = 0x9e3779b1 | 0;

/** Mixes high bits into the low ones that pick the slot; a signed int, as slots store it. */
function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}
