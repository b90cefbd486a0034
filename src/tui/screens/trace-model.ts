// What the Trace screen offers to walk: sources (a Pod, a process on a node, a client outside)
// and destinations (the Service addresses in the source node's rules, and a ping to a ClusterIP),
// and the walk itself, done by the core's tracer.
import { familyOf, hostPort, type IPFamily } from '../../core/ipv6.js';
import { ENTRY_KIND_TEXT } from '../../core/dataplane/trees.js';
import type { TraceProtocol } from '../../core/dataplane/trace/trace.js';
import type { Traced } from '../../core/dataplane/trace/answer.js';
import { nodePortNotInApi, type PortNotInApi } from '../../core/dataplane/trace/stale-port.js';
import type { NodeData, TuiData } from '../data.js';
import { isPortOf } from '../../core/model.js';

export interface TraceSource {
  kind: 'pod' | 'node' | 'outside';
  label: string;
  node: string;
  ip: string;
  /** The family of its address: its packets walk the node's rules of that family. */
  family: IPFamily;
  fromHost: boolean;
}

export interface TraceDestination {
  label: string;
  ip: string;
  port?: number;
  protocol: TraceProtocol;
}

/** A client outside the cluster (TEST-NET-3; 2001:db8::/32 for IPv6): reaching a node port or
 * external IP. */
export const OUTSIDE_CLIENT = '203.0.113.10';
export const OUTSIDE_CLIENT6 = '2001:db8:ffff::10';

/** The node's rules of one family, as the screens hold them. */
const rulesOf = (data: TuiData, node: string | undefined, family: IPFamily | undefined) =>
  data.nodes.find((n) => n.name === node && n.family === family);

/** Names in the target's namespace without it: the picker columns are narrow at 80. */
const shortName = (namespace: string | undefined) => (name: string) =>
  namespace !== undefined && name.startsWith(`${namespace}/`)
    ? name.slice(namespace.length + 1)
    : name;

const byTarget = (target: string | undefined) => (name: string | undefined) =>
  target !== undefined && isPortOf(name, target) ? 0 : 1;

export function traceSources(data: TuiData): TraceSource[] {
  const view = data.view;
  // a node's rules of one family were read (an IPv6 address walks the IPv6 rules)
  const read = (node: string | undefined, family: IPFamily) => {
    const n = rulesOf(data, node, family);
    return n?.walkable === true;
  };
  const target = data.target;
  const short = shortName(target?.namespace);
  const pods = view.pods
    .filter((p) => p.podIP && !p.hostNetwork && p.nodeName)
    // the target's namespace first: its Pods are the likeliest clients
    .sort(
      (a, b) =>
        Number(a.namespace !== target?.namespace) - Number(b.namespace !== target?.namespace) ||
        `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`),
    )
    .flatMap((p) =>
      (p.podIPs.length > 0 ? p.podIPs : [p.podIP!]).flatMap((ip): TraceSource[] => {
        const family = familyOf(ip);
        return family && read(p.nodeName, family)
          ? [
              {
                kind: 'pod',
                label: `Pod ${ip} ${short(`${p.namespace}/${p.name}`)}`, // the IP first: a narrow pane cuts the name
                node: p.nodeName!,
                ip,
                family,
                fromHost: false,
              },
            ]
          : [];
      }),
    );
  // each node's first address of each family whose rules were read
  const nodes = view.nodes.flatMap((n) =>
    (['IPv4', 'IPv6'] as const).flatMap((family) => {
      const ip = n.ips.find((x) => familyOf(x) === family);
      return ip && read(n.name, family) ? [{ name: n.name, ip, family }] : [];
    }),
  );
  return [
    ...pods,
    ...nodes.map((n): TraceSource => ({
      kind: 'node',
      label: `node ${n.ip} ${n.name}`,
      node: n.name,
      ip: n.ip,
      family: n.family,
      fromHost: true,
    })),
    ...nodes.map((n): TraceSource => ({
      kind: 'outside',
      label: `outside, via ${n.name}${n.family === 'IPv6' ? ' (IPv6)' : ''}`,
      node: n.name,
      ip: n.family === 'IPv6' ? OUTSIDE_CLIENT6 : OUTSIDE_CLIENT,
      family: n.family,
      fromHost: false,
    })),
  ];
}

/** The Service addresses in the source node's rules, the target Service's first. */
export function traceDestinations(
  data: TuiData,
  source: TraceSource | undefined,
): TraceDestination[] {
  const node: NodeData | undefined = rulesOf(data, source?.node, source?.family);
  if (!source || !node?.trees) return [];
  const nodeIP = data.view.nodes
    .find((n) => n.name === node.name)
    ?.ips.find((ip) => familyOf(ip) === source.family);
  const first = byTarget(
    data.target ? `${data.target.namespace}/${data.target.service}` : undefined,
  );
  const short = shortName(data.target?.namespace);
  const trees = [...node.trees.services].sort((a, b) => first(a.name) - first(b.name));
  const out: TraceDestination[] = [];
  const seen = new Set<string>();
  const add = (d: TraceDestination) => {
    const key = `${d.protocol} ${d.ip}:${d.port}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(d);
  };
  for (const t of trees) {
    const protocol = t.protocol.toLowerCase() as TraceProtocol;
    for (const e of t.entries) {
      const ip = e.kind === 'node-port' ? nodeIP : e.address;
      if (!ip || e.port === undefined) continue;
      const what = e.label ?? (e.kind === 'cluster-ip' ? '' : ENTRY_KIND_TEXT[e.kind]);
      const label = `${hostPort(ip, e.port)}/${protocol} ${what ? `${what} ` : ''}${short(t.id)}`;
      add({ label, ip, port: e.port, protocol });
    }
    // why ping to a ClusterIP gets no answer, one keystroke away
    if (t.clusterIP && first(t.name) === 0)
      add({ label: `ping ${t.clusterIP} ${short(t.id)}`, ip: t.clusterIP, protocol: 'icmp' });
  }
  return out;
}

/** A walk, and the node ports that took it which the API no longer gives their Service port
 * (as `kdebug trace` says them). */
export type Walked = Traced & { notInApi?: PortNotInApi[] };

/** Walks one packet from the source to the destination through the source node's rules. */
export function walk(
  data: TuiData,
  source: TraceSource,
  dest: TraceDestination,
): Walked | { error: string } {
  const node = rulesOf(data, source.node, familyOf(dest.ip) ?? source.family);
  if (!node?.walkable) return { error: `no rules recorded for node ${source.node}` };
  try {
    const traced = node.trace({
      src: source.ip,
      dst: dest.ip,
      dport: dest.port,
      protocol: dest.protocol,
      fromHost: source.fromHost,
    });
    return { ...traced, notInApi: nodePortNotInApi(traced.result, node.trees, data.view) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}
