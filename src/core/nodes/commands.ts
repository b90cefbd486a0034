// The closed list of commands kdebug may run on a node, and the file stem each one's stdout is
// recorded under (`nodes/<node>/<stem>.txt`). One home: the checks read the stems, the cluster
// adapters run the commands (their argv is in cluster/nodes/commands.ts; the dataplane listings'
// own words are here, where a listing that does not read is named by them).
import { hostPort } from '../ipv6.js';
import type { LoadedMode } from '../dataplane/modes.js';

/** Every command kdebug can run on a node. Adding one means adding it here, nowhere else. */
export type NodeCommand =
  | { kind: 'iptables-save'; backend: Backend; table?: 'nat' | 'filter' }
  | { kind: 'ip6tables-save'; backend: Backend; table?: 'nat' | 'filter' }
  /** One chain of the nat (default) or filter table in `iptables -S` form (`iptables -t nat -S
   * CHAIN`): one Service's chains are read by name where its whole table is not needed. */
  | {
      kind: 'iptables-chain';
      tool: 'iptables' | 'ip6tables';
      backend: Backend;
      chain: string;
      table?: 'filter';
    }
  | { kind: 'proxy-mode' }
  | { kind: 'proxy-metrics' }
  | { kind: 'proxy-configz' }
  | { kind: 'ip-addr' }
  /** kube-proxy's nftables table (nftables mode), as JSON (`nft -j list table ip kube-proxy`),
   * or as its listing where the node's nft has no JSON (`format: 'text'`). */
  | { kind: 'nft-list'; family: 'ip' | 'ip6'; format?: 'text' }
  /** The conntrack entries of one protocol to one Service address: `conntrack -L -p udp -d IP`. */
  | { kind: 'conntrack-list'; protocol: 'udp' | 'tcp'; dst: string }
  /** conntrack's counters (insert_failed, drop): `conntrack -S`; `again`: the second read, after
   * the node's probes, to see them grow. */
  | { kind: 'conntrack-stats'; again?: true }
  /** IPVS mode's virtual and real servers: `ipvsadm-save -n`, or `ipvsadm -Ln` where there is
   * no ipvsadm-save (`format: 'list'`). */
  | { kind: 'ipvs-save'; format?: 'list' }
  /** IPVS mode's ipsets and their entries: `ipset list -o save`. */
  | { kind: 'ipset-save' }
  /** One virtual server by its address (`ipvsadm -Ln -t|-u|--sctp-service IP:PORT`): one
   * Service's answer reads its own, not every Service's of the node. */
  | { kind: 'ipvs-service'; protocol: IpvsProtocol; ip: string; port: number }
  /** Whether one of kube-proxy's ipsets holds one entry: `ipset test SET ENTRY`. */
  | { kind: 'ipset-test'; set: string; entry: string }
  /** A kernel list read before the reads that would create what they read where it is absent:
   * the legacy tables that exist (`ip_tables_names`, `ip6_tables_names`; a legacy table read by
   * name is created) and whether IPVS is loaded (`ip_vs_stats`; ipvsadm loads it). */
  | { kind: 'proc-net'; file: ProcNetFile }
  /** A Cilium agent's own read-only listing, by exec in its Pod: `cilium-dbg status --verbose`,
   * `service list -o json`, `shell -- db/show frontends|backends` (1.17+), `bpf lb list`;
   * `binary: 'cilium'` for releases before 1.15, which had no cilium-dbg. */
  | { kind: 'cilium'; list: CiliumList; binary?: 'cilium' }
  | NodeProbe;

/** The protocols of the virtual servers kube-proxy writes, and ipvsadm's option for each. */
export type IpvsProtocol = 'tcp' | 'udp' | 'sctp';
export const IPVS_SERVICE_FLAG: Readonly<Record<IpvsProtocol, string>> = Object.freeze({
  tcp: '-t',
  udp: '-u',
  sctp: '--sctp-service',
});

/** Which iptables binary: the node's default (`iptables`), or one backend's own. */
export type Backend = 'auto' | 'legacy' | 'nft';

/** The listings kdebug reads from a Cilium agent. */
export type CiliumList = 'status' | 'service-list' | 'frontends' | 'backends' | 'bpf-lb-list';

/** The agent's arguments for each listing: each only reads the agent's state. Frozen: they
 * become a node's argv. */
export const CILIUM_ARGS: Readonly<Record<CiliumList, readonly string[]>> = Object.freeze({
  status: Object.freeze(['status', '--verbose']),
  'service-list': Object.freeze(['service', 'list', '-o', 'json']),
  frontends: Object.freeze(['shell', '--', 'db/show', 'frontends']),
  backends: Object.freeze(['shell', '--', 'db/show', 'backends']),
  'bpf-lb-list': Object.freeze(['bpf', 'lb', 'list']),
});

/** The listings a node's Service dataplane is read from outside iptables: kube-proxy's nftables
 * table, its IPVS virtual servers, a Cilium agent's tables. */
export type ListingCommand = Extract<
  NodeCommand,
  { kind: 'nft-list' | 'ipvs-save' | 'ipvs-service' | 'cilium' }
>;

