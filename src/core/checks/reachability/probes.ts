// The probes the diagnosis asks a live run to make on each node, and how each reads in evidence.
import { commandStem, type NodeProbe } from '../../nodes/commands.js';
import { seen, unseen } from '../../evidence.js';
import { hostPort } from '../../ipv6.js';
import type { Evidence } from '../../model.js';
import type { ProbeResult } from '../../nodes/outputs.js';
import type { CheckContext } from '../context.js';
import { isWindows } from '../../kube/objects.js';

export type { NodeProbe } from '../../nodes/commands.js';

/** The file stem a probe's stdout is recorded under. */
export const probeStem = (p: NodeProbe): string => commandStem(p);

/** A connect probe of the right protocol for a Service port (SCTP is not probed). */
export function connectProbe(ip: string, port: number, protocol: string): NodeProbe | undefined {
  if (protocol === 'TCP') return { kind: 'tcp-connect', ip, port };
  if (protocol === 'UDP') return { kind: 'udp-probe', ip, port };
  return undefined;
}

/** How a probe reads in evidence: "TCP connect 10.1.190.219:8080". */
export function probeText(p: NodeProbe): string {
  switch (p.kind) {
    case 'tcp-connect':
      return `TCP connect ${hostPort(p.ip, p.port)}`;
    case 'udp-probe':
      return `UDP probe ${hostPort(p.ip, p.port)}`;
    case 'icmp-echo':
      return `ping ${p.ip}`;
    case 'dns-lookup':
      return `DNS ${p.type} ${p.name} @${p.server}`;
  }
}

/** A probe's answer on a node as evidence: seen there, or not observed when it could not run. */
export function probeSeen(node: string, p: NodeProbe, r: ProbeResult): Evidence {
  const text = `${node}: ${probeText(p)}: ${r.detail}`;
  return r.status === 'unknown'
    ? unseen(text, node)
    : seen(text, { node, source: `nodes/${node}/${probeStem(p)}.txt` });
}

const PROBE_STEM = /^(tcp-connect|udp-probe|icmp-echo|dns-lookup)_/;

/** The endpoints of each port a live run probes from each node: the first ones, not thousands. */
export const PROBED_ENDPOINTS = 16;

/** The nodes that ran probes (any), in this run or this snapshot: what one did not record, it
 * did not observe. */
export function probingNodes(ctx: CheckContext): string[] {
  return ctx
    .nodeNames()
    .filter((n) => Object.keys(ctx.facts.nodes[n] ?? {}).some((s) => PROBE_STEM.test(s)));
}

/** Linux nodes read (or tried) that ran no probe while others did: what the probes say speaks
 * for the others only. */
export function idleProbers(ctx: CheckContext): string[] {
  const probing = new Set(probingNodes(ctx));
  if (probing.size === 0) return [];
  const windows = new Set(ctx.view.nodes.filter(isWindows).map((n) => n.name));
  // nodes kdebug read something of (or tried to), that ran no probe
  const tried = new Set(ctx.analysis.nodeErrors.nodes());
  return ctx
    .nodeNames()
    .filter(
      (n) =>
        !probing.has(n) &&
        !windows.has(n) &&
        (Object.keys(ctx.facts.nodes[n] ?? {}).length > 0 || tried.has(n)),
    );
}
