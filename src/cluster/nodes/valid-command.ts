// Whether a value is a member of the closed list of node commands with valid fields: the IPs,
// ports, DNS names, chains and ipset entries that may reach a node, checked strictly at run time.
import type { NodeCommand } from '../cluster.js';
import { CILIUM_ARGS, IPVS_SERVICE_FLAG, type ProcNetFile } from '../../core/nodes/commands.js';

/** A command object that is not a member of the closed list, or carries a bad value. */
export class InvalidNodeCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidNodeCommandError';
  }
}

const RECORD_TYPES = ['A', 'AAAA', 'SRV', 'CNAME'] as const;
const BACKENDS = ['auto', 'legacy', 'nft'] as const;
const TABLES = ['nat', 'filter'] as const;
const PROC_NET_FILES: readonly ProcNetFile[] = [
  'ip_tables_names',
  'ip6_tables_names',
  'ip_vs_stats',
];

/** Checks, at run time, that `value` is a member of the closed list with valid fields. */
export function validNodeCommand(value: unknown): NodeCommand {
  const c = (value ?? {}) as Record<string, unknown>;
  const bad = (what: string) => new InvalidNodeCommandError(`not a kdebug node command: ${what}`);
  const allowed = (keys: string[]) => {
    const extra = Object.keys(c).filter((k) => k !== 'kind' && !keys.includes(k));
    if (extra.length > 0)
      throw bad(`${String(c['kind'])} has unexpected field ${extra.join(', ')}`);
  };
  switch (c['kind']) {
    case 'iptables-save':
    case 'ip6tables-save':
      allowed(['backend', 'table']);
      if (!BACKENDS.includes(c['backend'] as never))
        throw bad(`backend ${JSON.stringify(c['backend'])}`);
      if (c['table'] !== undefined && !TABLES.includes(c['table'] as never))
        throw bad(`table ${JSON.stringify(c['table'])}`);
      break;
    case 'iptables-chain':
      allowed(['tool', 'backend', 'chain', 'table']);
      if (c['table'] !== undefined && c['table'] !== 'filter')
        throw bad(`table ${JSON.stringify(c['table'])}`);
      if (c['tool'] !== 'iptables' && c['tool'] !== 'ip6tables')
        throw bad(`tool ${JSON.stringify(c['tool'])}`);
      if (!BACKENDS.includes(c['backend'] as never))
        throw bad(`backend ${JSON.stringify(c['backend'])}`);
      if (!isNatChainName(c['chain'])) throw bad(`chain ${JSON.stringify(c['chain'])}`);
      break;
    case 'proxy-mode':
    case 'proxy-metrics':
    case 'proxy-configz':
    case 'ip-addr':
      allowed([]);
      break;
    case 'nft-list':
      allowed(['family', 'format']);
      if (c['family'] !== 'ip' && c['family'] !== 'ip6')
        throw bad(`family ${JSON.stringify(c['family'])}`);
      if (c['format'] !== undefined && c['format'] !== 'text')
        throw bad(`format ${JSON.stringify(c['format'])}`);
      break;
    case 'conntrack-list':
      allowed(['protocol', 'dst']);
      if (c['protocol'] !== 'udp' && c['protocol'] !== 'tcp')
        throw bad(`protocol ${JSON.stringify(c['protocol'])}`);
      checkIp(c['dst']);
      break;
    case 'conntrack-stats':
      allowed(['again']);
      if (c['again'] !== undefined && c['again'] !== true)
        throw bad(`again ${JSON.stringify(c['again'])}`);
      break;
    case 'ipset-save':
      allowed([]);
      break;
    case 'ipvs-service':
      allowed(['protocol', 'ip', 'port']);
      if (!Object.hasOwn(IPVS_SERVICE_FLAG, c['protocol'] as string))
        throw bad(`protocol ${JSON.stringify(c['protocol'])}`);
      checkIp(c['ip']);
      checkPort(c['port']);
      break;
    case 'ipset-test':
      allowed(['set', 'entry']);
      if (!isKubeIpsetName(c['set'])) throw bad(`set ${JSON.stringify(c['set'])}`);
      if (!isIpsetEntry(c['entry'])) throw bad(`entry ${JSON.stringify(c['entry'])}`);
      break;
    case 'cilium':
      allowed(['list', 'binary']);
      if (!Object.hasOwn(CILIUM_ARGS, c['list'] as string))
        throw bad(`list ${JSON.stringify(c['list'])}`);
      if (c['binary'] !== undefined && c['binary'] !== 'cilium')
        throw bad(`binary ${JSON.stringify(c['binary'])}`);
      break;
    case 'proc-net':
      allowed(['file']);
      if (!PROC_NET_FILES.includes(c['file'] as never))
        throw bad(`file ${JSON.stringify(c['file'])}`);
      break;
    case 'ipvs-save':
      allowed(['format']);
      if (c['format'] !== undefined && c['format'] !== 'list')
        throw bad(`format ${JSON.stringify(c['format'])}`);
      break;
    case 'dns-lookup':
      allowed(['name', 'server', 'type']);
      checkDnsName(c['name']);
      checkIp(c['server']);
      if (!RECORD_TYPES.includes(c['type'] as never))
        throw bad(`record type ${JSON.stringify(c['type'])}`);
      break;
    case 'tcp-connect':
    case 'udp-probe':
      allowed(['ip', 'port']);
      checkIp(c['ip']);
      checkPort(c['port']);
      break;
    case 'icmp-echo':
      allowed(['ip']);
      checkIp(c['ip']);
      break;
    default:
      throw bad(`unknown kind ${JSON.stringify(c['kind'])}`);
  }
  return value as NodeCommand;
}

