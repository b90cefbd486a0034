// The lines of other tools' listings, each by what its tool prints: the table classify.ts reads a
// line that is no dump line against.
import type { ForeignKind } from './foreign-kinds.js';
import { IPSETS } from '../../../../ipvs/expected/ipsets.js';

/** The names of kube-proxy's own IPVS-mode sets (IPv6's KUBE-6-..., cut at 31 characters). */
const KUBE_PROXY_SET = new RegExp(
  `^(?:${Object.keys(IPSETS)
    .flatMap((n) => [n, n.replace(/^KUBE-/, 'KUBE-6-').slice(0, 31)])
    .join('|')})$`,
);

/** `ipset list`'s Name line, `ipset save`'s create and add lines, of a set kube-proxy makes. */
export const kubeProxySetLine = (line: string): boolean => {
  const name = /^(?:Name: |(?:create|add) )(\S+)/.exec(line)?.[1];
  return name !== undefined && KUBE_PROXY_SET.test(name);
};

/** A line of nft's error report, as a log viewer may frame it ("│ "): the input's file, line and
 * columns, then what nft refused ("/dev/stdin:892:87-100: Error: Could not process rule: ..."). */
export const NFT_ERROR = /^\s*(?:[│|]\s*)?\S+:\d+:\d+(?:-\d+)?: (?:Error|Warning): /;

/** iptables' (ip6tables') error for a table the kernel does not have. */
const NO_TABLE = (six: string) =>
  new RegExp(
    `^ip${six}tables(?:-legacy|-nft)?(?:-save)?(?: v[\\d.]+(?: \\(\\w+\\))?)?: (?:can't initialize ip${six}tables table \`\\w+'|Cannot initialize): Table does not exist\\b`,
  );

/** iptables-nft's refusal of a table or chain nft wrote directly (nft_assert_table_compatible's
 * xtables_error), on its own line or quoted in a log of whoever ran it ("exit status 1: ..."). */
