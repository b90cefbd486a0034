// The Cilium agent on a node: its Pod, its release, and the settings Service load balancing
// depends on, each from what the agent itself said (`cilium-dbg status --verbose`) where its
// status printed it, else from its ConfigMap (cilium-config), else Cilium's defaults, each with
// its own source (provenance.ts).
import type { ClusterView, Pod } from '../../../kube/objects.js';
import { commandStem } from '../../../nodes/commands.js';
import { atLeast, parseVersion, type Version } from '../../../version.js';
import type { CiliumExpectOptions } from '../expected/expected.js';
import {
  configDevices,
  nodePortCIDRs,
  pickNodePortAddresses,
  statusDevices,
  type CiliumNodePorts,
} from './devices.js';
import { DEFAULT_NODE_PORT_RANGE, parseNodePortRange } from './node-port-range.js';
import { releaseBehaviour } from './release-behaviour.js';
import { lbConfigRefused, lbSetting } from './lb-config.js';
import { configPartial, kprRefused, replacesIn, type ConfigPartial } from './config-replacement.js';
import { SERVICE_KINDS, fromStatus, type ServiceKind } from './status.js';
import { settingSources, type SettingSources } from './provenance.js';

/** The agent's listings in a snapshot (`nodes/NODE/<stem>.txt`), as `cilium-dbg` prints them:
 * `status --verbose`, `service list -o json` (or its text), `shell -- db/show frontends` and
 * `backends` (1.17+), `bpf lb list`. */
export const CILIUM_STEMS = {
  status: commandStem({ kind: 'cilium', list: 'status' }),
  serviceList: commandStem({ kind: 'cilium', list: 'service-list' }),
  frontends: commandStem({ kind: 'cilium', list: 'frontends' }),
  backends: commandStem({ kind: 'cilium', list: 'backends' }),
  bpf: commandStem({ kind: 'cilium', list: 'bpf-lb-list' }),
};

export interface CiliumSettings extends CiliumExpectOptions {
  /** bpf-lb-sock: Services translated at the socket (connect/sendmsg). */
  socketLB: boolean;
  /** bpf-lb-sock-hostns-only: the socket hook for the host's processes only. */
  hostnsOnly: boolean;
  /** bpf-lb-algorithm: random or maglev. */
  algorithm: string;
  /** bpf-lb-mode: snat, dsr or hybrid. */
  forwarding: string;
  /** bpf-lb-mode-annotation: a Service's service.cilium.io/forwarding-mode is honoured. */
  forwardingAnnotation: boolean;
  /** bpf-lb-algorithm-annotation: a Service's service.cilium.io/lb-algorithm is honoured. */
  algorithmAnnotation: boolean;
  /** That annotation read lower-cased, as 1.17's ParseService does; from 1.18
   * GetLBAlgorithmAnnotation takes it as written ("Maglev" selects neither algorithm). */
  algorithmLowered: boolean;
  /** enable-session-affinity (off by default through 1.17, on in 1.18, always on from 1.19):
   * off, a ClientIP Service's entries keep their flag, but the datapath keeps no client on a
   * backend and the agent writes no affinity map (nor, from 1.18, a timeout). */
  sessionAffinity: boolean;
  /** enable-svc-source-range-check as the agent holds it (on by default, off without NodePort;
   * always on from 1.19): off, the agent writes no source-range map and the datapath checks no
   * client's source. */
  sourceRangeCheck: boolean;
  /** The 'check source-range' flag only where the agent checks (1.17's checkLBSourceRange); from
   * 1.18 the reconciler sets it whatever that option says (GetSourceRangesEnabled). */
  sourceRangeFlagChecked: boolean;
  /** bpf-lb-external-clusterip: ClusterIPs reachable from outside the cluster. */
  externalClusterIP: boolean;
  /** service-no-backend-response (1.15+): reject or drop. */
  noBackend: 'reject' | 'drop';
  /** A VIP's wildcard entry (port 0, protocol ANY, no backends) in the service map, dropping
   * traffic to its ports no Service uses (1.19 on; 1.20's bpf-lb-enable-wildcard-entries). */
  wildcardEntries: boolean;
  /** Without kube-proxy replacement only the ClusterIP, LocalRedirect and ExternalIPs frontends
   * reach the BPF maps (the reconciler's isDatapathCandidate, 1.19.7 and 1.20 on). */
  datapathCandidates: boolean;
  /** A VIP on one of the node's addresses gets no wildcard entry (the reconciler's isLocalAddr,
   * 1.19.5 on; 1.19.0 to 1.19.4 write one for it too). */
  wildcardSkipsNodeAddress: boolean;
  /** bpf-lb-mode hybrid is DSR for TCP and SNAT for the rest, and a forwarding-mode annotation
   * 'hybrid' is SNAT (ToSVCForwardingMode, 1.18.5 on); before, no entry of theirs says dsr. */
  hybridForwarding: boolean;
  /** default-lb-service-ipam: "lbipam" (the default) means Cilium's LB-IPAM gives the
   * LoadBalancer IPs of Services without a loadBalancerClass. */
  lbServiceIPAM: string;
  /** The settings above that only a cilium-config its release refuses gave (CiliumAgent.refused):
   * the agent runs, if it does, on an earlier configuration kdebug did not read, so their values
   * here decide nothing. Empty where the agent takes cilium-config as read. */
  notKnown: readonly ConfigOnlySetting[];
}

