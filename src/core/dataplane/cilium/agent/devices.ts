// The native devices Cilium's agent attaches to and its NodePort addresses on them: where
// NodePort (and LoadBalancer, ExternalIPs) traffic from outside the node is load-balanced. The
// agent expands each NodePort frontend into one BPF map entry per NodePort address
// (pkg/loadbalancer/reconciler: the NodeAddress table's NodePort rows), and those addresses are
// picked per device by pkg/datapath/tables/node_address.go.
import { containsAny, familyOf } from '../../../ipv6.js';
import { statusLines } from './status.js';

export interface CiliumDevice {
  /** The device's name; from cilium-config, a name or a pattern ("eth+"). */
  name: string;
  /** Its addresses as the agent listed them; none from cilium-config. */
  addresses: string[];
  /** The device that carries traffic between nodes (direct-routing-device). */
  directRouting: boolean;
}

export interface CiliumNodePorts {
  devices: CiliumDevice[];
  /** The NodePort addresses, where known: the agent listed them (before 1.15) or they follow
   * from the devices' addresses it listed (1.15 and later). */
  addresses?: string[];
  /** cilium-config nodeport-addresses: the CIDRs that pick them (empty: Cilium picks one a device and family). */
  cidrs: string[];
  /** The agent's status (observed) or cilium-config (read). */
  from: 'status' | 'cilium-config';
  source: string;
}

/** A device in the agent's status, as its two formats write it: before 1.15 its NodePort
 * addresses after one space ("eth0 10.0.0.5"); from 1.15 every address of the device after one
 * space more than it has addresses (pkg/status fills a list it made with that many empty
 * strings: "eth0   10.0.12.11 fe80::1"). */
export interface ListedDevice extends CiliumDevice {
  allAddresses: boolean;
}

const DEVICE = /^([\w.@:+-]+)( +)(.*)$/;
/** " (Direct Routing)" or " (DR)" ending a device's entry: the entry without it, else undefined
 * (by hand: an unanchored `\s+\(` over a run of spaces is quadratic). */
function withoutDirectRouting(entry: string): string | undefined {
  const t = entry.trimEnd();
  const mark = [' (Direct Routing)', ' (DR)'].find((m) => t.endsWith(m.slice(1)));
  if (!mark) return undefined;
  const before = t.slice(0, t.length - mark.length + 1);
  // at least one whitespace before the mark
  return before !== before.trimEnd() ? before.trimEnd() : undefined;
}

/** The devices `cilium-dbg status` lists: its KubeProxyReplacement Details' "Devices:" line,
 * else the bracket after "KubeProxyReplacement:"; undefined when it lists none (or only the
 * features that bracket held before 1.9). */
export function statusDevices(text: string): ListedDevice[] | undefined {
  // line by line: `(.+?)[ \t]*$` over a line of spaces, `^[ \t]*` over many, are quadratic
  const lines = statusLines(text);
  const listed =
    lines.map(indentedDevices).find((d) => d !== undefined) ??
    lines.map(summaryDevices).find((d) => d !== undefined);
  if (!listed) return undefined;
  const out: ListedDevice[] = [];
  for (const entry of listed.split(',')) {
    const stripped = withoutDirectRouting(entry);
    const directRouting = stripped !== undefined;
    const m = DEVICE.exec(`${(stripped ?? entry).trimStart()} `);
    if (!m) return undefined;
    const addresses = m[3]!.split(/\s+/).filter(Boolean);
    if (addresses.some((w) => familyOf(w) === undefined)) return undefined;
    out.push({
      name: m[1]!,
      addresses,
      directRouting,
      allAddresses: addresses.length > 0 && m[2]!.length > 1,
    });
  }
  return out.length > 0 ? out : undefined;
}

/** "  Devices:  eth0 10.0.0.5, ..." (indented, under the details): what follows, trimmed. */
function indentedDevices(line: string): string | undefined {
  if (!/^[ \t]/.test(line)) return undefined;
  const l = line.replace(/^[ \t]+/, '');
  if (!l.startsWith('Devices:') || !/^[ \t]/.test(l.slice('Devices:'.length))) return undefined;
  return l.slice('Devices:'.length).trim() || undefined;
}

