// What people paste around a rules dump: shell prompts, prose, `grep -n` prefixes, log lines, and
// listings of other tools. The parser asks here only about lines that are not dump lines, so a
// clean dump never pays for it.
import { ELISION } from '../../../../paste/elisions.js';
import { LOGS, logLine, type LogKind } from './logs.js';

/** Why a line was skipped or doubted (JSON `warnings[].kind`). */
export type WarningKind =
  | 'blank'
  | 'prompt' // a shell prompt and the command typed after it
  | 'command' // a command line without a prompt (`sudo iptables-save`, `iptables -I ...`)
  | 'prose'
  | 'comment' // a "# ..." line iptables-save does not print: an author's note, no rule
  | 'elided' // `...`, `--- snip ---` (../../elisions.ts), grep's `--`: part of the paste left out
  | 'fence' // markdown ``` fences
  | 'log' // klog / kubectl log lines
  | 'foreign' // a line of another tool's listing (see ForeignKind)
  | 'prefix' // grep -n / grep -H / prompt prefixes stripped, the rule after them read
  | 'duplicate' // a line pasted twice, read once
  | 'joined' // several rules on one line (the line ends lost in copying), each read
  | 'stray' // a rule after a whole dump's last COMMIT, in no table: not read
  | 'redacted' // a rule whose address its author hid (51.254.xxx.xxx): not read, its chain partial
  | 'counters' // a rule's counters on a line of their own (iptables-save -c's [0:0], -L -v's)
  | 'truncated' // the dump looks cut short
  | 'unterminated' // the paste's last line, read, has no newline after it: it may be cut short
  | 'table' // which table a listing without `*table` belongs to
  | 'backend' // iptables-legacy / iptables-nft, and iptables-nft's "legacy tables present" warning
  | 'mode' // the dump is of another kube-proxy mode (IPVS, userspace)
  | 'view'; // an `iptables -L` listing read as rules, and what it does not show

/** Other tools' output that a paste may hold instead of (or beside) a rules dump. */
export type ForeignKind =
  | 'iptables-list'
  | 'nft'
  | 'kube-proxy-nft'
  | 'ipvsadm'
  | 'ipset'
  | 'cilium'
  | 'cilium-map'
  | 'hns'
  | 'ovn'
  | 'kubectl'
  | LogKind
  | 'nft-tables'
  | 'nft-rules'
  | 'nft-error'
  | 'nft-crash'
  | 'ipvs-timeouts'
  | 'ipvs-connections'
  | 'iptables-no-table'
  | 'ip6tables-no-table'
  | 'conntrack'
  | 'ip-addr'
  | 'calico-bpf-nat'
  | 'ovs-flows';