/** A nat chain kdebug reads by name: a name iptables allows (at most 28 characters) that starts
 * with a letter (never an option) and holds letters, digits, '_', '.' and '-' only: the built-in
 * chains, kube-proxy's, and a CNI's (CNI-HOSTPORT-DNAT, cali-PREROUTING, CILIUM_PRE_nat). */
const NAT_CHAIN = /^[A-Za-z][A-Za-z0-9_.-]{0,27}$/;

export function isNatChainName(value: unknown): value is string {
  return typeof value === 'string' && NAT_CHAIN.test(value);
}

/** One of kube-proxy's ipset names: KUBE- and capitals, digits and '-', at most 31 characters
 * (ipset's limit); never an option. */
function isKubeIpsetName(value: unknown): value is string {
  return typeof value === 'string' && /^KUBE-[A-Z0-9-]{1,26}$/.test(value);
}

const IPSET_PROTOCOLS = ['tcp', 'udp', 'sctp'];

/** An entry as kube-proxy writes one in its ipsets: a port ("30080"), an address ("10.96.0.10"),
 * or an address and "proto:port" with an address or a net after them
 * ("10.96.0.10,udp:53", "10.244.1.5,tcp:80,10.244.1.5", "203.0.113.10,tcp:80,10.0.0.0/8"). */
function isIpsetEntry(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (/^\d{1,5}$/.test(value)) return isPort(Number(value));
  const [ip, at, last, ...rest] = value.split(',');
  if (!isPlainIp(ip) || rest.length > 0) return false;
  if (at === undefined) return last === undefined;
  const [protocol, port] = at.split(':');
  if (!IPSET_PROTOCOLS.includes(protocol!) || !/^\d{1,5}$/.test(port ?? '')) return false;
  if (!isPort(Number(port))) return false;
  if (last === undefined) return true;
  const [address, length, ...more] = last.split('/');
  if (!isPlainIp(address) || more.length > 0) return false;
  const max = address.includes(':') ? 128 : 32;
  return length === undefined || (/^\d{1,3}$/.test(length) && Number(length) <= max);
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6_CHARS = /^[0-9a-fA-F:.]{2,45}$/;

/** A plain IPv4 or IPv6 address: no zone, no brackets, no prefix length, no spaces. */
export function isPlainIp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (IPV4.test(value)) return true;
  return IPV6_CHARS.test(value) && isIPv6Text(value);
}

// RFC 4291 text form: at most one "::", eight groups of 1-4 hex digits, optional dotted IPv4 tail.
function isIPv6Text(v: string): boolean {
  const halves = v.split('::');
  if (halves.length > 2) return false;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const all = halves.flatMap(groups);
  const last = all[all.length - 1];
  const v4Tail = last !== undefined && last.includes('.');
  if (v4Tail && !IPV4.test(last)) return false;
  const hex = v4Tail ? all.slice(0, -1) : all;
  if (!hex.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const size = hex.length + (v4Tail ? 2 : 0);
  return halves.length === 2 ? size <= 7 : size === 8;
}

const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
const DNS_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);

/** A DNS name: letters, digits, '-', '_' (SRV labels), labels of 1-63, at most 253 characters. */
export function isDnsName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && DNS_NAME.test(value);
}

export function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

function checkIp(v: unknown): void {
  if (!isPlainIp(v)) throw new InvalidNodeCommandError(`not an IP address: ${JSON.stringify(v)}`);
}
function checkPort(v: unknown): void {
  if (!isPort(v)) throw new InvalidNodeCommandError(`not a port (1-65535): ${JSON.stringify(v)}`);
}
function checkDnsName(v: unknown): void {
  if (!isDnsName(v)) throw new InvalidNodeCommandError(`not a DNS name: ${JSON.stringify(v)}`);
}
