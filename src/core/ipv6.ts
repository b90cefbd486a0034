// IPv6 addresses as kube-proxy and ip6tables-save write them: parsed to 128 bits (a bigint) and
// printed as Go's net.IP.String() does (RFC 5952: lower case, no leading zeros, the longest run
// of two or more zero groups as "::", the first such run on a tie). And the family-neutral
// helpers the rule model uses, so the IPv4 and IPv6 rule sets are one code path.
import { canonicalCidr as canonicalCidr4, cidrContains, ipv4, isIPv4, parseCidr } from './ipv4.js';

export type IPFamily = 'IPv4' | 'IPv6';

/** 128 bits, or undefined when not an IPv6 address (an embedded dotted quad is allowed). */
export function ipv6(text: string): bigint | undefined {
  const t = text.trim().toLowerCase();
  if (!t.includes(':') || t.includes(':::')) return undefined;
  const halves = t.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string): number[] | undefined => {
    if (h === '') return [];
    const out: number[] = [];
    const parts = h.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes('.')) {
        const q = p.split('.').map(Number);
        if (q.length !== 4 || q.some((x) => !Number.isInteger(x) || x < 0 || x > 255))
          return undefined;
        out.push(q[0]! * 256 + q[1]!, q[2]! * 256 + q[3]!);
      } else if (/^[0-9a-f]{1,4}$/.test(p)) out.push(parseInt(p, 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return all.reduce((n, g) => (n << 16n) | BigInt(g), 0n);
}

const isIPv6 = (text: string) => ipv6(text) !== undefined;

/** Go's IP.String() for a 128-bit address (an IPv4-mapped one prints as IPv6 here). */
export function formatIPv6(n: bigint): string {
  const g = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (a: number[]) => a.map((x) => x.toString(16)).join(':');
  return best < 0 ? hex(g) : `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** "fd00::/64" or an address (a /128), host bits cleared; undefined when not IPv6. */
export function parseCidr6(text: string): { network: bigint; bits: number } | undefined {
  const [addr, len, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const a = ipv6(addr ?? '');
  const bits = len === undefined ? 128 : /^\d{1,3}$/.test(len) ? Number(len) : NaN;
  if (a === undefined || !(bits >= 0 && bits <= 128)) return undefined;
  const mask = bits === 0 ? 0n : ((1n << BigInt(bits)) - 1n) << BigInt(128 - bits);
  return { network: a & mask, bits };
}

/** Does the parsed IPv6 CIDR hold the address? */
export function cidr6Contains(c: { network: bigint; bits: number }, address: bigint): boolean {
  const mask = c.bits === 0 ? 0n : ((1n << BigInt(c.bits)) - 1n) << BigInt(128 - c.bits);
  return (address & mask) === c.network;
}

/** The family of an address or CIDR text, or undefined when it is neither. */
export function familyOf(text: string): IPFamily | undefined {
  const a = text.split('/')[0] ?? '';
  return isIPv4(a) ? 'IPv4' : isIPv6(a) ? 'IPv6' : undefined;
}

/** A CIDR's canonical text in either family ("fd00:10:96::/112"), or undefined. */
export function canonicalCidrOf(text: string): string | undefined {
  const c4 = canonicalCidr4(text);
  if (c4) return c4;
  const c6 = parseCidr6(text);
  return c6 ? `${formatIPv6(c6.network)}/${c6.bits}` : undefined;
}

/** An address's canonical text in either family, or the text as it is. */
export function canonicalAddress(text: string): string {
  const n = ipv6(text);
  return n === undefined || text.includes('.') ? text.trim() : formatIPv6(n);
}

/** Does the CIDR contain the address (same family only)? */
export function containsAny(cidr: string, address: string): boolean {
  return cidrHolds(cidr)(address);
}

/** Whether an address is in the CIDR (same family only), the CIDR read once for many. */
export function cidrHolds(cidr: string): (address: string) => boolean {
  if (familyOf(cidr) === 'IPv4') {
    const c = parseCidr(cidr);
    return (address) => {
      const a = ipv4(address);
      return c !== undefined && a !== undefined && cidrContains(c, a);
    };
  }
  const c = parseCidr6(cidr);
  return (address) => {
    const a = ipv6(address);
    return c !== undefined && a !== undefined && cidr6Contains(c, a);
  };
}

/** An address with its host prefix (/32, /128); a CIDR as it is. */
export const hostCidr = (address: string): string =>
  address.includes('/') ? address : `${address}${address.includes(':') ? '/128' : '/32'}`;

/** "ip:port", IPv6 in brackets ("[fd00::be]:80"), as kube-proxy and a person write it. */
export const hostPort = (ip: string, port: number | string): string =>
  ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;

/** What kube-proxy writes for one address of a family: its host prefix and its ip:port form. */
export const FAMILY = {
  IPv4: {
    host: '/32',
    any: '0.0.0.0/0',
    loopback: '127.0.0.0/8',
    reject: 'icmp-port-unreachable',
    mask: '255.255.255.255',
    hostPort: (ip: string, port: number) => `${ip}:${port}`,
  },
  IPv6: {
    host: '/128',
    any: '::/0',
    loopback: '::1/128',
    reject: 'icmp6-port-unreachable',
    mask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    hostPort: (ip: string, port: number) => `[${ip}]:${port}`,
  },
} as const;
