// The packet a walk follows, in every mode: its addresses (either family), ports, protocol,
// interfaces, mark and NAT state, and the CIDRs it is tested against.
import { cidrContains, formatIPv4, ipv4, parseCidr } from '../../ipv4.js';
import { cidr6Contains, formatIPv6, hostPort, ipv6, parseCidr6 } from '../../ipv6.js';

export type TraceProtocol = 'tcp' | 'udp' | 'sctp' | 'icmp';

/** An address in a walk: an IPv4 one as a number, an IPv6 one as 128 bits (an ip6tables walk). */
export type Address = number | bigint;

/** An address as kube-proxy and a person write it. */
export const formatAddress = (a: Address) =>
  typeof a === 'bigint' ? formatIPv6(a) : formatIPv4(a);

/** "ip:port", IPv6 in brackets. */
export const addressPort = (a: Address, port: number) => hostPort(formatAddress(a), port);

/** The packet as it is at this point of the walk (addresses may have been DNATed). */
export interface PacketState {
  src: Address;
  dst: Address;
  sport: number;
  dport: number;
  protocol: TraceProtocol;
  /** Interface it arrived on; undefined for a packet from a local process. '?' when unknown. */
  inInterface?: string;
  /** Interface it leaves by, once routed. '?' when unknown. */
  outInterface?: string;
  /** Why an interface was guessed, noted as an assumption when a rule looks at it. */
  guessed?: { in?: string; out?: string };
  mark: number;
  /** conntrack status: destination or source NAT already applied. */
  dnat: boolean;
  snat: boolean;
}

/** A CIDR of either family, parsed once. */
export type AnyCidr =
  | { v4: NonNullable<ReturnType<typeof parseCidr>>; bits: number }
  | { v6: NonNullable<ReturnType<typeof parseCidr6>>; bits: number };

export function anyCidr(text: string): AnyCidr | undefined {
  const c4 = parseCidr(text);
  if (c4) return { v4: c4, bits: c4.bits };
  const c6 = parseCidr6(text);
  return c6 ? { v6: c6, bits: c6.bits } : undefined;
}

/** Does the CIDR hold the address? One family's address never lies in the other's CIDR. */
export const holds = (c: AnyCidr, a: Address): boolean =>
  'v4' in c
    ? typeof a === 'number' && cidrContains(c.v4, a)
    : typeof a === 'bigint' && cidr6Contains(c.v6, a);

/** "10.244.0.3" -> a number, "fd00::3" -> 128 bits; throws a readable error for anything else. */
export function packetAddress(text: string, what: string): Address {
  const n = ipv4(text) ?? ipv6(text);
  if (n === undefined) throw new Error(`${what} "${text}" is not an IP address`);
  return n;
}