/** What each foreign listing is, and what to run instead (or until kdebug reads it). */
export const FOREIGN: Record<ForeignKind, string> = {
  'iptables-list':
    'this is `iptables -L` output that kdebug cannot read line by line (its lines run together, or its columns are not the ones iptables prints): paste it as printed, or run `iptables-save` (or `iptables -t nat -S`)',
  nft: 'these are iptables-nft rules as printed by `nft list ruleset` / `nft list table ip nat`: run `iptables-nft-save` (or `iptables-save`)',
  'ip-addr':
    "this is `ip addr` output, a node's interfaces and their addresses: in IPVS mode kube-ipvs0 holds every Service address, but not where its connections go; run `ipvsadm -Ln` (IPVS mode) or `iptables-save` on the node for that",
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
  'ip6tables-no-table': noTable('ip6tables', []),
  'kube-proxy-nft':
    "this is kube-proxy's nftables table (nftables mode), in a form kdebug cannot read as a listing here (a fragment, a diff, a quote): give it `nft list table ip kube-proxy` (or `nft -j list table ip kube-proxy`) as printed",
  ipvsadm:
    'this is `ipvsadm` output (kube-proxy IPVS mode) among iptables lines: the Services are IPVS virtual servers; give the `ipvsadm -Ln` listing to `kdebug rules --file` on its own',
  ipset:
    'this is `ipset list` output (the sets of kube-proxy IPVS mode), which kdebug does not read yet',
  cilium:
    "this is Cilium's Service table (`cilium service list` / `cilium bpf lb list`, or cilium-dbg's): Cilium replaces kube-proxy on this node, its Services are BPF map entries, not iptables rules; kdebug reads such a listing on its own: paste it alone (`kdebug rules --file`), or `cilium-dbg service list` from the Cilium agent Pod (anetd on GKE Dataplane V2)",
  'cilium-map':
    "this is one of Cilium's BPF load-balancer maps alone (`cilium-dbg bpf lb list --revnat`, `--backends`, `--frontends` or `--source-ranges`): it holds IDs, not which backends serve which Service; give kdebug `cilium-dbg bpf lb list` without a flag, or `cilium-dbg service list`, from the Cilium agent Pod",
  hns: "this is Windows HNS state (`hnsdiag list all` / `list loadbalancers`, or PowerShell's `Get-HnsPolicyList`): kube-proxy on Windows programs HNS load balancers, not iptables; kdebug does not read them yet: each load balancer lists a Service VIP and its endpoints by HNS endpoint ID (`hnsdiag list endpoints` gives their IPs)",
  'calico-bpf-nat':
    "this is Calico eBPF's NAT map (`calico-node -bpf nat dump`): Calico's eBPF dataplane replaces kube-proxy, each Service address and port is a frontend line ('ADDR port P proto N id I count C local L') with its backends under it, not iptables rules; kdebug does not read it yet",
  'ovs-flows':
    "these are Open vSwitch (OVS) flows (`ovs-ofctl dump-flows`, Antrea's `antctl get ovsflows`): AntreaProxy (or OVN) implements Services as OpenFlow flows and select groups, not kube-proxy rules; kdebug does not read them yet: in `antctl get ovsflows -S NAME -n NAMESPACE` a Service's group has a bucket per endpoint",
  ovn: "this is OVN's load balancers (`ovn-nbctl lb-list`, or `list load_balancer`): OVN-Kubernetes (or Kube-OVN) implements Services as OVN load balancers, not kube-proxy rules; kdebug does not read them yet: each VIP line lists its backends",
  ...LOGS,
  'nft-rules':
    "these are nftables rules in nft's own syntax, lines of a chain without their table: kdebug reads kube-proxy's nftables table whole (`nft list table ip kube-proxy`, nftables mode) and iptables' rules as `iptables-save` prints them",
  'nft-tables':
    "this is `nft list tables` output, the names of the node's nftables tables without their rules: where it lists `ip kube-proxy` (or `ip6 kube-proxy`) kube-proxy runs in nftables mode there; give kdebug `nft list table ip kube-proxy` (and `nft list table ip6 kube-proxy`) as printed",
  kubectl:
    "this is kubectl output (`kubectl get` of Services, endpoints, Pods or nodes, `describe svc`): the cluster's objects as the API server holds them, not a node's rules; paste `iptables-save` (or `ipvsadm -Ln`, `nft list table ip kube-proxy`) from the node, or run `kdebug svc NAME` against the cluster",
};

/** What the lines of another tool's kind are; iptables' failure to open a table said of the
 * tables its lines name (missingTable). */
