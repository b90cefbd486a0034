// A node without a local endpoint under externalTrafficPolicy Local, in nftables mode: the
// no-endpoint elements of kube-proxy's maps drop the port's external traffic.
import type { StateLine } from '../dataplane.js';
import type { ServiceTree } from '../trees.js';
import { noEndpointElement } from './trees.js';

/** The no-endpoint elements of kube-proxy's maps that drop the port's external traffic. */
export function nftablesLocalDrops(source: string, tree: ServiceTree | undefined): StateLine[] {
  return (tree?.verdicts ?? [])
    .filter((v) => v.kind === 'drop')
    .map((v) => ({ text: `${source}: ${noEndpointElement(tree!, v)}`, source }));
}