/** The settings Service load balancing takes from cilium-config alone: neither the agent's status
 * (read only where it started, so never beside a refusal) nor its release says them. */
const CONFIG_ONLY = [
  'kubeProxyReplacement',
  'socketLB',
  'hostnsOnly',
  'forwarding',
  'algorithm',
  'externalClusterIP',
  'noBackend',
  'healthCheckNodePort',
  'healthCheckLoadBalancerIP',
  'nodePortRange',
  // the release's own types are guarded whatever it says; bpf-lb-source-range-all-types'
  // others not known
  'sourceRangeTypes',
  'sessionAffinity',
  'sourceRangeCheck',
  // the families, service topology and the annotations honoured: nothing else says them
  'ipv4',
  'ipv6',
  'serviceTopology',
  'forwardingAnnotation',
  'algorithmAnnotation',
  // k8s-service-proxy-name: which Services the agent handles at all
  'serviceProxyName',
  // default-lb-service-ipam: whether a Service without a loadBalancerClass gets wildcard entries
  'lbServiceIPAM',
  // bpf-lb-enable-wildcard-entries (1.20 on; before, nothing sets it)
  'wildcardEntries',
] as const;
export type ConfigOnlySetting = (typeof CONFIG_ONLY)[number];
/** From 1.19 the release keeps both on, whatever its configuration says. */
const KEPT_ON_FROM_1_19: readonly ConfigOnlySetting[] = ['sessionAffinity', 'sourceRangeCheck'];

/** Whether `o` (the agent's settings, or options made of them) knows setting `s`. */
export const knows = (o: { notKnown?: readonly ConfigOnlySetting[] }, s: ConfigOnlySetting) =>
  !o.notKnown?.includes(s);

export interface CiliumAgent {
  /** Its Pod; absent where the API holds none and the agent is known only from its status
   * recorded on the node (recordedAgentOn). */
  pod?: Pod;
  /** The node it runs on. */
  node: string;
  container: string;
  /** Replaces kube-proxy on the node: kube-proxy-replacement on and no kube-proxy there. */
  replacesKubeProxy: boolean;
  settings: CiliumSettings;
  /** Where each setting an output states was read: its status line, cilium-config's key, its
   * release, or not read (an older status prints fewer lines; a setting none gives is a default). */
  sources: SettingSources;
  /** cilium-config was read: the settings only it holds (the annotations honoured) are known. */
  configRead: boolean;
  /** The ConfigMap read, "kube-system/cilium-config". */
  configMap?: string;
  /** The agent's release as its status or its image tag says it ("v1.18.0-rc.1"). */
  version?: string;
  /** That release's numbers, parsed once: what the callers compare. */
  release?: Version;
  /** Its native devices and NodePort addresses, with their own source; undefined where neither
   * its status nor cilium-config names them. */
  nodePorts?: CiliumNodePorts;
  /** The Pod ranges its IPAM allocates from on its node, as its status says them (observed). */
  podCIDRs?: string[];
  /** Its status's health lines not Ok ("Cilium: Failure ...", "Kubernetes: Disabled"). */
  unhealthy?: string[];
  /** Its readiness as its Pod was read: the agent container's status, else the Pod's Ready
   * condition, with the line that says it; undefined where neither was read. */
  readiness?: { ready: boolean; said: string };
  /** How much of Service load balancing it does, where its status said a replacement short of
   * full (Partial, Probe): the kinds it handles and those it leaves to kube-proxy. */
  replacement?: PartialReplacement;
  /** Why its release does not start with cilium-config as read (lbConfigRefused), where it is not
   * known to have started (no status answered, not ready or its readiness not read); one it listed
   * anyway ran on an earlier configuration. */
  refused?: string;
}

