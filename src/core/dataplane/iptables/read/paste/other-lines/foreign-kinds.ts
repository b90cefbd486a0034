// The other tools' listings a paste may hold instead of (or beside) a rules dump: their kinds, and
// what kdebug says of each and what to run instead.
import { LOGS, RUN, ipvsProxierLog, type LogKind } from './logs.js';

/** Other tools' output that a paste may hold instead of (or beside) a rules dump. */
export type ForeignKind =
  | 'iptables-list'
  | 'nft'
  | 'kube-proxy-nft'
  | 'ipvsadm'
  | 'ipset'
  | 'kube-proxy-ipset'
  | 'cilium'
  | 'cilium-map'
  | 'cilium-endpoints'
  | 'cilium-ct'
  | 'cilium-status'
  | 'bpf-map'
  | 'hns'
  | 'klipper-lb'
  | 'ovn'
  | KubectlKind
  | LogKind
  | 'nft-tables'
  | 'nft-rules'
  | 'nft-error'
  | 'nft-crash'
  | 'nft-no-json'
  | 'nft-version'
  | 'ipvs-timeouts'
  | 'ipvs-connections'
  | 'iptables-no-table'
  | 'iptables-nft-incompatible'
  | 'ip6tables-no-table'
  | 'conntrack'
  | 'conntrack-full'
  | 'ip-addr'
  | 'calico-bpf-nat'
  | 'calico-bpf-log'
  | 'calico-bpf-counters'
  | 'iptables-trace'
  | 'ovs-flows'
  | HostKind;

/** What a node shows of itself beside its rules: its processes and its kernel's settings. */
export type HostKind = 'process-listing' | 'sysfs';

/** kubectl's output, by the resource its printer's columns are of (`kubectl get nodes` ...). */
export type KubectlKind =
  | 'kubectl-nodes'
  | 'kubectl-pods'
  | 'kubectl-services'
  | 'kubectl-endpoints'
  | 'kubectl-endpointslices'
  | 'kubectl-deployments'
  | 'kubectl-daemonsets'
  | 'kubectl-describe-svc'
  | 'kubectl-describe-pod';

export const isKubectl = (kind: ForeignKind): kind is KubectlKind => kind.startsWith('kubectl-');

/** The command whose output each kubectl kind is. */
export const KUBECTL_COMMAND: Record<KubectlKind, string> = {
  'kubectl-nodes': 'kubectl get nodes',
  'kubectl-pods': 'kubectl get pods',
  'kubectl-services': 'kubectl get services',
  'kubectl-endpoints': 'kubectl get endpoints',
  'kubectl-endpointslices': 'kubectl get endpointslices',
  'kubectl-deployments': 'kubectl get deployments',
  'kubectl-daemonsets': 'kubectl get daemonsets',
  'kubectl-describe-svc': 'kubectl describe svc',
  'kubectl-describe-pod': 'kubectl describe pod',
};

/** kubectl's output of `kind`, the API server's `objects`: no rules, and what to run instead. */
const kubectlSaid = (kind: KubectlKind, objects: string) =>
  `this is \`${KUBECTL_COMMAND[kind]}\` output, ${objects} as the API server holds them: no rules in it; paste \`iptables-save\` (or \`ipvsadm -Ln\`, \`nft list table ip kube-proxy\`) from the node, or run \`kdebug svc NAME\` against the cluster`;

