// The probes the diagnosis asks a live run to make on each node, what each recorded, and how each
// reads in evidence.
import { commandStem, type NodeProbe } from '../../nodes/commands.js';
import { seen, unseen } from '../../findings/evidence.js';
import { hostPort } from '../../ipv6.js';
import type { Evidence } from '../../model.js';
import type { ProbeResult } from '../../nodes/outputs.js';
import { nodesNotRecorded } from '../../facts/not-read.js';
import type { CheckContext } from '../context.js';
import { isWindows, type ServicePort } from '../../kube/objects.js';

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
  // nodes kdebug read something of (or tried to), or whose outputs a snapshot left out
  const tried = new Set([...ctx.analysis.nodeErrors.nodes(), ...unrecordedNodes(ctx)]);
  return ctx
    .nodeNames()
    .filter(
      (n) =>
        !probing.has(n) &&
        !windows.has(n) &&
        (Object.keys(ctx.facts.nodes[n] ?? {}).length > 0 || tried.has(n)),
    );
}

/** Linux nodes the run speaks for that its capture recorded nothing of (facts/not-read.ts). */
export function unrecordedNodes(ctx: CheckContext): string[] {
  if (ctx.waiting('nodes')) return [];
  const windows = new Set(ctx.view.nodes.filter(isWindows).map((n) => n.name));
  const linux = ctx.nodeNames().filter((n) => !windows.has(n));
  return nodesNotRecorded(ctx.facts, linux, ctx.analysis.nodeErrors);
}

export interface Probed {
  node: string;
  probe: NodeProbe;
  result: ProbeResult;
}

export function probed(ctx: CheckContext, probe: NodeProbe): Probed[] {
  return ctx.nodeNames().flatMap((node) => {
    const result = ctx.probe(node, probe);
    return result ? [{ node, probe, result }] : [];
  });
}

/** A recorded probe as evidence. */
export const probedEvidence = (p: Probed) => probeSeen(p.node, p.probe, p.result);

/** Another port of the Service has this one's number (dns 53/UDP and dns-tcp 53/TCP): what is
 * said of each names its protocol, or the two read the same. */
export const sharesNumber = (ctx: CheckContext, port: ServicePort) =>
  ctx.service!.ports.some((q) => q !== port && q.port === port.port);

/** "10.1.0.10:53", or "10.1.0.10:53/UDP" where another port of the Service has that number. */
export const addressOf = (ctx: CheckContext, port: ServicePort, ip: string, n = port.port) =>
  `${hostPort(ip, n)}${sharesNumber(ctx, port) ? `/${port.protocol}` : ''}`;
/** A probe that ran and saw something: its tool was there and it gave an answer or an error. */
export const observed = (p: Probed) => p.result.status !== 'unknown';
/** A probe whose connection was refused. */
export const refused = (p: Probed) => p.result.failure === 'refused';
