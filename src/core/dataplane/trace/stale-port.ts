// A node port the walk was translated by that the node's rules give a Service port the API no
// longer gives it (drift's entry-stale: a type changed to ClusterIP, a nodePort changed, while
// kube-proxy did not sync): the node's view and the API's, side by side.
import { servicePortName, type ClusterView } from '../../kube/objects.js';
import type { ServiceTrees } from '../trees.js';
import type { TraceResult } from './trace.js';

export interface PortNotInApi {
  /** "node port 30080/tcp": the entry as the node's rules hold it. */
  entry: string;
  /** The Service port the node's rules send it to ("default/nginx-svc:http"). */
  servicePort: string;
  /** What the API has instead: "default/nginx-svc:http has no node port (Service type ClusterIP)". */
  api: string;
}

/** The node ports of the walk's packet the node's rules hold for a Service port whose Service the
 * API read has, without that node port; none where the walk translated nothing (no entry took
 * it), or the Service was not read (nothing is said of what was not). */
export function nodePortNotInApi(
  result: TraceResult,
  trees: ServiceTrees | undefined,
  view: ClusterView,
): PortNotInApi[] {
  const { dport, protocol } = result.packet;
  if (dport === undefined || !result.outcomes.some((o) => o.dnat)) return [];
  return (trees?.services ?? []).flatMap((t) => {
    // the node-port entry of this port, and the walk went through the chain it leads to
    const held = t.entries.some(
      (e) =>
        e.kind === 'node-port' &&
        e.port === dport &&
        e.protocol.toLowerCase() === protocol &&
        result.outcomes.some((o) => o.rules.some((m) => m.into === e.chain || m.chain === e.chain)),
    );
    const svc = view.services.find((s) => owns(s, t.name));
    if (!held || !t.name || !svc) return [];
    const port = svc.ports.find((p) => servicePortName(svc, p) === t.name);
    if (port?.nodePort === dport) return [];
    const api = !port
      ? `Service ${svc.namespace}/${svc.name} has no ${t.name.includes(':') ? `port named ${t.name.slice(t.name.indexOf(':') + 1)}` : 'unnamed port'}`
      : port.nodePort !== undefined
        ? `${t.name} has node port ${port.nodePort}`
        : `${t.name} has no node port (Service type ${svc.type})`;
    return [{ entry: `node port ${dport}/${protocol}`, servicePort: t.name, api }];
  });
}

/** A stale node port in words, the node's rules beside the API's Service: one sentence for
 * `kdebug trace` and the TUI's Trace screen. */
export const notInApiText = (x: PortNotInApi, node: string): string =>
  `The node's rules are stale for this port: on node ${node}, ${x.entry} leads to ${x.servicePort}, but in the API ${x.api}. kube-proxy has not applied that change there (drift: entry-stale), so the node still sends this traffic to the endpoints; a synced kube-proxy would not.`;

/** The Service a ServicePortName ("ns/name:port", or "ns/name") is of. */
const owns = (s: { namespace: string; name: string }, spn: string | undefined): boolean =>
  spn !== undefined &&
  (spn === `${s.namespace}/${s.name}` || spn.startsWith(`${s.namespace}/${s.name}:`));
