// The iptables-mode rules current kube-proxy (1.28 and later) writes on one node, computed from
// the API objects (pkg/proxy/iptables/proxier.go syncProxyRules): a model per Service port for the
// drift check, and the rules in iptables-save's canonical form for `kdebug expect`.
//
// Knobs kube-proxy reads from the node rather than from the objects are options (ExpectOptions);
// the ConfigMap gives clusterCIDR / detectLocalMode, masqueradeAll, masqueradeBit,
// localhostNodePorts and nodePortAddresses. One family at a time, as kube-proxy runs one proxier
// per family: IPv4 (iptables) by default, IPv6 (ip6tables) with `family`.
import { portEndpointCount } from './endpoints.js';
import {
  endpointSource,
  proxiedSlices,
  type EndpointSource,
  type EndpointsUnread,
} from './endpoint-source.js';
import {
  fixedRules,
  servicePortRules,
  type RuleLine,
  type ServiceRulesContext,
} from '../iptables/rule-text.js';
import { containsAny, familyOf, type IPFamily } from '../../ipv6.js';
import {
  kubeProxyConfigOf,
  type ClusterView,
  type EndpointSlice,
  type KubeProxyConfig,
  type Service,
} from '../../kube/objects.js';
import {
  modelledRelease,
  writes,
  type Release,
  type ReleaseDisagrees,
  type Shown,
} from './releases.js';
import {
  detectorOf,
  nodeOf,
  nodePortAddresses,
  type ExpectedNode,
  type LocalDetector,
} from './node.js';
import { servicePortsOf, type ExpectedServicePort, type SharedContext } from './service-port.js';

export type { RuleLine } from '../iptables/rule-text.js';
export { declaredChains, expectedSave } from '../iptables/save.js';

/** What kube-proxy learns from the node itself, not from the API objects. */
export interface ExpectOptions {
  /** Which proxier: IPv4 (iptables-save, the default) or IPv6 (ip6tables-save). */
  family?: IPFamily;
  /** The configuration kube-proxy runs with on the node (its /configz), over the objects'. */
  config?: KubeProxyConfig;
  /** MASQUERADE --random-fully: on whenever the iptables binary supports it (1.6.2+). Default true. */
  randomFully?: boolean;
  /** nfacct counters exist (kube-proxy 1.31+, nfnetlink_acct loaded): `-m nfacct` rules. Default false. */
  nfacct?: boolean;
  /** sysctl net.netfilter.nf_conntrack_tcp_be_liberal=1: no INVALID drop in KUBE-FORWARD. Default false. */
  conntrackTcpBeLiberal?: boolean;
  /** Overrides the ConfigMap's iptables.localhostNodePorts (default true). */
  localhostNodePorts?: boolean;
  /** Extra addresses of the node's interfaces, for nodePortAddresses CIDRs (the Node's IPs are always used). */
  interfaceAddresses?: string[];
  /** The kube-proxy release whose rules to write (undefined: the newest modelled). */
  release?: Release;
  /** The node runs the nftables proxier, which writes `masquerade fully-random` whatever the
   * node's iptables (no --random-fully to assume). */
  nftables?: boolean;
  /** What the node's own rules show of the release that wrote them (nftables: its table): where
   * `release` is not a modelled one, or is newer than they allow, theirs is written. */
  shown?: () => Shown;
  /** The objects kube-proxy may read that the capture did not (an unread kind is not empty). */
  unread?: EndpointsUnread;
}

export const DEFAULT_EXPECT_OPTIONS = {
  randomFully: true,
  nfacct: false,
  conntrackTcpBeLiberal: false,
} as const;

