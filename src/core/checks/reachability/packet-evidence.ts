// The packet walk (dataplane/trace/) as evidence lines: what kube-proxy's rules on a node do to one
// packet a process on that node sends, e.g. an ICMP echo or a TCP SYN to a ClusterIP.
import type { TraceProtocol } from '../../dataplane/trace/trace.js';
import type { CheckContext } from '../context.js';
import { computed } from '../../evidence.js';
import { percent, type Evidence } from '../../model.js';

export interface WalkRequest {
  dst: string;
  port?: number;
  proto: string;
}

/** "walked: on NODE, icmp 10.0.12.7 -> 10.1.190.219: no rule matched it: routed unchanged". */
export function packetWalk(ctx: CheckContext, node: string, r: WalkRequest): Evidence[] {
  const src = ctx.view.nodes.find((n) => n.name === node)?.ips[0];
  if (!ctx.analysis.node(node).dataplane() || !src) return [];
  let result;
  try {
    result = ctx.analysis.node(node).trace({
      src,
      dst: r.dst,
      dport: r.port,
      protocol: r.proto as TraceProtocol,
      fromHost: true,
    });
  } catch {
    return []; // the walk is supporting evidence; its absence is not a finding
  }
  const head = `on ${node}, ${r.proto} ${src} -> ${r.dst}${r.port !== undefined && r.proto !== 'icmp' ? `:${r.port}` : ''}:`;
  const outcomes = result.outcomes.map((o) =>
    o.destination === null
      ? o.delivery === 'local'
        ? 'delivered to the node itself, which answers it'
        : 'no rule matched it: routed unchanged'
      : `${result.outcomes.length > 1 ? `${percent(o.probability)} ` : ''}${o.destination === 'REJECT' || o.destination === 'DROP' ? o.destination : `DNAT to ${o.destination}`}${o.masquerade ? ', masqueraded' : ''}`,
  );
  // computed over the node's observed rules: it explains, it does not prove
  return [computed(`${head} ${outcomes.join('; ') || 'no outcome'}`, 'walked')];
}
