// Whether a dump proves the chains no entry point reaches orphans: a whole table does (nothing
// else could jump to them); a table read in part does not, for a jump to them may lie outside
// the part read. The output says it in words.
import type { Ruleset } from './iptables/read/parse.js';
import type { Table } from './iptables/read/table.js';
import { missingSets, type NftTable } from './nftables/read/listing.js';

/** Why an nft listing holds part of its table. */
export type NftPart =
  'headless' | 'cut' | 'elided' | 'diff' | 'maps-missing' | 'unread' | 'one-block' | 'script-part';

/** Why a dump's unreached chains are not proven orphans: its nat table read in part (cut after a
 * line, or a part pasted), or kube-proxy's nftables table read in part. */
export type OrphansUnproven =
  { table: 'nat'; cutAfter?: number } | { table: 'kube-proxy'; parts: NftPart[] };

/** Whether the dump's cut (its end, or its start mid-rule) lies in this table: never in one its
 * COMMIT ended, a jump crossing no table (a cut past nat's COMMIT, in filter, leaves nat whole). */
export const cutIn = (rs: Ruleset, t: Table) => !t.committed && rs.cut !== undefined;

/** Whether a dump holds only part of its nat table: cut, a segment, or some chains without the
 * built-in ones (iptables-save, -S and -L print every built-in chain of a table they list). */
export function natInPart(rs: Ruleset): boolean {
  // each family's nat table: where the dump holds both, either in part is a part
  const families = rs.families();
  if (families.length > 1) return families.some((f) => natInPart(rs.ofFamily(f)));
  const nat = rs.table('nat');
  if (!nat) return false;
  const declared = (name: string) =>
    nat.indexOf(name) >= 0 && nat.chainLine(nat.indexOf(name)) !== undefined;
  // *nat ... COMMIT is the table whole, whatever chains it declares
  return (
    nat.partial.size > 0 ||
    cutIn(rs, nat) ||
    (!(nat.headed && nat.committed) && !['PREROUTING', 'OUTPUT', 'POSTROUTING'].every(declared))
  );
}

/** Why an nft listing holds part of its table; none for a whole table. */
export const nftParts = (t: NftTable): NftPart[] =>
  [
    t.headless && ('headless' as const),
    t.cut && ('cut' as const),
    (t.elided?.length ?? 0) > 0 && ('elided' as const),
    t.paste?.diff && ('diff' as const),
    missingSets(t).length > 0 && ('maps-missing' as const),
    (t.unread?.length ?? 0) > 0 && ('unread' as const),
    // `nft list chain|map|set` prints that block alone in its table's wrapper
    t.listedBlock !== undefined && ('one-block' as const),
    t.scriptPart !== undefined && ('script-part' as const),
  ].filter((x): x is NftPart => typeof x === 'string');

/** Why no chain of a dump held in part can be called an orphan; undefined for a whole table,
 * where no entry point reaching a chain proves it one. */
export function orphansUnproven(d: Ruleset | NftTable): OrphansUnproven | undefined {
  if ('sets' in d) {
    const parts = [d, d.paste?.also].flatMap((t) => (t ? nftParts(t) : []));
    return parts.length > 0 ? { table: 'kube-proxy', parts: [...new Set(parts)] } : undefined;
  }
  if (!natInPart(d)) return undefined;
  const nat = d.families().map((f) => d.ofFamily(f).table('nat'));
  const cut = nat.some((t) => t && cutIn(d, t)) ? d.cut : undefined;
  return { table: 'nat', ...(cut?.line ? { cutAfter: cut.line } : {}) };
}
