// The map elements and chains of a Service the API does not have, still routed in kube-proxy's
// table (removed-services.ts decides which): kube-proxy removes both on its next sync.
import type { AddFinding } from '../../drift.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import {
  removedServices,
  removedServiceSaid,
  type ServicesRead,
} from '../../kube-proxy/removed-services.js';
import type { ServiceTree } from '../../trees.js';
import type { NftTable } from '../read/listing.js';
import { elementLine } from './service-port.js';

export function removedServiceElements(
  o: {
    node: string;
    source: string;
    table: NftTable;
    ports: ExpectedServicePort[];
    read: ServicesRead;
    add: AddFinding;
  },
  trees: ServiceTree[],
): void {
  for (const removed of removedServices(trees, o.ports, o.read))
    o.add('orphan-chain', {
      ...removedServiceSaid(removed, o.node),
      actual: [
        ...removed.entries.map((e) => elementLine(o, e)),
        ...(removed.tree.chains.svc ? [`${o.source}: chain ${removed.tree.chains.svc}`] : []),
      ],
    });
}
