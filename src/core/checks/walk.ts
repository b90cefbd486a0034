// The packet walk (trace.ts) as evidence lines: what kube-proxy's rules on a node do to one
// packet a process on that node sends, e.g. an ICMP echo or a TCP SYN to a ClusterIP.
import { parseIpBrief } from '../probes.js';
import { tracePacket, type NodeNetwork, type TraceProtocol } from '../trace.js';
import type { CheckContext } from './context.js';

export interface WalkRequest {
  dst: string;
  port?: number;
  proto: string;
}

/** The node's addresses and interfaces: its Node object's IPs and the recorded `ip -br addr`. */
export function nodeNetwork(ctx: CheckContext, node: string): NodeNetwork {
  const ips = ctx.view.nodes.find((n) => n.name === node)?.ips ?? [];
  const interfaces = parseIpBrief(ctx.output(node, 'ip-addr') ?? '').map((i) => ({
    name: i.name,
    cidrs: i.addresses.filter((a) => !a.includes(':')),
  }));
  const own = interfaces.find((i) => i.cidrs.some((c) => ips.includes(c.split('/')[0]!)));
  return {
    localAddresses: [
      ...new Set([...ips, ...interfaces.flatMap((i) => i.cidrs.map((c) => c.split('/')[0]!))]),
    ],
    interfaces,
    ...(own ? { defaultInterface: own.name } : {}),
  };
}

const pct = (p: number) => `${Math.round(p * 1000) / 10}%`;

/** "packet walk on NODE, icmp 10.0.12.7 -> 10.1.190.219: no rule matched, routed unchanged". */
export function packetWalk(ctx: CheckContext, node: string, r: WalkRequest): string[] {
  const rs = ctx.rules(node)?.ruleset;
  const src = ctx.view.nodes.find((n) => n.name === node)?.ips[0];
  if (!rs || !src) return [];
  let result;
  try {
    result = tracePacket(rs, nodeNetwork(ctx, node), {
      src,
      dst: r.dst,
      dport: r.port,
      protocol: r.proto as TraceProtocol,
      fromHost: true,
    });
  } catch {
    return []; // the walk is supporting evidence; its absence is not a finding
  }
  const head = `packet walk on ${node}, ${r.proto} ${src} -> ${r.dst}${r.port !== undefined && r.proto !== 'icmp' ? `:${r.port}` : ''}:`;
  const outcomes = result.outcomes.map((o) =>
    o.destination === null
      ? 'no rule matched it: routed unchanged'
      : `${result.outcomes.length > 1 ? `${pct(o.probability)} ` : ''}${o.destination === 'REJECT' || o.destination === 'DROP' ? o.destination : `DNAT to ${o.destination}`}${o.masquerade ? ', masqueraded' : ''}`,
  );
  return [`${head} ${outcomes.join('; ') || 'no outcome'}`];
}
