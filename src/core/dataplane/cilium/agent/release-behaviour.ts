// What each Cilium release fixes of load balancing that no option sets (or whose option's default
// it sets), row by row, as Cilium's pkg/loadbalancer at each tag does.
import { atLeast, type Version } from '../../../version.js';
import type { CiliumSettings } from './agent.js';

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
export function releaseBehaviour(release: Version | undefined): Pick<
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
> & {
  nodePortKeys: boolean;
  kprOptionsGone: boolean;
  sessionAffinityDefault: boolean;
  wildcardOption: boolean;
} {
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
    // 1.20: bpf-lb-enable-wildcard-entries (hidden, on by default) can turn them off
    wildcardOption: since(release, [1, 20]),
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
