// A node's Service trees that no Service of the API makes: kube-proxy deletes a removed Service's
// chains and entry rules (its map elements in nftables mode) on its next sync, so a node still
// routing its address to Pods has not synced since the Service was deleted, or another proxy wrote
// them. IPVS mode says its leftover virtual servers itself (ipvs/drift), under the same id.
import { listedWhole, type ServiceListScope } from '../../facts/service-list-scope.js';
import { canonicalAddress, familyOf } from '../../ipv6.js';
import type { Service } from '../../kube/objects.js';
import type { ExpectedServicePort } from './service-port.js';
import type { DriftSaid } from '../drift.js';
import { entriesAt } from '../stale-entries.js';
import type { EntryPoint, ServiceTree } from '../trees.js';
import { serviceNameOf, serviceRefOf } from '../../model.js';

/** The Services read, and which namespaces' lists were read whole (service-list-scope.ts). */
export interface ServicesRead {
  scope: ServiceListScope;
  services: readonly Service[];
}

/** A tree no current Service port makes: of a Service the API does not have (`current` absent),
 * or of one it has that gets no rules of this family now. */
export interface RemovedService {
  tree: ServiceTree;
  entries: EntryPoint[];
  current?: Service;
}

/** The trees whose cluster IP entries lead to an address no current Service port has, of a
 * Service (by their comments' name) read without ports, or absent from a namespace whose
 * Service list was read whole. */
export function removedServices(
  trees: ServiceTree[],
  ports: ExpectedServicePort[],
  read: ServicesRead,
): RemovedService[] {
  const services = new Set(ports.map((sp) => `${sp.namespace}/${sp.service}`));
  const byName = new Map(read.services.map((s) => [`${s.namespace}/${s.name}`, s]));
  const addresses = new Set(
    ports.flatMap((sp) =>
      [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs].map(canonicalAddress),
    ),
  );
  return trees.flatMap((tree) => {
    if (!tree.name) return [];
    const service = serviceNameOf(tree.name);
    if (services.has(service)) return [];
    const current = byName.get(service);
    // absent from a namespace not listed whole: it may exist, unread
    if (!current && !listedWhole(read.scope, serviceRefOf(tree.name).namespace)) return [];
    const entries = tree.entries.filter((e) => e.kind === 'cluster-ip' && e.address !== undefined);
    if (entries.length === 0 || entries.some((e) => addresses.has(canonicalAddress(e.address!))))
      return [];
    return [{ tree, entries, ...(current ? { current } : {}) }];
  });
}

/** Why kube-proxy writes no rules of this family for a Service the API has. */
function noRulesWhy(svc: Service, family: string): string {
  if (svc.type === 'ExternalName') return 'has no cluster IP now (type ExternalName)';
  if (svc.headless) return 'has no cluster IP now (headless)';
  if (!svc.clusterIPs.some((ip) => familyOf(ip) === family))
    return `has no ${family} cluster IP now (${svc.clusterIPs.join(', ') || 'none'})`;
  return 'has no ports now';
}

/** What drift says of a removed Service's rules on `node`: what they still route, and why. */
export function removedServiceSaid(
  { tree, entries, current }: RemovedService,
  node: string,
): Pick<DriftSaid, 'service' | 'title' | 'message' | 'advice'> {
  const to = tree.endpoints.flatMap((e) => (e.address ? [e.address] : []));
  const ips = [...new Set(entries.map((e) => e.address!))];
  const service = tree.name && serviceNameOf(tree.name);
  const family = familyOf(ips[0]!) ?? 'IPv4';
  const now = current
    ? `Service ${service} ${noRulesWhy(current, family)}`
    : `the API has ${service ? `no Service ${service} and ` : ''}no Service with cluster IP ${ips.join(', ')}`;
  return {
    ...(tree.name ? { service: tree.name } : {}),
    title: `${entriesAt(entries)}: ${current ? `rules ${service} no longer gets` : 'rules of a Service the API does not have'}${tree.name && !current ? ` (${tree.name})` : ''}`,
    message: `node ${node} still routes ${entriesAt(entries)}${to.length > 0 ? ` to ${to.length <= 3 ? to.join(', ') : `${to.length} endpoints`}` : ''}, but ${now}: kube-proxy deletes the chains and entry rules of a Service port it no longer serves on its next sync, so kube-proxy on ${node} has not synced since${current ? ` ${service} changed` : ' the Service was deleted'} (or another proxy wrote these rules). Clients of the old address still reach its Pods through this node.`,
    advice: `Look for sync errors in kube-proxy's log on ${node}; deleting its Pod makes the DaemonSet start a new one, which removes them.`,
  };
}