/** A kube-proxy replacement short of full (Cilium 1.14's daemon/cmd/kube_proxy_replacement.go:
 * "partial", and before 1.13 "probe", keep each of enable-node-port, enable-host-port as set and
 * auto-enable nothing): the agent handles the ClusterIP (its status always lists it enabled: its
 * Pods' traffic, at the socket or their device) and the kinds its status's Services list enables;
 * the others are left to kube-proxy, where one runs. */
export interface PartialReplacement {
  /** As its status printed it ("Partial", "Probe"), or cilium-config sets it ("partial", "false"). */
  mode: string;
  /** The kinds it handles and leaves, as its status's "Services:" list says them, or cilium-config's
   * keys (config-replacement.ts); undefined where the status printed no such list (not --verbose)
   * or the kernel's probes decide them (cilium-config's "probe"). */
  handles?: ServiceKind[];
  leaves?: ServiceKind[];
  /** Where that was read: the agent's status, or cilium-config's keys (its release's defaults
   * where it sets none of them). */
  from: 'status' | 'cilium-config';
  source: string;
}

/** Whether the agent does a full kube-proxy replacement, as read (not refused, not partial): its
 * socket LB (forced on: 1.20's kpr.NewKPRConfig) and its programs at the devices take every
 * packet to a frontend it holds before netfilter, so kube-proxy's rules beside it see only what
 * it passes. */
export const fullReplacement = (a: CiliumAgent) =>
  a.replacesKubeProxy &&
  a.replacement === undefined &&
  a.refused === undefined &&
  knows(a.settings, 'kubeProxyReplacement');

/** An agent whose Pod the API holds: the one a node's state carries. */
export type AgentPod = CiliumAgent & { pod: Pod };

export const hasPod = (a: CiliumAgent): a is AgentPod => a.pod !== undefined;

/** The agent as outputs name it: "agent kube-system/cilium-x", or, its Pod absent from the API,
 * "the agent recorded on node-b (no Pod of it in the API)". */
export const agentName = (a: Pick<CiliumAgent, 'pod' | 'node'>) =>
  a.pod
    ? `agent ${a.pod.namespace}/${a.pod.name}`
    : `the agent recorded on ${a.node} (no Pod of it in the API)`;

/** The namespace Cilium's agents run in, the only one kdebug reads them (and cilium-config)
 * from: Helm's and the cilium CLI's default, GKE's anetd's. */
export const CILIUM_NAMESPACE = 'kube-system';

/** The agent's Pod: a Pod of a DaemonSet in kube-system carrying the cilium DaemonSet's label
 * (k8s-app=cilium; GKE's anetd carries it too). The label alone says nothing: any tenant can
 * put it on a Pod of its own namespace, or on a bare Pod, which kdebug would then exec its
 * listings in and believe. */
export const isCiliumAgentPod = (p: Pod) =>
  p.namespace === CILIUM_NAMESPACE &&
  p.ownerKind === 'DaemonSet' &&
  (p.labels['k8s-app'] === 'cilium' || p.labels['app.kubernetes.io/name'] === 'cilium-agent');

/** Cilium's own DaemonSets (the cilium chart's, GKE's anetd). */
const AGENT_DAEMONSETS = ['cilium', 'anetd'];

