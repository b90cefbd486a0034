// Log lines people paste with (or instead of) rules: klog's ("I1203 10:00:00.123456  1
// proxier.go:825] msg") and journald's ("Nov 14 11:06:11 HOST kube-proxy[12085]: msg"), also after
// a `grep -n` / `grep -Hn` prefix or a log viewer's pod and container names. Whose log a line is
// comes from what that component logs: klog names the Go source file that logged it.

/** Whose log a line is: kube-proxy's, another component's named by its own files or words, or a
 * component its line does not name. */
export type LogKind =
  | 'kube-proxy-log'
  | 'kube-proxy-userspace-log'
  | 'flannel-log'
  | 'antrea-log'
  | 'kube-router-log'
  | 'kubelet-log'
  | 'other-log';

/** A line's klog header: severity, month and day, time, process id, file:line, then the message;
 * after `grep -n` ("123:"), `grep -Hn` ("kube-proxy.log:123:") or up to two words a log viewer
 * puts first (stern's pod and container, `kubectl logs --prefix`'s "[pod/NAME/CONTAINER]"), then
 * the RFC 3339 time `--timestamps` adds, and glog's own note for a line logged before its flags
 * were parsed ("ERROR: logging before flag.Parse: "). */
const KLOG =
  /^(?:(?:[^\s:]+:)?\d+[:-]|(?:\S+ ){1,2})?(?:\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:\d\d) )?(?:ERROR: logging before flag\.Parse: )?[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ ([^\s:\]]+):\d+\] ?/;
