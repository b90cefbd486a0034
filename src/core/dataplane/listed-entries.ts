// How traffic enters a Service port's tree where the node's state is a listing of virtual
// servers or frontends (IPVS, Cilium): each entry by its line there.
import type { StateLine } from './dataplane.js';
import type { ServiceTree } from './trees.js';

export const listedEntryLines = (source: string, tree: ServiceTree, word: string): StateLine[] =>
  tree.entries.map((e) => ({
    text: `${source}:${e.line}: ${e.kind} ${word} ${e.chain}`,
    source,
    line: e.line,
  }));
