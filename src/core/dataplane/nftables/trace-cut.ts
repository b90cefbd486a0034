// Where a packet walk's read of an nftables listing stopped: a listing cut short holds its
// blocks up to the cut, the one the cut is inside in part, and none of those past it. The walk
// goes on through what was read and stops at the first chain, set or map the cut hid: a jump to
// a chain it does not hold, a lookup in a set or map it does not hold (or holds in part, where no
// element read matched), the end of a chain it holds in part, or a hook whose kube-proxy base
// chain it does not hold.
import type { ReadStop } from '../trace/answer.js';
import type { CutMet, TraceResult } from '../trace/trace.js';
import { BASE_CHAINS, BASE_CHAINS_BEFORE_33 } from './expected/base-chains.js';
import type { NftBlockName, NftTable } from './read/listing.js';

/** What the cut of a table leaves unread, as the walk asks it. */
export class NftCut {
  private readonly partly: NftBlockName[] | undefined;

  private constructor(private readonly t: NftTable) {
    this.partly = t.cut?.partly;
  }

  /** The cut of `t`; undefined for a whole listing. */
  static of(t: NftTable): NftCut | undefined {
    return t.cut ? new NftCut(t) : undefined;
  }

  /** Held in part: the reader says which blocks; where it does not, any may be. */
  private inPart = (kind: NftBlockName['kind'], name: string) =>
    this.partly?.some((b) => b.kind === kind && b.name === name) ?? true;

  /** The walk fell off the end of this chain: rules past the cut may follow. */
  endOf(chain: string): CutMet | undefined {
    return this.inPart('chain', chain)
      ? {
          what: `chain ${chain}`,
          reached: `it passes every rule read of chain ${chain}, which the listing holds only up to its cut`,
        }
      : undefined;
  }

  /** A jump or goto to a chain the listing does not hold: it may lie past the cut. */
  jumpTo(kind: string, chain: string): CutMet {
    return {
      what: `chain ${chain}`,
      reached: `it ${kind === 'goto' ? 'goes' : 'jumps'} to chain ${chain}, which the listing does not hold (it may lie past the cut)`,
    };
  }

  /** A lookup in a set or map (`found`: an element read matched): undefined where it is known. */
  lookup(kind: 'set' | 'map', name: string, held: boolean, found: boolean): CutMet | undefined {
    if (!held)
      return {
        what: `${kind} ${name}`,
        reached: `it is looked up in ${kind} ${name}, which the listing does not hold (it may lie past the cut)`,
      };
    if (found || !this.inPart(kind, name)) return undefined;
    return {
      what: `${kind} ${name}`,
      reached: `no element read of ${kind} ${name} holds it, and the listing holds that ${kind} only up to its cut`,
    };
  }

  /** kube-proxy's base chains of `hook` the listing does not hold, with their priorities: as the
   * release whose base chains it holds most of writes them (the newest where it holds none). */
  hiddenBaseChains(hook: string): { name: string; prio: number }[] {
    const held = (names: [string, ...unknown[]][]) => names.filter(([n]) => this.t.chain(n)).length;
    const release =
      held(BASE_CHAINS_BEFORE_33) > held(BASE_CHAINS) ? BASE_CHAINS_BEFORE_33 : BASE_CHAINS;
    return release
      .filter(([name, , h]) => h === hook && !this.t.chain(name))
      .map(([name, , , prio]) => ({ name, prio }));
  }

  /** A hook reached where one of kube-proxy's base chains of it comes, not held. */
  static hook(hook: string, chain: string): CutMet {
    return {
      what: `chain ${chain}`,
      reached: `it comes to the ${hook} hook's chain ${chain}, which kube-proxy writes and the listing does not hold (it may lie past the cut)`,
    };
  }
}

/** The cut of `t` (read from `file`), with per outcome what the walk met that the cut hid;
 * undefined for a whole listing. */
export function nftReadStop(t: NftTable, file: string, r: TraceResult): ReadStop | undefined {
  const cut = t.cut;
  if (!cut) return undefined;
  const why = cut.crash
    ? `nft crashed there ("${cut.crash}") inside ${cut.inside}: what it did not print was not read`
    : `the listing ends inside ${cut.inside}: what followed it was not read`;
  return {
    file,
    line: cut.line,
    why,
    partly: r.outcomes.map((o) => (o.cut ? [o.cut.what] : [])),
    // the walk stops where it met the cut: every rule it matched was read
    known: r.outcomes.map((o) => o.rules.length),
    reached: r.outcomes.map((o) => o.cut?.reached),
  };
}
