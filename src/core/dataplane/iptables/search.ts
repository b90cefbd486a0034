// Search over a node's iptables rules: every chain by name, and each rule's comment, addresses,
// ports and DNAT target, besides the Service trees' own documents.
import type { Ruleset } from './read/parse.js';
import type { ServiceTrees } from '../trees.js';
import { SearchIndex } from '../search/search.js';
import { addTreeDocs } from '../search/tree-docs.js';

const stripHost = (cidr: string) => cidr.replace(/\/(32|128)$/, '');

/** Indexes a node's rules and its Service trees. */
export function buildSearchIndex(rs: Ruleset, trees: ServiceTrees): SearchIndex {
  const index = new SearchIndex();
  const { owner, byLine } = addTreeDocs(index, trees, 'nat');
  index.rules = {
    rs,
    serviceOf: (table, chain, line) => owner.get(chain) ?? byLine.get(`${table}:${line}`),
  };
  for (const table of rs.tables) {
    for (const chain of table.chains) {
      const name = chain.name;
      index.add({
        kind: 'chain',
        text: name,
        service: owner.get(name),
        table: table.name,
        chain: name,
        line: chain.line,
      });
      const service = owner.get(name);
      for (let k = 0; k < chain.ruleCount; k++) {
        const id = chain.ruleId(k);
        const line = table.line(id);
        // a rule in a shared chain (KUBE-SERVICES ...) belongs to the Service its tree names
        const at = {
          kind: 'rule' as const,
          service: service ?? byLine.get(`${table.name}:${line}`),
          table: table.name,
          chain: name,
          line,
        };
        const comment = table.comment(id);
        if (comment) index.add({ ...at, text: comment }, true);
        const dst = table.destination(id);
        if (dst) index.add({ ...at, text: stripHost(dst) });
        const src = table.source(id);
        if (src) index.add({ ...at, text: stripHost(src) });
        const dport = table.dport(id);
        if (dport) index.add({ ...at, text: dport });
        const to = table.to(id);
        if (to) index.add({ ...at, text: to });
      }
    }
  }
  return index.seal();
}
