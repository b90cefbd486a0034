// The Service trees as search documents, whichever dataplane they were read from: what each
// mode's index holds of its Services (iptables and nftables add their rules beside them).
import { hostPort } from '../../ipv6.js';
import type { ServiceTrees } from '../trees.js';
import { SearchIndex } from './search.js';

/** An index of the Service trees alone (a dataplane with no rules to search: IPVS). */
export function treeSearchIndex(trees: ServiceTrees, table: string): SearchIndex {
  const index = new SearchIndex();
  addTreeDocs(index, trees, table);
  return index.seal();
}

/** The Service trees' documents (names, cluster IP:ports, node ports, external and load-balancer
 * IPs, endpoints), whichever dataplane they were read from; which chain and rule line is whose. */
export function addTreeDocs(index: SearchIndex, trees: ServiceTrees, table: string) {
  const owner = new Map<string, string>(); // chain -> tree id
  const byLine = new Map<string, string>(); // "table:line" -> tree id, for rules in shared chains
  for (const t of trees.services) {
    for (const r of [...t.entries, ...t.masquerade]) byLine.set(`nat:${r.line}`, t.id);
    for (const v of t.verdicts) byLine.set(`${v.table}:${v.line}`, t.id);
    // a dual-stack listing's two tables each hold the Service: each found in its own
    const at = t.family ? { table } : {};
    index.add({ kind: 'service', text: t.id, service: t.id, chain: t.chains.svc, ...at }, true);
    if (t.clusterIP)
      index.add({
        kind: 'service',
        text: hostPort(t.clusterIP, t.port ?? ''),
        service: t.id,
        chain: t.chains.svc,
        ...at,
      });
    for (const np of t.nodePorts)
      index.add({
        kind: 'service',
        text: String(np),
        service: t.id,
        chain: t.chains.ext ?? t.chains.svc,
        ...at,
      });
    for (const ip of [...t.externalIPs, ...t.loadBalancerIPs])
      index.add({
        kind: 'service',
        text: ip,
        service: t.id,
        chain: t.chains.ext ?? t.chains.fw,
        ...at,
      });
    // an entry whose kind its listing does not say (an IPVS virtual server, a Cilium frontend)
    for (const e of t.entries)
      if (e.address && (e.kind === 'virtual-server' || e.kind === 'frontend'))
        index.add({
          kind: 'service',
          text: hostPort(e.address, e.port ?? ''),
          service: t.id,
          chain: e.chain,
          ...at,
        });
    for (const c of Object.values(t.chains)) if (c) owner.set(c, t.id);
    for (const ep of [...t.endpoints, ...(t.localEndpoints ?? [])]) {
      owner.set(ep.chain, t.id);
      // a name ipvsadm cut is found by what it printed of it
      const text = ep.address ?? ep.inferredIP ?? ep.hostStart;
      if (text) index.add({ kind: 'endpoint', text, service: t.id, chain: ep.chain, table });
    }
  }
  return { owner, byLine };
}