/** Orders a node's agent Pods, the one to read first: of Cilium's own DaemonSet, not being
 * deleted, Running, then by name (deterministic whatever order the API listed them in). */
export function byAgentPreference(a: Pod, b: Pod): number {
  const rank = (p: Pod) =>
    (AGENT_DAEMONSETS.includes(p.ownerName ?? '') ? 0 : 4) +
    (p.deleting ? 2 : 0) +
    (p.phase === 'Running' ? 0 : 1);
  return rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The agent Pod read on `node` among `pods` (byAgentPreference), and the other candidates
 * there, ignored. */
export function ciliumAgentPodOn(
  pods: readonly Pod[],
  node: string,
): { pod: Pod; ignored: Pod[] } | undefined {
  const on = pods.filter((p) => p.nodeName === node && isCiliumAgentPod(p)).sort(byAgentPreference);
  return on.length > 0 ? { pod: on[0]!, ignored: on.slice(1) } : undefined;
}

/** A boolean option as the agent reads it: strconv.ParseBool's true spellings are true, any other
 * value false (1.17's cast.ToBool; 1.18's config decode takes "" as false and stops at start on a
 * value that is no boolean), `unset` where cilium-config lacks it. */
const goBool = (v: string | undefined, unset: boolean) =>
  v === undefined ? unset : ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);

/** "true", "strict" (before 1.14) replace kube-proxy; "partial", "false", "disabled" do not. */
export const replaces = (v: string | undefined) => v === 'true' || v === 'strict';

/** Cilium's ConfigMap: kube-system's, where its agents run (one a tenant names so is not it). */
export const ciliumConfig = (view: Pick<ClusterView, 'configMaps'>) =>
  view.configMaps.find((c) => c.name === 'cilium-config' && c.namespace === CILIUM_NAMESPACE);

/** The agent whose Pod is `pod` (none: no agent on that node), with its `status` answer. */
export function ciliumAgentOn(
  view: ClusterView,
  pod: Pod | undefined,
  status: string | undefined,
): AgentPod | undefined {
  if (!pod) return undefined;
  return { ...agentOn(view, pod.nodeName ?? '', pod, status), pod };
}

/** The agent on `node` known only from the `status` recorded there, where the API holds no Pod
 * of it: its settings as that status and cilium-config say them, no readiness, no refusal (its
 * status answered, so it started). Undefined without a status. */
export function recordedAgentOn(
  view: ClusterView,
  node: string,
  status: string | undefined,
): CiliumAgent | undefined {
  return status === undefined ? undefined : agentOn(view, node, undefined, status);
}

