// The Cilium agent on a node: its Pod, its release, and the settings Service load balancing
// depends on, from what the agent itself said (`cilium-dbg status --verbose`) first, else from
// its ConfigMap (cilium-config), else Cilium's defaults, each said with its source.
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
}

export interface CiliumAgent {
  pod: Pod;
  container: string;
  /** Replaces kube-proxy on the node: kube-proxy-replacement on and no kube-proxy there. */
  replacesKubeProxy: boolean;
  settings: CiliumSettings;
  /** Where the settings come from: the agent's status (observed), cilium-config (read from the
   * API), or Cilium's defaults (assumed). */
  from: 'status' | 'cilium-config' | 'default';
  source: string;
  /** cilium-config was read: the settings only it holds (the annotations honoured) are known. */
  configRead: boolean;
  /** The agent's release as its status or its image tag says it ("v1.18.0-rc.1"). */
  version?: string;
  /** That release's numbers, parsed once: what the callers compare. */
  release?: Version;
  /** Its native devices and NodePort addresses, with their own source; undefined where neither
   * its status nor cilium-config names them. */
  nodePorts?: CiliumNodePorts;
  /** Its readiness as its Pod was read: the agent container's status, else the Pod's Ready
   * condition, with the line that says it; undefined where neither was read. */
  readiness?: { ready: boolean; said: string };
  /** Why its release does not start with cilium-config as read (lbConfigRefused), where it is not
   * known to have started (no status answered, not ready or its readiness not read); one it listed
   * anyway ran on an earlier configuration. */
  refused?: string;
}

/** The agent's Pod: the cilium DaemonSet's (k8s-app=cilium; GKE's anetd carries it too). */
export const isCiliumAgentPod = (p: Pod) =>
  p.labels['k8s-app'] === 'cilium' || p.labels['app.kubernetes.io/name'] === 'cilium-agent';

/** A boolean option as the agent reads it: strconv.ParseBool's true spellings are true, any other
 * value false (1.17's cast.ToBool; 1.18's config decode takes "" as false and stops at start on a
 * value that is no boolean), `unset` where cilium-config lacks it. */
const goBool = (v: string | undefined, unset: boolean) =>
  v === undefined ? unset : ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);

/** "true", "strict" (before 1.14) replace kube-proxy; "partial", "false", "disabled" do not. */
const replaces = (v: string | undefined) => v === 'true' || v === 'strict';