/** What each foreign listing is, and what to run instead (or until kdebug reads it). */
export const FOREIGN: Record<ForeignKind, string> = {
  'iptables-list':
    'this is `iptables -L` output that kdebug cannot read line by line (its lines run together, or its columns are not the ones iptables prints): paste it as printed, or run `iptables-save` (or `iptables -t nat -S`)',
  nft: 'these are iptables-nft rules as printed by `nft list ruleset` / `nft list table ip nat`: run `iptables-nft-save` (or `iptables-save`)',
  'ip-addr':
    "this is `ip addr` (or `ifconfig`) output, a node's interfaces and their addresses: in IPVS mode kube-ipvs0 holds every Service address, but not where its connections go; run `ipvsadm -Ln` (IPVS mode) or `iptables-save` on the node for that",
  'conntrack-full':
    "this is the kernel's log of a full connection tracking table (\"nf_conntrack: table full, dropping packet\"): conntrack drops each new connection's packet (to a Service or not) before kube-proxy's nat and filter rules see it; the table's size is net.netfilter.nf_conntrack_max (kube-proxy sets it from conntrack.maxPerCore and conntrack.min): no rules in it, `iptables-save` (`nft list table ip kube-proxy`, `ipvsadm -Ln`) on the node gives those",
  conntrack:
    "this is the connection tracking table (`conntrack -L`, /proc/net/nf_conntrack): each connection with its original and reply addresses, which show where a Service's DNAT sent it, not the rules that choose: run `iptables-save` (`nft list table ip kube-proxy`, `ipvsadm -Ln`) on the node for those",
  'nft-error':
    "these are nft's error messages (FILE:LINE:COL: Error: ...) for rules it was asked to load, as kube-proxy's log repeats them when its nftables sync fails: they quote the rules kube-proxy tried to write, not what the node holds; the error says what the kernel or nft refused: run `nft list table ip kube-proxy` on the node and give kdebug that",
  'nft-crash':
    'this is nft failing where a listing was asked for (its own assertion failed and it aborted, or it crashed: the shell\'s "Segmentation fault"): no rule, set or map of the node is in the paste, and what nft printed before it may be incomplete; an nft older than the kube-proxy that wrote the table may not decode it: list it with the nft in kube-proxy\'s own image (`kubectl -n kube-system exec KUBE-PROXY-POD -- nft list table ip kube-proxy`) and give kdebug that',
  'ipvs-timeouts':
    "this is `ipvsadm -L --timeout` output, IPVS's connection timeouts (tcp, tcpfin and udp, in seconds), not its virtual servers: nothing of any Service is in it; run `ipvsadm -Ln` on the node and give kdebug that",
  'ipvs-connections':
    "this is `ipvsadm -Lnc` output, IPVS's connection table: each connection's client, the virtual server it reached and the real server it went to, not the virtual servers and their real servers: run `ipvsadm -Ln` on the node and give kdebug that",
  'iptables-no-table': noTable('iptables', []),
  'iptables-nft-incompatible':
    "this is iptables-nft's error \"... is incompatible, use 'nft' tool\": it cannot list that table or chain as iptables rules, for nft wrote to it directly (another nft user: firewalld, /etc/nftables.conf, a CNI's own rules), in a form iptables has none for; before iptables 1.8.11 it says so too of a chain asked for by name that does not exist. No rule of the node is in the paste: run `nft list ruleset` on the node and give kdebug that (kube-proxy's nftables mode keeps its rules in its own tables, `ip kube-proxy` and `ip6 kube-proxy`)",
  'ip6tables-no-table': noTable('ip6tables', []),
  'kube-proxy-nft':
    "this is kube-proxy's nftables table (nftables mode), in a form kdebug cannot read as a listing here (a fragment, a diff, a quote): give it `nft list table ip kube-proxy` (or `nft -j list table ip kube-proxy`) as printed",
  ipvsadm:
    'this is `ipvsadm` output (kube-proxy IPVS mode) among iptables lines: the Services are IPVS virtual servers; give the `ipvsadm -Ln` listing to `kdebug rules --file` on its own',
  ipset:
    "this is `ipset list` output (IP sets; none it names is one of kube-proxy's IPVS mode, KUBE-CLUSTER-IP, KUBE-LOOP-BACK ...), which kdebug does not read with iptables rules",
  'kube-proxy-ipset':
    "this is `ipset list` output naming sets kube-proxy's IPVS mode makes (KUBE-CLUSTER-IP, KUBE-LOOP-BACK ...), which kdebug does not read with iptables rules: give `ipvsadm -Ln` with `ipset list` beside it to `kdebug rules --file` on their own",
  cilium:
    "this is Cilium's Service table (`cilium service list` / `cilium bpf lb list`, or cilium-dbg's): Cilium replaces kube-proxy on this node, its Services are BPF map entries, not iptables rules; kdebug reads such a listing on its own: paste it alone (`kdebug rules --file`), or `cilium-dbg service list` from the Cilium agent Pod (anetd on GKE Dataplane V2)",
  'cilium-map':
    "this is one of Cilium's BPF load-balancer maps alone (`cilium-dbg bpf lb list --revnat`, `--backends`, `--frontends` or `--source-ranges`, or `cilium map get cilium_lb4_services_v2` / `cilium_lb4_backends`): it holds IDs, not which backends serve which Service; give kdebug `cilium-dbg bpf lb list` without a flag, or `cilium-dbg service list`, from the Cilium agent Pod",
  'cilium-endpoints':
    "this is Cilium's endpoint list (`cilium endpoint list`, or cilium-dbg's): the Pods Cilium manages on the node, with their identities, policy enforcement and addresses, not its Services: run `cilium-dbg service list` (or `cilium-dbg bpf lb list`) in the Cilium agent Pod and give kdebug that",
  'cilium-ct':
    "this is Cilium's connection tracking table (`cilium bpf ct list global`, or cilium-dbg's): each connection, and for one to a Service (its SVC entry) the backend ID it was sent to, not the Services and their backends: run `cilium-dbg service list` (or `cilium-dbg bpf lb list`) in the Cilium agent Pod and give kdebug that",
  'cilium-status':
    "this is Cilium's status (`cilium-dbg status`, `--verbose`'s KubeProxyReplacement details): Cilium replaces kube-proxy on this node, and its status lists its settings, not a Service, frontend or backend; give kdebug `cilium-dbg service list` (or `cilium-dbg bpf lb list`) from the Cilium agent Pod",
  'bpf-map':
    "this is `bpftool map dump` output: a BPF map's entries as raw bytes (`key: … value: …`); Cilium keeps a Service's frontends and backends so (cilium_lb4_services_v2, cilium_lb4_backends, by ID and slot, addresses and ports in network byte order), not as rules: give kdebug `cilium-dbg service list` (or `cilium-dbg bpf lb list`) from the Cilium agent Pod",
  hns: "this is Windows HNS state (`hnsdiag list all` / `list loadbalancers`, or PowerShell's `Get-HnsPolicyList`): kube-proxy on Windows programs HNS load balancers, not iptables; kdebug does not read them yet: each load balancer lists a Service VIP and its endpoints by HNS endpoint ID (`hnsdiag list endpoints` gives their IPs)",
  'klipper-lb':
    "this is klipper-lb's log (k3s ServiceLB's svclb-* Pods, its entry script traced by sh -x): the iptables commands it runs inside its own Pod to send the node's port to the Service (DNAT to its cluster IP, then MASQUERADE), and what they printed, not the node's kube-proxy rules: run `iptables-save` on the node and give kdebug that",
  'calico-bpf-nat':
    "this is Calico eBPF's NAT map (`calico-node -bpf nat dump`): Calico's eBPF dataplane replaces kube-proxy, each Service address and port is a frontend line ('ADDR port P proto N id I count C local L') with its backends under it, not iptables rules; kdebug does not read it yet",
  'calico-bpf-log':
    "this is the log of Calico eBPF's programs (bpf_trace_printk lines read from the kernel's trace_pipe, each after the interface and hook that logged it: -I ingress, -E egress, -X XDP, -C a socket's connect): what they did with some packets (conntrack, NAT lookups, the backend chosen), not the Services the dataplane holds; Calico's eBPF dataplane replaces kube-proxy: run `calico-node -bpf nat dump` in the calico-node Pod for its Services (each frontend and its backends), which kdebug does not read yet",
  'calico-bpf-counters':
    "this is `calico-node -bpf counters dump` output, the packet counters of Calico eBPF's programs on each interface (accepted, dropped and why, by ingress, egress and XDP hook): no Service is in it; Calico's eBPF dataplane replaces kube-proxy: run `calico-node -bpf nat dump` in the calico-node Pod for its Services (each frontend and its backends), which kdebug does not read yet",
  'iptables-trace':
    "these are the kernel's log lines of iptables' TRACE target (`TRACE: TABLE:CHAIN:rule:N` and the packet's fields): the rules one packet walked, by their number in each chain, not the rules themselves; run `iptables-save` on that node (rule N of a chain is its Nth -A line there) and give kdebug that",
  'ovs-flows':
    "these are Open vSwitch (OVS) flows (`ovs-ofctl dump-flows`, Antrea's `antctl get ovsflows`): AntreaProxy (or OVN) implements Services as OpenFlow flows and select groups, not kube-proxy rules; kdebug does not read them yet: in `antctl get ovsflows -S NAME -n NAMESPACE` a Service's group has a bucket per endpoint",
  ovn: "this is OVN's northbound database (`ovn-nbctl lb-list`, `list load_balancer`, or `show`'s switches and ports): OVN-Kubernetes (or Kube-OVN) implements Services as OVN load balancers, not kube-proxy rules; kdebug does not read them yet: in `ovn-nbctl lb-list` each VIP line lists its backends",
  ...LOGS,
  'process-listing': `this is a process listing (\`ps\`): which processes run, with their flags (kube-proxy's --proxy-mode among them), not the rules they wrote: ${RUN}`,
  sysfs: `these are the kernel's settings read from /sys or /proc (or \`sysctl\`): how the node forwards and bridges packets, not its Service rules: ${RUN}`,
  'nft-rules':
    "these are nftables rules in nft's own syntax, lines of a chain without their table: kdebug reads kube-proxy's nftables table whole (`nft list table ip kube-proxy`, nftables mode) and iptables' rules as `iptables-save` prints them",
  'nft-no-json':
    'this is nft refusing JSON output ("JSON support not compiled-in": this nft was built without it): kube-proxy\'s nftables mode lists its sets\' and maps\' elements with `nft -j` (knftables) and logs "failed to run nft: JSON support not compiled-in" where the node\'s nft lacks it; no rules in it: `nft list table ip kube-proxy` (text) lists the table, and kdebug reads that',
  'nft-version':
    "this is `nft --version`'s line, which nftables the node runs, not a listing: `nft list table ip kube-proxy` lists kube-proxy's table (nftables mode), and kdebug reads that",
  'nft-tables':
    "this is `nft list tables` output, the names of the node's nftables tables without their rules: where it lists `ip kube-proxy` (or `ip6 kube-proxy`) kube-proxy runs in nftables mode there; give kdebug `nft list table ip kube-proxy` (and `nft list table ip6 kube-proxy`) as printed",
  'kubectl-nodes': kubectlSaid(
    'kubectl-nodes',
    "the cluster's Nodes (status, roles, kubelet version)",
  ),
  'kubectl-pods': kubectlSaid('kubectl-pods', 'Pods (readiness, status, restarts)'),
  'kubectl-services': kubectlSaid(
    'kubectl-services',
    'Services (type, cluster IP, external IP, ports)',
  ),
  'kubectl-endpoints': kubectlSaid(
    'kubectl-endpoints',
    "Endpoints objects (each Service's ready addresses)",
  ),
  'kubectl-endpointslices': kubectlSaid(
    'kubectl-endpointslices',
    'EndpointSlices (address type, ports, endpoints)',
  ),
  'kubectl-deployments': kubectlSaid('kubectl-deployments', 'Deployments (their replicas)'),
  'kubectl-daemonsets': kubectlSaid('kubectl-daemonsets', 'DaemonSets (their Pods per node)'),
  'kubectl-describe-svc': kubectlSaid('kubectl-describe-svc', 'a Service and its endpoints'),
  'kubectl-describe-pod': kubectlSaid(
    'kubectl-describe-pod',
    "a Pod's spec and status (its containers: image, command, state)",
  ),
};