function agentOn(
  view: ClusterView,
  node: string,
  pod: Pod | undefined,
  status: string | undefined,
): CiliumAgent {
  const configMap = ciliumConfig(view);
  const config = configMap?.data;
  const said = status ? fromStatus(status) : undefined;
  // the agent reads each key's value trimmed (ReadDirConfig's bytes.TrimSpace)
  const c = (k: string) => config?.[k]?.trim();
  const version = said?.version ?? (pod ? ciliumImageVersion(pod) : undefined);
  const release = parseVersion(version);
  // a value its release refuses replaces nothing known: refused below, else not known
  const kpr =
    said?.kubeProxyReplacement ??
    (config ? (replacesIn(c('kube-proxy-replacement'), release) ?? false) : false);
  const byRelease = releaseBehaviour(release);
  const container =
    pod?.containers.find((x) => x.name === 'cilium-agent')?.name ??
    pod?.containers[0]?.name ??
    'cilium-agent';
  const readiness = pod ? readinessOf(pod, container) : undefined;
  // an agent whose status answered, or whose container is ready, started: on another
  // configuration than this one, perhaps, so nothing is said refused; nor where its release is
  // unknown (the releases differ on it)
  const started = said !== undefined || readiness?.ready === true;
  const kprUnread =
    !said && config !== undefined && replacesIn(c('kube-proxy-replacement'), release) === undefined;
  const refused =
    config && !started && release !== undefined
      ? (lbConfigRefused(c, release) ?? kprRefused(c('kube-proxy-replacement'), release))
      : undefined;
  const settings: CiliumSettings = {
    kubeProxyReplacement: kpr,
    ipv4: c('enable-ipv4') !== 'false',
    ipv6: c('enable-ipv6') === 'true',
    internalTrafficPolicy: true,
    serviceTopology: c('enable-service-topology') === 'true',
    zoneHintsFallback: true,
    serviceProxyName: c('k8s-service-proxy-name') ?? '',
    sourceRangeTypes:
      c('bpf-lb-source-range-all-types') === 'true' && !refused
        ? 'all'
        : byRelease.sourceRangeTypes,
    healthCheckNodePort: c('enable-health-check-nodeport') !== 'false',
    healthCheckLoadBalancerIP: c('enable-health-check-loadbalancer-ip') === 'true',
    nodePortRange:
      said?.nodePortRange ??
      parseNodePortRange(c('node-port-range') ?? '') ??
      DEFAULT_NODE_PORT_RANGE,
    nodePortConflicts: byRelease.nodePortConflicts,
    trafficDistributions: byRelease.trafficDistributions,
    topologyCandidates: byRelease.topologyCandidates,
    // a hidden option of 1.20 (bpf-lb-enable-wildcard-entries, on by default), read as a boolean
    // (1.19 has no such option: its key decides nothing)
    wildcardEntries:
      byRelease.wildcardEntries &&
      (!byRelease.wildcardOption || goBool(c('bpf-lb-enable-wildcard-entries'), true)),
    sliceWeights: byRelease.sliceWeights,
    nonKprFrontends: byRelease.nonKprFrontends,
    datapathCandidates: byRelease.datapathCandidates,
    wildcardSkipsNodeAddress: byRelease.wildcardSkipsNodeAddress,
    hybridForwarding: byRelease.hybridForwarding,
    ingressDummyBackend: byRelease.ingressDummyBackend,
    trimmedSourceRanges: byRelease.trimmedSourceRanges,
    nodeSelectorIgnored: byRelease.nodeSelectorIgnored,
    strictSelectorCommas: byRelease.strictSelectorCommas,
    ipModeIgnored: byRelease.ipModeIgnored,
    servingEndpointsOnly: byRelease.servingEndpointsOnly,
    deducedIPv6AsIPv4: byRelease.deducedIPv6AsIPv4,
    hostPortLastProtocol: byRelease.hostPortLastProtocol,
    lbServiceIPAM: c('default-lb-service-ipam') ?? 'lbipam',
    socketLB:
      said?.socketLB ?? (c('bpf-lb-sock') === 'true' || (kpr && c('bpf-lb-sock') !== 'false')),
    hostnsOnly: said?.hostnsOnly ?? c('bpf-lb-sock-hostns-only') === 'true',
    algorithm: said?.algorithm ?? lbSetting(c, 'bpf-lb-algorithm', release) ?? 'random',
    forwarding: said?.forwarding ?? lbSetting(c, 'bpf-lb-mode', release) ?? 'snat',
    forwardingAnnotation: c('bpf-lb-mode-annotation') === 'true',
    algorithmAnnotation: c('bpf-lb-algorithm-annotation') === 'true',
    algorithmLowered: byRelease.algorithmLowered,
    sessionAffinity:
      said?.sessionAffinity ??
      // kube-proxy replacement turns it on whatever the option says (1.18's kpr.NewKPRConfig,
      // 1.17's initKubeProxyReplacementOptions)
      (byRelease.kprOptionsGone ||
        kpr ||
        goBool(c('enable-session-affinity'), byRelease.sessionAffinityDefault)),
    // on by default, but off without NodePort, which kube-proxy replacement or enable-node-port
    // turns on (1.17's finishKubeProxyReplacementInit, 1.18's kpr.NewKPRConfig)
    sourceRangeCheck:
      byRelease.kprOptionsGone ||
      (goBool(c('enable-svc-source-range-check'), true) &&
        (kpr || goBool(c('enable-node-port'), false))),
    sourceRangeFlagChecked: byRelease.sourceRangeFlagChecked,
    externalClusterIP: c('bpf-lb-external-clusterip') === 'true',
    noBackend: c('service-no-backend-response') === 'drop' ? 'drop' : 'reject',
    // refused, nothing said them (a status is read only where the agent started)
    notKnown: refused
      ? CONFIG_ONLY.filter(
          (s) =>
            (!byRelease.kprOptionsGone || !KEPT_ON_FROM_1_19.includes(s)) &&
            // before 1.20 the release alone says whether it writes wildcard entries
            (s !== 'wildcardEntries' || byRelease.wildcardOption),
        )
      : // started on another configuration, with a value this one refuses: not known either
        kprUnread
        ? ['kubeProxyReplacement']
        : [],
  };
  const sources = settingSources({
    ...(said ? { fields: said.fields } : {}),
    config: c,
    release,
    kpr,
    notKnown: settings.notKnown,
  });
  // refused, the devices cilium-config names are not the ones the agent runs with
  const nodePorts = nodePortsOf(view, { node, pod }, status, refused ? undefined : configMap);
  // no status saying it: cilium-config's value and keys as the release reads them (not one it
  // refuses: the agent then runs, if it does, on another configuration)
  const replacement =
    partialOf(said, `the status of ${agentName({ node, ...(pod ? { pod } : {}) })}`) ??
    (said?.replacementMode === undefined && configMap && !refused
      ? fromConfig(configPartial(c, release), configMap.namespace, release)
      : undefined);
  if (replacement?.handles) {
    // the kinds it handles are the frontends it makes (1.14's k8s.ParseService)
    settings.nodePort = replacement.handles.includes('NodePort');
    settings.hostPort = replacement.handles.includes('HostPort');
  }
  return {
    ...(pod ? { pod } : {}),
    node,
    container,
    replacesKubeProxy: kpr,
    settings,
    sources,
    configRead: configMap !== undefined,
    ...(configMap ? { configMap: `${configMap.namespace}/cilium-config` } : {}),
    ...(version ? { version } : {}),
    ...(release ? { release } : {}),
    ...(nodePorts ? { nodePorts } : {}),
    ...(said?.podCIDRs ? { podCIDRs: said.podCIDRs } : {}),
    ...(said?.unhealthy ? { unhealthy: said.unhealthy } : {}),
    ...(readiness ? { readiness } : {}),
    ...(replacement ? { replacement } : {}),
    ...(refused ? { refused } : {}),
  };
}

