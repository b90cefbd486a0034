// The rules of a Service the API does not have, still routed on the node (removed-services.ts
// decides which): its entry rules in KUBE-SERVICES and its Service chain, as the node holds them.
import {
  removedServices,
  removedServiceSaid,
  type ServicesRead,
} from '../../kube-proxy/removed-services.js';
import type { ServiceTree } from '../../trees.js';
import { chainLines, restartKubeProxy, type DriftContext } from './context.js';

export function removedServiceRules(
  c: DriftContext,
  trees: ServiceTree[],
  read: ServicesRead,
): void {
  for (const removed of removedServices(trees, c.exp.servicePorts, read)) {
    // the entry rules themselves, by the lines the trees read them from in the tree's own table
    const nat = c.actual.table('nat', removed.tree.family) ?? c.nat;
    const ids = removed.entries.map((e) => nat.ruleAtLine(e.line)).filter((id) => id >= 0);
    c.add({
      id: 'orphan-chain',
      ...removedServiceSaid(removed, c.node),
      expected: [],
      actual: [
        ...ids.map((id) => `-t nat ${nat.text(id)}`),
        ...chainLines(nat, removed.tree.chains.svc),
      ],
      next: restartKubeProxy(c, '').next,
    });
  }
}