/** journald's (syslog's) prefix: "Nov 14 11:06:11 HOST NAME[PID]: ". */
const JOURNAL =
  /^(?:(?:[^\s:]+:)?\d+[:-])?[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ ([\w.-]+)\[\d+\]: /;

/** Files only kube-proxy logs from (cmd/kube-proxy/app, pkg/proxy's conntrack, ipvs and
 * winkernel code). Files every component shares (iptables.go, ipset.go, server.go, config.go,
 * shared_informer.go) name no component. */
const KUBE_PROXY_FILES =
  /^(?:server_(?:linux|others|windows|other|unsupported|darwin)|conntrack|graceful_termination|nodeport_addresses|localdetector|nfacct_linux|safe_ipset|netlink_linux|hns|hnsV2)\.go$/;
/** kube-proxy's files AntreaProxy keeps copies of (antrea's pkg/agent/proxy, third_party/proxy):
 * whose line it is, its words say (or the Pod a log viewer names), else it is not said. */
const PROXY_FILES =
  /^(?:proxier|meta_proxier|endpointslicecache|endpointschangetracker|servicechangetracker|proxier_health|proxy_health|service_health)\.go$/;
/** AntreaProxy's own files (pkg/agent/proxy). */
const ANTREA_FILES = /^(?:proxier_(?:linux|others|windows)|topology|groupcounter)\.go$/;
/** What only kube-proxy's proxiers log of: the iptables, IPVS and nftables rules they write, its
 * kube-ipvs0 device, its KUBE- chains and sets (capitals: "kube-system" is any log's namespace). */
const kubeProxyWords = (message: string) =>
  /\b(?:ip6?tables(?:-restore)?|ipvs|ipset|nftables|kube-ipvs0)\b/i.test(message) ||
  /\bKUBE-[A-Z]/.test(message);
/** kube-router's own files (pkg/controllers/proxy, routing, netpol; pkg/cmd): its service proxy,
 * BGP routing and network policy controllers. */
const KUBE_ROUTER_FILES =
  /^(?:network_(?:services|routes|policy)_controller|service_endpoints_sync|network_service_graceful|hairpin_controller|ecmp_vip|bgp_(?:peers|policies)|pod_egress|kube-router)\.go$/;
const KUBELET_FILES =
  /^(?:kubelet\w*|kuberuntime_\w+|pod_workers|prober\w*|volume_manager|eviction_manager|container_manager\w*|status_manager|cpu_manager|memory_manager|pod_container_deletor|kubelet_network\w*)\.go$/;
/** What AntreaProxy logs of from its copies of kube-proxy's files: the OVS flows and groups it
 * programs, where kube-proxy writes rules. */
const OVS = /\bOVS\b|\bOpenFlow\b|\bflows\b|\bgroup of Endpoints\b/;

/** Whose log the line is, with where the logged text starts; undefined for no log line. */
export function logLine(line: string): { kind: LogKind; at: number } | undefined {
  const j = JOURNAL.exec(line);
  if (j) {
    const inner = logLine(line.slice(j[0].length));
    const named = unitKind(j[1]!);
    return { kind: named ?? inner?.kind ?? 'other-log', at: j[0].length + (inner?.at ?? 0) };
  }
  const k = KLOG.exec(line);
  if (!k) return undefined;
  const message = line.slice(k[0].length);
  // best evidence first: the Pod a log viewer names, the file that logged it, then its words
  const viewer = line.slice(0, k[0].length - message.length).split(/[IWEF]\d{4} /)[0]!;
  return { kind: named(viewer) ?? klogKind(k[1]!, message), at: k[0].length };
}

/** Whose klog line it is: by the file that logged it, else by the component its words name. */
function klogKind(file: string, message: string): LogKind {
  // the portal chains only kube-proxy's userspace proxier makes, whichever file logs them; the
  // other proxiers remove its leftovers at start (userspace.CleanupLeftovers), naming them too
  if (USERSPACE_CHAINS.test(message) && !CLEANUP.test(message)) return 'kube-proxy-userspace-log';
  if (KUBE_PROXY_FILES.test(file)) return 'kube-proxy-log';
  if (KUBE_ROUTER_FILES.test(file)) return 'kube-router-log';
  if (ANTREA_FILES.test(file)) return 'antrea-log';
  if (PROXY_FILES.test(file))
    return OVS.test(message)
      ? 'antrea-log'
      : (named(message) ?? (kubeProxyWords(message) ? 'kube-proxy-log' : 'other-log'));
  if (KUBELET_FILES.test(file)) return 'kubelet-log';
  // a shared file (iptables.go) running iptables on a chain only kube-proxy makes
  return named(message) ?? (KUBE_PROXY_CHAINS.test(message) ? 'kube-proxy-log' : 'other-log');
}

/** Chains only kube-proxy's proxiers make (the kubelet makes KUBE-MARK-*, KUBE-FIREWALL,
 * KUBE-POSTROUTING and KUBE-KUBELET-CANARY too, flannel and others their own). */
const KUBE_PROXY_CHAINS =
  /\bKUBE-(?:SERVICES|NODEPORTS|EXTERNAL-SERVICES|FORWARD|PROXY-FIREWALL|PROXY-CANARY|NODE-PORT|LOAD-BALANCER|IPVS-(?:OUT-)?FILTER|(?:SVC|SEP|FW|XLB|EXT|SVL)-[A-Z0-9]{16})\b/;

/** The portal chains kube-proxy's userspace proxier alone made (pkg/proxy/userspace, removed in
 * 1.26): each Service's traffic sent to a port kube-proxy itself listens on. */
const USERSPACE_CHAINS = /\bKUBE-(?:PORTALS|NODEPORT)-(?:CONTAINER|HOST)\b/;
/** Removing them: `iptables -D/-F/-X` run, or the cleanup's own words. */
const CLEANUP = /(?:^|[\s[])-[DFX] |\b(?:remov|delet|flush|clean)/i;

/** The chains a log line names that kube-proxy's IPVS proxier alone makes (pkg/proxy/ipvs
 * iptablesChains: its iptables proxier writes KUBE-NODEPORTS, and no KUBE-LOAD-BALANCER). */
export const ipvsChainsIn = (message: string): string[] => [
  ...new Set(
    message.match(/\bKUBE-(?:NODE-PORT|LOAD-BALANCER|IPVS-(?:OUT-)?FILTER)\b(?!-)/g) ?? [],
  ),
];

/** The proxier kube-proxy's log line says it uses ("Using iptables Proxier.", server_*.go),
 * lowercased: iptables, ipvs, nftables, userspace, kernelspace. */
export const proxierIn = (message: string): string | undefined =>
  /\bUsing (\w+) Proxier\b/i.exec(message)?.[1]?.toLowerCase();

/** kube-proxy's log where its lines name chains of its IPVS proxier: which mode it runs in. */
export const ipvsProxierLog = (chains: readonly string[]): string =>
  `this is kube-proxy's log, of its IPVS proxier (it names ${chains.join(' and ')}, chains only kube-proxy's IPVS mode makes): it says what kube-proxy did and what failed, not which virtual servers and rules the node holds: run \`ipvsadm -Ln\` (and \`iptables-save\`) on the node and give kdebug that`;

/** The component a text names (a Pod or container name, a message). */
function named(text: string): LogKind | undefined {
  if (/antrea/i.test(text)) return 'antrea-log';
  if (/flannel/i.test(text)) return 'flannel-log';
  if (/kube-router/.test(text)) return 'kube-router-log';
  if (/kube-proxy/.test(text)) return 'kube-proxy-log';
  return undefined;
}

/** A journald unit's log by its name (kube-proxy[PID], flanneld[PID], kubelet[PID]). */
function unitKind(name: string): LogKind | undefined {
  if (name === 'kube-proxy') return 'kube-proxy-log';
  if (/flannel/.test(name)) return 'flannel-log';
  if (/^antrea/.test(name)) return 'antrea-log';
  if (name === 'kube-router') return 'kube-router-log';
  if (name === 'kubelet') return 'kubelet-log';
  return undefined;
}

/** What to run instead of pasting a log: the node's rules, in each mode. */
export const RUN =
  'run `iptables-save` on the node (`ip6tables-save` for IPv6 Services, `ipvsadm -Ln` in IPVS mode, `nft list table ip kube-proxy` in nftables mode) and give kdebug that';

/** What each log is, and what to run instead. */
export const LOGS: Record<LogKind, string> = {
  'kube-proxy-log': `this is kube-proxy's log: it says what kube-proxy did and what failed, not which rules the node holds: ${RUN}`,
  'kube-proxy-userspace-log': `this is kube-proxy's log, of its userspace proxier (it names KUBE-PORTALS-* or KUBE-NODEPORT-* chains, which only that mode makes; it was removed in Kubernetes 1.26): kube-proxy itself proxies each Service on a port of its own, its portal rules send the Service's traffic there, and which endpoint serves a connection is not in iptables; the log says what kube-proxy did, not what the node holds: run \`iptables-save\` on the node (its KUBE-PORTALS rules give each Service's portal) and give kdebug that`,
  'flannel-log': `this is flannel's log, not rules: flannel writes its own FLANNEL-* chains (masquerade, forward), not kube-proxy's Service rules: ${RUN}`,
  'antrea-log': `this is Antrea's agent log, not rules: where AntreaProxy replaces kube-proxy, Services are OVS flows (\`antctl get ovsflows\` in the agent Pod), else ${RUN}`,
  'kube-router-log': `this is kube-router's log, not rules: with its service proxy on (--run-service-proxy) kube-router replaces kube-proxy and its Services are IPVS virtual servers: run \`ipvsadm -Ln\` on the node and give kdebug that; where it runs none, kube-proxy's rules are the node's: ${RUN}`,
  'kubelet-log': `this is the kubelet's log, not rules: the kubelet writes no Service rules (kube-proxy does): ${RUN}`,
  'other-log': `this is a log, not rules (klog or journald lines; which component's, its lines do not say): ${RUN}`,
};

/** Whose log each is, in a few words: where a log's lines are a few among others. */
export const LOG_NAMES: Record<LogKind, string> = {
  'kube-proxy-log': "kube-proxy's log",
  'kube-proxy-userspace-log': "kube-proxy's log (its userspace proxier)",
  'flannel-log': "flannel's log",
  'antrea-log': "Antrea's agent log",
  'kube-router-log': "kube-router's log",
  'kubelet-log': "the kubelet's log (it writes no Service rules)",
  'other-log': 'a log (klog or journald lines; whose, they do not say)',
};

/** Whether another tool's listing is a log. */
export const isLog = (kind: string): kind is LogKind => kind in LOGS;
