// A node's Service trees that no Service of the API makes: kube-proxy deletes a removed Service's
// chains and entry rules (its map elements in nftables mode) on its next sync, so a node still
// routing its address to Pods has not synced since the Service was deleted, or another proxy wrote
// them. IPVS mode says its leftover virtual servers itself (ipvs/drift), under the same id.
import { canonicalAddress } from '../ipv6.js';
import type { ExpectedServicePort } from './kube-proxy/service-port.js';
import type { DriftSaid } from './drift.js';
import { entriesAt } from './stale-entries.js';
import type { EntryPoint, ServiceTree } from './trees.js';

/** "ns/name" of a ServicePortName ("ns/name:port", "ns/name"). */
export const serviceOf = (name: string) => name.replace(/:[^/:]*$/, '');

/** Whether a Service ("ns/name") absent from the objects read is known to be gone: only where the
 * Service list was read (default/kubernetes, which every cluster has, is among them; a one-Service
 * capture lacks it) and in a namespace some of whose Services were read (a capture of some
 * namespaces says nothing of the others). Undefined where the list was not read: nothing is. */
export function servicesRead(
  services: Iterable<string>,
): { removed: (service: string) => boolean; said: (service: string) => boolean } | undefined {
  const read = new Set(services);
  if (!read.has('default/kubernetes')) return undefined;
  const namespaces = new Set([...read].map((s) => s.split('/')[0]!));
  // the objects say of a Service whether it is there: read, or absent from a namespace read
  const said = (s: string) => read.has(s) || namespaces.has(s.split('/')[0]!);
  return { removed: (s) => !read.has(s) && said(s), said };
}

/** The trees whose cluster IP entries lead to an address no current Service port has, of a
 * Service (by their comments' name) the API does not have in a namespace whose Services were
 * read: none where the Service list was not (one Service's capture lacks default/kubernetes,
 * which every cluster has). */
export function removedServices(
  trees: ServiceTree[],
  ports: ExpectedServicePort[],
): { tree: ServiceTree; entries: EntryPoint[] }[] {
  const read = servicesRead(ports.map((sp) => `${sp.namespace}/${sp.service}`));
  if (!read) return [];
  const addresses = new Set(
    ports.flatMap((sp) =>
      [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs].map(canonicalAddress),
    ),
  );
  return trees.flatMap((tree) => {
    const service = tree.name && serviceOf(tree.name);
    if (!service || !read.removed(service)) return [];
    const entries = tree.entries.filter((e) => e.kind === 'cluster-ip' && e.address !== undefined);
    if (entries.length === 0 || entries.some((e) => addresses.has(canonicalAddress(e.address!))))
      return [];
    return [{ tree, entries }];
  });
}

/** What drift says of a removed Service's rules on `node`: what they still route, and why. */
export function removedServiceSaid(
  tree: ServiceTree,
  entries: EntryPoint[],
  node: string,
): Pick<DriftSaid, 'service' | 'title' | 'message' | 'advice'> {
  const to = tree.endpoints.flatMap((e) => (e.address ? [e.address] : []));
  const ips = [...new Set(entries.map((e) => e.address!))];
  const service = tree.name && serviceOf(tree.name);
  return {
    ...(tree.name ? { service: tree.name } : {}),
    title: `${entriesAt(entries)}: rules of a Service the API does not have${tree.name ? ` (${tree.name})` : ''}`,
    message: `node ${node} still routes ${entriesAt(entries)}${to.length > 0 ? ` to ${to.length <= 3 ? to.join(', ') : `${to.length} endpoints`}` : ''}, but the API has ${service ? `no Service ${service} and ` : ''}no Service with cluster IP ${ips.join(', ')}: kube-proxy deletes a removed Service's chains and entry rules on its next sync, so kube-proxy on ${node} has not synced since the Service was deleted (or another proxy wrote these rules). Clients of the old address still reach its Pods through this node.`,
    advice: `Look for sync errors in kube-proxy's log on ${node}; deleting its Pod makes the DaemonSet start a new one, which removes them.`,
  };
}