export interface ExpectedRules {
  node: ExpectedNode;
  config: KubeProxyConfig;
  /** The release modelled (a modelled one: releases.ts). */
  release: Release;
  /** The release the caller said the node runs, modelled or not. */
  requested?: Release;
  /** Who the node's rules read as written by, where the release modelled was taken from them
   * (`shown`), in drift's words. */
  writtenBy?: string;
  /** The release requested is newer than any the node's rules allow (`shown`): theirs is modelled. */
  releaseDisagrees?: ReleaseDisagrees;
  /** The objects that release takes the endpoints from (its own, not the modelled one's). */
  endpointsFrom: EndpointSource;
  options: Required<
    Omit<
      ExpectOptions,
      'interfaceAddresses' | 'config' | 'family' | 'release' | 'unread' | 'shown' | 'nftables'
    >
  > & {
    interfaceAddresses: string[];
  };
  /** The mark KUBE-MARK-MASQ sets, e.g. 0x4000. */
  masqueradeMark: number;
  localDetector?: LocalDetector;
  /** More than 1000 endpoints: no comments on KUBE-SEP rules and SVC -> SEP jumps. */
  largeClusterMode: boolean;
  servicePorts: ExpectedServicePort[];
  /** Rules written on every sync whatever the Services: jumps, KUBE-POSTROUTING, KUBE-FORWARD ... */
  fixed: { nat: RuleLine[]; filter: RuleLine[] };
  /** The node's addresses node ports answer on ("all": every local address). */
  nodePortIPs: 'all' | string[];
  /** What was left out and why ("headless", "IPv6 only", ...). */
  notes: string[];
  /** What the rule text of every Service port depends on besides the port itself. */
  ruleContext: ServiceRulesContext;
}

/** Which Services to model: all (the node's whole rule set), or only some (one Service's answer;
 * what depends on every Service, large-cluster mode, is still counted over all). */
export interface ExpectScope {
  only?: Pick<Service, 'namespace' | 'name'>[];
}

/** The rules kube-proxy would write on `nodeName` for the objects in `view`. */
export function expectedRules(
  view: ClusterView,
  nodeName: string,
  options: ExpectOptions = {},
  scope: ExpectScope = {},
): ExpectedRules {
  const family = options.family ?? 'IPv4';
  const config = options.config ?? kubeProxyConfigOf(view);
  const node = nodeOf(view, nodeName, family);
  const notes: string[] = [];
  if (!node.known) notes.push(`no Node object named ${nodeName}: its IPs and Pod CIDR are unknown`);
  const nodePortCidrs = nodePortAddresses(config, node, family);
  // localhost node ports (route_localnet) exist in IPv4 only
  const localhostNodePorts =
    family === 'IPv4' &&
    (options.localhostNodePorts ?? config.localhostNodePorts) &&
    (nodePortCidrs === 'all' || nodePortCidrs.some((c) => containsAny(c, '127.0.0.1')));
  const {
    family: _family,
    release: asked,
    unread,
    shown,
    nftables,
    ...rest
  } = definedOnly(options);
  const { release, note, writtenBy, releaseDisagrees } = modelledRelease(asked, shown?.());
  if (note) notes.push(note);
  // before 1.37 the iptables proxier asks iptables whether it has --random-fully: said by the
  // node's rules (the nftables proxier writes `masquerade fully-random` always)
  if (!nftables && rest.randomFully === undefined && !writes(release, 'iptablesAlwaysRandomFully'))
    notes.push(
      `MASQUERADE --random-fully assumed: kube-proxy v1.${release.minor} writes it where the node's iptables supports it (1.6.2+), and the node's rules were not read`,
    );
  const alwaysRandomFully = !nftables && writes(release, 'iptablesAlwaysRandomFully');
  if (alwaysRandomFully && rest.randomFully === false)
    notes.push(
      `MASQUERADE --random-fully written though the node's rules (or --no-random-fully) lack it: kube-proxy v1.${release.minor} writes it whatever the node's iptables supports`,
    );
  const opts = {
    ...DEFAULT_EXPECT_OPTIONS,
    ...rest,
    // from 1.37 kube-proxy writes it whatever iptables says: a rule without it is not its own
    ...(alwaysRandomFully ? { randomFully: true } : {}),
    localhostNodePorts,
    interfaceAddresses: options.interfaceAddresses ?? [],
  };
  const localDetector = detectorOf(config, node, family, notes);
  // the node's own release says which objects it proxies from, not the modelled one
  const endpointsFrom = endpointSource(asked, config, unread);
  const slices = slicesByService(proxiedSlices(view, endpointsFrom));
  const shared: SharedContext = { rules: undefined };
  const only = scope.only && new Set(scope.only.map((s) => `${s.namespace}/${s.name}`));
  const ports = view.services
    .filter((svc) => !only || only.has(`${svc.namespace}/${svc.name}`))
    .flatMap((svc) => servicePortsOf(svc, slices, node, family, config, localDetector, shared))
    .sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : a.protocol < b.protocol ? -1 : 1,
    );
  const largeClusterMode = only
    ? endpointsExceed(view.services, slices, family, LARGE_CLUSTER_ENDPOINTS)
    : ports.reduce((n, p) => n + p.allEndpoints.length, 0) > LARGE_CLUSTER_ENDPOINTS;
  const masqueradeMark = 2 ** config.masqueradeBit;
  const local = localDetector?.ifLocal;
  const ctx = {
    family,
    largeClusterMode,
    nodeIPs: node.ips,
    localhostCounter: localhostNodePorts && opts.nfacct,
    podTraffic: local?.source
      ? `-s ${local.source}`
      : local
        ? `-i ${local.inInterface}`
        : undefined,
  };
  shared.rules = ctx;
  const nodePortIPs =
    nodePortCidrs === 'all'
      ? 'all'
      : // every node has lo's 127.0.0.1, listed by kube-proxy's GetNodeIPs though no `ip addr` was read
        [
          ...node.ips,
          ...opts.interfaceAddresses,
          ...(family === 'IPv4' ? ['127.0.0.1'] : []),
        ].filter(
          (ip, i, all) =>
            familyOf(ip) === family &&
            all.indexOf(ip) === i &&
            (ip.startsWith('127.') ? localhostNodePorts : ip !== '::1') &&
            nodePortCidrs.some((c) => containsAny(c, ip)),
        );
  const fixed = fixedRules({
    family,
    masqueradeMark,
    randomFully: opts.randomFully,
    nfacct: opts.nfacct,
    conntrackTcpBeLiberal: opts.conntrackTcpBeLiberal,
    localhostNodePorts,
    nodePortDestinations: nodePortIPs,
  });
  return {
    node,
    config,
    release,
    endpointsFrom,
    ...(asked ? { requested: asked } : {}),
    ...(writtenBy ? { writtenBy } : {}),
    ...(releaseDisagrees ? { releaseDisagrees } : {}),
    options: opts,
    masqueradeMark,
    localDetector,
    largeClusterMode,
    servicePorts: ports,
    fixed,
    nodePortIPs,
    notes,
    ruleContext: ctx,
  };
}

