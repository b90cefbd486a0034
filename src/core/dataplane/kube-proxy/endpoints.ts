// kube-proxy's view of one Service port's endpoints: the EndpointSlices merged, de-duplicated
// and sorted as pkg/proxy/endpointslicecache.go does, then split into the endpoints Cluster and
// Local traffic policy use, as CategorizeEndpoints (pkg/proxy/topology.go) does. Terminating
// endpoints are used only when no ready one exists. Topology hints are not modelled.
import { endpointChain } from './chain-names.js';
import { formatIPv4, ipv4 } from '../../ipv4.js';
import { FAMILY, formatIPv6, ipv6, type IPFamily } from '../../ipv6.js';
import type { EndpointSlice, ServicePort } from '../../kube/objects.js';

/** One endpoint of one Service port, as kube-proxy tracks it. */
export class ProxyEndpoint {
  private sep: string | undefined;
  constructor(
    readonly ip: string,
    readonly port: number,
    /** "10.244.0.3:80" ("[fd00::3]:80"): the sort key, the DNAT target and part of the KUBE-SEP hash input. */
    readonly address: string,
    readonly nodeName: string | undefined,
    /** On this node (the endpoint's nodeName is kube-proxy's node name). */
    readonly local: boolean,
    readonly ready: boolean,
    readonly serving: boolean,
    readonly terminating: boolean,
    /** The endpoint's targetRef (the Pod behind it), for messages: see podOf. */
    readonly ref: { kind?: string; name?: string; namespace?: string } | undefined,
    /** The namespace of its EndpointSlice. */
    readonly namespace: string,
    /** Its Service port's name and protocol: the rest of the KUBE-SEP hash input. */
    private readonly owner?: { name: string; protocol: string },
  ) {}

  /** Its KUBE-SEP chain, hashed on first use (100,000 endpoints cost 100,000 sha256); empty
   * when the Service port was not given. */
  get chain(): string {
    if (!this.owner) return '';
    return (this.sep ??= endpointChain(this.owner.name, this.owner.protocol, this.address));
  }
}

/** "ns/name" of the Pod behind an endpoint, when its targetRef names one. */
export function podOf(e: ProxyEndpoint): string | undefined {
  const r = e.ref;
  return r?.name && (r.kind ?? 'Pod') === 'Pod'
    ? `${r.namespace ?? e.namespace}/${r.name}`
    : undefined;
}

export interface Categorized {
  /** Every endpoint kube-proxy tracks for the port (it counts towards large-cluster mode). */
  all: ProxyEndpoint[];
  /** Endpoints of Cluster traffic policy (KUBE-SVC): ready ones, else serving terminating ones. */
  cluster: ProxyEndpoint[];
  /** Endpoints of Local traffic policy (KUBE-SVL): this node's, by the same rule. */
  local: ProxyEndpoint[];
  /** Endpoints that get a KUBE-SEP chain on this node. */
  reachable: ProxyEndpoint[];
  /** Some endpoint anywhere is usable (ready, or serving and terminating). */
  hasAny: boolean;
  /** The sets fell back to terminating endpoints (nothing ready). */
  clusterTerminating: boolean;
  localTerminating: boolean;
}

/** An endpoint address printed canonically (Go's IP.String()), or undefined when not of `family`. */
function endpointIP(raw: string | undefined, family: IPFamily): string | undefined {
  if (raw === undefined) return undefined;
  if (family === 'IPv6') {
    const n = ipv6(raw);
    return n === undefined ? undefined : formatIPv6(n);
  }
  const n = ipv4(raw);
  if (n === undefined) return undefined;
  // only leading zeros change the text
  return /(?:^|\.)0\d/.test(raw) ? formatIPv4(n) : raw;
}

/** An endpoint address of a slice of `family` as kube-proxy knows it: its canonical IP and
 * "ip:port" (endpointInfo.String(), the key copies are merged by); undefined when not of it. */
export function canonicalEndpoint(
  raw: string | undefined,
  port: number,
  family: IPFamily,
): { ip: string; address: string } | undefined {
  const ip = endpointIP(raw, family);
  return ip === undefined ? undefined : { ip, address: FAMILY[family].hostPort(ip, port) };
}

/** Whether `other` replaces `kept`, two copies of one endpoint (several slices list it): a local
 * copy wins, as in endpointslicecache.go; between equals a ready one (kube-proxy keeps whichever
 * its map yields first: kdebug keeps the same copy in every step). */
export const replacesCopy = (
  kept: { local: boolean; ready: boolean },
  other: { local: boolean; ready: boolean },
) => (other.local && !kept.local) || (other.local === kept.local && other.ready && !kept.ready);