/** The replacement its status says is partial (Partial, Probe, or False with NodePort or
 * HostPort listed enabled), with the kinds it lists. */
function partialOf(
  said: ReturnType<typeof fromStatus> | undefined,
  source: string,
): PartialReplacement | undefined {
  const mode = said?.replacementMode;
  if (!mode || !/^(partial|probe|false)$/i.test(mode)) return undefined;
  const listed = said.services;
  // "False" keeps enable-node-port and enable-host-port as set from 1.14 to 1.18, as "Partial"
  // does: a replacement only where its list enables one of them (else the ClusterIP alone)
  if (/^false$/i.test(mode) && !listed?.NodePort && !listed?.HostPort) return undefined;
  if (!listed) return { mode, from: 'status', source };
  // the ClusterIP is always its own (the status prints it Enabled unconditionally)
  const handles = SERVICE_KINDS.filter(
    (k) => k === 'ClusterIP' || listed[k as ServiceKind] === true,
  ) as ServiceKind[];
  const leaves = SERVICE_KINDS.filter((k) => !handles.includes(k as ServiceKind)) as ServiceKind[];
  return { mode, handles, leaves, from: 'status', source };
}

/** cilium-config's partial replacement (configPartial) with its source: the keys that set it, or
 * the release's defaults where it sets none. */
function fromConfig(
  p: ConfigPartial | undefined,
  namespace: string,
  release: Version | undefined,
): PartialReplacement | undefined {
  if (!p) return undefined;
  const source =
    p.keys.length > 0
      ? `ConfigMap ${namespace}/cilium-config ${p.keys.join(' and ')}`
      : `Cilium ${release?.major}.${release?.minor}'s defaults (ConfigMap ${namespace}/cilium-config sets none of its keys)`;
  const kinds = p.handles ? { handles: p.handles, leaves: p.leaves! } : {};
  return { mode: p.value, ...kinds, from: 'cilium-config', source };
}

