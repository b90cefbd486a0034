// IPv4 addresses and CIDRs as numbers: what the expected rules, the drift check and the packet
// walk need to canonicalise "10.244.0.3/16" the way kube-proxy prints it and to test membership.

/** The address as an unsigned 32-bit number, or undefined when it is not dotted-quad IPv4. */
export function ipv4(text: string): number | undefined {
  const n = readIPv4((k) => text.charCodeAt(k), 0, text.length);
  return n < 0 ? undefined : n;
}

/** Dotted-quad IPv4 in the characters [s, e) that `at` gives; -1 when it is not. */
function readIPv4(at: (k: number) => number, s: number, e: number): number {
  let n = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let k = s; k < e; k++) {
    const c = at(k);
    if (c === 46) {
      // leading zeros are accepted, as Go's ParseIPSloppy does
      if (digits === 0 || ++dots > 3) return -1;
      n = n * 256 + octet;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      octet = octet * 10 + c - 48;
      digits++;
      if (octet > 255) return -1;
    } else return -1;
  }
  if (dots !== 3 || digits === 0) return -1;
  return n * 256 + octet;
}

export const isIPv4 = (text: string) => ipv4(text) !== undefined;

/** An address as kube-proxy writes it: IPv4 without leading zeros ("172.30.0.041" is
 * 172.30.0.41, as Go's ParseIPSloppy reads it), an IPv4-mapped IPv6 address as IPv4; any
 * other text as it is. */
export function canonicalIP(text: string): string {
  const t = text.trim();
  const mapped = t.startsWith('::')
    ? /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(t)?.[1]
    : undefined;
  const n = ipv4(mapped ?? t);
  // already as kube-proxy writes it (most addresses): the same string, not a new one
  return n === undefined || (mapped === undefined && !leadingZero(t)) ? t : formatIPv4(n);
}

/** Whether a dotted quad has an octet written with a leading zero ("10.0.0.041"). */
function leadingZero(quad: string): boolean {
  for (let k = 0; k < quad.length - 1; k++)
    if (quad.charCodeAt(k) === 48 && (k === 0 || quad.charCodeAt(k - 1) === 46)) {
      const next = quad.charCodeAt(k + 1);
      if (next >= 48 && next <= 57) return true;
    }
  return false;
}

export function formatIPv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

export interface Cidr {
  /** The network address (host bits cleared). */
  network: number;
  bits: number;
}

/** "10.244.0.3/16" or a bare address (a /32); undefined when not IPv4. */
export function parseCidr(text: string): Cidr | undefined {
  const [addr, len, extra] = text.trim().split('/');
  if (extra !== undefined || addr === undefined) return undefined;
  const n = ipv4(addr);
  const bits = len === undefined ? 32 : /^\d{1,2}$/.test(len) ? Number(len) : NaN;
  if (n === undefined || !(bits >= 0 && bits <= 32)) return undefined;
  return { network: (n & mask(bits)) >>> 0, bits };
}

const mask = (bits: number) => (bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0);

export function cidrContains(c: Cidr, address: number): boolean {
  return (address & mask(c.bits)) >>> 0 === c.network;
}

/**
 * Does the CIDR (or address) written in bytes[s, e) contain `address`? Read as parseCidr reads
 * text (false when it is not IPv4), without making a string: a packet walk tests most rules so.
 */
export function bytesCidrContains(b: Uint8Array, s: number, e: number, address: number): boolean {
  let slash = s;
  while (slash < e && b[slash] !== 47 /* / */) slash++;
  const n = readIPv4((k) => b[k]!, s, slash);
  if (n < 0) return false;
  let bits = 32;
  if (slash < e) {
    // one or two digits after the slash, as parseCidr takes them
    if (e - slash - 1 < 1 || e - slash - 1 > 2) return false;
    bits = 0;
    for (let j = slash + 1; j < e; j++) {
      const c = b[j]!;
      if (c < 48 || c > 57) return false;
      bits = bits * 10 + c - 48;
    }
    if (bits > 32) return false;
  }
  const m = mask(bits);
  return (address & m) >>> 0 === (n & m) >>> 0;
}

/** "10.244.0.0/16": the form kube-proxy writes (Go's IPNet.String()) and iptables-save prints. */
export function formatCidr(c: Cidr): string {
  return `${formatIPv4(c.network)}/${c.bits}`;
}

/** The canonical text of a CIDR (or address, as a /32), or undefined when not IPv4. */
export function canonicalCidr(text: string): string | undefined {
  const c = parseCidr(text);
  return c ? formatCidr(c) : undefined;
}

/** Does the CIDR (or address) text contain the address text? */
export function contains(cidr: string, address: string): boolean {
  const c = parseCidr(cidr);
  const a = ipv4(address);
  return c !== undefined && a !== undefined && cidrContains(c, a);
}
