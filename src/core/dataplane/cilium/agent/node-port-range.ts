// Cilium's NodePort range (node-port-range, pkg/loadbalancer/config.go) and what the agent keeps
// out of it: host ports inside it, and from 1.20 LoadBalancer and ExternalIPs frontends on a
// NodePort address at a port inside it (pkg/loadbalancer/writer/writer.go, isNodePortConflict).
import type { CiliumExpectOptions, CiliumNode } from '../expected/expected.js';
import type { FrontendType } from '../read/listing.js';
import { knows } from './agent.js';

export type NodePortRange = readonly [min: number, max: number];

/** Cilium's default, which kube-proxy's is too. */
export const DEFAULT_NODE_PORT_RANGE: NodePortRange = [30000, 32767];

/** Whether `port` is inside the agent's NodePort range; undefined where that range is not known
 * (a refused cilium-config, agent.ts notKnown). */
export const inNodePortRange = (
  port: number,
  o: Pick<CiliumExpectOptions, 'nodePortRange' | 'notKnown'>,
): boolean | undefined =>
  knows(o, 'nodePortRange') ? port >= o.nodePortRange[0] && port <= o.nodePortRange[1] : undefined;

/** cilium-config's node-port-range as the agent reads it: split at commas, one part again at
 * spaces (hive's decode hooks), empty for the default; undefined where it would not start. */
export function parseNodePortRange(value: string): NodePortRange | undefined {
  const commas = value === '' ? [] : value.split(',');
  const parts = commas.length === 1 ? value.split(/\s+/).filter(Boolean) : commas;
  if (parts.length === 0) return DEFAULT_NODE_PORT_RANGE;
  const [min, max] = parts.map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
  if (parts.length !== 2 || !(min! <= 65535 && max! <= 65535 && min! < max!)) return undefined;
  return [min!, max!];
}

/** The agent drops such a frontend (1.20 on): it would stop the NodePort frontend expanded on
 * that address and port. Not known (so kept) where the node's NodePort addresses or its range
 * are not. */
export function nodePortConflict(
  fe: { ip: string; port: number; type: FrontendType },
  node: CiliumNode,
  o: CiliumExpectOptions,
): boolean {
  return (
    o.nodePortConflicts &&
    (fe.type === 'LoadBalancer' || fe.type === 'ExternalIPs') &&
    inNodePortRange(fe.port, o) === true &&
    !!node.nodePortAddresses?.includes(fe.ip)
  );
}
