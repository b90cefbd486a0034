// What is read on a node: the rules, kube-proxy's status and the mode's own state every diagnosis
// reads, a diagnosis's probes; and whether each read may run, where running it would create what
// it reads (a legacy table, IPVS), or may be made another way where the first failed.
import {
  conntrackFirst,
  conntrackPlan,
  probePlan,
  type DiagnosedService,
} from '../../core/diagnose.js';
import type { IptablesTool } from '../../core/dataplane/iptables/service-chains.js';
import { ciliumImageVersion, isCiliumAgentPod } from '../../core/dataplane/cilium/agent/agent.js';
import type { CiliumList } from '../../core/nodes/commands.js';
import { configInObjects } from '../../core/nodes/state.js';
import { atLeast, parseVersion } from '../../core/version.js';
import type { Analysis } from '../../core/nodes/analysis.js';
import { clusterView, type ClusterView } from '../../core/kube/objects.js';
import type { Facts, NodeOutputs } from '../../core/model.js';
import { commandStem, type NodeCommand } from '../cluster.js';

/** The kernel's list of the legacy tables that exist, per tool (absent: none exist). */
const LEGACY_TABLES = {
  'iptables-save': 'ip_tables_names',
  'ip6tables-save': 'ip6_tables_names',
} as const;

/**
 * One iptables tool's rules: the default dump (kube-proxy's backend as the node's iptables-save
 * sees it) and nft's nat table; then, to find stale chains in the other backend, the kernel's list
 * of legacy tables and legacy's nat table, read only where that list has it (see guardOf).
 */
export function rulesReads(kind: 'iptables-save' | 'ip6tables-save'): {
  dumps: NodeCommand[];
  legacy: NodeCommand[];
} {
  return {
    dumps: [
      { kind, backend: 'auto' },
      { kind, backend: 'nft', table: 'nat' },
    ],
    legacy: [
      { kind: 'proc-net', file: LEGACY_TABLES[kind] },
      { kind, backend: 'legacy', table: 'nat' },
    ],
  };
}

/**
 * One iptables tool's rules where one Service's answer needs them (iptables mode): whether the nft
 * backend holds kube-proxy's chains (its small KUBE-POSTROUTING by name), then the same for
 * legacy, after the kernel's list of legacy tables says its nat table exists. The chains are
 * read after the first (see readServiceChains): where a kube-proxy image has no `cat`, the
 * channel is lost only once they are in.
 */
function serviceRulesReads(tool: IptablesTool): NodeCommand[] {
  return [
    { kind: 'iptables-chain', tool, backend: 'nft', chain: 'KUBE-POSTROUTING' },
    { kind: 'proc-net', file: LEGACY_TABLES[`${tool}-save`] },
    { kind: 'iptables-chain', tool, backend: 'legacy', chain: 'KUBE-POSTROUTING' },
  ];
}

/** What every diagnosis reads on a node besides the rules: kube-proxy's mode, metrics and
 * configuration, and the node's addresses. */
const NODE_STATUS: NodeCommand[] = [
  { kind: 'proxy-mode' },
  { kind: 'proxy-metrics' },
  { kind: 'proxy-configz' },
  { kind: 'ip-addr' },
];

/** IPVS mode's own state, where IPVS is loaded: the virtual servers and kube-proxy's ipsets (the
 * VIPs on kube-ipvs0 are in the basics' `ip -br addr`). */
const IPVS_READS: NodeCommand[] = [
  { kind: 'proc-net', file: 'ip_vs_stats' },
  { kind: 'ipvs-save' },
  { kind: 'ipset-save' },
];

/** The same for one Service's answer: whether IPVS is loaded; its own virtual servers and ipset
 * entries follow, by address (see readServiceIpvs). */
export const IPVS_LOADED = { kind: 'proc-net', file: 'ip_vs_stats' } as const;

/** The rules and status every diagnosis reads, kube-proxy's nftables table or IPVS state where
 * kube-proxy is configured for that mode, and the IPv6 proxier's rules where some Service has an
 * IPv6 cluster IP. The legacy reads come after every dump: where a kube-proxy image has no `cat`,
 * that channel is lost for the rest of the node's reads only once the dumps are in. */
export function nodeBasics(
  facts: Facts,
  o: { byService?: boolean; view?: ClusterView } = {},
): NodeCommand[] {
  const byService = o.byService ?? false;
  const view = o.view ?? clusterView(facts.objects);
  const mode = configuredMode(view);
  const ipv6 = hasIPv6Services(view);
  const cilium = ciliumReads(view);
  // one Service's chains by name where kube-proxy writes chains per Service (iptables mode)
  const byChain = byService && isIptablesMode(mode);
  const v4 = byChain
    ? { dumps: serviceRulesReads('iptables'), legacy: [] }
    : rulesReads('iptables-save');
  const v6 = !ipv6
    ? { dumps: [], legacy: [] }
    : byChain
      ? { dumps: serviceRulesReads('ip6tables'), legacy: [] }
      : rulesReads('ip6tables-save');
  return [
    ...v4.dumps,
    ...v6.dumps,
    ...v4.legacy,
    ...v6.legacy,
    ...NODE_STATUS,
    ...(mode === 'nftables' ? [{ kind: 'nft-list', family: 'ip' } as const] : []),
    ...(mode === 'nftables' && ipv6 ? [{ kind: 'nft-list', family: 'ip6' } as const] : []),
    ...(mode === 'ipvs' ? (byService ? [IPVS_LOADED] : IPVS_READS) : []),
    ...cilium,
  ];
}

