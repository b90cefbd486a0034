// A node without a local endpoint under externalTrafficPolicy Local, in IPVS mode: nothing is
// dropped; the external virtual servers send the traffic to the other nodes' endpoints.
import type { StateLine } from '../dataplane.js';
import type { ServiceTree } from '../trees.js';

/** IPVS drops nothing: each external virtual server and the real servers it sends to. */
export function ipvsExternalServers(source: string, tree: ServiceTree | undefined): StateLine[] {
  return (tree?.entries ?? [])
    .filter((e) => e.kind !== 'cluster-ip')
    .map((e) => ({
      text: `${source}:${e.line}: virtual server ${e.chain} -> ${tree!.endpoints.map((x) => x.address).join(', ') || 'no real server'}`,
      source,
      line: e.line,
    }));
}