/** What the lines of another tool's kind are; iptables' failure to open a table said of the
 * tables its lines name (missingTable), kube-proxy's log of the IPVS chains its lines name
 * (`ipvsChains`, none where it says it runs another proxier). */
export function foreignText(
  kind: ForeignKind,
  tables: readonly string[],
  ipvsChains: readonly string[] = [],
): string {
  if (kind === 'iptables-no-table') return noTable('iptables', tables);
  if (kind === 'ip6tables-no-table') return noTable('ip6tables', tables);
  // kube-proxy's log: the IPVS proxier's chains its lines name
  if (kind === 'kube-proxy-log' && ipvsChains.length > 0) return ipvsProxierLog(ipvsChains);
  return FOREIGN[kind];
}

/** The table iptables' (ip6tables') error for a table the kernel lacks names; undefined where it
 * names none ("Cannot initialize: Table does not exist"). */
export const missingTable = (line: string): string | undefined =>
  /can't initialize ip6?tables table `(\w+)'/.exec(line)?.[1];

/** iptables (ip6tables) failing to open `tables` (none named: one it was asked for): iptables
 * opens each table on its own (iptc_init), so the others, and the other backend's, are not said
 * empty. */
function noTable(cmd: 'iptables' | 'ip6tables', tables: readonly string[]): string {
  const six = cmd === 'ip6tables';
  const family = six ? 'IPv6' : 'IPv4';
  const modules = tables.map((t) => `${six ? 'ip6table' : 'iptable'}_${t}`);
  const them = tables.join(' and ');
  const what =
    tables.length === 0
      ? `a table ("Cannot initialize: Table does not exist", which names none)`
      : `table${tables.length === 1 ? '' : 's'} ${them} ("can't initialize ${cmd} table \`${tables[0]}': Table does not exist")`;
  const lacks =
    tables.length === 0
      ? `no ${family} netfilter table of the one ${cmd} was asked to open, for this backend (its ${six ? 'ip6table' : 'iptable'}_* module not loaded, or not built)`
      : `no ${family} ${them} table for this ${cmd} backend (its ${modules.join(', ')} module${tables.length === 1 ? '' : 's'} not loaded, or not built${six ? ', or IPv6 netfilter not built' : ''}), so it holds no ${them} rules to list`;
  const other = tables.length === 1 ? ` -t ${tables[0]}` : '';
  return `this is ${cmd} failing to open ${what}: the node's kernel has ${lacks}; ${cmd} opens each table on its own, so its other tables are not affected (\`${cmd}-save\` lists those it has), and the other backend may hold ${tables.length === 0 ? 'that one' : them} (\`${cmd}-nft-save${other}\` or \`${cmd}-legacy-save${other}\`)${six ? '; `iptables-save` lists the IPv4 rules' : ''}`;
}

/** Each of the node's own views, in a few words: where its lines are a few among others. */
export const HOST_NAMES: Record<HostKind, string> = {
  'process-listing': 'a process listing (`ps`: which processes run, no rules)',
  sysfs: "the kernel's settings read from /sys or /proc (no rules)",
};

export const isHost = (kind: string): kind is HostKind => kind in HOST_NAMES;