/** The partial replacement in words: "partial kube-proxy replacement (Partial): Cilium handles
 * ClusterIP, NodePort; leaves HostPort to kube-proxy". */
export function partialText(r: PartialReplacement): string {
  if (!r.handles)
    return r.from === 'status'
      ? `partial kube-proxy replacement (${r.mode}), the kinds it handles not listed (a status without --verbose)`
      : `partial kube-proxy replacement (${r.mode}), the kinds it handles not known (the kernel's probes at the agent's start decide them)`;
  return `partial kube-proxy replacement (${r.mode}): Cilium handles ${r.handles.join(', ')}${r.leaves!.length > 0 ? `; leaves ${r.leaves!.join(', ')} to kube-proxy` : ''}`;
}

/** The agent container's readiness as its status says it, else the Pod's Ready condition; undefined
 * where neither was read (a Pod without statuses, or a condition Unknown). */
function readinessOf(pod: Pod, container: string): CiliumAgent['readiness'] {
  const where = `Pod ${pod.namespace}/${pod.name}`;
  const status = pod.containerStatuses.find((s) => s.name === container);
  if (status) {
    const { kind, reason } = status.state;
    return {
      ready: status.ready,
      said: `${where}: container ${container} ${status.ready ? 'ready' : 'not ready'} (${kind}${reason ? `: ${reason}` : ''})`,
    };
  }
  const condition = pod.conditions.find((x) => x.type === 'Ready' && x.status !== 'Unknown');
  if (!condition) return undefined;
  return {
    ready: condition.status === 'True',
    said: `${where}: condition Ready ${condition.status}${condition.reason ? ` (${condition.reason})` : ''}`,
  };
}

/** The devices the agent's status lists (observed), the NodePort addresses on them as it
 * listed or picks them; else the devices cilium-config names (read), their addresses unknown. */
function nodePortsOf(
  view: ClusterView,
  { node, pod }: { node: string; pod: Pod | undefined },
  status: string | undefined,
  configMap: { namespace: string; data: Record<string, string> } | undefined,
): CiliumNodePorts | undefined {
  const cidrs = nodePortCIDRs(configMap?.data);
  const listed = status ? statusDevices(status) : undefined;
  if (listed) {
    const nodeIPs = view.nodes.find((n) => n.name === node)?.ips ?? [];
    // the oldest status format names the devices only
    const addressed = listed.some((d) => d.addresses.length > 0);
    return {
      devices: listed.map(({ allAddresses: _a, ...d }) => d),
      ...(addressed ? { addresses: pickNodePortAddresses(listed, { cidrs, nodeIPs }) } : {}),
      cidrs,
      from: 'status',
      source: `the status of ${agentName({ node, ...(pod ? { pod } : {}) })}`,
    };
  }
  const devices = configMap ? configDevices(configMap.data) : [];
  if (devices.length === 0 && cidrs.length === 0) return undefined;
  return {
    devices,
    cidrs,
    from: 'cilium-config',
    source: `ConfigMap ${configMap!.namespace}/cilium-config`,
  };
}

/** The agent's own binary where its release is known to predate cilium-dbg (1.15). */
export const oldAgentBinary = (agent: CiliumAgent | undefined): 'cilium' | undefined =>
  agent?.release && !atLeast(agent.release, [1, 15]) ? 'cilium' : undefined;

/** The release its image tag names ("quay.io/cilium/cilium:v1.16.5@sha256:..." is v1.16.5). */
export function ciliumImageVersion(pod: Pod): string | undefined {
  const images = (
    pod.raw['spec'] as { containers?: { name?: string; image?: string }[] } | undefined
  )?.containers;
  const image = (images?.find((x) => x.name === 'cilium-agent') ?? images?.[0])?.image ?? '';
  const tag = image.split('@')[0]!.split(':').pop();
  // a tag without its patch (v1.18) names no one release: 1.18.5 and 1.18.6 differ
  return parseVersion(tag)?.patch !== undefined ? tag : undefined;
}