/** "KubeProxyReplacement:  True   [eth0 10.0.0.5 (Direct Routing)]": the bracket's content. */
function summaryDevices(line: string): string | undefined {
  const l = line.replace(/^[ \t]+/, '');
  if (!l.startsWith('KubeProxyReplacement:')) return undefined;
  return /^[ \t]+\S+[ \t]+\[([^\]]*)\]/.exec(l.slice('KubeProxyReplacement:'.length))?.[1];
}

/** Private in Cilium's sense (pkg/ip IsPublicAddr): RFC 1918, shared, link-local, documentation,
 * benchmarking and multicast ranges, unique-local IPv6. */
const PRIVATE = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '::/128',
  '::1/128',
  '100::/64',
  '2001:2::/48',
  '2001:db8::/48',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
];
const isPrivate = (ip: string) => PRIVATE.some((c) => containsAny(c, ip));
const linkLocal = (ip: string) => containsAny('fe80::/10', ip);
const loopback = (ip: string) => containsAny('127.0.0.0/8', ip) || ip === '::1';

/** The NodePort addresses of devices listing all their addresses, as Cilium picks them: those
 * within nodeport-addresses where set; else per family the node's Kubernetes IP (its Node's
 * first InternalIP, else ExternalIP) where the device holds it, else the device's first private address, else its first
 * public one (IPv6 link-local never). The status does not mark secondary addresses: they are
 * taken in the order listed. */
export function pickNodePortAddresses(
  devices: readonly ListedDevice[],
  o: { cidrs: readonly string[]; nodeIPs: readonly string[] },
): string[] {
  const out: string[] = [];
  for (const d of devices) {
    if (!d.allAddresses) {
      out.push(...d.addresses);
      continue;
    }
    const usable = d.addresses.filter((a) => !loopback(a));
    if (o.cidrs.length > 0) {
      out.push(...usable.filter((a) => o.cidrs.some((c) => containsAny(c, a))));
      continue;
    }
    for (const family of ['IPv4', 'IPv6'] as const) {
      const own = usable.filter((a) => familyOf(a) === family && !linkLocal(a));
      const nodeIP = o.nodeIPs.find((a) => familyOf(a) === family);
      const node = nodeIP && own.includes(nodeIP) ? nodeIP : undefined;
      // the node's IP wins within its own kind (private or public); private wins over public
      const privateOne = node && isPrivate(node) ? node : own.find(isPrivate);
      const publicOne = node && !isPrivate(node) ? node : own.find((a) => !isPrivate(a));
      const picked = privateOne ?? publicOne;
      if (picked) out.push(picked);
    }
  }
  return [...new Set(out)];
}

/** cilium-config's devices ("eth0 eth1", "eth+") and direct-routing-device, by name only. */
export function configDevices(config: Record<string, string>): CiliumDevice[] {
  const names = (config['devices'] ?? '').split(/[\s,]+/).filter(Boolean);
  const direct = config['direct-routing-device']?.trim() ?? '';
  if (direct && !names.includes(direct)) names.push(direct);
  return names.map((name) => ({ name, addresses: [], directRouting: name === direct }));
}

/** cilium-config nodeport-addresses: "10.0.0.0/8,2001:db8::/64". */
export const nodePortCIDRs = (config: Record<string, string> | undefined): string[] =>
  (config?.['nodeport-addresses'] ?? '').split(/[\s,]+/).filter(Boolean);

/** The devices and NodePort addresses as a sentence's object: "10.0.12.11 of eth0 (direct
 * routing)"; the devices alone where their addresses were not read. */
export function nodePortsText(n: CiliumNodePorts): string {
  const devices = n.devices
    .map((d) => `${d.name}${d.directRouting ? ' (direct routing)' : ''}`)
    .join(', ');
  const within = n.cidrs.length > 0 ? ` within nodeport-addresses ${n.cidrs.join(', ')}` : '';
  if (n.addresses === undefined)
    return `devices ${devices || 'auto-detected'}${within}, their addresses not read`;
  if (n.addresses.length === 0) return `no NodePort address on ${devices}${within}`;
  return `${n.addresses.join(', ')} of ${devices}${within}`;
}
