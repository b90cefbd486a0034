// kube-proxy's chain names: base32(sha256(servicePortName + protocol [+ "ip:port"])) cut to 16
// characters. Computing them lets kdebug say which chain a Service port must have on a node.
import { hash } from 'node:crypto';

export type ServiceChainPrefix = 'KUBE-SVC' | 'KUBE-SVL' | 'KUBE-EXT' | 'KUBE-FW' | 'KUBE-XLB';

// each base32 character's code, by its 5-bit value
const BASE32 = Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', (c) => c.charCodeAt(0));
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
// each base64 character's 6-bit value, by its character code
const BASE64_VALUE = new Uint8Array(128);
for (let i = 0; i < 64; i++) BASE64_VALUE[BASE64.charCodeAt(i)] = i;

/** The first 16 characters of RFC 4648 base32 (standard alphabet) of sha256(input). Not
 * memoised: the digest as base64 text costs half what a Buffer does, and a Map of 110,000 names
 * (10,000 Services x 10 endpoints) costs more than hashing them again on each node. Made from
 * its character codes in one piece: a string grown a character at a time is a chain of
 * pieces, which every Map lookup and concatenation of the name then walks. */
export function hash16(input: string): string {
  const digest = hash('sha256', input, 'base64');
  const out: number[] = [];
  let bits = 0;
  let acc = 0;
  for (let i = 0; out.length < 16; i++) {
    acc = ((acc << 6) | BASE64_VALUE[digest.charCodeAt(i)]!) & 0x7ff;
    bits += 6;
    while (bits >= 5 && out.length < 16) {
      bits -= 5;
      out.push(BASE32[(acc >>> bits) & 31]!);
    }
  }
  return String.fromCharCode(...out);
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