/** The agent whose Pod is `pod` (none: no agent on that node), with its `status` answer. */
export function ciliumAgentOn(
  view: ClusterView,
  pod: Pod | undefined,
  status: string | undefined,
): CiliumAgent | undefined {
  if (!pod) return undefined;
  const configMap = view.configMaps.find((c) => c.name === 'cilium-config');
  const config = configMap?.data;
  const said = status ? fromStatus(status) : undefined;
  // the agent reads each key's value trimmed (ReadDirConfig's bytes.TrimSpace)
  const c = (k: string) => config?.[k]?.trim();
  const kpr =
    said?.kubeProxyReplacement ?? (config ? replaces(c('kube-proxy-replacement')) : false);
  const version = said?.version ?? ciliumImageVersion(pod);
  const release = parseVersion(version);
  const byRelease = releaseBehaviour(release);
  const settings: CiliumSettings = {
    kubeProxyReplacement: kpr,
    ipv4: c('enable-ipv4') !== 'false',
    ipv6: c('enable-ipv6') === 'true',
    internalTrafficPolicy: true,
    serviceTopology: c('enable-service-topology') === 'true',
    zoneHintsFallback: true,
    serviceProxyName: c('k8s-service-proxy-name') ?? '',
    sourceRangeTypes:
      c('bpf-lb-source-range-all-types') === 'true' ? 'all' : byRelease.sourceRangeTypes,
    healthCheckNodePort: c('enable-health-check-nodeport') !== 'false',
    healthCheckLoadBalancerIP: c('enable-health-check-loadbalancer-ip') === 'true',
    nodePortRange:
      said?.nodePortRange ??
      parseNodePortRange(c('node-port-range') ?? '') ??
      DEFAULT_NODE_PORT_RANGE,
    nodePortConflicts: byRelease.nodePortConflicts,
    trafficDistributions: byRelease.trafficDistributions,
    topologyCandidates: byRelease.topologyCandidates,
    // a hidden option of 1.20 (bpf-lb-enable-wildcard-entries, on by default)
    wildcardEntries: byRelease.wildcardEntries && c('bpf-lb-enable-wildcard-entries') !== 'false',
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
  };
  const container =
    pod.containers.find((x) => x.name === 'cilium-agent')?.name ??
    pod.containers[0]?.name ??
    'cilium-agent';
  const readiness = readinessOf(pod, container);
  // an agent whose status answered, or whose container is ready, started: on another
  // configuration than this one, perhaps, so nothing is said refused; nor where its release is
  // unknown (the releases differ on it)
  const started = said !== undefined || readiness?.ready === true;
  const refused =
    config && !started && release !== undefined ? lbConfigRefused(c, release) : undefined;
  const from = said ? 'status' : config ? 'cilium-config' : 'default';
  const nodePorts = nodePortsOf(view, pod, status, configMap);
  return {
    pod,
    container,
    replacesKubeProxy: kpr,
    settings,
    from,
    configRead: configMap !== undefined,
    source:
      from === 'status'
        ? `the status of agent ${pod.namespace}/${pod.name}`
        : from === 'cilium-config'
          ? `ConfigMap ${configMap!.namespace}/cilium-config`
          : "Cilium's defaults",
    ...(version ? { version } : {}),
    ...(release ? { release } : {}),
    ...(nodePorts ? { nodePorts } : {}),
    ...(readiness ? { readiness } : {}),
    ...(refused ? { refused } : {}),
  };
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
  pod: Pod,
  status: string | undefined,
  configMap: { namespace: string; data: Record<string, string> } | undefined,
): CiliumNodePorts | undefined {
  const cidrs = nodePortCIDRs(configMap?.data);
  const listed = status ? statusDevices(status) : undefined;
  if (listed) {
    const nodeIPs = view.nodes.find((n) => n.name === pod.nodeName)?.ips ?? [];
    // the oldest status format names the devices only
    const addressed = listed.some((d) => d.addresses.length > 0);
    return {
      devices: listed.map(({ allAddresses: _a, ...d }) => d),
      ...(addressed ? { addresses: pickNodePortAddresses(listed, { cidrs, nodeIPs }) } : {}),
      cidrs,
      from: 'status',
      source: `the status of agent ${pod.namespace}/${pod.name}`,
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

/** Which BPF map entry flags and tables the agent's release and its settings as read (not
 * assumed) let drift compare with what kdebug expects. */
export interface KnownMapFlags {
  /** dsr: the forwarding mode and its annotation were read, in a cilium-config the agent takes
   * (not refused), and the release writes the flag (1.17 on; for hybrid only from 1.18.5, before
   * which hybrid wrote none). */
  forwarding: boolean;
  /** LBALG and the Maglev table: the algorithm and its annotation were read, not refused. */
  algorithm: boolean;
  /** deny: the release honours the source-range policy annotation (1.17 on). */
  sourceRangeDeny: boolean;
  /** The traffic-policy, affinity and source-range flags as kdebug models them (1.18 on: 1.17's
   * default control plane writes Local on fewer types, and heeds other settings). */
  flags: boolean;
  /** Which frontend types source ranges guard: bpf-lb-source-range-all-types was read. */
  sourceRangeTypes: boolean;
}

export function knownMapFlags(agent: CiliumAgent): KnownMapFlags {
  const since = (r: readonly [number, number, number?]) =>
    agent.release !== undefined && atLeast(agent.release, r);
  const hybrid = agent.settings.forwarding === 'hybrid';
  // a refused cilium-config is not the one the agent runs on, and its bpf-lb-mode and
  // bpf-lb-algorithm are among the keys it is refused on (lbConfigRefused)
  const runs = agent.configRead && !agent.refused;
  return {
    forwarding: runs && since([1, 17]) && (!hybrid || since([1, 18, 5])),
    algorithm: runs,
    sourceRangeDeny: since([1, 17]),
    flags: since([1, 18]),
    sourceRangeTypes: agent.configRead,
  };
}

/** Why the health server's frontends (expected/health-server.ts) are not compared on the agent's
 * node, or undefined where they are. */
export function healthServerUnknown(agent: CiliumAgent): string | undefined {
  const s = agent.settings;
  if (!agent.configRead)
    return 'cilium-config was not read, so whether enable-health-check-loadbalancer-ip is on (off by default) is not known';
  if (!agent.release)
    return "the agent's release is not known, and before 1.18 it made them otherwise";
  if (!atLeast(agent.release, [1, 18]))
    return `Cilium ${agent.version} makes them as releases before 1.18 do (ns/name-healthCheck, backed by the node's IP), which kdebug does not model`;
  const made = s.kubeProxyReplacement && s.healthCheckNodePort && s.healthCheckLoadBalancerIP;
  if (made && agent.nodePorts?.addresses === undefined)
    return "the agent's NodePort addresses were not read (its status), and each one's backend is the first of them";
  return undefined;
}

/** 1.18.0 to 1.18.5 checked loadBalancerSourceRanges on every frontend type (cilium#42351). */
const allTypesRelease = (r: Version | undefined) =>
  r !== undefined && atLeast(r, [1, 18]) && !atLeast(r, [1, 18, 6]);

/** A change made in `line` (1.20.0) and backported to `backport` (1.19.7): whether `r` has it. */
const since = (
  r: Version | undefined,
  line: readonly [number, number, number?],
  backport?: readonly [number, number, number],
) =>
  r !== undefined &&
  (atLeast(r, line) ||
    (backport !== undefined &&
      r.major === backport[0] &&
      r.minor === backport[1] &&
      atLeast(r, backport)));

/** What the agent's release fixes of the settings it has no option for (or whose option's
 * default it sets), as Cilium's pkg/loadbalancer at each tag does; an unknown release is taken
 * as the 1.18/1.19 behaviour. */
export function releaseBehaviour(
  release: Version | undefined,
): Pick<
  CiliumSettings,
  | 'sourceRangeTypes'
  | 'nodePortConflicts'
  | 'trafficDistributions'
  | 'topologyCandidates'
  | 'wildcardEntries'
  | 'sliceWeights'
  | 'nonKprFrontends'
  | 'datapathCandidates'
  | 'wildcardSkipsNodeAddress'
  | 'ingressDummyBackend'
  | 'hybridForwarding'
  | 'trimmedSourceRanges'
  | 'nodeSelectorIgnored'
  | 'strictSelectorCommas'
  | 'ipModeIgnored'
  | 'servingEndpointsOnly'
  | 'deducedIPv6AsIPv4'
  | 'hostPortLastProtocol'
  | 'algorithmLowered'
  | 'sourceRangeFlagChecked'
> & { nodePortKeys: boolean; kprOptionsGone: boolean; sessionAffinityDefault: boolean } {
  return {
    // 1.20 guards ExternalIPs too (cilium#44718)
    sourceRangeTypes: allTypesRelease(release)
      ? 'all'
      : since(release, [1, 20])
        ? ['LoadBalancer', 'ExternalIPs']
        : ['LoadBalancer'],
    // cilium#45314: 1.20.0, backported to 1.19.7 (1.19.6 and 1.18.10 have it not)
    nodePortConflicts: since(release, [1, 20], [1, 19, 7]),
    // 1.20: trafficDistribution PreferSameZone and PreferSameNode besides PreferClose
    trafficDistributions: since(release, [1, 20]) ? 'all' : 'prefer-close',
    // 1.20.0 and 1.20.1 leave terminating backends out of the topology safeguards, 1.20.2 all
    // but the active ones; before, every backend of the Service counted
    topologyCandidates: since(release, [1, 20, 2])
      ? 'active'
      : since(release, [1, 20])
        ? 'not-terminating'
        : 'every',
    // 1.19: a VIP's wildcard entry (port 0, ANY) drops its ports no Service uses
    wildcardEntries: since(release, [1, 19]),
    // 1.19.5: none for a VIP on the node's own addresses (updateFrontend's isLocalAddr)
    wildcardSkipsNodeAddress: since(release, [1, 19, 5]),
    // 1.18.5: ToSVCForwardingMode knows hybrid, as bpf-lb-mode and as the annotation's value
    // (cilium#43056)
    hybridForwarding: since(release, [1, 18, 5]),
    // 1.20: service.cilium.io/weight on an EndpointSlice, 0 draining its backends
    sliceWeights: since(release, [1, 20]),
    // kube-proxy replacement off: LoadBalancer and ExternalIPs frontends made (1.19 on), and
    // only the datapath candidates (ClusterIP, LocalRedirect, ExternalIPs) reconciled (1.20.0
    // and 1.19.7)
    nonKprFrontends: since(release, [1, 19]),
    datapathCandidates: since(release, [1, 20], [1, 19, 7]),
    // 1.18's control plane drops the Ingress and Gateway API controllers' dummy endpoint
    // (reflectors/conversions.go, isIngressDummyEndpoint); through 1.17 it is a backend. An
    // unknown release is taken as 1.18 on
    ingressDummyBackend: release !== undefined && !atLeast(release, [1, 18]),
    // 1.17's control plane trims each loadBalancerSourceRanges value; 1.18's parses it as it is
    // (reflectors/conversions.go, netip.ParsePrefix) and ignores one padded with spaces
    trimmedSourceRanges: release !== undefined && !atLeast(release, [1, 18]),
    // 1.18: service.cilium.io/node-selector (CheckServiceNodeExposure); 1.17 knows none
    nodeSelectorIgnored: release !== undefined && !atLeast(release, [1, 18]),
    // 1.18 parses it with apimachinery v0.33, whose parseIdentifiersList takes the second comma
    // of ",," and then fails on ')'; 1.19's v0.35 no longer takes it
    strictSelectorCommas:
      release !== undefined && atLeast(release, [1, 18]) && !atLeast(release, [1, 19]),
    // 1.18.5 keeps a terminating endpoint that no longer serves, and one not ready in maintenance
    // (cilium#42708); before, ParseEndpointSliceV1 dropped every endpoint not serving
    servingEndpointsOnly: release !== undefined && !atLeast(release, [1, 18, 5]),
    // 1.18's getIPFamilies took a Service's IPv6 cluster IP for IPv4 where spec.ipFamilies is
    // empty; 1.19.5 and 1.20 fix it (cilium#46425)
    deducedIPv6AsIPv4:
      release !== undefined && atLeast(release, [1, 18]) && !since(release, [1, 20], [1, 19, 5]),
    // 1.18.0 to 1.18.2 upserted a host port's Service per container port, each replacing the
    // frontends of the one before (UpsertServiceAndFrontends); 1.18.3 gathers them (cilium#41521)
    hostPortLastProtocol:
      release !== undefined && atLeast(release, [1, 18]) && !atLeast(release, [1, 18, 3]),
    // an ingress IP's ipMode (KEP-1860) is heeded from 1.17 (cilium#34780); 1.18.0's control
    // plane lost it, 1.18.1 has it back (cilium#40913)
    ipModeIgnored:
      release !== undefined &&
      (!atLeast(release, [1, 17]) || (atLeast(release, [1, 18]) && !atLeast(release, [1, 18, 1]))),
    // 1.17's pkg/k8s/service.go lower-cases service.cilium.io/lb-algorithm; 1.18's
    // GetLBAlgorithmAnnotation (pkg/loadbalancer/service.go) compares it as written
    algorithmLowered: release !== undefined && !atLeast(release, [1, 18]),
    // node-port-algorithm and node-port-mode, set, override bpf-lb-algorithm and bpf-lb-mode
    // through 1.19 (pkg/loadbalancer/config.go's deprecatedConfig); 1.20 has neither flag
    nodePortKeys: !since(release, [1, 20]),
    // 1.19 removed enable-session-affinity and enable-svc-source-range-check (pkg/kpr): a
    // Service's ClientIP affinity is always honoured, its source ranges always checked
    kprOptionsGone: since(release, [1, 19]),
    // 1.17's default control plane sets the check flag only with the check on (checkLBSourceRange)
    sourceRangeFlagChecked: release !== undefined && !atLeast(release, [1, 18]),
    // the option's default: off through 1.17 (daemon_main.go), on in 1.18 (pkg/kpr defaultFlags)
    sessionAffinityDefault: release === undefined || atLeast(release, [1, 18]),
  };
}

/** The deprecated key each of these took over from (through 1.19, which still reads it). */
const DEPRECATED_KEYS = {
  'bpf-lb-algorithm': 'node-port-algorithm',
  'bpf-lb-mode': 'node-port-mode',
};

/** bpf-lb-algorithm or bpf-lb-mode as the release reads its config: where it still reads the
 * deprecated key (nodePortKeys), that key, set, wins over the new one. */
export function lbSetting(
  config: (key: string) => string | undefined,
  key: keyof typeof DEPRECATED_KEYS,
  release: Version | undefined,
): string | undefined {
  const old = releaseBehaviour(release).nodePortKeys ? config(DEPRECATED_KEYS[key]) : undefined;
  // set means not empty, as the agent's check (!= "") has it
  return old || config(key);
}

/** Why the agent of `release` stops at start on cilium-config's bpf-lb-* and deprecated keys:
 * every release's populateLoadBalancerSettings log.Fatal's where both acceleration keys are set
 * and differ; 1.17's log.Fatalf's where both of a pair are set and differ; 1.18
 * and 1.19's loadbalancer.NewConfig fails where node-port-mode is set and bpf-lb-mode is not the
 * default snat (node-port-algorithm just wins); 1.20 reads neither deprecated key. */
export function lbConfigRefused(
  config: (key: string) => string | undefined,
  release: Version | undefined,
): string | undefined {
  // every release: populateLoadBalancerSettings stops where both acceleration keys differ
  const accel = config('bpf-lb-acceleration');
  const oldAccel = config('node-port-acceleration');
  if (accel !== undefined && oldAccel !== undefined && accel !== oldAccel)
    return 'cilium-config sets both bpf-lb-acceleration and node-port-acceleration, to different values: the agent stops at start (log.Fatal "Both --bpf-lb-acceleration and --node-port-acceleration were set")';
  if (!releaseBehaviour(release).nodePortKeys) return undefined;
  // the keys named, never their values: a value is the ConfigMap's text, of any form
  const both = (key: keyof typeof DEPRECATED_KEYS) =>
    `cilium-config sets both ${key} and ${DEPRECATED_KEYS[key]}`;
  if (release !== undefined && !atLeast(release, [1, 18])) {
    const key = (['bpf-lb-mode', 'bpf-lb-algorithm'] as const).find(
      (k) =>
        config(k) !== undefined &&
        config(DEPRECATED_KEYS[k]) !== undefined &&
        config(k) !== config(DEPRECATED_KEYS[k]),
    );
    return (
      key &&
      `${both(key)}: the agent stops at start (log.Fatalf "Both --${key} and --${DEPRECATED_KEYS[key]} were set")`
    );
  }
  if (!config('node-port-mode') || (config('bpf-lb-mode') ?? 'snat') === 'snat') return undefined;
  return `${both('bpf-lb-mode')}: the agent does not start (its load-balancer config fails: "both --bpf-lb-mode and --node-port-mode were set")`;
}

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

type Said = Partial<
  Pick<
    CiliumSettings,
    | 'kubeProxyReplacement'
    | 'socketLB'
    | 'hostnsOnly'
    | 'algorithm'
    | 'forwarding'
    | 'sessionAffinity'
    | 'nodePortRange'
  >
> & {
  version?: string;
};

/** `cilium-dbg status --verbose`: "KubeProxyReplacement:  True  [eth0 ...]", then its details
 * ("Socket LB: Enabled", "Socket LB Coverage: Hostns-only", "Mode: SNAT", "Backend Selection:
 * Random", "Session Affinity: Enabled", "- NodePort: Enabled (Range: 30000-32767)");
 * "Cilium: Ok 1.16.5 (v1.16.5-...)". */
export function fromStatus(text: string): Said {
  const field = (name: string) => new RegExp(`^\\s*${name}:\\s+(.+?)\\s*$`, 'mi').exec(text)?.[1];
  const on = (v: string | undefined) =>
    v === undefined ? undefined : /^(true|enabled|strict)\b/i.test(v);
  const out: Said = {};
  // the details' own Status where the summary line is not in the text (a quote of the details)
  const kpr =
    field('KubeProxyReplacement') ??
    /^[ \t]*KubeProxyReplacement Details:[ \t]*\n[ \t]+Status:[ \t]+(\S+)/m.exec(text)?.[1];
  if (kpr !== undefined) out.kubeProxyReplacement = on(kpr)!;
  const sock = field('Socket LB');
  if (sock !== undefined) out.socketLB = on(sock)!;
  const coverage = field('Socket LB Coverage');
  if (coverage !== undefined) out.hostnsOnly = /hostns/i.test(coverage);
  const mode = field('Mode');
  if (mode) out.forwarding = mode.split(/\s/)[0]!.toLowerCase();
  const selection = field('Backend Selection');
  if (selection) out.algorithm = selection.split(/\s/)[0]!.toLowerCase();
  const affinity = field('Session Affinity');
  if (affinity !== undefined) out.sessionAffinity = on(affinity)!;
  const range = /^\s*-?\s*NodePort:\s+Enabled \(Range: (\d+)-(\d+)\)/m.exec(text);
  if (range) out.nodePortRange = [Number(range[1]), Number(range[2])];
  const version = /^Cilium:\s+\S+\s+(\d+\.\d+\.\d+\S*)/m.exec(text)?.[1];
  if (version) out.version = `v${version.replace(/^v/, '')}`;
  return out;
}
