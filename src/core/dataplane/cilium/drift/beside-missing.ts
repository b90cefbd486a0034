// A frontend the agent lacks on a node where kube-proxy runs beside a partial replacement: the
// agent passes its packets untranslated (beside-kube-proxy.ts walks them on), so whether they
// reach the Service's endpoints is kube-proxy's rules' to say, as their trees hold it.
import type { EntryKind, ServiceTrees } from '../../trees.js';
import type { ExpectedFrontend } from '../expected/expected.js';
import type { FrontendType } from '../read/listing.js';
import { frontendKey } from '../read/listing.js';

/** kube-proxy's rules beside the agent: their Service trees, and the agent's replacement in words. */
export interface KubeProxyBeside {
  trees: ServiceTrees;
  replacement: string;
}

/** The entry kind of kube-proxy's rules that takes a frontend of each type. */
const ENTRY_OF: Partial<Record<FrontendType, EntryKind>> = {
  ClusterIP: 'cluster-ip',
  NodePort: 'node-port',
  ExternalIPs: 'external-ip',
  LoadBalancer: 'load-balancer',
};

/** What `want`'s absence from the agent's table means for its packets, as a clause. */
export function missingBeside(want: ExpectedFrontend, node: string, beside: KubeProxyBeside) {
  const kind = ENTRY_OF[want.type];
  const name = `${want.service}${want.portName ? `:${want.portName}` : ''}`;
  const tree = beside.trees.services.find(
    (t) => t.name === name && t.protocol === want.protocol.toLowerCase(),
  );
  const entry = tree?.entries.find(
    (e) =>
      e.kind === kind &&
      e.port === want.port &&
      // a node port's entry is on every node address, the wildcard's
      (kind === 'node-port' || e.address === want.ip),
  );
  const lacks = `Cilium's agent on ${node}, beside kube-proxy there (${beside.replacement}), holds no ${want.type} frontend ${frontendKey(want)} for ${want.service}: a packet to it passes the agent untranslated to kube-proxy's rules`;
  return entry
    ? `${lacks}, which hold it (${entry.from} -> ${entry.chain}) and translate it as kdebug trace walks it: the Service answers there through kube-proxy's rules, not Cilium's datapath.`
    : `${lacks}, which hold no rule for it either: connections to it are not load-balanced on this node.`;
}
