// What Cilium's agent should write to its BPF maps for the frontends it holds, modelled on its
// reconciler (pkg/loadbalancer/reconciler, updateFrontend): an entry per frontend address (a
// NodePort's wildcard and each NodePort address besides), its flags, its backends in slot order
// and how many of them take new connections, and what the affinity, source-range and Maglev maps
// hold for it.
import type { Service } from '../../../kube/objects.js';
import { knows, type CiliumSettings } from '../agent/agent.js';
import type { ExpectedBackend, ExpectedFrontend } from '../expected/expected.js';
import { inRotation } from '../expected/backends.js';
import { healthServerOf } from '../expected/health-server.js';
import { isWildcard, type CiliumMapKind } from '../read/listing.js';
import { DEFAULT_NODE_PORT_RANGE } from '../agent/node-port-range.js';

/** The agent settings the map entries depend on beyond the frontends. */
export type CiliumMapOptions = Pick<
  CiliumSettings,
  | 'internalTrafficPolicy'
  | 'externalClusterIP'
  | 'forwarding'
  | 'forwardingAnnotation'
  | 'algorithm'
  | 'algorithmAnnotation'
> &
  Partial<
    Pick<
      CiliumSettings,
      | 'wildcardEntries'
      | 'lbServiceIPAM'
      | 'nodePortConflicts'
      | 'nodePortRange'
      | 'kubeProxyReplacement'
      | 'datapathCandidates'
      | 'wildcardSkipsNodeAddress'
      | 'hybridForwarding'
      | 'algorithmLowered'
      | 'sessionAffinity'
      | 'sourceRangeCheck'
      | 'sourceRangeFlagChecked'
      | 'notKnown'
    >
  >;

/** The loadBalancerClasses whose IPs Cilium's LB-IPAM gives (BGP and L2 announcements). */
const CILIUM_LB_CLASSES = ['io.cilium/bgp-control-plane', 'io.cilium/l2-announcer'];

export const CILIUM_MAP_DEFAULTS: CiliumMapOptions = {
  internalTrafficPolicy: true,
  externalClusterIP: false,
  forwarding: 'snat',
  forwardingAnnotation: false,
  algorithm: 'random',
  algorithmAnnotation: false,
};

export interface ExpectedMapEntry {
  frontend: ExpectedFrontend;
  /** The entry's address: the frontend's, or a NodePort address for the wildcard's. */
  ip: string;
  /** The Service entry's flags after its type, as Cilium words them and in its order. */
  flags: string[];
  /** Flags left out of `flags` as not known, with the option that decides each: it is not known
   * (agent.ts notKnown), so the entry may carry them or not. */
  flagsNotKnown?: { flag: string; option: string }[];
  /** In slot order: the ones that take new connections first. */
  backends: ExpectedBackend[];
  /** Slots 1 to count take new connections (COUNT); the rest keep their own. */
  count: number;
  /** The algorithm the Service's annotation picks (LBALG), where annotations are honoured. */
  algorithm?: 'random' | 'maglev';
  /** A Maglev lookup table (of the backends counted) picks the backend. */
  maglev: boolean;
  /** The Service entry's affinity timeout (AFFTimeout), where the agent's session affinity is on
   * or not known to be off (upsertMaster; 1.17 writes it regardless, in no listing kdebug reads). */
  affinitySeconds?: number;
  /** The backends session affinity may keep a client on (the affinity map). */
  affinity: ExpectedBackend[];
  /** The source-range map's CIDRs of the entry's family, where the entry checks the source and
   * the agent's check is on or not known to be off. */
  sourceRanges?: string[];
  /** A wildcard entry whether the agent writes is not known: the options that decide it
   * (default-lb-service-ipam, bpf-lb-enable-wildcard-entries) are (agent.ts notKnown). */
  wildcardNotKnown?: string[];
}

