// kube-proxy's chain names: base32(sha256(servicePortName + protocol [+ "ip:port"])) cut to 16
// characters. Computing them lets kdebug say which chain a Service port must have on a node.
import { hash } from 'node:crypto';

export type ServiceChainPrefix = 'KUBE-SVC' | 'KUBE-SVL' | 'KUBE-EXT' | 'KUBE-FW' | 'KUBE-XLB';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The first 16 characters of RFC 4648 base32 (standard alphabet) of sha256(input). */
export function hash16(input: string): string {
  let h = known.get(input);
  if (h === undefined) {
    // expected rules, trees and drift ask for the same names: 10,000 Services are 10,000 SHA-256s
    if (known.size >= KNOWN_MAX) known.clear();
    known.set(input, (h = computeHash16(input)));
  }
  return h;
}

const known = new Map<string, string>();
const KNOWN_MAX = 200_000;

function computeHash16(input: string): string {
  const digest = hash('sha256', input, 'buffer');

  let out = '';
  let bits = 0;
  let acc = 0;
  for (let i = 0; out.length < 16; i++) {
    acc = ((acc << 8) | digest[i]!) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < 16) {
      out += BASE32[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** KUBE-SVC-/SVL-/EXT-/FW-/XLB- chain of a Service port ("ns/name:port", protocol "tcp"). */
export function kubeProxyChain(
  prefix: ServiceChainPrefix,
  servicePortName: string,
  protocol: string,
): string {
  return `${prefix}-${hash16(servicePortName + protocol.toLowerCase())}`;
}

/** KUBE-SEP- chain of one endpoint ("10.244.0.3:80", IPv6 as "[fd00::1]:80"). */
export function endpointChain(servicePortName: string, protocol: string, endpoint: string): string {
  return `KUBE-SEP-${hash16(servicePortName + protocol.toLowerCase() + endpoint)}`;
}

/**
 * nftables mode's name suffix: "HASH-ns/name/proto/port" (and "__ip/port" for an endpoint, an
 * IPv6 address with dots for colons), HASH the first 8 base32 characters of the sha256 of what
 * follows it, cut to 240 characters as kube-proxy does.
 */
export function nftChainBase(
  svc: { namespace: string; service: string; port: string },
  protocol: string,
  endpoint?: { ip: string; port: number },
): string {
  let name = `${svc.namespace}/${svc.service}/${protocol.toLowerCase()}/${svc.port}`;
  if (endpoint) name += `__${endpoint.ip.replaceAll(':', '.')}/${endpoint.port}`;
  const out = `${hash16(name).slice(0, 8)}-${name}`;
  return out.length > 240 ? `${out.slice(0, 237)}...` : out;
}
