// What to read for a target Service, read in parallel, turned into Facts (the same shape as a
// snapshot). Progress events say what is being read, so the TUI can show it. Secrets are
// never read. Only the target Service is required: any other read that RBAC refuses or that
// fails is recorded in meta.readErrors and the rest carries on.
import { isNodeName } from './snapshot/files.js';
import {
  conntrackFirst,
  conntrackPlan,
  probePlan,
  type DiagnosedService,
} from '../core/diagnose.js';
import { backendToRead, hasKubeChains, probeStem } from '../core/dataplane/iptables/backend.js';
import {
  FAN_OUT,
  keepServiceRules,
  serviceChainReads,
  type IptablesTool,
} from '../core/dataplane/iptables/service-chains.js';
import { ciliumImageVersion, isCiliumAgentPod } from '../core/dataplane/cilium/agent.js';
import { chainStemPrefix, type CiliumList } from '../core/nodes/commands.js';
import { configInObjects } from '../core/nodes/state.js';
import { atLeast, parseVersion } from '../core/version.js';
import { Analysis } from '../core/analysis.js';
import { rolloutOf, settled, type Rollout } from '../core/kube/daemon-set.js';
import { clusterView, findService, isWindows, type ClusterView } from '../core/kube/objects.js';
import type { Facts, KubeObject, NodeOutputs, SnapshotMeta } from '../core/model.js';
import { NodeErrorFold, type NodeFailure } from '../core/nodes/errors.js';
import { nodeErrorsMeta, type ApiRead, type ReadError } from '../core/not-read.js';
import { canonicalAddress, familyOf } from '../core/ipv6.js';
import {
  apiPath,
  commandStem,
  type Cluster,
  type NodeCommand,
  type NodeResult,
  type ReadRequest,
} from './cluster.js';
import { KubeApiError } from './kube/errors.js';
import { serviceNotFound } from './kube/suggestions.js';
import { typedCommand } from './nodes/commands.js';
import { SYSTEM } from './permissions.js';
import { NODE_READ, prune } from '../core/redact/fields.js';

/** A read starting or ending: an API read, or a command on `node`. */
export interface CollectProgress {
  /** What is read or run, e.g. "EndpointSlices of default/web" or "iptables-save". */
  what: string;
  node?: string;
  state: 'start' | 'done' | 'failed';
  /** Objects a read returned. */
  count?: number;
  error?: string;
}

/** A capture's nodes so far: read (something recorded), failed (nothing could be), left. */
export interface NodeTally {
  read: number;
  failed: number;
  left: number;
}

export interface CollectOptions {
  onProgress?: (p: CollectProgress) => void;
  /** Told when the node reads start and as each node is done. */
  onNodes?: (t: NodeTally) => void;
  /** The nodes read so far, at most once a second while the others are read: a report can
   * show them as they arrive. */
  onNodeFacts?: (nodes: Facts['nodes']) => void;
  /**
   * Commands to run on each node, or a function of the objects read that says which; their
   * stdout lands in facts.nodes[node][commandStem]. Default none.
   */
  nodeCommands?: NodeCommand[] | ((facts: Facts, analysis: Analysis) => NodeCommand[]);
  /** Nodes to run them on, or a function of the objects read that says which. Default: every
   * Node read. */
  nodes?: string[] | ((facts: Facts, analysis: Analysis) => string[]);
  /**
   * The nodes read whatever the cluster-wide lists say (the endpoints', the client's), and their
   * commands: they start once the other reads are in, while every Node and agent Pod is still
   * being listed (seconds on a large cluster). `nodes` then reads them with what it adds.
   */
  early?: {
    nodes: (facts: Facts, analysis: Analysis) => string[];
    commands: (facts: Facts, analysis: Analysis) => NodeCommand[];
  };
  /** Added to facts.meta (e.g. kdebugVersion). */
  meta?: SnapshotMeta;
  /** The client Pod of --from pod/NAME: read too, for the node it runs on. */
  clientPod?: { namespace: string; name: string };
  /** Nodes handled at once. Default 8. */
  nodeConcurrency?: number;
  /** Keep of each Node only what the steps read (NODE_READ): a diagnosis lists every Node,
   * thousands on a large cluster, where a snapshot keeps them as the API gave them. */
  nodesAsRead?: boolean;
  now?: () => Date;
  /** Read each node's iptables rules for this Service only, chain by chain (kdebug svc), where
   * kube-proxy runs in iptables mode: see core/dataplane/iptables/service-chains.ts. */
  rulesOf?: {
    namespace: string;
    name: string;
    /** Below this many KUBE-SERVICES rules the whole table is read: one read of a small table
     * costs less than a dozen by name. Default WHOLE_BELOW. */
    wholeBelow?: number;
  };
}

export type { NodeError } from '../core/nodes/access.js';
export type { ReadError } from '../core/not-read.js';

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
function rulesReads(kind: 'iptables-save' | 'ip6tables-save'): {
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
    ...(mode === 'ipvs' ? IPVS_READS : []),
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
  if (c.kind === 'ipvs-save' || c.kind === 'ipset-save')
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
  byService = false,
  analysis = new Analysis(facts),
): NodeCommand[] {
  const conntrack = conntrackPlan(facts, target, analysis);
  return [
    ...nodeBasics(facts, { byService, view: analysis.view }),
    ...conntrackFirst(conntrack),
    ...probePlan(facts, target, undefined, analysis),
    ...conntrack,
  ];
}

/** The same read another way, where the first way failed on the node. */
function fallbackOf(c: NodeCommand): NodeCommand | undefined {
  // Cilium before 1.15 had no cilium-dbg: its agent binary was cilium
  if (c.kind === 'cilium' && c.binary === undefined) return { ...c, binary: 'cilium' };
  if (c.kind === 'nft-list' && c.format === undefined) return { ...c, format: 'text' };
  if (c.kind === 'ipvs-save' && c.format === undefined) return { ...c, format: 'list' };
  return undefined;
}

/** Commands whose failed run records no output: an empty one would read as "none there". */
const isRulesDump = (c: NodeCommand) =>
  c.kind === 'proc-net' ||
  c.kind === 'iptables-chain' ||
  c.kind === 'iptables-save' ||
  c.kind === 'ip6tables-save' ||
  c.kind === 'nft-list' ||
  c.kind === 'ipvs-save' ||
  c.kind === 'ipset-save' ||
  c.kind === 'conntrack-list' ||
  c.kind === 'conntrack-stats' ||
  c.kind === 'cilium';