/** A listing as a person types it: the binary and its arguments, without the sudo, chroot or
 * time limit kdebug wraps around it on the node. */
export function listingArgv(c: ListingCommand): string[] {
  switch (c.kind) {
    case 'nft-list':
      return [
        'nft',
        ...(c.format === 'text' ? [] : ['-j']),
        'list',
        'table',
        c.family,
        'kube-proxy',
      ];
    case 'ipvs-save':
      return c.format === 'list' ? ['ipvsadm', '-Ln'] : ['ipvsadm-save', '-n'];
    case 'ipvs-service':
      return ['ipvsadm', '-Ln', IPVS_SERVICE_FLAG[c.protocol], hostPort(c.ip, c.port)];
    case 'cilium':
      return [c.binary ?? 'cilium-dbg', ...CILIUM_ARGS[c.list]];
  }
}

/** The files of /proc/net kdebug reads: each only lists, and is absent where its module is not loaded. */
export type ProcNetFile = 'ip_tables_names' | 'ip6_tables_names' | 'ip_vs_stats';

/** The node commands that probe: a connection, a ping, a DNS lookup from the node. */
export type NodeProbe =
  | { kind: 'dns-lookup'; name: string; server: string; type: 'A' | 'AAAA' | 'SRV' | 'CNAME' }
  | { kind: 'tcp-connect'; ip: string; port: number }
  | { kind: 'udp-probe'; ip: string; port: number }
  | { kind: 'icmp-echo'; ip: string };

/** The file stem a command's stdout is stored under in a snapshot (`nodes/<node>/<stem>.txt`). */
export function commandStem(c: NodeCommand): string {
  switch (c.kind) {
    case 'iptables-save':
    case 'ip6tables-save': {
      const backend = c.backend === 'auto' ? '' : `-${c.backend}`;
      const base =
        c.kind === 'iptables-save' ? `iptables${backend}-save` : `ip6tables${backend}-save`;
      return c.table ? `${base}-${c.table}` : base;
    }
    case 'iptables-chain':
      return chainStemPrefix(c.tool, c.backend, c.table) + c.chain;
    case 'proxy-mode':
    case 'proxy-metrics':
    case 'proxy-configz':
    case 'ip-addr':
      return c.kind;
    case 'nft-list':
      return `nft-${c.family}-kube-proxy${c.format === 'text' ? '-text' : ''}`;
    case 'conntrack-list':
      return `conntrack_${c.protocol}_${c.dst}`;
    case 'conntrack-stats':
      return c.again ? 'conntrack-stats-again' : 'conntrack-stats';
    case 'ipvs-save':
      return c.format === 'list' ? 'ipvsadm-list' : 'ipvsadm-save';
    case 'ipset-save':
      return 'ipset-save';
    case 'ipvs-service':
      return `${IPVS_SERVICE_STEM}${c.protocol}_${c.ip}_${c.port}`;
    case 'ipset-test':
      // a stem holds no ',' or '/': an entry's parts are joined by '_', a net's length by '-'
      return `ipset-test_${c.set}_${c.entry.replaceAll(',', '_').replaceAll('/', '-')}`;
    case 'proc-net':
      return c.file;
    case 'cilium':
      return `cilium-${c.list}`;
    case 'dns-lookup':
      return `dns-lookup_${c.type}_${c.name}_${c.server}`;
    case 'tcp-connect':
    case 'udp-probe':
      return `${c.kind}_${c.ip}_${c.port}`;
    case 'icmp-echo':
      return `icmp-echo_${c.ip}`;
  }
}

/** The mode whose reader reads the output stored under `stem` (a dataplane's listing outside
 * iptables), if any: a run that holds one loads that mode's code. */
export function listingMode(stem: string): LoadedMode | undefined {
  if (stem.startsWith('nft-')) return 'nftables';
  // ipvsadm-save, ipvsadm -Ln whole or by address, ipset-save, ipset test
  if (stem.startsWith('ipvsadm-') || stem.startsWith('ipset-')) return 'ipvs';
  // the agent's status is its state's, read without the mode's code
  if (stem.startsWith('cilium-') && stem !== commandStem({ kind: 'cilium', list: 'status' }))
    return 'cilium';
  return undefined;
}

/** Where the virtual servers read by address are stored: "ipvsadm-Ln_tcp_10.96.0.30_80". */
export const IPVS_SERVICE_STEM = 'ipvsadm-Ln_';

/** Whether the node recorded virtual servers read by address. */
export const readByAddress = (outputs: Readonly<Record<string, string>> | undefined) =>
  Object.keys(outputs ?? {}).some((stem) => stem.startsWith(IPVS_SERVICE_STEM));

/** Where one tool's and backend's chain listings of a table are stored: the stem before the
 * chain's name, e.g. "iptables-nat-S_" (KUBE-SERVICES is in "iptables-nat-S_KUBE-SERVICES"). */
export function chainStemPrefix(
  tool: 'iptables' | 'ip6tables',
  backend: Backend,
  table: 'nat' | 'filter' = 'nat',
): string {
  return `${tool}${backend === 'auto' ? '' : `-${backend}`}-${table}-S_`;
}
