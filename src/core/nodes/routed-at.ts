// Where the recorded nodes still route an address no Service has: what `kdebug svc IP:PORT` says
// beside "no Service has cluster IP", each read on the node (a removed Service's rules that
// kube-proxy there has not deleted).
import { recordedNodes } from '../facts/facts.js';
import { canonicalAddress, familyOf } from '../ipv6.js';
import type { Analysis } from './analysis.js';

/** One node's entry at the address: its rules' file and line, and whose they are by name. */
export interface RoutedAt {
  node: string;
  source: string;
  line: number;
  service?: string;
}

/** The entries of the nodes' Service trees at `ip` (and `port`, when given), one a node. */
export function routedAt(analysis: Analysis, at: { ip: string; port?: string }): RoutedAt[] {
  const family = familyOf(at.ip) ?? 'IPv4';
  return recordedNodes(analysis.facts).flatMap((node) => {
    const n = analysis.node(node, undefined, family);
    const trees = n.trees(undefined);
    const dataplane = n.dataplane();
    if (!trees || !dataplane) return [];
    for (const t of trees.services)
      for (const e of t.entries)
        if (
          e.address !== undefined &&
          canonicalAddress(e.address) === at.ip &&
          (at.port === undefined || String(e.port) === at.port)
        )
          return [
            {
              node,
              source: dataplane.source,
              line: e.line,
              ...(t.name ? { service: t.name } : {}),
            },
          ];
    return [];
  });
}

/** "; yet vm-a still routes it (observed on the node: nodes/vm-a/iptables-save.txt:82, the rules
 * of default/web:http): ..." where no Service has the address and a node routes it; else ''. */
export function stillRoutedText(analysis: Analysis, at: { ip: string; port?: string }): string {
  const owned = analysis.view.services.some((s) =>
    s.clusterIPs.some((ip) => canonicalAddress(ip) === at.ip),
  );
  const found = owned ? [] : routedAt(analysis, at);
  if (found.length === 0) return '';
  const nodes = found.map((f) => f.node);
  const where = found
    .map((f) => `${f.source}:${f.line}${f.service ? `, the rules of ${f.service}` : ''}`)
    .join('; ');
  return `; yet ${nodes.join(', ')} still ${nodes.length === 1 ? 'routes' : 'route'} it (observed on the node: ${where}): rules of a Service the API no longer has, which kube-proxy there has not removed (kdebug drift --node ${nodes[0]} says what else it kept)`;
}
