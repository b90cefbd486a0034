// The chains kube-proxy writes for each Service port in nftables mode, read by their names:
// service-, local-, external-, firewall- and endpoint-<hash>-ns/name/proto/port.
import type { ServicePortName } from '../../../model.js';

/** A per-Service-port chain name: kind, hash, then "ns/name/proto/port" (and "__ip/port"). */
const PORT_CHAIN =
  /^(service|external|local|firewall|endpoint)-([A-Z2-7]{8})-([^/]+)\/([^/]+)\/([a-z]+)\/([^_]*)(?:__(.+))?$/;

export interface PortChain {
  kind: string;
  hash: string;
  name: ServicePortName;
  protocol: string;
  /** "ip/port" of an endpoint chain. */
  endpoint?: string;
}

export function portChain(chain: string): PortChain | undefined {
  const m = PORT_CHAIN.exec(chain);
  if (!m) return undefined;
  const [, kind, hash, ns, svc, protocol, port, endpoint] = m;
  return {
    kind: kind!,
    hash: hash!,
    // an unnamed port is "ns/svc", as kube-proxy names it (ServicePortName.String)
    name: port ? `${ns}/${svc}:${port}` : `${ns}/${svc}`,
    protocol: protocol!,
    ...(endpoint ? { endpoint } : {}),
  };
}
