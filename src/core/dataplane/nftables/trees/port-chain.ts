// The chains kube-proxy writes for each Service port in nftables mode, read by their names:
// service-, local-, external-, firewall- and endpoint-<hash>-ns/name/proto/port.
import type { ServicePortName } from '../../../model.js';
import { isIPv4 } from '../../../ipv4.js';
import { ipv6 } from '../../../ipv6.js';

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

/** The endpoint an endpoint chain's name carries: servicePortEndpointChainNameBase writes it
 * "IP/PORT", an IPv6 address with each ":" written "." (chain names allow no ":"); undefined for
 * a name cut short ("...": hashAndTruncate) or one that reads as no address and port. */
export function nameEndpoint(p: PortChain): { ip: string; port: string } | undefined {
  const m = /^(.+)\/(\d{1,5})$/.exec(p.endpoint ?? '');
  if (!m) return undefined;
  const [, ip, port] = m;
  if (isIPv4(ip!)) return { ip: ip!, port: port! };
  const six = ip!.replaceAll('.', ':');
  return ipv6(six) !== undefined ? { ip: six, port: port! } : undefined;
}