const annotation = (svc: Service | undefined, key: string) =>
  (svc?.raw.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[
    `service.cilium.io/${key}`
  ];
/** The value of one the agent compares lower-cased (forwarding-mode, src-ranges-policy,
 * proxy-delegation; lb-algorithm through 1.17). */
const lowered = (svc: Service | undefined, key: string) => annotation(svc, key)?.toLowerCase();

/** service.cilium.io/forwarding-mode where honoured: 'hybrid' there, with no protocol to go by,
 * is SNAT (ToSVCForwardingMode, 1.18.5 on); a value it does not know leaves the agent's mode. */
function annotatedMode(svc: Service | undefined, o: CiliumMapOptions): 'dsr' | 'snat' | undefined {
  const value = lowered(svc, 'forwarding-mode');
  if (value === 'dsr') return 'dsr';
  return value === 'snat' || (value === 'hybrid' && o.hybridForwarding !== false)
    ? 'snat'
    : undefined;
}

/** A setting off, as known (not a refused cilium-config's). */
const off = (o: CiliumMapOptions, s: 'sessionAffinity' | 'sourceRangeCheck') =>
  o[s] === false && knows(o, s);

/** The maps the agent writes nothing to under its settings (the maps dump holds no line of them,
 * which is no map unread): the affinity map without session affinity, the source-range map
 * without the check. */
export const unwrittenMaps = (o: CiliumMapOptions): CiliumMapKind[] => [
  ...(off(o, 'sessionAffinity') ? (['AFF'] as const) : []),
  ...(off(o, 'sourceRangeCheck') ? (['SRCRANGE'] as const) : []),
];

export function expectedMaps(
  frontends: readonly ExpectedFrontend[],
  o: {
    services: readonly Service[];
    nodePortAddresses: readonly string[];
    /** The node's other addresses, where known (a VIP on one has no wildcard entry). */
    nodeAddresses?: readonly string[];
    options: CiliumMapOptions;
  },
): ExpectedMapEntry[] {
  const services = new Map(o.services.map((s) => [`${s.namespace}/${s.name}`, s]));
  const out: ExpectedMapEntry[] = [];
  const wildcards = new Map<string, ExpectedMapEntry>();
  // the addresses a frontend of their own holds (not a NodePort or HostPort expansion): from
  // 1.19.7 and 1.20.0 an expansion skips them outside the NodePort range (cilium#44730)
  const own = (f: Pick<ExpectedFrontend, 'ip' | 'port' | 'protocol' | 'internal'>) =>
    `${f.ip} ${f.port} ${f.protocol} ${f.internal ? 'i' : ''}`;
  const primary = new Set(
    frontends.filter((f) => f.type !== 'NodePort' && !isWildcard(f.ip)).map(own),
  );
  const [low, high] = o.options.nodePortRange ?? DEFAULT_NODE_PORT_RANGE;
  // the range not known (a refused cilium-config), no expansion is said to yield
  const yields = (f: ExpectedFrontend, ip: string) =>
    o.options.nodePortConflicts === true &&
    knows(o.options, 'nodePortRange') &&
    (f.port < low || f.port > high) &&
    primary.has(own({ ...f, ip }));
  for (const f of frontends) {
    // without kube-proxy replacement only these are datapath candidates (isDatapathCandidate)
    if (
      o.options.kubeProxyReplacement === false &&
      knows(o.options, 'kubeProxyReplacement') &&
      o.options.datapathCandidates === true &&
      !['ClusterIP', 'LocalRedirect', 'ExternalIPs'].includes(f.type)
    )
      continue;
    const svc = services.get(f.service);
    const v6 = f.ip.includes(':');
    const addresses = isWildcard(f.ip)
      ? [f.ip, ...o.nodePortAddresses.filter((a) => a.includes(':') === v6 && !yields(f, a))]
      : [f.ip];
    // enable-session-affinity off: the flag stays, no timeout nor affinity match is written
    // (the reconciler's upsertMaster and updateFrontend)
    const sticky = f.affinitySeconds !== undefined && !off(o.options, 'sessionAffinity');
    const used = inRotation(f.backends);
    // maintenance backends are left out of the slots
    const kept = f.backends.filter((b) => !used.includes(b) && b.state !== 'maintenance');
    const picked = o.options.algorithmLowered
      ? lowered(svc, 'lb-algorithm')
      : annotation(svc, 'lb-algorithm');
    const algorithm =
      o.options.algorithmAnnotation && (picked === 'maglev' || picked === 'random')
        ? picked
        : undefined;
    for (const ip of addresses) {
      const routable = !isWildcard(ip) && (f.type !== 'ClusterIP' || o.options.externalClusterIP);
      out.push({
        frontend: f,
        ip,
        ...flagsOf(f, svc, routable, o.options),
        backends: [...used, ...kept],
        count: used.length,
        ...(algorithm ? { algorithm } : {}),
        maglev: !isWildcard(ip) && maglev(f, algorithm, o.options),
        ...(sticky ? { affinitySeconds: f.affinitySeconds } : {}),
        affinity: sticky ? [...used, ...kept].filter((b) => b.state === 'active') : [],
        // the source-range map only with the check on (the reconciler's updateFrontend)
        ...(f.sourceRanges && !off(o.options, 'sourceRangeCheck')
          ? { sourceRanges: f.sourceRanges.filter((r) => r.includes(':') === ip.includes(':')) }
          : {}),
      });
    }
    const wildcard = wildcarded(f, svc, o);
    const known = wildcard.notKnown.length === 0;
    const listed = wildcards.get(f.ip);
    // one entry per address: made where any frontend of it makes it known, else marked
    if (wildcard.made && listed?.wildcardNotKnown && known) delete listed.wildcardNotKnown;
    if (wildcard.made && !listed) {
      // its flags are its first frontend's type only: never routable, no backends
      const drop = { ...f, port: 0, protocol: 'any' as const, portName: '', backends: [] };
      for (const k of ['internal', 'affinitySeconds', 'sourceRanges', 'ignoredRanges'] as const)
        delete drop[k];
      const entry: ExpectedMapEntry = {
        frontend: drop,
        ip: f.ip,
        flags: ['non-routable'],
        backends: [],
        count: 0,
        maglev: false,
        affinity: [],
        ...(known ? {} : { wildcardNotKnown: wildcard.notKnown }),
      };
      wildcards.set(f.ip, entry);
      out.push(entry);
    }
  }
  return out;
}

/** The reconciler's wildcard entry of a VIP (1.19 on; 1.20's bpf-lb-enable-wildcard-entries):
 * for the ClusterIP and LoadBalancer frontends (external scope) of a Service whose IPs Cilium's
 * LB-IPAM manages (no loadBalancerClass with default-lb-service-ipam lbipam, or a class of
 * Cilium's own: isWildcardClass), on an address that is not the node's own (from 1.19.5; before,
 * on that one too). `made` where it may be written; `notKnown` the options deciding it that are
 * not known (a refused cilium-config), whose values here decide nothing. */
export function wildcarded(
  f: ExpectedFrontend,
  svc: Service | undefined,
  o: {
    nodePortAddresses: readonly string[];
    nodeAddresses?: readonly string[];
    options: CiliumMapOptions;
  },
): { made: boolean; notKnown: string[] } {
  const none = { made: false, notKnown: [] };
  const optionKnown = knows(o.options, 'wildcardEntries');
  if ((!o.options.wildcardEntries && optionKnown) || f.internal) return none;
  if (f.type !== 'ClusterIP' && f.type !== 'LoadBalancer') return none;
  if (healthServerOf(f.service) !== undefined) return none;
  const lbClass = (svc?.raw['spec'] as { loadBalancerClass?: string } | undefined)
    ?.loadBalancerClass;
  const ipamKnown = lbClass !== undefined || knows(o.options, 'lbServiceIPAM');
  const managed =
    lbClass === undefined
      ? !ipamKnown || (o.options.lbServiceIPAM ?? 'lbipam') === 'lbipam'
      : CILIUM_LB_CLASSES.includes(lbClass);
  const onNode = o.nodePortAddresses.includes(f.ip) || o.nodeAddresses?.includes(f.ip) === true;
  if (!managed || (o.options.wildcardSkipsNodeAddress === true && onNode)) return none;
  return {
    made: true,
    notKnown: [
      ...(optionKnown ? [] : ['bpf-lb-enable-wildcard-entries']),
      ...(ipamKnown ? [] : ['default-lb-service-ipam']),
    ],
  };
}

/** ServiceFlags.String() after the type: Local, InternalLocal, two-scopes, sessionAffinity,
 * non-routable, check source-range, deny, delegate-if-local, dsr; apart, those a setting not known
 * decides. */
function flagsOf(
  f: ExpectedFrontend,
  svc: Service | undefined,
  routable: boolean,
  o: CiliumMapOptions,
): Pick<ExpectedMapEntry, 'flags' | 'flagsNotKnown'> {
  // the Service's policies, on every one of its frontends; the health server's own are Local
  const own = healthServerOf(f.service) !== undefined;
  const ext = own || svc?.externalTrafficPolicy === 'Local';
  const int = own || (o.internalTrafficPolicy && svc?.internalTrafficPolicy === 'Local');
  const mode = (o.forwardingAnnotation ? annotatedMode(svc, o) : undefined) ?? o.forwarding;
  // each flag, and the option deciding it where that is not known
  const flags: [boolean, string, string?][] = [
    [ext, 'Local'],
    [int, 'InternalLocal'],
    [ext !== int && f.type !== 'ClusterIP', 'two-scopes'],
    [f.affinitySeconds !== undefined, 'sessionAffinity'],
    // a ClusterIP is routable where bpf-lb-external-clusterip says; the others, by their address
    [
      !routable,
      'non-routable',
      f.type === 'ClusterIP' && !knows(o, 'externalClusterIP')
        ? 'bpf-lb-external-clusterip'
        : undefined,
    ],
    [
      f.sourceRanges !== undefined && !(o.sourceRangeFlagChecked && o.sourceRangeCheck === false),
      'check source-range',
      f.sourceRanges !== undefined && o.sourceRangeFlagChecked && !knows(o, 'sourceRangeCheck')
        ? 'enable-svc-source-range-check'
        : undefined,
    ],
    [f.sourceRanges !== undefined && lowered(svc, 'src-ranges-policy') === 'deny', 'deny'],
    [lowered(svc, 'proxy-delegation') === 'delegate-if-local', 'delegate-if-local'],
    // hybrid: DSR for TCP, SNAT for the rest (1.18.5 on; unset: as 1.18.5)
    [
      mode === 'dsr' || (mode === 'hybrid' && o.hybridForwarding !== false && f.protocol === 'tcp'),
      'dsr',
      knows(o, 'forwarding') ? undefined : 'bpf-lb-mode',
    ],
  ];
  const notKnown = flags.flatMap(([, flag, option]) => (option ? [{ flag, option }] : []));
  return {
    flags: flags.filter(([on, , option]) => on && !option).map(([, flag]) => flag),
    ...(notKnown.length > 0 ? { flagsNotKnown: notKnown } : {}),
  };
}

/** useMaglev: never the wildcard's; the annotation's algorithm, else the agent's for the types
 * reachable from outside (a ClusterIP only with bpf-lb-external-clusterip). */
function maglev(
  f: ExpectedFrontend,
  algorithm: ExpectedMapEntry['algorithm'],
  o: CiliumMapOptions,
): boolean {
  if (algorithm) return algorithm === 'maglev';
  if (o.algorithm !== 'maglev') return false;
  if (f.type === 'ClusterIP') return o.externalClusterIP;
  return f.type !== 'LocalRedirect';
}
