// Where the recorded nodes still route an address no Service has: what `kdebug svc IP:PORT` says
// beside "no Service has cluster IP", each read on the node (a removed Service's rules that
// kube-proxy there has not deleted).
import { recordedNodes } from '../facts/facts.js';
import { listedWhole, serviceListScope } from '../facts/service-list-scope.js';
import { canonicalAddress, familyOf } from '../ipv6.js';
import type { Analysis } from './analysis.js';
import { serviceNameOf, serviceRefOf, type ServicePortName } from '../model.js';

/** One node's entry at the address: its rules' file and line, and whose they are by name. */
export interface RoutedAt {
  node: string;
  source: string;
  line: number;
  service?: ServicePortName;
}

/** The cluster IP entries of the nodes' Service trees at `ip` (and `port`, when given), one a
 * node. */
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
          e.kind === 'cluster-ip' &&
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

/** Whose rules these are, as far as the Services read tell (stale: kube-proxy should have removed
 * them): a Service the API no longer has only where its namespace's Services were listed whole. */
function whose(
  analysis: Analysis,
  named: ServicePortName | undefined,
): { text: string; stale: boolean } {
  const ref = named ? serviceRefOf(named) : undefined;
  const service = named && serviceNameOf(named);
  const current =
    ref && analysis.view.services.find((s) => s.namespace === ref.namespace && s.name === ref.name);
  if (current)
    return {
      text: `rules of a cluster IP ${service} no longer has (now ${current.clusterIPs.join(', ') || 'none'}), which kube-proxy there has not removed`,
      stale: true,
    };
  if (ref && !listedWhole(serviceListScope(analysis.facts), ref.namespace))
    return {
      text: `the snapshot holds no Service ${service}, and ${ref.namespace}'s Services were not listed whole, so whether the API still has it is not known here`,
      stale: false,
    };
  return {
    text: 'rules of a Service the API no longer has, which kube-proxy there has not removed',
    stale: true,
  };
}

/** "; it is an external IP of default/web" where a Service read has the address as one. */
function externalOf(analysis: Analysis, ip: string): string {
  const has = (ips: string[]) => ips.some((x) => canonicalAddress(x) === ip);
  const s = analysis.view.services.find((x) => has(x.externalIPs) || has(x.loadBalancerIPs));
  if (!s) return '';
  const kind = has(s.externalIPs) ? 'an external IP (spec.externalIPs)' : 'a load-balancer IP';
  return `; it is ${kind} of ${s.namespace}/${s.name}: kdebug svc ${s.namespace}/${s.name} follows it`;
}

/** "; yet vm-a still routes it (observed on the node: nodes/vm-a/iptables-save.txt:82, the rules
 * of default/web:http): ..." where no Service has the address as its cluster IP and a node routes
 * it there; "; it is an external IP of ..." where a Service has it as another address; else ''. */
export function stillRoutedText(analysis: Analysis, at: { ip: string; port?: string }): string {
  const owned = analysis.view.services.some((s) =>
    s.clusterIPs.some((ip) => canonicalAddress(ip) === at.ip),
  );
  if (owned) return '';
  const external = externalOf(analysis, at.ip);
  if (external) return external;
  const found = routedAt(analysis, at);
  if (found.length === 0) return '';
  const nodes = found.map((f) => f.node);
  const where = found
    .map((f) => `${f.source}:${f.line}${f.service ? `, the rules of ${f.service}` : ''}`)
    .join('; ');
  const named = found.find((f) => f.service)?.service;
  const { text, stale } = whose(analysis, named);
  const route = nodes.length === 1 ? 'routes' : 'route';
  return stale
    ? `; yet ${nodes.join(', ')} still ${route} it (observed on the node: ${where}): ${text} (kdebug drift --node ${nodes[0]} says what else it kept)`
    : `; ${nodes.join(', ')} ${route} it (observed on the node: ${where}): ${text}`;
}