export function foreignText(kind: ForeignKind, tables: readonly string[]): string {
  if (kind === 'iptables-no-table') return noTable('iptables', tables);
  if (kind === 'ip6tables-no-table') return noTable('ip6tables', tables);
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

/** A line that is not a dump line: what it is, or the rule left after a known prefix. */
export type LineClass =
  | { kind: 'prefix'; rest: number; log?: true } // the dump line starts at byte `rest` (in a log)
  | { kind: Exclude<WarningKind, 'prefix' | 'foreign'> }
  | { kind: 'foreign'; foreign: ForeignKind };

/** What the bytes after a stripped prefix must start with to be read as a dump line. */
const DUMP_LINE =
  /^(?:-[ANP] |:\S|\*[a-z]|COMMIT$|# (?:Generated|Completed|Warning)|\[\d+:\d+\] -A )/;

const PREFIXES = [
  /^(?:[^\s:]+:)?\d+[:-]/, // grep -n (and -Hn): "123:" or "dump.txt:123:", context lines "123-"
  /^[^\s:]+:/, // grep -H: "dump.txt:"
  /^\$ +/, // a "$ " prompt left on the line
  /^[+>] ?/, // diff's "+", a quote's "> "
];

/** Where a prompt ("# cat ...") runs on right after a rule's last word, outside quotes (a page
 * that lost the line end between a command's output and the next command); -1 where none. */
export function gluedPrompt(line: string): number {
  for (const m of line.matchAll(/\S(# )/g)) {
    const at = m.index + 1;
    const quotes = line.slice(0, at).split('"').length - 1;
    if (quotes % 2 === 0 && COMMANDS.test(line.slice(at + 2))) return at;
  }
  return -1;
}

/** Where a dump line runs on from the last word of a command typed at a prompt on this line
 * (`# cat rules.txt|grep KUBE-SVC-X-A KUBE-SVC-X ...`, a page that lost the line end between a
 * command and its output), after any elision glued before the prompt; undefined where the line
 * holds none, or its command prints no rules (`iptables -t nat-A X` is a command mistyped). */
export function gluedOutput(
  line: string,
): { at: number; command: string; elided: boolean } | undefined {
  const elided = /^(?:\.\.\.|…)/.exec(line)?.[0].length ?? 0;
  const rest = line.slice(elided);
  const prompt =
    PROMPT.exec(rest)?.[0].length ??
    (rest.startsWith('# ') && COMMANDS.test(rest.slice(2)) ? 2 : -1);
  if (prompt < 0) return undefined;
  const from = elided + prompt;
  let quote: string | undefined;
  for (let k = from; k < line.length; k++) {
    const c = line[k]!;
    // output runs on with no blank before it: a command's own -A (`iptables -A X`) has one
    if (quote === undefined && k > from && /\S/.test(line[k - 1]!) && GLUED.test(line.slice(k)))
      return PRINTS_RULES.test(line.slice(from, k))
        ? { at: k, command: line.slice(elided, k), elided: elided > 0 }
        : undefined;
    if (c === quote) quote = undefined;
    else if (quote === undefined && (c === '"' || c === "'")) quote = c;
  }
  return undefined;
}

/** The start of a line of iptables-save or -S output. */
const GLUED =
  /^(?:-A [\w-]+ |-[NP] [\w-]+(?: \w+)?$|:[\w-]+ \S+ \[\d+:\d+\]$|\*(?:nat|filter|mangle|raw|security)$)/;
/** A command whose output is rules in that form: a save, `iptables -S`, or a file's lines. */
const PRINTS_RULES =
  /ip6?tables(?:-legacy|-nft)?-save|ip6?tables\S*(?: [^|;&]*)? (?:-[a-zA-Z]*S[a-zA-Z]*|--list-rules)(?: |$)|(?:^|[\s|;&(])(?:cat|zcat|grep|egrep|fgrep|head|tail|less|more)(?: |$)/;

/** A line of nft's error report, as a log viewer may frame it ("│ "): the input's file, line and
 * columns, then what nft refused ("/dev/stdin:892:87-100: Error: Could not process rule: ..."). */
export const NFT_ERROR = /^\s*(?:[│|]\s*)?\S+:\d+:\d+(?:-\d+)?: (?:Error|Warning): /;

/** iptables-nft's note that the legacy backend holds tables too (after `iptables -L`, or as a
 * comment in iptables-nft-save). */
export const LEGACY_WARNING = /^(?:# )?Warning: iptables-legacy tables present/;

const TIMESTAMP = /^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|time="|level=|\{"(?:level|ts|time)")/;
const PROMPT = /^(?:\S*[@:]\S*\s*[$#%] |\[[^\]]*\][$#] |\S+ [$#] |[$%] )/;
/** A command that lists rules or a dataplane's tables, where a prompt's "#" is glued to it. */
const LISTING =
  /^(?:sudo )?(?:ip6?tables(?:-legacy|-nft)?(?:-save)?|nft|ipvsadm|ipset|cilium(?:-dbg)?)(?: |$)/;
const COMMANDS =
  /^(?:sudo|kubectl|k|iptables\S*|ip6tables\S*|nft|ipvsadm|ipset|grep|egrep|cat|less|docker|crictl|ssh|minikube|kind|k3s|oc|journalctl|conntrack)(?: |$)/;

/** iptables' (ip6tables') error for a table the kernel does not have. */
const NO_TABLE = (six: string) =>
  new RegExp(
    `^ip${six}tables(?:-legacy|-nft)?(?:-save)?(?: v[\\d.]+(?: \\(\\w+\\))?)?: (?:can't initialize ip${six}tables table \`\\w+'|Cannot initialize): Table does not exist\\b`,
  );

const FOREIGN_LINES: [RegExp, ForeignKind][] = [
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
  [
    /^(?:\d+ +)?\S+:\d+(?::[A-Z]+|\/[A-Z]+)? +(?:ClusterIP|NodePort|ExternalIPs|LoadBalancer|HostPort|LocalRedirect)\b/,
    'cilium',
  ],
  [/^\d+ => \S+:\d+\S* \((?:active|terminating|quarantined|maintenance)\)/, 'cilium'],
  [/^\S+:\d+ +\S+:\d+ \(\d+\)(?: \(\d+\))?/, 'cilium'],
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
  // Open vSwitch flows (`ovs-ofctl dump-flows`, `antctl get ovsflows`) and select groups
  [
    /^(?:cookie=0x[\da-f]+, (?:duration=\S+, )?)?table=\d+, n_packets=\d+, n_bytes=\d+, |^group_id=\d+,type=(?:select|all|indirect|ff)\b/,
    'ovs-flows',
  ],
  // OVN: `ovn-nbctl lb-list` / `lr-lb-list` / `ls-lb-list`
  [/^UUID +LB +PROTO +VIP +IPs$/, 'ovn'],
  // `ovn-nbctl list load_balancer`: OVSDB records, "column : value"
  [/^(?:_uuid|vips|ip_port_mappings|selection_fields|health_check) +: /, 'ovn'],
  [
    /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} +\S+ +)?(?:tcp|udp|sctp) +\[?[\d.:a-f]+\]?:\d+(?: +\S+)?$/,
    'ovn',
  ],
  // `ip addr`: an interface's line, its link and its addresses
  [/^\d+: [\w@.-]+: <[A-Z_,-]*> mtu \d+/, 'ip-addr'],
  [
    /^(?:link\/(?:ether|loopback|none|ipip|gre)\b|inet6? [\da-f.:]+\/\d+ .*\bscope\b|valid_lft \S+ preferred_lft \S+$)/,
    'ip-addr',
  ],
  // kubectl get nodes, pods, deployments, daemonsets: the columns of kubectl's printers for each
  [
    /^(?:NAMESPACE +)?NAME +(?:STATUS +ROLES +AGE +VERSION|READY +STATUS +RESTARTS +AGE|READY +UP-TO-DATE +AVAILABLE +AGE|DESIRED +CURRENT +READY +UP-TO-DATE +AVAILABLE)\b/,
    'kubectl',
  ],
  // kubectl get endpoints / endpointslices, -A's NAMESPACE column first
  [/^(?:NAMESPACE +)?NAME +(?:ADDRESSTYPE +PORTS +)?ENDPOINTS +AGE$/, 'kubectl'],
  // kubectl get svc / describe svc
  // kubectl get svc, its -A / --all-namespaces NAMESPACE column first, before 1.8 without TYPE
  [/^(?:NAMESPACE +)?NAME +(?:TYPE +)?CLUSTER-IP +EXTERNAL-IP +PORT\(S\)/, 'kubectl'],
  [
    /^(?:\S+ +)?\S+ +(?:ClusterIP|NodePort|LoadBalancer|ExternalName) +(?:\S+) +\S+ +\S+\/(?:TCP|UDP|SCTP)/,
    'kubectl',
  ],
  // kubectl describe svc: its fields aligned with blanks, or with tabs as kubectl before 1.10 did
  [
    /^(?:Namespace|Labels|Annotations|Selector|IP Family Policy|IP Families|IPs?|Port|TargetPort|NodePort|Endpoints|Session Affinity|External Traffic Policy|LoadBalancer Ingress|Events):[ \t]/,
    'kubectl',
  ],
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
  // nft's own error report ("/dev/stdin:892:87-100: Error: Could not process rule: ..."), as a
  // log viewer may frame it ("│ "): the input's file, line and columns, then what nft refused
  [NFT_ERROR, 'nft-error'],
  // nft aborting on its own assertion ("nft: netlink_delinearize.c:136: netlink_parse_concat_expr:
  // Assertion `consumed > 0' failed."), where the table it was asked to list should be
  [/^nft: [\w./-]+\.c:\d+: \w+: Assertion .* failed\.?$/, 'nft-crash'],
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
  [/^(?:type (?:nat|filter|route) hook \w+|policy \w+;|elements = \{|\})/, 'nft'],
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
];

/** What a line that is not a dump line is, given its text (without leading blanks). */
export function classifyLine(line: string): LineClass {
  if (line.length === 0) return { kind: 'blank' };
  const log = logLine(line);
  if (log) {
    // kube-proxy logging the input it gives iptables-restore: a rule after its journald prefix,
    // the first after its words "Restoring iptables rules: "
    const said = line.slice(log.at);
    const restoring = /^Restoring iptables rules: /.exec(said)?.[0].length ?? 0;
    const rest = said.slice(restoring);
    if ((restoring > 0 || log.kind === 'kube-proxy-log') && DUMP_LINE.test(rest))
      return { kind: 'prefix', rest: line.length - rest.length, log: true };
    return { kind: 'foreign', foreign: restoring > 0 ? 'kube-proxy-log' : log.kind };
  }
  for (const p of PREFIXES) {
    const m = p.exec(line);
    if (m && m[0].length < line.length && DUMP_LINE.test(line.slice(m[0].length).trimStart()))
      // the rule starts after the prefix and the blanks after it
      return {
        kind: 'prefix',
        rest: m[0].length + /^[ \t]*/.exec(line.slice(m[0].length))![0].length,
      };
  }
  if (/^(?:```|~~~)/.test(line)) return { kind: 'fence' };
  // an author's elision, or grep's "--" between the groups it printed: lines left out either way
  if (ELISION.test(line.trim())) return { kind: 'elided' };
  if (TIMESTAMP.test(line)) return { kind: 'log' };
  if (LEGACY_WARNING.test(line)) return { kind: 'backend' };
  // another tool's line may be quoted ("> ") or in a diff ("+") too
  const bare = line.replace(/^(?:[+>] ?)+/, '').trimStart();
  for (const [re, foreign] of FOREIGN_LINES) if (re.test(bare)) return { kind: 'foreign', foreign };
  if (PROMPT.test(line) || (line.startsWith('# ') && COMMANDS.test(line.slice(2))))
    return { kind: 'prompt' };
  // a root prompt or an inline-code backtick glued to a listing command ("#ip6tables -nvL",
  // "`iptables-save"): the command typed all the same
  if (/^[#`]/.test(line) && LISTING.test(line.slice(1)))
    return { kind: line.startsWith('#') ? 'prompt' : 'command' };
  // a prompt naming the host and the directory ("gentoo ~ # ", "node1 coreos-install # "), where
  // a command follows it
  const dirPrompt = /^\S+ \S+ [$#] /.exec(line);
  if (dirPrompt && COMMANDS.test(line.slice(dirPrompt[0].length))) return { kind: 'prompt' };
  // a command quoted ("> iptables -L -n") is the command all the same
  if (COMMANDS.test(line) || COMMANDS.test(bare) || /^-[IDXFRZCLS]\b/.test(line))
    return { kind: 'command' };
  return { kind: 'prose' };
}

/** The words a warning uses for a skipped line of this kind. */
export const SKIPPED_AS: Record<string, string> = {
  blank: 'a blank line',
  prompt: 'a shell prompt',
  command: 'a command, not a line of its output',
  prose: 'not a line of iptables-save or iptables -S output',
  elided: 'an elision',
  fence: 'a markdown fence',
  log: 'a log line',
  stray: 'a line outside any *table ... COMMIT block, not read',
};
