// A long chain's rules by what a packet must carry to match them: KUBE-SERVICES holds a rule per
// Service port (`-d VIP/32`), KUBE-NODEPORTS one per node port (`--dport N`), so a packet walk
// that reads them in order, rule by rule, costs as much as the cluster has Services. Here each
// rule sits in one list, all in chain order: the rules for one IPv4 host, those for one
// destination port (no -d), and the others; the next rule that may match a packet is the first
// of its three lists from a position on. A rule left out names another address or port: it
// cannot match.
import { parseCidr } from '../../../ipv4.js';
import type { Table } from './table.js';
import { RuleFlag } from './token-walk.js';

/** Chains shorter than this are read rule by rule: an index costs more than it saves. */
export const DISPATCH_MIN = 64;

export interface Dispatch {
  /** The chain's rule count when it was indexed (a table that grew indexes again). */
  count: number;
  /** The first position from `k` on whose rule may match a packet to `dst`:`dport`. */
  next(k: number, dst: number, dport: number): number;
}

export function dispatchOf(t: Table, index: number, count: number): Dispatch {
  const byHost = new Map<number, number[]>();
  const byPort = new Map<number, number[]>();
  const other: number[] = [];
  for (let k = 0; k < count; k++) {
    const id = t.ruleIdOf(index, k);
    const flags = t.flags(id);
    const dst = t.destination(id);
    const host = dst !== undefined && !(flags & RuleFlag.dstNegated) ? hostOf(dst) : undefined;
    const port =
      dst === undefined && !(flags & RuleFlag.dportNegated) ? portOf(t.dport(id)) : undefined;
    if (host !== undefined) add(byHost, host, k);
    else if (port !== undefined) add(byPort, port, k);
    else other.push(k);
  }
  return {
    count,
    next: (k, dst, dport) =>
      Math.min(
        from(byHost.get(dst), k, count),
        from(byPort.get(dport), k, count),
        from(other, k, count),
      ),
  };
}

/** A -d that names one IPv4 host ("10.96.0.1/32", "10.96.0.1"), as the walk compares it. */
function hostOf(cidr: string): number | undefined {
  const c = parseCidr(cidr);
  return c?.bits === 32 ? c.network : undefined;
}

/** A --dport of one port ("30080"; not a range). */
function portOf(text: string | undefined): number | undefined {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

function add(m: Map<number, number[]>, key: number, k: number): void {
  const xs = m.get(key);
  if (xs) xs.push(k);
  else m.set(key, [k]);
}

/** The first of the ascending positions `xs` at or after `k`; `none` when there is none. */
function from(xs: readonly number[] | undefined, k: number, none: number): number {
  if (!xs || xs.length === 0 || xs[xs.length - 1]! < k) return none;
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < k) lo = mid + 1;
    else hi = mid;
  }
  return xs[lo]!;
}