export const INCOMPATIBLE =
  /\bip6?tables(?:-nft)?(?:-save|-restore)? v[\d.]+ \(nf_tables\): (?:chain `[^']*' in )?table `[^']*' is incompatible, use 'nft' tool\b/;

export const FOREIGN_LINES: [RegExp, ForeignKind][] = [
  [/^Chain \S+ \((?:policy \w+|\d+ references)/, 'iptables-list'],
  // a listing a web page joined onto one line
  [/\bChain \S+ \((?:policy \w+|\d+ references)\) +target +prot +opt\b/, 'iptables-list'],
  // Cilium: `cilium service list`, `cilium bpf lb list` (and cilium-dbg's)
  [/^(?:ID +)?Frontend +Service Type +Backend\b/, 'cilium'],
  [/^SERVICE ADDRESS +BACKEND ADDRESS\b/, 'cilium'],
  // `bpf lb list --revnat` and `--backends` (both titled so by Cilium), --frontends, --source-ranges
  [/^ID +BACKEND ADDRESS \(REVNAT_ID\) \(SLOT\)\s*$/, 'cilium-map'],
  [/^SERVICE ADDRESS +BACKEND ID\s*$/, 'cilium-map'],
  [/^SOURCE RANGE \(REVNAT_ID\)\s*$/, 'cilium-map'],
  // `cilium map get cilium_lb4_services_v2` (or _backends, _reverse_nat): the agent's map API,
  // its table of keys and values with each entry's sync state; services' values "ID (REVNAT)
  // [FLAGS: 0x..]", backends' "PROTO://ADDR:PORT"
  [/^Key +Value +State +Error$/, 'cilium-map'],
  // bpftool's map dump without BTF (print_entry_plain): "key:" and "value:", each with its bytes
  // in hex, on one line ("key:" alone where a map's key is too long to share one), and its count
  // (bytes grouped by blanks)
  [
    /^key:(?:\s+[\da-f]{2})+\s+value:(?:\s+[\da-f]{2})+\s*$|^(?:key|value):$|^Found \d+ elements?$/,
    'bpf-map',
  ],
  [/^\S+:\d+(?:\/i)? +\d+ \(\d+\) \[FLAGS: 0x[\da-f]+\] +\w+/, 'cilium-map'],
  [/^\d+ +[A-Z]+:\/\/\S+:\d+ +\w+/, 'cilium-map'],
  [
    /^(?:\d+ +)?\S+:\d+(?::[A-Z]+|\/[A-Z]+)? +(?:ClusterIP|NodePort|ExternalIPs|LoadBalancer|HostPort|LocalRedirect)\b/,
    'cilium',
  ],
  [/^\d+ => \S+:\d+\S* \((?:active|terminating|quarantined|maintenance)\)/, 'cilium'],
  [/^\S+:\d+ +\S+:\d+ \(\d+\)(?: \(\d+\))?/, 'cilium'],
  // `cilium endpoint list`: its header (ENFORCEMENT under its two POLICY titles), an endpoint's
  // row, and its further labels (source:key=value) on lines of their own
  [/^ENDPOINT +POLICY \(ingress\) +POLICY \(egress\) +IDENTITY +LABELS\b/, 'cilium-endpoints'],
  [/^ENFORCEMENT +ENFORCEMENT\s*$/, 'cilium-endpoints'],
  [
    /^\d+ +(?:Disabled|Enabled)\b.* +\d+ +(?:reserved|k8s|container|unspec|cidr):\S/,
    'cilium-endpoints',
  ],
  [/^(?:reserved|k8s|container|unspec|cidr):[\w./-]+(?:=\S*)?\s*$/, 'cilium-endpoints'],
  // `cilium bpf ct list global`: a connection, its direction or SVC, its expiry and counters
  [/^(?:TCP|UDP|ICMP|ICMPv6|SCTP|ANY) (?:IN|OUT|SVC) \S+ -> \S+ .*\bexpires=\d+/, 'cilium-ct'],
  // Cilium's status: the agent's fields (cilium-dbg status) and its KubeProxyReplacement details
  // (--verbose), each "Name:   value"
  [
    /^(?:KubeProxyReplacement(?: Details)?|Socket LB(?: Tracing| Coverage)?|Backend Selection|Graceful Termination|NAT46\/64 Support|XDP Acceleration|KVStore|Cilium health daemon|Host Routing|Masquerading|Controller Status|Proxy Status|Global Identity Range|Cluster health|NodeMonitor|CNI Chaining|BandwidthManager|Host firewall):(?:[ \t]|$)/,
    'cilium-status',
  ],
  [/^Session Affinity:[ \t]+(?:Enabled|Disabled)\s*$/, 'cilium-status'],
  [
    /^- (?:ClusterIP|NodePort|LoadBalancer|externalIPs|HostPort):[ \t]+(?:Enabled|Disabled)\b/,
    'cilium-status',
  ],
  // klipper-lb's entry script (k3s ServiceLB) under `set -ex`: sh's trace of the commands it runs,
  // the protocol upper-case as k3s passes it (DEST_PROTO=TCP), and its own lines
  [
    /^ip6?tables -t nat -I (?:PREROUTING '?!'? -s \S+\/(?:32|128) -p (?:TCP|UDP|SCTP) --dport \d+ -j DNAT --to \S+|POSTROUTING -d \S+\/(?:32|128) -p (?:TCP|UDP|SCTP) -j MASQUERADE)$/,
    'klipper-lb',
  ],
  [
    /^ip6?tables -t filter -[AI] FORWARD -[sd] \S+ -p (?:TCP|UDP|SCTP) --dport \d+ -j (?:DROP|ACCEPT)$/,
    'klipper-lb',
  ],
  [
    /^(?:\/usr\/bin\/entry: line \d+: |trap exit TERM INT$|\[INFO\] +(?:nft|legacy) mode detected$)/,
    'klipper-lb',
  ],
  // Windows: `hnsdiag list all`
  [/^(?:Networks|Endpoints|Namespaces|LoadBalancers|Policies):$/, 'hns'],
  [/^Name +ID(?: +Virtual Network Name)?$/, 'hns'],
  [/^ID +\| +Endpoint IDs$/, 'hns'],
  // `hnsdiag list loadbalancers`: one "Key : value" block per load balancer
  [/^(?:Load Balancer|Virtual IPs|Direct IP IDs|Source VIP) +: /, 'hns'],
  // PowerShell's Format-List of HNS objects (Get-HnsPolicyList, Get-HnsEndpoint): "Key   : value",
  // a load balancer's policy as "@{...; Type=ELB; VIPs=...}"
  [
    /^(?:ActivityId|HostComputeNetwork|IsApplied|SharedContainers|VirtualNetwork(?:Name)?) +: /,
    'hns',
  ],
  [/^Policies +: \{@\{.*\bType=ELB\b/, 'hns'],
  // Calico eBPF: `calico-node -bpf nat dump`, a frontend and its backends ("ID:ORDINAL  ADDR:PORT")
  [/^\S+ port \d+ proto \d+ id \d+ count \d+ local \d+$/, 'calico-bpf-nat'],
  [/^\d+:\d+\s+\[?[\da-f.:]+\]?:\d+$/, 'calico-bpf-nat'],
  // Calico eBPF's programs logging (log.h's CALI_LOG: bpf_trace_printk) as the kernel's trace_pipe
  // prints it ("TASK-PID [CPU] FLAGS TIME: bpf_trace_printk: "), each message after the interface's
  // name padded with '-' and the hook that logged it (-I, -E, -X, -C), IPv6's after "IPv6 "
  [
    /^(?:\S.*-\d+ +(?:\( *[\d-]+\) +)?\[\d+\] +\S+ +[\d.]+: +)?bpf_trace_printk: (?:IPv6 )?[\w.@-]+-[ICEX]:(?: |$)/,
    'calico-bpf-log',
  ],
  // `calico-node -bpf counters dump` (calico-bpf's dumpInterface): a tablewriter table per
  // interface, CATEGORY and TYPE then a counter (or N/A) per hook, captioned "dumped IFACE counters."
  [/^\| +CATEGORY +\| +TYPE +\| +INGRESS +\| +EGRESS +\| +XDP +\|$/, 'calico-bpf-counters'],
  [/^\|[^|]*\|[^|]*(?:\| *(?:\d+|N\/A)? *){3}\|$|^\+(?:-+\+){5}$/, 'calico-bpf-counters'],
  [/^dumped \S+ counters\.$/, 'calico-bpf-counters'],
  // Open vSwitch flows (`ovs-ofctl dump-flows`, `antctl get ovsflows`) and select groups
  [
    /^(?:cookie=0x[\da-f]+, (?:duration=\S+, )?)?table=\d+, n_packets=\d+, n_bytes=\d+, |^group_id=\d+,type=(?:select|all|indirect|ff)\b/,
    'ovs-flows',
  ],
  // OVN: `ovn-nbctl lb-list` / `lr-lb-list` / `ls-lb-list`
  [/^UUID +LB +PROTO +VIP +IPs$/, 'ovn'],
  // `ovn-nbctl show`: each logical switch or router by UUID and name, its ports, their fields
  [
    /^(?:switch|router) [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} \(.*\)$/,
    'ovn',
  ],
  [
    /^(?:type: (?:router|localnet|localport|virtual|patch|l3gateway|external|vtep|remote|chassisredirect)|router-port: \S+|addresses: \[".*"\]|port \S+ \(aka \S+\))$/,
    'ovn',
  ],
  // `ovn-nbctl list load_balancer`: OVSDB records, "column : value"
  [/^(?:_uuid|vips|ip_port_mappings|selection_fields|health_check) +: /, 'ovn'],
  [
    /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} +\S+ +)?(?:tcp|udp|sctp) +\[?[\d.:a-f]+\]?:\d+(?: +\S+)?$/,
    'ovn',
  ],
  // procps' `ps aux` (USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND) and `ps -ef` (UID
  // PID PPID C STIME TTY TIME CMD): their headers and rows
  [
    /^(?:USER +PID +%CPU +%MEM +VSZ +RSS +TTY +STAT|UID +PID +PPID +C +STIME +TTY +TIME +CMD)\b/,
    'process-listing',
  ],
  [
    /^\S+ +\d+ +\d+\.\d +\d+\.\d +\d+ +\d+ +\S+ +[DIRSTtWXZ<NLsl+]+ +\S+ +\d+:\d\d +\S|^\S+ +\d+ +\d+ +\d+ +\S+ +\S+ +\d+:\d\d:\d\d +\//,
    'process-listing',
  ],
  // a command reading the kernel's settings under /sys or /proc (cat, a shell loop over them,
  // sysctl), after a prompt or not; the lines it printed go on from it
  [
    /^(?:\S*[$#] +)?(?:sudo +)?(?:(?:cat|ls|grep|head|tail)\b.* |for \S+ in |while .* )\/(?:sys|proc)\/|^(?:\S*[$#] +)?(?:sudo +)?sysctl\b/,
    'sysfs',
  ],
  // `ip addr`: an interface's line, its link and its addresses
  [/^\d+: [\w@.-]+: <[A-Z_,-]*> mtu \d+/, 'ip-addr'],
  [
    /^(?:link\/(?:ether|loopback|none|ipip|gre)\b|inet6? [\da-f.:]+\/\d+ .*\bscope\b|valid_lft \S+ preferred_lft \S+$)/,
    'ip-addr',
  ],
  // net-tools' `ifconfig` (ife_print): an interface's flags and mtu (before 2.10, "Link encap:"),
  // its addresses with their netmask or prefix length, its link address, its packet counters
  [/^[\w@.:-]+: flags=\d+<[A-Z_,]*> {2}mtu \d+$|^[\w@.:-]+ +Link encap:/, 'ip-addr'],
  [
    /^(?:inet6? [\da-f.:]+ {2}(?:netmask|prefixlen) |inet6? addr: ?[\da-f.:/]+ |(?:ether [\da-f:]{17} {2}|loop {2})txqueuelen \d+|[RT]X (?:packets|errors) \d+ )/,
    'ip-addr',
  ],
  // kubectl get nodes, pods, deployments, daemonsets: the columns of kubectl's printers for each
  [/^(?:NAMESPACE +)?NAME +STATUS +ROLES +AGE +VERSION\b/, 'kubectl-nodes'],
  [/^(?:NAMESPACE +)?NAME +READY +STATUS +RESTARTS +AGE\b/, 'kubectl-pods'],
  [/^(?:NAMESPACE +)?NAME +READY +UP-TO-DATE +AVAILABLE +AGE\b/, 'kubectl-deployments'],
  [/^(?:NAMESPACE +)?NAME +DESIRED +CURRENT +READY +UP-TO-DATE +AVAILABLE\b/, 'kubectl-daemonsets'],
  // kubectl get endpoints / endpointslices, -A's NAMESPACE column first
  [/^(?:NAMESPACE +)?NAME +ENDPOINTS(?: +AGE)?$/, 'kubectl-endpoints'],
  [/^(?:NAMESPACE +)?NAME +ADDRESSTYPE +PORTS +ENDPOINTS(?: +AGE)?$/, 'kubectl-endpointslices'],
  // and a row of `get ep` without its header: name, addresses with ports (kubectl's printer cuts
  // them at three, "+ N more..."), or <none>, and the age
  [
    /^(?:\S+ +)?\S+ +(?:<none>|(?:\[[\da-fA-F:.]+\]|[\d.]+):\d+(?:,(?:\[[\da-fA-F:.]+\]|[\d.]+):\d+)*(?: \+ \d+ more\.\.\.)?) +(?:\d+[smhdy])+$/,
    'kubectl-endpoints',
  ],
  // kubectl get svc, its -A / --all-namespaces NAMESPACE column first, before 1.8 without TYPE
  [/^(?:NAMESPACE +)?NAME +(?:TYPE +)?CLUSTER-IP +EXTERNAL-IP +PORT\(S\)/, 'kubectl-services'],
  // kubectl 1.0's printer of Services (serviceColumns: no AGE, no TYPE yet)
  [/^(?:NAMESPACE +)?NAME +LABELS +SELECTOR +IP\(S\) +PORT\(S\)/, 'kubectl-services'],
  [
    /^(?:\S+ +)?\S+ +(?:ClusterIP|NodePort|LoadBalancer|ExternalName) +(?:\S+) +\S+ +\S+\/(?:TCP|UDP|SCTP)/,
    'kubectl-services',
  ],
  // kubectl describe svc: its fields aligned with blanks, or with tabs as kubectl before 1.10 did
  [
    /^(?:Namespace|Labels|Annotations|Selector|IP Family Policy|IP Families|IPs?|Port|TargetPort|NodePort|Endpoints|External Traffic Policy|LoadBalancer Ingress|Events):[ \t]/,
    'kubectl-describe-svc',
  ],
  // kubectl describe pod: the fields only a Pod's description prints (describePod), aligned so
  [
    /^(?:Priority(?: Class Name)?|Service Account|Start Time|Controlled By|(?:Init )?Containers|Container ID|Image(?: ID)?|Host Port|Command|Args|State|Last State|Restart Count|QoS Class|Node-Selectors|Tolerations|HostPathType):(?:[ \t]|$)/,
    'kubectl-describe-pod',
  ],
  // its Session Affinity is the Service's field (None or ClientIP); Cilium's status prints its
  // own "Session Affinity:   Enabled" among its kube-proxy replacement's details
  [/^Session Affinity:[ \t]+(?:None|ClientIP)\s*$/, 'kubectl-describe-svc'],
  [
    /^(?:num +)?(?:pkts +bytes +)?target +prot +opt +(?:in +out +)?source +destination/,
    'iptables-list',
  ],
  [
    /^(?:\d+[KMGT]? +){0,3}[\w-]+ +(?:all|tcp|udp|sctp|icmp|ipv6-icmp|\d+) +(?:--|-f|!f) +/,
    'iptables-list',
  ],
  // conntrack -L: "tcp      6 86397 ESTABLISHED src=… dst=… sport=… dport=…", /proc/net/nf_conntrack's
  // with "ipv4     2 " before it, and the tool's count of what it showed
  [
    /^(?:ipv[46] +\d+ +)?(?:tcp|udp|icmp|icmpv6|sctp|dccp|gre|unknown) +\d+ +\d+ +(?:[A-Z_]+ +)?src=\S+ +dst=\S+/,
    'conntrack',
  ],
  [
    /^conntrack v[\d.]+ \(conntrack-tools\): \d+ flow entr(?:y|ies) ha(?:s|ve) been (?:shown|deleted)\.?$/,
    'conntrack',
  ],
  // the kernel's log of a full connection tracking table (nf_conntrack_core's early_drop failing,
  // net_warn_ratelimited), after dmesg's or journald's prefix
  [
    /^(?:\S+ +\d+ [\d:]+ \S+ kernel: )?(?:\[ *[\d.]+\] )?nf_conntrack: (?:nf_conntrack: )?table full, dropping packet\.?$/,
    'conntrack-full',
  ],
  // nft's own error report ("/dev/stdin:892:87-100: Error: Could not process rule: ..."), as a
  // log viewer may frame it ("│ "): the input's file, line and columns, then what nft refused
  [NFT_ERROR, 'nft-error'],
  // nft built without libjansson refusing -j (main.c), and the line `nft --version` prints
  [/^JSON support not compiled-in\.?$/, 'nft-no-json'],
  [/^nftables v\d+(?:\.\d+)+ \([^)]*\)$/, 'nft-version'],
  // nft aborting on its own assertion ("nft: netlink_delinearize.c:136: netlink_parse_concat_expr:
  // Assertion `consumed > 0' failed."), where the table it was asked to list should be
  [/^nft: [\w./-]+\.c:\d+: \w+: Assertion .* failed\.?$/, 'nft-crash'],
  // nf_log's line for a packet xt_TRACE marked (nf_log_trace): table, chain, rule, policy or
  // return, and the rule's number, after the kernel log's own prefix (journald's, dmesg's)
  [
    /^(?:\S+ +\d+ [\d:]+ \S+ kernel: )?(?:\[ *[\d.]+\] )?TRACE: \w+:[\w-]+:(?:rule|return|policy):\d+ /,
    'iptables-trace',
  ],
  // ipvsadm.c's print_timeout
  [/^Timeout \(tcp tcpfin udp\): \d+ \d+ \d+$/, 'ipvs-timeouts'],
  // xtables_error's "PROG vVERSION (BACKEND): " before iptables' or iptables-save's failure to
  // open a table the kernel does not have (iptc_strerror's ENOENT)
  [NO_TABLE(''), 'iptables-no-table'],
  [NO_TABLE('6'), 'ip6tables-no-table'],
  // `nft list tables`: a table's name alone on its line
  [/^table (?:ip6?|inet|arp|bridge|netdev) \S+$/, 'nft-tables'],
  [/^(?:add |delete |flush )?(?:table|chain|map|set) (?:ip6?|inet) kube-proxy\b/, 'kube-proxy-nft'],
  // its own sets, maps and chains name kube-proxy's table wherever a fragment starts
  [
    /@(?:service-ips|service-nodeports|no-endpoint-services|no-endpoint-nodeports|cluster-ips|nodeport-ips|firewall-ips)\b|^chain (?:services|(?:service|endpoint|external|firewall)-[A-Z0-9]{8}-\S+) \{$| (?:jump|goto) (?:mark-for-masquerade|(?:service|endpoint|external|firewall)-[A-Z0-9]{8}-)/,
    'kube-proxy-nft',
  ],
  [/^table (?:ip6?|inet) kube-proxy\b/, 'kube-proxy-nft'],
  // its dispatch maps' key (ADDRESS . PROTOCOL . PORT, or PROTOCOL . PORT for node ports) to a
  // verdict, and their elements, wherever a fragment (a KEP's, a diff's) starts
  [
    /^type (?:ipv[46]_addr \. )?inet_proto \. inet_service : verdict;?$|^(?:elements = \{ )?(?:[\d.]+|[\da-f:]+) \. (?:tcp|udp|sctp) \. \d+ : (?:goto|jump) \S+,?$/,
    'kube-proxy-nft',
  ],
  [/^(?:add|insert|replace|delete|flush) (?:rule|element|table|chain|map|set) /, 'nft'],
  [/^(?:table (?:ip6?|inet|arp|bridge|netdev) \S+|chain \S+|(?:map|set) \S+) \{$/, 'nft'],
  // nft closes a block with "}" alone on its line ("}," is a Go or JSON literal's, not nft's)
  [/^(?:type (?:nat|filter|route) hook \w+|policy \w+;|elements = \{|\}\s*$)/, 'nft'],
  [/(?:^| )counter packets \d+ bytes \d+/, 'nft'],
  // a rule line in nft's syntax: a kube-proxy-era chain jumped to is iptables-nft's, else nft's own
  [
    /^(?:ip6? [sd]addr|meta (?:l4proto|mark)|(?:tcp|udp|th) dport|ct state|i(?:if|of)name).* (?:jump|goto) (?:KUBE|DOCKER|CILIUM|cali|FLANNEL)-/,
    'nft',
  ],
  [
    /^(?:ip6? [sd]addr|meta (?:l4proto|mark)|(?:tcp|udp|th) dport|ct state|i(?:if|of)name)\b.* (?:jump|goto|accept|drop|reject|return|masquerade|dnat to|snat to|vmap|meta mark set)\b/,
    'nft-rules',
  ],
  [
    /^IP Virtual Server version|^Prot LocalAddress:Port|^ *-> (?:RemoteAddress|\[?[\d.:a-f]+\]?:\d+ )/,
    'ipvsadm',
  ],
  // a connection's row (pro, expire mm:ss, state, source, virtual, destination) or -c's header
  [
    /^(?:(?:TCP|UDP|SCTP|IP) +\d+:\d\d +\S+ +\S+:\d+ +\S+:\d+ +\S+:\d+|IPVS connection entries|pro +expire +state +source +virtual +destination)$/,
    'ipvs-connections',
  ],
  [/^(?:TCP|UDP|SCTP) +\S+:\d+ +\w+/, 'ipvsadm'],
  [/^-[AaEeDd] -[tuf] \S+/, 'ipvsadm'],
  [
    /^(?:Type: (?:hash|bitmap|list):|(?:Revision|Header|Size in memory|References|Number of entries): |Members:$)/,
    'ipset',
  ],
  [/^(?:create|add) KUBE-[\w-]+ /, 'ipset'],
  [/^Name: \S+$/, 'ipset'],
];