/** The endpoints of one Service port from its slices of one family, sorted by "ip:port" as strings. */
export function portEndpoints(
  slices: EndpointSlice[],
  port: ServicePort,
  nodeName: string,
  owner?: { name: string; protocol: string },
  family: IPFamily = 'IPv4',
): ProxyEndpoint[] {
  const list: ProxyEndpoint[] = [];
  for (const slice of slices) {
    if (slice.addressType !== family) continue;
    for (const sp of slice.ports) {
      // matched by port name and protocol; a slice port without a number is ignored
      if (sp.name !== port.name || sp.protocol !== port.protocol || !sp.port) continue;
      for (const e of slice.endpoints) {
        const at = canonicalEndpoint(e.addresses[0], sp.port, family);
        if (at === undefined) continue;
        const local = nodeName !== '' && e.nodeName === nodeName;
        const c = e.conditions;
        list.push(
          new ProxyEndpoint(
            at.ip,
            sp.port,
            at.address,
            e.nodeName,
            local,
            c.ready,
            c.serving,
            c.terminating,
            e.targetRef,
            slice.namespace,
            owner,
          ),
        );
      }
    }
  }
  list.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  // duplicates (several slices list the same endpoint): one copy
  let w = 0;
  for (let r = 0; r < list.length; r++) {
    const e = list[r]!;
    if (w > 0 && list[w - 1]!.address === e.address) {
      if (replacesCopy(list[w - 1]!, e)) list[w - 1] = e;
    } else list[w++] = e;
  }
  list.length = w;
  return list;
}

/** How many endpoints portEndpoints gives, without making them (large-cluster mode counts all). */
export function portEndpointCount(
  slices: EndpointSlice[],
  port: ServicePort,
  family: IPFamily = 'IPv4',
): number {
  const seen = new Set<number | string>();
  for (const slice of slices) {
    if (slice.addressType !== family) continue;
    for (const sp of slice.ports) {
      if (sp.name !== port.name || sp.protocol !== port.protocol || !sp.port) continue;
      for (const e of slice.endpoints) {
        const raw = e.addresses[0];
        if (raw === undefined) continue;
        if (family === 'IPv6') {
          const n = ipv6(raw);
          if (n !== undefined) seen.add(`${n}:${sp.port}`);
        } else {
          const n = ipv4(raw);
          if (n !== undefined) seen.add(n * 65536 + sp.port); // ip:port as one exact number
        }
      }
    }
  }
  return seen.size;
}

const usable = (e: ProxyEndpoint) => e.ready || (e.serving && e.terminating);

/** CategorizeEndpoints: which endpoints the cluster and local policy chains hold. */
export function categorize(
  all: ProxyEndpoint[],
  uses: { cluster: boolean; local: boolean },
): Categorized {
  let cluster: ProxyEndpoint[] = [];
  let local: ProxyEndpoint[] = [];
  let clusterTerminating = false;
  let localTerminating = false;
  if (uses.cluster) {
    cluster = all.filter((e) => e.ready);
    if (cluster.length === 0) {
      cluster = all.filter((e) => e.serving && e.terminating);
      clusterTerminating = cluster.length > 0;
    }
  }
  const hasAny = uses.local ? all.some(usable) : cluster.length > 0;
  if (!uses.local)
    return {
      all,
      cluster,
      local,
      reachable: cluster,
      hasAny,
      clusterTerminating,
      localTerminating,
    };
  local = all.filter((e) => e.local && e.ready);
  if (local.length === 0) {
    local = all.filter((e) => e.local && e.serving && e.terminating);
    localTerminating = local.length > 0;
  }
  let reachable = local;
  if (uses.cluster) {
    // local ready endpoints are already in the cluster set; terminating ones must be merged
    reachable = localTerminating ? union(cluster, local) : cluster;
  }
  return { all, cluster, local, reachable, hasAny, clusterTerminating, localTerminating };
}

function union(a: ProxyEndpoint[], b: ProxyEndpoint[]): ProxyEndpoint[] {
  const seen = new Set(a.map((e) => e.address));
  return [...a, ...b.filter((e) => !seen.has(e.address))].sort((x, y) =>
    x.address < y.address ? -1 : 1,
  );
}

// a memo that stays module-level: by endpoint count only, the same in every run, no run's data
// (10,000 Services x 10 endpoints' probabilities cost 25 ms printed afresh, 0.4 ms remembered)
const quantised: number[] = [];
const saved: string[] = [];

/**
 * The probability kube-proxy writes on the i-th of n endpoint jumps (`%0.10f` of 1/(n-i)),
 * quantised as the kernel stores it: round(p * 2^31).
 */
export function quantisedProbability(remaining: number): number {
  return (quantised[remaining] ??= Math.round(Number((1 / remaining).toFixed(10)) * 0x80000000));
}

/** The probability as iptables-save prints it ("0.33333333349", "0.50000000000"). */
export function savedProbability(remaining: number): string {
  return (saved[remaining] ??= (quantisedProbability(remaining) / 0x80000000).toFixed(11));
}