/** kube-proxy's mode as its configuration says ('' where it says none or cannot be read). */
function configuredMode(view: ClusterView): string {
  return configInObjects(view).value.mode;
}

/** kube-proxy's default mode on Linux is iptables. */
const isIptablesMode = (mode: string) => mode === '' || mode === 'iptables';

const hasIPv6Services = (view: ClusterView) =>
  view.services.some((s) => s.clusterIPs.some((ip) => ip.includes(':')));

/** A Cilium agent's listings, where agents run: its status, its BPF maps, and its Services as
 * its release lists them best (the load-balancer tables from 1.18, its Service list before). */
function ciliumReads(view: ReturnType<typeof clusterView>): NodeCommand[] {
  const agents = view.pods.filter(isCiliumAgentPod);
  if (agents.length === 0) return [];
  const versions = agents.map((p) => parseVersion(ciliumImageVersion(p)));
  const tables = versions.every((v) => v && atLeast(v, [1, 18]));
  const lists: CiliumList[] = [
    'status',
    ...(tables ? (['frontends', 'backends'] as const) : (['service-list'] as const)),
    'bpf-lb-list',
  ];
  return lists.map((list) => ({ kind: 'cilium', list }));
}

/**
 * The kernel list a read depends on, where the read would create what it reads: a legacy table
 * read by name is created (with its module) where it does not exist, and ipvsadm runs `modprobe
 * ip_vs` where IPVS is not loaded. `ipset list` would load ip_set likewise; kube-proxy's IPVS mode
 * loads both, so IPVS's list stands for it.
 */
function guardOf(c: NodeCommand): Extract<NodeCommand, { kind: 'proc-net' }> | undefined {
  // a legacy nat chain read by name needs the legacy nat table to exist, as a -t nat read does
  if (c.kind === 'iptables-chain' && c.backend === 'legacy')
    return { kind: 'proc-net', file: LEGACY_TABLES[`${c.tool}-save`] };
  // without -t, iptables-legacy-save reads only the tables the kernel lists: nothing to guard
  if ((c.kind === 'iptables-save' || c.kind === 'ip6tables-save') && c.backend === 'legacy')
    return c.table ? { kind: 'proc-net', file: LEGACY_TABLES[c.kind] } : undefined;
  if (
    c.kind === 'ipvs-save' ||
    c.kind === 'ipset-save' ||
    c.kind === 'ipvs-service' ||
    c.kind === 'ipset-test'
  )
    return { kind: 'proc-net', file: 'ip_vs_stats' };
  return undefined;
}

/**
 * Whether a node command runs, from what the node printed so far: 'run'; 'absent' when its
 * guard's list shows that what it reads is not there (nothing to read, nothing lost); 'unread'
 * when that list was not read: the read could change the node, so it is not run.
 */
export function readDecision(
  c: NodeCommand,
  outputs: NodeOutputs | undefined,
): 'run' | 'absent' | 'unread' {
  const guard = guardOf(c);
  if (!guard) return 'run';
  const list = outputs?.[commandStem(guard)];
  if (list === undefined) return 'unread';
  // a names list has a line per legacy table that exists; ip_vs_stats is never empty
  const present =
    c.kind === 'iptables-save' || c.kind === 'ip6tables-save'
      ? list.split('\n').includes(c.table ?? '')
      : c.kind === 'iptables-chain'
        ? list.split('\n').includes('nat')
        : list !== '';
  return present ? 'run' : 'absent';
}

/** The node commands of a diagnosis of `target`: the basics, then the probes its steps read. */
export function diagnosisCommands(
  facts: Facts,
  target: DiagnosedService,
  byService: boolean,
  analysis: Analysis,
): NodeCommand[] {
  const conntrack = conntrackPlan(facts, target, { analysis });
  return [
    ...nodeBasics(facts, { byService, view: analysis.view }),
    ...conntrackFirst(conntrack),
    ...probePlan(facts, target, { analysis }),
    ...conntrack,
  ];
}

/** The same read another way, where the first way failed on the node. */
export function fallbackOf(c: NodeCommand): NodeCommand | undefined {
  // Cilium before 1.15 had no cilium-dbg: its agent binary was cilium
  if (c.kind === 'cilium' && c.binary === undefined) return { ...c, binary: 'cilium' };
  if (c.kind === 'nft-list' && c.format === undefined) return { ...c, format: 'text' };
  if (c.kind === 'ipvs-save' && c.format === undefined) return { ...c, format: 'list' };
  return undefined;
}

/** Commands whose failed run records no output: an empty one would read as "none there". */
export const isRulesDump = (c: NodeCommand) =>
  c.kind === 'proc-net' ||
  c.kind === 'iptables-chain' ||
  c.kind === 'iptables-save' ||
  c.kind === 'ip6tables-save' ||
  c.kind === 'nft-list' ||
  c.kind === 'ipvs-save' ||
  c.kind === 'ipset-save' ||
  c.kind === 'ipvs-service' ||
  c.kind === 'ipset-test' ||
  c.kind === 'conntrack-list' ||
  c.kind === 'conntrack-stats' ||
  c.kind === 'cilium';

/** Why a read was not run: the list that says it would change nothing could not be read. */
export const notRunWhy = (c: NodeCommand) =>
  `not run: /proc/net/${commandStem(guardOf(c)!)} could not be read, and where it does not list what this reads, reading it would create it`;
