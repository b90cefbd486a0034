// nftables mode's Dataplane: kube-proxy's table (ip or ip6 kube-proxy) as the node listed it.
import type { NftablesDataplane, StateLine } from '../dataplane.js';
import { nftablesLocalDrops } from './local-policy.js';
import { NFTABLES_HAIRPIN, nftablesHairpin } from './hairpin.js';
import { nftablesClusterIpLines } from './ping.js';
import { watchedServiceCIDRs } from '../kube-proxy/releases.js';
import { isKubeProxyPod, serviceCIDRs, type ClusterView } from '../../kube/objects.js';
import type { ServiceListScope } from '../../facts/service-list-scope.js';
import { nftablesDrift, unreadFor } from './drift.js';
import { unreadAt, type NftTable } from './read/listing.js';
import { traceNftPacket } from './trace.js';
import { nftReadStop } from './trace-cut.js';
import { rejectRuleOn } from '../trace/trace.js';
import { buildNftServiceTrees, noEndpointElement } from './trees.js';
import type { ServiceTree, ServiceTrees } from '../trees.js';

// what the node analysis reads of the mode besides, loaded with it (../modes.ts)
export { NftParseError } from './read/listing.js';
export { parseNftAny } from './read/read-text.js';
export { ruleText } from './render.js';
export { nftShown } from './drift/written-by.js';

export function nftablesDataplane(
  table: NftTable,
  source: string,
  view: ClusterView,
  listed: ServiceListScope = { kind: 'none' },
): NftablesDataplane {
  let trees: ServiceTrees | undefined;
  return {
    mode: 'nftables',
    source,
    table,
    // the table's maps are read whole: building it costs less than choosing in it
    trees: () =>
      (trees ??= buildNftServiceTrees(table, {
        loadBalancerIPs: new Set(view.services.flatMap((s) => s.loadBalancerIPs)),
      })),
    drift: (node, expected, own, scope) =>
      nftablesDrift({
        node,
        source,
        expected: expected(),
        serviceCIDRs: watchedServiceCIDRs(expected().release, serviceCIDRs(view)),
        table,
        trees: own,
        scoped: scope !== undefined,
        servicesRead: { scope: listed, services: view.services },
        kubeProxyPod: view.pods.find((p) => p.nodeName === node && isKubeProxyPod(p))?.name,
      }),
    trace: (packet, net) => traceNftPacket(table, net, packet),
    readStop: (walked, file) => nftReadStop(table, file, walked),
    rejectedBy: (_walked, node) => rejectRuleOn(node),
    clusterIpLines: (q) => nftablesClusterIpLines(table, source, q),
    hairpin: (q) => nftablesHairpin(table, source, q),
    hairpinHow: NFTABLES_HAIRPIN,
    noLocalEndpointLines: (tree) => nftablesLocalDrops(source, tree),
    notCompared: () => undefined,
    entryLines: (tree) => nftablesEntryLines(source, tree),
    notReadFor: (ports) => unreadFor(table, ports).map((u) => unreadAt(source, u)),
  };
}

/** A tree's map elements: how traffic enters it, and the element that rejects or drops a port
 * without endpoints (the only place such a port is). */
const nftablesEntryLines = (source: string, tree: ServiceTree): StateLine[] => [
  ...tree.entries.map((e) => ({
    text: `${source}: ${e.from} ${e.address ? `${e.address} . ` : ''}${e.protocol} . ${e.port} : goto ${e.chain}`,
    source,
  })),
  ...tree.verdicts.map((v) => ({ text: `${source}: ${noEndpointElement(tree, v)}`, source })),
];
