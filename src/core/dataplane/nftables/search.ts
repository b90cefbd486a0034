// Search over kube-proxy's nftables table: the Service trees, every chain by name, each rule's
// comment and the addresses it names, and each map and set element's key (a cluster IP and its
// port, a node port, a hairpin pair), found by the Service whose chain it leads to.
import { SearchIndex } from '../search/search.js';
import { addTreeDocs } from '../search/tree-docs.js';
import type { ServiceTrees } from '../trees.js';
import { familyOf, hostPort, type IPFamily } from '../../ipv6.js';
import { pairFamilies, type NftTable } from './read/listing.js';
import { ruleText } from './render.js';
import { portChain } from './trees/port-chain.js';

const ADDRESS = /^\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?(?::\d{1,5})?$/;
// an ip6 table's addresses and prefixes: hex groups with two colons or more
const IPV6 = /^[0-9a-f]*:[0-9a-f]*:[0-9a-f:.]*(?:\/\d{1,3})?$/i;
const isAddress = (word: string) => ADDRESS.test(word) || IPV6.test(word);

export function buildNftSearchIndex(t: NftTable, trees: ServiceTrees): SearchIndex {
  const index = new SearchIndex();
  addTable(index, t, trees);
  return index.seal();
}

/** The same over a pasted listing: where it holds a dual-stack node's two kube-proxy tables
 * (trees of both, each with its family), each table with its own family's trees. */
export function buildNftPasteSearchIndex(t: NftTable, trees: ServiceTrees): SearchIndex {
  const also = t.paste?.also;
  if (!also) return buildNftSearchIndex(t, trees);
  const index = new SearchIndex();
  const [mine, theirs] = pairFamilies(t, also);
  addTable(index, t, ofFamily(trees, mine));
  addTable(index, also, ofFamily(trees, theirs));
  return index.seal();
}

const ofFamily = (trees: ServiceTrees, family: IPFamily): ServiceTrees => ({
  services: trees.services.filter((s) => s.family === family),
  orphans: trees.orphans.filter((o) => o.family === family),
});

/** A table's trees, chains, rules and map elements. */
function addTable(index: SearchIndex, t: NftTable, trees: ServiceTrees): void {
  const table = `${t.family} ${t.name}`;
  const { owner } = addTreeDocs(index, trees, table);
  const serviceOf = (chain: string) => owner.get(chain) ?? portChain(chain)?.name;
  for (const chain of t.chains) {
    const service = serviceOf(chain.name);
    index.add({ kind: 'chain', text: chain.name, service, table, chain: chain.name });
    chain.rules.forEach((r, k) => {
      const at = { kind: 'rule' as const, service, table, chain: chain.name, line: k + 1 };
      if (r.comment) index.add({ ...at, text: r.comment }, true);
      // the addresses, CIDRs and ip:port targets the rule names
      for (const word of ruleText(r).replace(/[{},]/g, ' ').split(/\s+/))
        if (isAddress(word)) index.add({ ...at, text: word });
    });
  }
  for (const set of t.sets)
    set.elements.forEach((e, k) => {
      const target = e.verdict?.target;
      const at = {
        kind: 'rule' as const,
        service: (target && serviceOf(target)) || (e.comment ?? undefined),
        table,
        chain: set.name,
        line: k + 1,
      };
      if (e.comment) index.add({ ...at, text: e.comment }, true);
      // "10.96.0.10 . tcp . 53" is found as 10.96.0.10:53, "tcp . 31768" as 31768
      const [first, second, third, fourth] = e.key.map(String);
      const port = fourth ?? third;
      if (first && familyOf(first))
        index.add({ ...at, text: port && /^\d+$/.test(port) ? hostPort(first, port) : first });
      else if (second && /^\d+$/.test(second)) index.add({ ...at, text: second });
    });
}
