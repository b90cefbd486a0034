// How many entries of a frontend's Maglev table each backend gets, modelled on Cilium's
// pkg/maglev (v1.20.2, computeLookupTable): the backends sorted by their hash string take turns
// filling the table, a weighted one skipping its turn until its weight allows. The count rests on
// the weights and that order only; which entries a backend gets (the permutation) does not matter.
import type { CiliumProtocol } from '../read/listing.js';

export interface MaglevBackend {
  ip: string;
  port: number;
  protocol: CiliumProtocol;
  weight: number;
}

/** setHashString: "[ip:port/TCP,State:active]", an IPv6 address in brackets. */
const hashString = (b: MaglevBackend) =>
  `[${b.ip.includes(':') ? `[${b.ip}]` : b.ip}:${b.port}/${b.protocol.toUpperCase()},State:active]`;

/** Each backend's entries in a table of `size`, in the order given. */
export function maglevEntries(backends: readonly MaglevBackend[], size: number): number[] {
  const l = backends.length;
  if (l === 0) return [];
  // sorted as Go compares strings, byte by byte (the hash strings are ASCII)
  const order = backends
    .map((b, i) => ({ i, h: hashString(b), w: b.weight }))
    .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0));
  const weightSum = order.reduce((s, b) => s + b.w, 0);
  // weights count only where their mean is above 1 (integer division, as Go's uint64)
  const weightsUsed = Math.floor(weightSum / l) > 1;
  const counter = order.map((b) => b.w / l);
  const counts = new Array<number>(l).fill(0);
  for (let n = 0; n < size; n++) {
    let i = n % l;
    // a backend whose weight has not caught up with its counter passes its turn on
    while (weightsUsed && (n + 1) * order[i]!.w < Math.trunc(counter[i]!)) i = (i + 1) % l;
    if (weightsUsed) counter[i]! += weightSum;
    counts[i]!++;
  }
  const out = new Array<number>(l).fill(0);
  order.forEach((b, k) => (out[b.i] = counts[k]!));
  return out;
}