/**
 * A Service port's rules, computed afresh and not kept (for one pass over every port); with
 * `sample`, per-endpoint rules only for its first and last endpoint, each with its position.
 */
export function rulesOf(exp: ExpectedRules, sp: ExpectedServicePort, sample = false) {
  return servicePortRules(sp, exp.ruleContext, sample);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function slicesByService(slices: EndpointSlice[]): Map<string, EndpointSlice[]> {
  const map = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    if (!s.serviceName) continue;
    const key = `${s.namespace}/${s.serviceName}`;
    const list = map.get(key);
    if (list) list.push(s);
    else map.set(key, [s]);
  }
  return map;
}

/** How many endpoints kube-proxy programs for all these Services (its totalEndpoints). */
/** kube-proxy's largeClusterEndpointsThreshold: above it, no per-endpoint comments. */
const LARGE_CLUSTER_ENDPOINTS = 1000;

/** The whole node's endpoint count is over `limit` (counted only as far as it takes to know). */
function endpointsExceed(
  services: Service[],
  slices: Map<string, EndpointSlice[]>,
  family: IPFamily,
  limit: number,
): boolean {
  let total = 0;
  for (const svc of services) {
    if (svc.type === 'ExternalName' || svc.headless) continue;
    if (!svc.clusterIPs.some((ip) => familyOf(ip) === family)) continue;
    const own = slices.get(`${svc.namespace}/${svc.name}`) ?? [];
    for (const port of svc.ports) if (port.port > 0) total += portEndpointCount(own, port, family);
    if (total > limit) return true;
  }
  return false;
}