// Failures that no read can get past: stop rather than record. Others are recorded: an API
// server that goes away after the Service was read leaves a report that says what it lost; one
// that never answered fails the Service read, which stops the run.
const FATAL = new Set(['no-kubeconfig', 'kubeconfig', 'credentials', 'closed', 'not-kubernetes']);

const KIND_ORDER = [
  'Service',
  'EndpointSlice',
  'Endpoints',
  'Pod',
  'Node',
  'ServiceCIDR',
  'ConfigMap',
  'DaemonSet',
  'NetworkPolicy',
];

const keyOf = (o: KubeObject) =>
  `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** Service selector -> labelSelector ("app=web,tier=front"). */
const equalitySelector = (s: Record<string, string>) =>
  Object.entries(s)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** A workload's metav1.LabelSelector -> the labelSelector query syntax. */
export function labelSelectorString(s: LabelSelectorSpec): string {
  const exprs = (s.matchExpressions ?? []).map((e) => {
    const values = (e.values ?? []).join(',');
    switch (e.operator) {
      case 'In':
        return `${e.key} in (${values})`;
      case 'NotIn':
        return `${e.key} notin (${values})`;
      case 'DoesNotExist':
        return `!${e.key}`;
      default:
        return e.key;
    }
  });
  return [equalitySelector(s.matchLabels ?? {}), ...exprs].filter(Boolean).join(',');
}

/** One API read, as data: where apiPath points, and what the read is for (ApiRead). */
interface ApiQuery extends ApiRead {
  group?: string;
  labelSelector?: string;
  fieldSelector?: string;
  pageSize?: number;
}

/** Pages of the cluster-wide lists (every Node, every agent Pod): an API server serves pages
 * from its watch cache, and each page costs a round trip that 500 at a time makes ten of at
 * 5,000 nodes (seconds); memory holds every item either way. */
const WHOLE_LIST_PAGE = 5000;

/** What a failed read was of, for the checks (never its progress label). */
const readOf = ({ resource, namespace, name, service, addon, podIP }: ApiQuery): ApiRead => ({
  resource,
  ...(namespace !== undefined ? { namespace } : {}),
  ...(name !== undefined ? { name } : {}),
  ...(service !== undefined ? { service } : {}),
  ...(addon ? { addon } : {}),
  ...(podIP !== undefined ? { podIP } : {}),
});

/** A Node as the steps read it (NODE_READ); another object as it is. */
const slimNode = (o: KubeObject): KubeObject =>
  o.kind === 'Node' ? (prune(o, NODE_READ) as KubeObject) : o;

/** Reads through a Cluster, keeping every object once and reporting progress and failures. */
class Reader {
  private readonly objects = new Map<string, KubeObject>();
  readonly errors: ReadError[] = [];
  /** A read the run cannot do without failed: nothing more is started. */
  private stopped = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly progress: (p: CollectProgress) => void,
    /** Keeps of an object only what is read (Nodes, for a diagnosis). */
    private readonly slim: (o: KubeObject) => KubeObject = (o) => o,
  ) {}

  private async read<T>(
    what: string,
    read: ApiRead,
    f: () => Promise<T>,
    count: (t: T) => number,
    required: boolean,
    fallback: T,
  ): Promise<T> {
    if (this.stopped) return fallback;
    this.progress({ what, state: 'start' });
    try {
      const r = await f();
      this.progress({ what, state: 'done', count: count(r) });
      return r;
    } catch (e) {
      const message = (e as Error).message;
      this.progress({ what, state: 'failed', error: message });
      if (this.stopped) return fallback;
      if (required || !(e instanceof KubeApiError) || FATAL.has(e.reason)) {
        this.stopped = true;
        throw e;
      }
      this.errors.push({ what, read, error: message, reason: e.reason });
      return fallback;
    }
  }

  /** `absentIsEmpty`: an API server that does not serve the resource (404) has none of it. */
  async list(
    what: string,
    q: ApiQuery,
    required = false,
    absentIsEmpty = false,
  ): Promise<KubeObject[]> {
    const request: ReadRequest = {
      path: apiPath(q),
      ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}),
      ...(q.fieldSelector ? { fieldSelector: q.fieldSelector } : {}),
      ...(q.pageSize ? { pageSize: q.pageSize } : {}),
    };
    const items = await this.read(
      what,
      readOf(q),
      () =>
        this.cluster.list(request).catch((e: unknown) => {
          if (absentIsEmpty && e instanceof KubeApiError && e.reason === 'not-found') return [];
          throw e;
        }),
      (r) => r.length,
      required,
      [] as KubeObject[],
    );
    this.keep(items);
    return items;
  }

  async get(what: string, q: ApiQuery, required = false): Promise<KubeObject | undefined> {
    const o = await this.read(
      what,
      readOf(q),
      () => this.cluster.get(apiPath(q)),
      (r) => (r ? 1 : 0),
      required,
      undefined,
    );
    if (o) this.keep([o]);
    return o;
  }

  /** A read that only brings early what a later read brings whole (one node's Pods before every
   * node's): kept when it answers; a failure is no loss to record, the whole read says it. */
  async extra(what: string, q: ApiQuery): Promise<boolean> {
    if (this.stopped) return false;
    this.progress({ what, state: 'start' });
    const path = apiPath(q);
    const read =
      q.name !== undefined
        ? this.cluster.get(path).then((x) => (x ? [x] : []))
        : this.cluster.list({
            path,
            ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}),
            ...(q.fieldSelector ? { fieldSelector: q.fieldSelector } : {}),
          });
    const items = await read.catch(() => undefined);
    this.keep(items ?? []);
    this.progress({ what, state: 'done', count: items?.length ?? 0 });
    return items !== undefined;
  }

  /** The endpoint addresses whose Pods were looked up by address, and answered. */
  readonly podIPLookups: string[] = [];

  /** What the reads record in meta, so far: the failures, and the lookups by address. */
  meta(): { readErrors?: ReadError[]; podIPLookups?: string[] } {
    return {
      ...(this.errors.length > 0 ? { readErrors: [...this.errors] } : {}),
      ...(this.podIPLookups.length > 0 ? { podIPLookups: [...this.podIPLookups] } : {}),
    };
  }

  /** The Pods, in every namespace, whose first address is `ip` (an API server selects on
   * `status.podIP` only: `status.podIPs` is accepted and matches nothing). */
  async podsWithIP(address: string): Promise<void> {
    // the API server matches the text: Pod addresses are written canonical
    const ip = canonicalAddress(address);
    const q: ApiQuery = { resource: 'pods', podIP: ip };
    const request = { path: apiPath(q), fieldSelector: `status.podIP=${ip}` };
    const items = await this.read(
      `Pods with address ${ip}`,
      readOf(q),
      () => this.cluster.list(request),
      (r: KubeObject[] | undefined) => r?.length ?? 0,
      false,
      undefined,
    );
    if (!items) return;
    this.keep(items);
    this.podIPLookups.push(ip);
  }

  has(kind: string, namespace: string, name: string): boolean {
    return this.objects.has(`${kind}/${namespace}/${name}`);
  }

  private keep(objects: KubeObject[]): void {
    for (const o of objects)
      if (!this.objects.has(keyOf(o))) this.objects.set(keyOf(o), this.slim(o));
  }

  /** Every object read, in a stable order: by kind, then namespace, then name. */
  sorted(): KubeObject[] {
    const rank = (o: KubeObject) => {
      const i = KIND_ORDER.indexOf(o.kind ?? '');
      return i < 0 ? KIND_ORDER.length : i;
    };
    return [...this.objects.values()].sort(
      (a, b) => rank(a) - rank(b) || (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0),
    );
  }
}

/** The Pods a Service's EndpointSlices and Endpoints point at (targetRef kind Pod). */
function endpointPodRefs(
  namespace: string,
  slices: KubeObject[],
  endpoints: KubeObject | undefined,
): { namespace: string; name: string }[] {
  type Ref = { kind?: string; name?: string; namespace?: string };
  const refs: Ref[] = [];
  for (const s of slices)
    for (const e of (s['endpoints'] as { targetRef?: Ref }[] | undefined) ?? [])
      if (e.targetRef) refs.push(e.targetRef);
  for (const subset of (endpoints?.['subsets'] as
    Record<string, { targetRef?: Ref }[] | undefined>[] | undefined) ?? []) {
    for (const a of [...(subset['addresses'] ?? []), ...(subset['notReadyAddresses'] ?? [])])
      if (a.targetRef) refs.push(a.targetRef);
  }
  const seen = new Map<string, { namespace: string; name: string }>();
  for (const r of refs) {
    if ((r.kind ?? 'Pod') !== 'Pod' || !r.name) continue;
    const ref = { namespace: r.namespace || namespace, name: r.name };
    seen.set(`${ref.namespace}/${ref.name}`, ref);
  }
  return [...seen.values()];
}

/** Past this many addresses that name no Pod, the rest are not looked up (said as not known). */
const POD_IP_LOOKUPS = 16;

/** The addresses a Service's EndpointSlices and Endpoints list without naming a Pod (a hand-made
 * slice, a selector-less Service): which Pod, if any, has them is looked up by address. */
function addressesNamingNoPod(slices: KubeObject[], endpoints: KubeObject | undefined): string[] {
  type Address = {
    addresses?: string[];
    ip?: string;
    targetRef?: { kind?: string; name?: string };
  };
  const namesNoPod = (a: Address) => !a.targetRef?.name || (a.targetRef.kind ?? 'Pod') !== 'Pod';
  const out = new Set<string>();
  for (const s of slices)
    for (const e of (s['endpoints'] as Address[] | undefined) ?? [])
      if (namesNoPod(e))
        for (const ip of e.addresses ?? []) if (familyOf(ip)) out.add(canonicalAddress(ip));
  for (const subset of (endpoints?.['subsets'] as
    Record<string, Address[] | undefined>[] | undefined) ?? [])
    for (const a of [...(subset['addresses'] ?? []), ...(subset['notReadyAddresses'] ?? [])])
      if (namesNoPod(a) && a.ip && familyOf(a.ip)) out.add(canonicalAddress(a.ip));
  return [...out].slice(0, POD_IP_LOOKUPS);
}

/** The ServiceCIDRs (networking.k8s.io/v1, 1.33+): a cluster that does not serve them has none. */
function readServiceCIDRs(r: Reader): Promise<unknown> {
  return r.list(
    'ServiceCIDRs',
    { group: 'networking.k8s.io', resource: 'servicecidrs' },
    false,
    true,
  );
}

/** The label of Cilium's agents (GKE's anetd carries it too). */
const CILIUM_AGENTS = 'k8s-app=cilium';

/** Every kube-proxy Pod, in pages of WHOLE_LIST_PAGE. */
function listKubeProxyPods(r: Reader, labelSelector: string): Promise<KubeObject[]> {
  return r.list('kube-proxy Pods', {
    resource: 'pods',
    namespace: SYSTEM,
    addon: true,
    labelSelector,
    pageSize: WHOLE_LIST_PAGE,
  });
}

/** kube-proxy's Pods read node by node where its DaemonSet is settled: the nodes whose Pods the
 * run asked for (and got an answer), the DaemonSet, and its Pods' label. */
interface ProxyPodsByNode {
  rollout: Rollout;
  selector: string;
  on: Set<string>;
}

/** Past this many nodes one list of every kube-proxy Pod costs less than one read per node. */
const PODS_BY_NODE = 50;

/** The kube-proxy Pods on `nodes` not read yet, one read per node; false: too many, or a read
 * failed (then every Pod is listed: a node whose Pod was not read must not look like one
 * without). */
async function readProxyPodsOn(r: Reader, p: ProxyPodsByNode, nodes: string[]): Promise<boolean> {
  const more = nodes.filter((n) => !p.on.has(n));
  if (more.length > PODS_BY_NODE) return false;
  const answered = await Promise.all(
    more.map((node) =>
      r.extra(`kube-proxy Pods on ${node}`, {
        resource: 'pods',
        namespace: SYSTEM,
        labelSelector: p.selector,
        fieldSelector: `spec.nodeName=${node}`,
      }),
    ),
  );
  more.forEach((n, i) => answered[i] && p.on.add(n));
  return answered.every(Boolean);
}

/** kube-proxy (ConfigMap, DaemonSet and its Pods), Cilium's agents and their ConfigMap, and cluster DNS (kube-dns Service, slices, CoreDNS Pods, Corefile). */
function readClusterAddons(
  r: Reader,
  o: { byNode: boolean },
): {
  /** Every agent Pod: seconds on a large cluster. */
  lists: Promise<unknown>[];
  rest: Promise<unknown>[];
  /** The label of kube-proxy's Pods, as its DaemonSet selects them. */
  kubeProxyPods: Promise<string>;
  /** kube-proxy's DaemonSet where its status, settled, spares listing every one of its Pods
   * (`byNode`: the chosen nodes' Pods are read by node instead; see ProxyPodsByNode). */
  settledKubeProxy: Promise<Rollout | undefined>;
} {
  const daemonSet = r.get(`DaemonSet ${SYSTEM}/kube-proxy`, {
    group: 'apps',
    resource: 'daemonsets',
    namespace: SYSTEM,
    name: 'kube-proxy',
    addon: true,
  });
  const kubeProxyPods = daemonSet.then((ds) => {
    const selector = (ds?.['spec'] as { selector?: LabelSelectorSpec } | undefined)?.selector;
    return selector ? labelSelectorString(selector) : 'k8s-app=kube-proxy';
  });
  const settledKubeProxy = daemonSet.then((ds) => {
    const rollout = o.byNode && ds ? rolloutOf(ds) : undefined;
    return rollout && settled(rollout) ? rollout : undefined;
  });
  const kubeProxy = Promise.all([kubeProxyPods, settledKubeProxy]).then(
    ([labelSelector, byNode]) => (byNode ? [] : listKubeProxyPods(r, labelSelector)),
  );
  const dns = r
    .get(`Service ${SYSTEM}/kube-dns`, {
      resource: 'services',
      namespace: SYSTEM,
      name: 'kube-dns',
      addon: true,
    })
    .then((svc) => {
      const selector = (svc?.['spec'] as { selector?: Record<string, string> } | undefined)
        ?.selector;
      return r.list('CoreDNS Pods', {
        resource: 'pods',
        namespace: SYSTEM,
        addon: true,
        labelSelector:
          selector && Object.keys(selector).length > 0
            ? equalitySelector(selector)
            : 'k8s-app=kube-dns',
      });
    });
  return {
    kubeProxyPods,
    settledKubeProxy,
    lists: [
      kubeProxy,
      // where Cilium replaces kube-proxy its agent on each node holds the Services (GKE's anetd too)
      r.list('Cilium agent Pods', {
        resource: 'pods',
        namespace: SYSTEM,
        addon: true,
        labelSelector: CILIUM_AGENTS,
        pageSize: WHOLE_LIST_PAGE,
      }),
    ],
    rest: [
      dns,
      r.get(`ConfigMap ${SYSTEM}/cilium-config`, {
        resource: 'configmaps',
        namespace: SYSTEM,
        name: 'cilium-config',
        addon: true,
      }),
      // kubeadm names it kube-proxy, EKS kube-proxy-config
      r.get(`ConfigMap ${SYSTEM}/kube-proxy`, {
        resource: 'configmaps',
        namespace: SYSTEM,
        name: 'kube-proxy',
        addon: true,
      }),
      r.get(`ConfigMap ${SYSTEM}/kube-proxy-config`, {
        resource: 'configmaps',
        namespace: SYSTEM,
        name: 'kube-proxy-config',
        addon: true,
      }),
      r.list(`EndpointSlices of ${SYSTEM}/kube-dns`, {
        group: 'discovery.k8s.io',
        resource: 'endpointslices',
        namespace: SYSTEM,
        service: `${SYSTEM}/kube-dns`,
        addon: true,
        labelSelector: 'kubernetes.io/service-name=kube-dns',
      }),
      r.get(`ConfigMap ${SYSTEM}/coredns`, {
        resource: 'configmaps',
        namespace: SYSTEM,
        name: 'coredns',
        addon: true,
      }),
    ],
  };
}

/** cat's own words for a file that is not there (GNU and busybox alike). */
const NO_SUCH_FILE = /No such file or directory/;

/** A kernel list that does not exist lists nothing: its module is not loaded. As an empty list
 * it says so; any other failure (no root, no cat) stays one. */
function listedNothing(c: NodeCommand, r: NodeResult): NodeResult {
  if (c.kind !== 'proc-net' || r.exitCode !== 1 || !NO_SUCH_FILE.test(r.stderr)) return r;
  return { ...r, stdout: '', exitCode: 0 };
}

/** iptables' words for a chain the table does not have: legacy's, and iptables-nft's (1.8.9
 * says "incompatible" for a chain that does not exist). */
const NO_SUCH_CHAIN =
  /No chain\/target\/match by that name|does not exist|is incompatible, use 'nft' tool/;

/** A chain read by name that the table does not have is an empty listing: nothing there. */
function chainAbsent(c: NodeCommand, r: NodeResult): NodeResult {
  if (c.kind !== 'iptables-chain' || r.exitCode !== 1 || !NO_SUCH_CHAIN.test(r.stderr)) return r;
  return { ...r, stdout: '', exitCode: 0 };
}

/** Why a read was not run: the list that says it would change nothing could not be read. */
const notRunWhy = (c: NodeCommand) =>
  `not run: /proc/net/${commandStem(guardOf(c)!)} could not be read, and where it does not list what this reads, reading it would create it`;

/** KUBE-SERVICES rules (Service ports, about) below which one Service's answer reads the whole
 * table: a table that small is read faster in one exec than chain by chain. */
const WHOLE_BELOW = 1000;

const lineCount = (text: string) => text.split('\n').length - 1;

/** Chain reads of one round that run at once on a node (each is its own exec or channel; sshd
 * allows 10 sessions on a connection by default). */
const CHAIN_READS_AT_ONCE = 8;

/** Whether a backend's probe found kube-proxy's KUBE-POSTROUTING (undefined: not read). */
function probed(outputs: NodeOutputs | undefined, tool: IptablesTool, backend: 'nft' | 'legacy') {
  const out = outputs?.[probeStem(tool, backend)];
  return out === undefined ? undefined : out !== '';
}

async function runNodeCommands(
  cluster: Cluster,
  nodes: string[],
  commands: NodeCommand[],
  o: CollectOptions,
  progress: (p: CollectProgress) => void,
  byService?: {
    view: ClusterView;
    target: NonNullable<CollectOptions['rulesOf']>;
  },
  tally: NodeTally = { read: 0, failed: 0, left: 0 },
  fold = new NodeErrorFold(),
) {
  // keyed in a Map: a Node named "constructor" (valid, if hostile) is no key of every object
  const outputs = new Map<string, NodeOutputs>();
  // the failures of the nodes in hand; each node's go into the fold when it is done
  const failures = new Map<string, NodeFailure[]>();
  const errorsOn = (node: string) => {
    let on = failures.get(node);
    if (!on) failures.set(node, (on = []));
    return on;
  };
  /** Takes the failures that `test` picks off a node's list: read another way, no longer a loss. */
  const drop = (node: string, test: (e: NodeFailure) => boolean) => {
    const on = failures.get(node);
    if (on)
      failures.set(
        node,
        on.filter((e) => !test(e)),
      );
  };
  const notKept: NodeReads['notKept'] = {};
  // a name Kubernetes cannot have made is no node kdebug reaches (nor a path it writes)
  const queue = nodes.filter(isNodeName);
  for (const node of nodes.filter((n) => !isNodeName(n)))
    fold.add(node, [{ command: '*', exitCode: null, error: 'not a valid node name: not read' }]);
  tally.failed += nodes.length - queue.length;
  tally.left += queue.length;
  o.onNodes?.({ ...tally });
  const clock = () => (o.now?.() ?? new Date()).getTime();
  let shownAt = clock();
  // the nodes done with something read, for onNodeFacts only
  const done: string[] = [];
  const runOne = async (node: string, command: NodeCommand) => {
    const stem = commandStem(command);
    // progress names the command as a person types it on the node, not its file's stem
    const what = typedCommand(command).join(' ');
    progress({ what, node, state: 'start' });
    const r = chainAbsent(command, listedNothing(command, await cluster.run(node, command)));
    // a failed dump is no dump: an empty one would read as "no rules in this backend"
    if (r.exitCode === 0 || (r.exitCode !== null && !isRulesDump(command)))
      outputs.set(node, { ...outputs.get(node), [stem]: r.stdout });
    if (r.exitCode === 0) {
      progress({ what, node, state: 'done' });
    } else {
      const error = r.error ?? (r.stderr.trim().split('\n')[0] || `exit code ${r.exitCode}`);
      errorsOn(node).push({
        command: stem,
        typed: typedCommand(command),
        exitCode: r.exitCode,
        error,
        ...(r.lost ? { lost: true } : {}),
        ...(r.missingBinary ? { missingBinary: true } : {}),
      });
      progress({ what, node, state: 'failed', error });
    }
  };
  const notRun = (node: string, command: NodeCommand) => {
    const error = notRunWhy(command);
    const typed = typedCommand(command);
    errorsOn(node).push({ command: commandStem(command), typed, exitCode: null, error });
    progress({ what: typed.join(' '), node, state: 'failed', error });
  };
  const runChecked = async (node: string, command: NodeCommand) => {
    const decision = readDecision(command, outputs.get(node));
    if (decision === 'unread') notRun(node, command);
    if (decision === 'run') await runOne(node, command);
  };
  /** One Service's chains, round after round until its rules reach no chain not read; the
   * whole dump where they are too many or a read by name fails. */
  /** The whole dumps, as every read but one Service's makes them. */
  const readWhole = async (node: string, tool: IptablesTool) => {
    delete notKept[node]; // the whole dump is what is read there
    for (const c of rulesReads(`${tool}-save`).dumps) await runChecked(node, c);
    // nft's nat dump says again what its probe could not read
    const probe = probeStem(tool, 'nft');
    drop(node, (e) => e.command === probe);
  };
  /** After a backend's probe: one Service's chains by name where nft alone holds kube-proxy's
   * (iptables-nft, as kube-proxy's image picks on current nodes), else the whole dumps as before. */
  const afterProbe = async (node: string, tool: IptablesTool, backend: 'nft' | 'legacy') => {
    const nft = probed(outputs.get(node), tool, 'nft');
    if (backend === 'nft') return nft ? readServiceChains(node, tool) : readWhole(node, tool);
    const probe = { kind: 'iptables-chain', tool, backend, chain: 'KUBE-POSTROUTING' } as const;
    // the probe ran and failed (sudo allows the save binaries only): legacy's nat table, as before
    const refused =
      probed(outputs.get(node), tool, 'legacy') === undefined &&
      readDecision(probe, outputs.get(node)) === 'run';
    const nat = { kind: `${tool}-save`, backend: 'legacy', table: 'nat' } as const;
    if (refused) await runChecked(node, nat);
    const legacy =
      probed(outputs.get(node), tool, 'legacy') ||
      hasKubeChains(outputs.get(node)?.[commandStem(nat)] ?? '');
    // both backends hold them: one set is stale, and the default iptables-save reads the one
    // kube-proxy's wrapper picks
    if (nft && legacy) await readWhole(node, tool);
  };
  /** One Service's chains in the nft backend, round after round until its rules reach no chain
   * not read; the whole dump where they are too many or a read by name fails. */
  const readServiceChains = async (node: string, tool: IptablesTool) => {
    const { view, target } = byService!;
    const save = `${tool}-save` as const;
    const backend = 'nft';
    // the chains read by name, the backend's probe aside (it says which backend holds them)
    const chainStem = (stem: string) =>
      stem !== probeStem(tool, backend) &&
      (stem.startsWith(chainStemPrefix(tool, backend)) ||
        stem.startsWith(chainStemPrefix(tool, backend, 'filter')));
    const chainErrors = () => (failures.get(node) ?? []).some((e) => chainStem(e.command));
    // at most CHAIN_READS_AT_ONCE in flight, the next starting as one ends
    const inLanes = async (reads: NodeCommand[]) => {
      const queue = [...reads];
      const lane = async () => {
        for (let c = queue.shift(); c !== undefined; c = queue.shift()) await runChecked(node, c);
      };
      await Promise.all(Array.from({ length: CHAIN_READS_AT_ONCE }, lane));
    };
    // KUBE-SERVICES sizes the table; the chains every answer reads go with it in the first round
    const services = { kind: 'iptables-chain', tool, backend, chain: 'KUBE-SERVICES' } as const;
    const first = serviceChainReads(view, target, outputs.get(node), tool, backend);
    await inLanes([
      services,
      ...(first === 'whole' ? [] : first.filter((c) => commandStem(c) !== commandStem(services))),
    ]);
    const listed = outputs.get(node)?.[commandStem(services)];
    if (listed !== undefined && lineCount(listed) < (target.wholeBelow ?? WHOLE_BELOW)) {
      await runChecked(node, { kind: save, backend });
      // the table is read whole: the chains read beside it stand for nothing more
      const kept = outputs.get(node)!;
      if (kept[commandStem({ kind: save, backend })] !== undefined) {
        for (const stem of Object.keys(kept)) if (chainStem(stem)) delete kept[stem];
        drop(node, (e) => chainStem(e.command));
      }
      return;
    }
    for (;;) {
      const next = serviceChainReads(view, target, outputs.get(node), tool, backend);
      if (next !== 'whole' && next.length === 0) return keepOnlyTheService(node, tool, backend);
      if (next !== 'whole') {
        await inLanes(next);
        if (!chainErrors()) continue;
      }
      await runOne(node, { kind: save, backend });
      // read whole: the reads by name that failed are no longer a loss
      if (outputs.get(node)?.[commandStem({ kind: save, backend })] !== undefined)
        drop(node, (e) => chainStem(e.command));
      return;
    }
  };
  /** Every chain the Service reaches is read: the entry chains keep its rules and those of no
   * Service, so what a node holds grows with the Service, not with the cluster (said, counted). */
  const keepOnlyTheService = (node: string, tool: IptablesTool, backend: 'nft') => {
    const svc = findService(byService!.view, byService!.target.namespace, byService!.target.name);
    const kept = outputs.get(node);
    if (!svc || !kept) return;
    for (const chain of FAN_OUT) {
      const stem = commandStem({ kind: 'iptables-chain', tool, backend, chain });
      const text = kept[stem];
      if (text === undefined) continue;
      const { text: own, dropped } = keepServiceRules(text, svc);
      if (dropped === 0) continue;
      kept[stem] = own;
      // IPv4's and IPv6's entry chains add up
      notKept[node] = { ...notKept[node], [chain]: (notKept[node]?.[chain] ?? 0) + dropped };
    }
  };
  const worker = async () => {
    for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
      // one command at a time per node: kinder to the node and to the transport's session
      for (const command of commands) {
        // a second read of what the node could not read the first time would fail the same way
        if (
          command.kind === 'conntrack-stats' &&
          command.again &&
          outputs.get(node)?.['conntrack-stats'] === undefined
        )
          continue;
        await runChecked(node, command);
        // a backend's probe is in: the rules next, before the reads a kube-proxy image may lack
        if (byService && command.kind === 'iptables-chain' && command.backend !== 'auto')
          await afterProbe(node, command.tool, command.backend);
      }
      // the default iptables-save reads the other backend: read the one with kube-proxy's chains
      const backend = backendToRead(outputs.get(node));
      if (backend) await runOne(node, { kind: 'iptables-save', backend });
      // the same for the IPv6 proxier's rules, where they are read
      const backend6 = backendToRead(outputs.get(node), 'ip6tables');
      if (
        backend6 &&
        commands.some(
          (c) =>
            c.kind === 'ip6tables-save' || (c.kind === 'iptables-chain' && c.tool === 'ip6tables'),
        )
      )
        await runOne(node, { kind: 'ip6tables-save', backend: backend6 });
      // an nft built without JSON still lists the table as text; a node without ipvsadm-save
      // still has ipvsadm
      for (const c of commands) {
        const other = fallbackOf(c);
        if (!other) continue;
        const stem = commandStem(c);
        // it ran and failed (not one the transport could not make), or its binary is not there
        const failed = failures
          .get(node)
          ?.find((e) => e.command === stem && (e.exitCode !== null || e.missingBinary));
        if (!failed) continue;
        await runOne(node, other);
        // read the other way: the first attempt's failure is no longer a loss
        if (outputs.get(node)?.[commandStem(other)] !== undefined) drop(node, (e) => e === failed);
      }
      // nothing more runs there: its debug Pod goes now, so no more are alive than nodes in hand
      await cluster.nodeDone?.(node);
      // what failed there joins the nodes that failed the same way: only its name is kept
      fold.add(node, failures.get(node) ?? []);
      failures.delete(node);
      tally.left--;
      if (outputs.has(node)) tally.read++;
      else tally.failed++;
      o.onNodes?.({ ...tally });
      if (o.onNodeFacts && outputs.has(node)) done.push(node);
      // the nodes done only: one still being read would show half its state
      if (o.onNodeFacts && tally.left > 0 && clock() - shownAt >= 1000) {
        shownAt = clock();
        o.onNodeFacts(Object.fromEntries(done.map((n) => [n, outputs.get(n)!])));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.nodeConcurrency ?? 8, nodes.length) }, worker));
  return { outputs: Object.fromEntries(outputs), notKept };
}

/** The rules not kept of several reads, node by node and chain by chain. */
function mergeNotKept(reads: NodeReads['notKept'][]): NodeReads['notKept'] {
  const out: NodeReads['notKept'] = {};
  for (const read of reads)
    for (const [node, chains] of Object.entries(read))
      for (const [chain, n] of Object.entries(chains))
        out[node] = { ...out[node], [chain]: (out[node]?.[chain] ?? 0) + n };
  return out;
}

/** What the nodes gave: their outputs, and per node and entry chain how many rules of other
 * Services were not kept (one Service's answer); what failed is in the run's NodeErrorFold. */
interface NodeReads {
  outputs: Record<string, NodeOutputs>;
  notKept: Record<string, Record<string, number>>;
}

/** The chosen nodes read: those begun early given what the full commands add (rarely anything),
 * the others all of it; one tally for both, and one fold of what failed. */
async function readNodes(
  cluster: Cluster,
  nodes: string[],
  commands: NodeCommand[],
  o: CollectOptions,
  progress: (p: CollectProgress) => void,
  byService: Parameters<typeof runNodeCommands>[5],
  fold: NodeErrorFold,
  early?: Early,
): Promise<NodeReads> {
  const none: NodeReads = { outputs: {}, notKept: {} };
  if (!early)
    return commands.length > 0
      ? runNodeCommands(cluster, nodes, commands, o, progress, byService, undefined, fold)
      : none;
  const begun = new Set(early.nodes);
  const ran = new Set(early.commands.map(commandStem));
  const more = commands.filter((c) => !ran.has(commandStem(c)));
  const rest = nodes.filter((n) => !begun.has(n));
  // the early nodes are counted once, by their first run: the top-up tells no tally
  const quiet = { ...o, onNodes: undefined, onNodeFacts: undefined };
  const [first, others, topUp] = await Promise.all([
    early.run,
    rest.length > 0 && commands.length > 0
      ? runNodeCommands(cluster, rest, commands, o, progress, byService, early.tally, fold)
      : none,
    more.length > 0
      ? runNodeCommands(cluster, early.nodes, more, quiet, progress, byService, undefined, fold)
      : none,
  ]);
  const outputs: Record<string, NodeOutputs> = { ...first.outputs, ...others.outputs };
  for (const [node, out] of Object.entries(topUp.outputs))
    outputs[node] = { ...outputs[node], ...out };
  return {
    outputs,
    notKept: mergeNotKept([first.notKept, others.notKept, topUp.notKept]),
  };
}

/** The early nodes' reads under way: which nodes, with which commands. */
interface Early {
  nodes: string[];
  commands: NodeCommand[];
  tally: NodeTally;
  /** What failed there; the other nodes' failures join it. */
  fold: NodeErrorFold;
  run: Promise<NodeReads>;
}

/** Starts the early nodes (see CollectOptions.early) on the objects read so far, with their own
 * Node objects and agent Pods, asked for by name: the lists of every one are still on their way. */
async function startEarly(
  cluster: Cluster,
  r: Reader,
  meta: SnapshotMeta,
  o: CollectOptions,
  progress: (p: CollectProgress) => void,
  kubeProxyPods: Promise<string>,
  proxy?: ProxyPodsByNode,
): Promise<Early | undefined> {
  const early = o.early;
  if (!early) return undefined;
  const facts = () => ({
    objects: r.sorted(),
    nodes: {},
    meta: { ...cluster.meta, ...meta, ...r.meta() },
  });
  const sofar = facts();
  const wanted = early.nodes(sofar, new Analysis(sofar)).filter(isNodeName);
  if (wanted.length === 0) return undefined;
  const selector = await kubeProxyPods;
  await Promise.all(
    wanted.flatMap((node) => [
      r.extra(`Node ${node}`, { resource: 'nodes', name: node }),
      ...[selector, CILIUM_AGENTS].map((labelSelector) =>
        r
          .extra(`agent Pods on ${node}`, {
            resource: 'pods',
            namespace: SYSTEM,
            labelSelector,
            fieldSelector: `spec.nodeName=${node}`,
          })
          .then((answered) => {
            if (answered && proxy && labelSelector === selector) proxy.on.add(node);
          }),
      ),
    ]),
  );
  const base = facts();
  const analysis = new Analysis(base);
  // a node that does not exist (or runs Windows) is not chosen later: not read now either
  const linux = new Set(analysis.view.nodes.filter((n) => !isWindows(n)).map((n) => n.name));
  const nodes = wanted.filter((n) => linux.has(n));
  const commands = early.commands(base, analysis);
  if (nodes.length === 0 || commands.length === 0) return undefined;
  cluster.podsRead?.(analysis.view.pods);
  const byService = o.rulesOf ? { view: analysis.view, target: o.rulesOf } : undefined;
  const tally: NodeTally = { read: 0, failed: 0, left: 0 };
  const fold = new NodeErrorFold();
  const run = runNodeCommands(cluster, nodes, commands, o, progress, byService, tally, fold);
  // its failure is the run's: told when finish waits for it
  run.catch(() => undefined);
  return { nodes, commands, tally, fold, run };
}

async function finish(
  cluster: Cluster,
  r: Reader,
  meta: SnapshotMeta,
  o: CollectOptions,
  progress: (p: CollectProgress) => void,
  early?: Early,
  proxy?: ProxyPodsByNode,
): Promise<Facts> {
  let byNode = proxy;
  const readOn = () =>
    byNode ? { kubeProxyPodsReadOn: [...byNode.on].sort((a, b) => (a < b ? -1 : 1)) } : {};
  const facts = () => ({
    objects: r.sorted(),
    nodes: {},
    meta: { ...cluster.meta, ...meta, ...readOn(), ...r.meta() },
  });
  let base = facts();
  // one analysis of the objects for every question asked of them before the nodes are read
  let analysis = new Analysis(base);
  /** Every kube-proxy Pod after all: the DaemonSet's status does not speak for these nodes. */
  const listEvery = async () => {
    const failed = r.errors.length;
    await listKubeProxyPods(r, byNode!.selector);
    // a list that failed leaves the Pods read by node as they were, and says which
    if (r.errors.length === failed) byNode = undefined;
  };
  // a DaemonSet that schedules another number of Pods than there are Linux nodes speaks for none
  const linux = analysis.view.nodes.filter((n) => !isWindows(n)).length;
  if (byNode && byNode.rollout.desired !== linux) {
    await listEvery();
    analysis = new Analysis((base = facts()));
  }
  // Windows nodes have no iptables and no Linux debug Pod: nothing is run there
  const windows = new Set(analysis.view.nodes.filter(isWindows).map((n) => n.name));
  const nodes = (
    (typeof o.nodes === 'function' ? o.nodes(base, analysis) : o.nodes) ??
    base.objects.filter((x) => x.kind === 'Node').map((x) => x.metadata?.name ?? '')
  ).filter((n) => !windows.has(n));
  // the chosen nodes' kube-proxy Pods, where not read yet: the node states read them
  if (byNode && nodes.some((n) => !byNode!.on.has(n))) {
    if (!(await readProxyPodsOn(r, byNode, nodes))) await listEvery();
    // what the choice wrote into the facts' meta stays; the nodes read by node are updated
    const { kubeProxyPodsReadOn: _, ...chosen } = base.meta;
    analysis = new Analysis((base = { ...facts(), meta: { ...chosen, ...readOn(), ...r.meta() } }));
  }
  const objects = base.objects;
  const commands =
    typeof o.nodeCommands === 'function' ? o.nodeCommands(base, analysis) : (o.nodeCommands ?? []);
  const view = o.rulesOf ? analysis.view : undefined;
  // the agents' Pods are in hand: the node channels need not list them again
  if (commands.length > 0) cluster.podsRead?.(analysis.view.pods);
  const byService = view && o.rulesOf ? { view, target: o.rulesOf } : undefined;
  const fold = early?.fold ?? new NodeErrorFold();
  const { outputs, notKept } = await readNodes(
    cluster,
    nodes,
    commands,
    o,
    progress,
    byService,
    fold,
    early,
  );
  const read = r.meta();
  return {
    objects,
    nodes: outputs,
    meta: {
      ...cluster.meta,
      ...meta,
      ...readOn(),
      capturedAt: (o.now?.() ?? new Date()).toISOString(),
      ...o.meta,
      ...read,
      // up to FLAT failed nodes each in its own words (meta.nodeErrors), as older kdebug reads
      ...nodeErrorsMeta(fold, read.readErrors),
      ...(Object.keys(notKept).length > 0 ? { entryRulesNotKept: notKept } : {}),
    },
  };
}

/** Reads everything kdebug needs to diagnose one Service. Throws ServiceNotFoundError with suggestions. */
export async function collect(
  cluster: Cluster,
  target: { namespace: string; service: string },
  o: CollectOptions = {},
): Promise<Facts> {
  const progress = o.onProgress ?? (() => undefined);
  const r = new Reader(cluster, progress, o.nodesAsRead ? slimNode : undefined);
  const { namespace: ns, service: name } = target;
  const svc = r.get(`Service ${ns}/${name}`, { resource: 'services', namespace: ns, name }, true);
  const slices = r.list(`EndpointSlices of ${ns}/${name}`, {
    group: 'discovery.k8s.io',
    resource: 'endpointslices',
    namespace: ns,
    service: `${ns}/${name}`,
    labelSelector: `kubernetes.io/service-name=${name}`,
  });
  const endpoints = r.get(`Endpoints ${ns}/${name}`, {
    resource: 'endpoints',
    namespace: ns,
    name,
  });
  const selected = svc.then(async (s) => {
    const selector = (s?.['spec'] as { selector?: Record<string, string> } | undefined)?.selector;
    if (!selector || Object.keys(selector).length === 0) return [];
    const pods = await r.list(`Pods selected by ${ns}/${name}`, {
      resource: 'pods',
      namespace: ns,
      service: `${ns}/${name}`,
      labelSelector: equalitySelector(selector),
    });
    // none: the namespace's Pods show the nearest miss (a typo in a label, app= vs run=)
    if (pods.length === 0)
      await r.list(`Pods in ${ns} (the selector matches none)`, {
        resource: 'pods',
        namespace: ns,
      });
    return pods;
  });
  // endpoints may point at Pods the selector no longer matches (or that are gone): read those too
  const pointedAt = Promise.all([slices, endpoints, selected.catch(() => [])]).then(([sl, ep]) =>
    Promise.all(
      endpointPodRefs(ns, sl, ep)
        .filter((p) => !r.has('Pod', p.namespace, p.name))
        .map((p) =>
          r.get(`Pod ${p.namespace}/${p.name}`, {
            resource: 'pods',
            namespace: p.namespace,
            name: p.name,
          }),
        ),
    ),
  );
  // an address no Pod is named for may still be a Pod's: only a lookup by address can tell
  const byAddress = Promise.all([slices, endpoints]).then(([sl, ep]) =>
    Promise.all(addressesNamingNoPod(sl, ep).map((ip) => r.podsWithIP(ip))),
  );
  const client = o.clientPod;
  const addons = readClusterAddons(r, { byNode: true });
  // every Node and every agent Pod: seconds on a large cluster, while the rest takes a moment
  const lists = [
    r.list('Nodes', { resource: 'nodes', pageSize: WHOLE_LIST_PAGE }),
    ...addons.lists,
  ];
  const reads = [
    svc,
    slices,
    endpoints,
    selected,
    pointedAt,
    byAddress,
    ...(client
      ? [
          r.get(`Pod ${client.namespace}/${client.name}`, {
            resource: 'pods',
            namespace: client.namespace,
            name: client.name,
          }),
        ]
      : []),
    readServiceCIDRs(r),
    ...addons.rest,
    r.list(`NetworkPolicies in ${ns}`, {
      group: 'networking.k8s.io',
      resource: 'networkpolicies',
      namespace: ns,
    }),
  ];
  // only fatal failures reject (the rest are recorded): the first one ends the wait
  const listed = Promise.all(lists);
  listed.catch(() => undefined); // its failure is told when it is awaited below
  await Promise.all(reads);
  if (!(await svc)) throw await serviceNotFound(cluster, ns, name);
  const meta = { namespace: ns, service: name };
  const rollout = await addons.settledKubeProxy;
  const proxy = rollout
    ? { rollout, selector: await addons.kubeProxyPods, on: new Set<string>() }
    : undefined;
  const early = await startEarly(cluster, r, meta, o, progress, addons.kubeProxyPods, proxy);
  await listed;
  return finish(cluster, r, meta, o, progress, early, proxy);
}

/** Every Service in a namespace (or, without one, the cluster) and what they need: for `snapshot save --all`. */
export async function collectAll(
  cluster: Cluster,
  scope: { namespace?: string },
  o: CollectOptions = {},
): Promise<Facts> {
  const progress = o.onProgress ?? (() => undefined);
  const r = new Reader(cluster, progress);
  const ns = scope.namespace;
  const where = ns ? ` in ${ns}` : ' in all namespaces';
  // a snapshot of everything holds every kube-proxy Pod
  const addons = readClusterAddons(r, { byNode: false });
  await Promise.all([
    // the Service list is the point of --all: failing to read it fails the capture
    r.list(`Services${where}`, { resource: 'services', namespace: ns }, true),
    r.list(`EndpointSlices${where}`, {
      group: 'discovery.k8s.io',
      resource: 'endpointslices',
      namespace: ns,
    }),
    r.list(`Endpoints${where}`, { resource: 'endpoints', namespace: ns }),
    r.list(`Pods${where}`, { resource: 'pods', namespace: ns }),
    r.list('Nodes', { resource: 'nodes' }),
    readServiceCIDRs(r),
    ...addons.lists,
    ...addons.rest,
    r.list(`NetworkPolicies${where}`, {
      group: 'networking.k8s.io',
      resource: 'networkpolicies',
      namespace: ns,
    }),
  ]);
  // every Pod of the cluster in hand: an address none of them has is no Pod's, no lookup needed
  const everyPod = !ns && !r.errors.some((e) => e.read?.resource === 'pods' && !e.read.addon);
  return finish(
    cluster,
    r,
    ns ? { namespace: ns } : everyPod ? { everyPodRead: true } : {},
    o,
    progress,
  );
}
