// The `kdebug trace` presentations: every outcome of one packet with its probability, and the
// rules it matched in order, as text a person follows or as JSON.
import type { ClusterView } from '../core/kube.js';
import type { TraceOutcome, TraceResult } from '../core/trace.js';
import { sanitize } from '../core/sanitize.js';

export const TRACE_SCHEMA_VERSION = 1;

export interface TraceLabels {
  node: string;
  /** What the destination address is, when kdebug knows ("ClusterIP of default/nginx-svc ..."). */
  destinationIs?: string;
  /** What the destination's rules match, for "no rule matched" ("tcp port 8080"). */
  servicePorts?: string[];
  /** The Pod IPs the objects hold; absent when no Pod was captured (then nothing is said). */
  podIPs?: Set<string>;
}

const pct = (p: number) => `${(p * 100).toFixed(1)}%`;

function packetText(r: TraceResult): string {
  const p = r.packet;
  const dst = p.protocol === 'icmp' ? p.dst : `${p.dst}:${p.dport}`;
  const from = p.fromHost
    ? 'from a process on the node (enters nat OUTPUT)'
    : 'from a Pod or the network (enters nat PREROUTING)';
  return `${p.protocol} ${p.src} -> ${dst}, ${from}`;
}

function summary(o: TraceOutcome, r: TraceResult, labels: TraceLabels): string {
  if (o.verdict === 'REJECT')
    return 'REJECTED (the client gets "connection refused" / port unreachable)';
  if (o.verdict === 'DROP') return 'DROPPED (the client waits for a timeout)';
  const gone = podGone(o, labels)
    ? ` (no Pod has ${o.dnat!.replace(/:\d+$/, '')} now: a stale rule)`
    : '';
  const where = o.dnat
    ? `DNAT to ${o.dnat}${gone}`
    : 'no rule changed the destination: routed unchanged';
  // a process on the node sends; only a packet that came in is forwarded
  const to =
    o.delivery === 'local'
      ? 'delivered to the node itself'
      : r.packet.fromHost
        ? 'sent out by the node'
        : 'forwarded';
  return `${where}, ${to}, ${o.masquerade ? 'masqueraded (source NAT to the node)' : 'not masqueraded'}`;
}

/** A DNAT to an address no captured Pod has (said only when Pods were captured). */
function podGone(o: TraceOutcome, labels: TraceLabels): boolean {
  const ip = o.dnat?.replace(/:\d+$/, '');
  return ip !== undefined && labels.podIPs !== undefined && !labels.podIPs.has(ip);
}

/** Whether the traffic asked about is refused or dropped on some outcome (exit 1). */
export function traceBlocked(r: TraceResult): boolean {
  return r.outcomes.some((o) => o.verdict === 'REJECT' || o.verdict === 'DROP');
}

export function traceText(r: TraceResult, labels: TraceLabels): string {
  const out = [`packet walk on node ${labels.node}: ${packetText(r)}`];
  if (labels.destinationIs) out.push(`  ${r.packet.dst} is ${labels.destinationIs}`);
  out.push('', `${r.outcomes.length} outcome${r.outcomes.length === 1 ? '' : 's'}:`);
  for (const o of r.outcomes)
    out.push(`  ${pct(o.probability).padStart(6)}  ${summary(o, r, labels)}`);
  const unchanged = r.outcomes.some((o) => o.destination === null);
  if (unchanged && labels.servicePorts?.length) {
    out.push(
      '',
      `  No Service rule matched: the rules for ${r.packet.dst} only match ${labels.servicePorts.join(', ')}. The packet goes on to ${r.packet.dst} unchanged; a ClusterIP is bound to no interface, so nothing answers it (this is why ping to a ClusterIP fails while curl to its port works).`,
    );
  }
  r.outcomes.forEach((o, i) => {
    out.push('', `outcome ${i + 1}: ${pct(o.probability)}  ${summary(o, r, labels)}`);
    o.rules.forEach((m, k) => {
      out.push(
        `  ${String(k + 1).padStart(2)}. ${m.table} ${m.chain}${m.line ? ` (line ${m.line})` : ''}: ${m.effect}`,
      );
      out.push(`      ${m.rule}`);
    });
    if (o.rules.length === 0) out.push('  no rule matched in any chain it passed');
    for (const a of o.assumptions) out.push(`  assumes: ${a}`);
  });
  for (const n of r.notes) out.push('', `note: ${n}`);
  return out.map(sanitize).join('\n') + '\n'; // rule lines and comments come from the node
}

export function traceJson(r: TraceResult, labels: TraceLabels): string {
  const doc = {
    schemaVersion: TRACE_SCHEMA_VERSION,
    node: labels.node,
    packet: {
      src: r.packet.src,
      dst: r.packet.dst,
      dport: r.packet.protocol === 'icmp' ? null : (r.packet.dport ?? null),
      protocol: r.packet.protocol,
      from: r.packet.fromHost ? 'host' : 'network',
      enters: r.packet.fromHost ? 'nat OUTPUT' : 'nat PREROUTING',
    },
    destinationIs: labels.destinationIs ?? null,
    outcomes: r.outcomes.map((o) => ({
      probability: o.probability,
      destination: o.destination,
      masquerade: o.masquerade,
      verdict: o.verdict,
      delivery: o.delivery,
      ...(podGone(o, labels) ? { noPodHasTarget: true } : {}),
      rules: o.rules,
      assumptions: o.assumptions,
    })),
    notes: r.notes,
  };
  return JSON.stringify(doc, null, 2) + '\n';
}

/** What the destination is, from the objects: a Service address or a node's. */
export function labelsFor(
  view: ClusterView,
  node: string,
  packet: { dst: string; protocol: string },
): TraceLabels {
  const pods = view.pods.flatMap((p) =>
    p.podIPs.length > 0 ? p.podIPs : p.podIP ? [p.podIP] : [],
  );
  const podIPs = pods.length > 0 ? { podIPs: new Set(pods) } : {};
  for (const s of view.services) {
    const kind = s.clusterIPs.includes(packet.dst)
      ? 'the ClusterIP'
      : s.externalIPs.includes(packet.dst)
        ? 'an external IP'
        : s.loadBalancerIPs.includes(packet.dst)
          ? 'a load-balancer IP'
          : undefined;
    if (!kind) continue;
    const ports = s.ports.map((p) => `${p.protocol.toLowerCase()} port ${p.port}`);
    return {
      node,
      destinationIs: `${kind} of Service ${s.namespace}/${s.name} (${ports.join(', ')})`,
      servicePorts: ports,
      ...podIPs,
    };
  }
  const owner = view.nodes.find((n) => n.ips.includes(packet.dst));
  return owner
    ? { node, destinationIs: `an address of node ${owner.name}`, ...podIPs }
    : { node, ...podIPs };
}
