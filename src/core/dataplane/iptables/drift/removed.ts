// The rules of a Service the API does not have, still routed on the node (removed-services.ts
// decides which): its entry rules in KUBE-SERVICES and its Service chain, as the node holds them.
import { removedServices, removedServiceSaid } from '../../removed-services.js';
import type { ServiceTree } from '../../trees.js';
import { chainLines, restartKubeProxy, type DriftContext } from './context.js';

export function removedServiceRules(c: DriftContext, trees: ServiceTree[]): void {
  for (const { tree, entries } of removedServices(trees, c.exp.servicePorts)) {
    const into = new Set(entries.map((e) => e.chain));
    const said = removedServiceSaid(tree, entries, c.node);
    c.add({
      id: 'orphan-chain',
      ...said,
      expected: [],
      actual: [
        ...chainLines(c.nat, 'KUBE-SERVICES').filter((l) => into.has(l.split(' -j ').pop()!)),
        ...chainLines(c.nat, tree.chains.svc),
      ],
      next: restartKubeProxy(c, '').next,
    });
  }
}
