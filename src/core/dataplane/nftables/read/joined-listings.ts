// Several `nft list chain|map|set ip kube-proxy NAME` commands in one paste: nft wraps each block
// it lists in its own `table ip kube-proxy { ... }`, so the blocks are parts of one table, read as
// one; so is a grep'ed fragment without its table line (`nft list table ip kube-proxy | grep -A6`)
// that the next command typed ends. A part without its table line that no command ends (a
// listing's tail pasted before the whole) is not joined, nor a second listing of the whole table.
// Tables of other names, or of the other family, stay apart; so do listings another host's (or
// pod's) command printed (`ssh node-a nft list map ...`, `ssh node-b nft list chain ...`): parts
// join only those of one target, or where no command names one (target.ts).
import type { NftTable } from './listing.js';
import { finished } from './table-parts.js';

/** The tables of a text listing with each table's parts joined into the first of them. */
export function joinListings(tables: NftTable[], fragments: ReadonlySet<NftTable>): NftTable[] {
  // a fragment joins the one kube-proxy table listed beside it (none where two families are)
  const kubeProxy = tables.filter((t) => !t.headless && t.name === 'kube-proxy');
  const home = new Set(kubeProxy.map((t) => t.family)).size === 1 ? kubeProxy[0] : undefined;
  const keyOf = (t: NftTable) => {
    const table = !t.headless
      ? `${t.family} ${t.name}`
      : home && fragments.has(t) && home.target === t.target
        ? `${home.family} ${home.name}`
        : undefined;
    return table === undefined ? undefined : `${t.target ?? ''}\n${table}`;
  };
  const out: NftTable[] = [];
  const into = new Map<string, NftTable[]>();
  for (const t of tables) {
    const key = keyOf(t);
    const parts = key === undefined ? undefined : into.get(key);
    // a later whole listing of the table is another listing of it (said apart), not a part
    if (parts && (t.headless || t.chains.length + t.sets.length === 1)) parts.push(t);
    else if (parts) out.push(t);
    else {
      if (key !== undefined) into.set(key, [t]);
      out.push(t); // the table's place: its first part's
    }
  }
  return out.map((t) => {
    const parts = into.get(keyOf(t) ?? '');
    return parts && parts.length > 1 && parts[0] === t ? joined(parts, home) : t;
  });
}

/** One table of its parts: their blocks in order (a block listed twice read once), what each
 * left out or did not read, and the family and name a part's table line gives. */
function joined(parts: NftTable[], home: NftTable | undefined): NftTable {
  const named = parts.find((p) => !p.headless) ?? home!;
  const chains = new Map<string, NftTable['chains'][number]>();
  const sets = new Map<string, NftTable['sets'][number]>();
  for (const p of parts) {
    for (const c of p.chains)
      if (!chains.has(c.name) || chains.get(c.name)!.rules.length === 0) chains.set(c.name, c);
    for (const s of p.sets)
      if (!sets.has(s.name) || sets.get(s.name)!.elements.length === 0) sets.set(s.name, s);
  }
  const elided = parts.flatMap((p) => p.elided ?? []);
  const unread = parts.flatMap((p) => p.unread ?? []);
  const cut = parts.find((p) => p.cut)?.cut;
  const mapAbove = parts.find((p) => p.mapAbove)?.mapAbove;
  const comment = parts.find((p) => p.comment !== undefined)?.comment;
  const target = parts[0]!.target;
  const listedBlock = parts.find((p) => p.listedBlock)?.listedBlock;
  const table = finished({
    family: named.family,
    name: named.name,
    chains: [...chains.values()],
    sets: [...sets.values()],
    ...(comment !== undefined ? { comment } : {}),
    ...(elided.length > 0 ? { elided } : {}),
    ...(unread.length > 0 ? { unread } : {}),
    ...(mapAbove ? { mapAbove } : {}),
  });
  if (listedBlock) table.listedBlock = listedBlock;
  const withTarget = target !== undefined ? { ...table, target } : table;
  return cut ? { ...withTarget, cut } : withTarget;
}
