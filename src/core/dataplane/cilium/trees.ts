// Cilium's frontends read into the Service trees of the common model: one tree per Service port
// (its ClusterIP, NodePorts, ExternalIPs and LoadBalancer IPs merge into it) where the listing or
// the objects name it, else one per frontend. Each backend is an endpoint; new connections are
// shared as the frontend's Maglev table says where the listing shows it (weighted), else evenly
// among the backends in rotation (active, else terminating), as random selection does, weights
// aside; the others keep only their own connections.
import { hostPort } from '../../ipv6.js';
import type { ServicePortName } from '../../model.js';
import {
  emptyTree,
  type EntryPoint,
  type ServiceTree,
  type ServiceTrees,
  type TreeEndpoint,
} from '../trees.js';
import { inRotation } from './expected/backends.js';
import { healthServerOf } from './expected/health-server.js';
import {
  frontendKey,
  isDropEntry,
  isWildcard,
  type CiliumBackend,
  type CiliumFrontend,
  type CiliumTable,
  type FrontendType,
} from './read/listing.js';

/** A frontend's Service port, as the objects say (by frontendKey; NodePorts also by
 * "nodeport 30080/TCP" for any node address). */
export type CiliumKnown = Map<string, ServicePortName>;

const KIND: Record<FrontendType, EntryPoint['kind']> = {
  ClusterIP: 'cluster-ip',
  NodePort: 'node-port',
  ExternalIPs: 'external-ip',
  LoadBalancer: 'load-balancer',
  HostPort: 'node-port',
  LocalRedirect: 'cluster-ip',
};

/** Cilium's frontend types that share a kind's handling but are no such Service entry: a Pod's
 * hostPort, a CiliumLocalRedirectPolicy's frontend. */
const LABEL: Partial<Record<FrontendType, string>> = {
  HostPort: 'host port',
  LocalRedirect: 'local redirect',
};

/** The health server's frontend (1.18 on, expected/health-server.ts): load balancers' health
 * checks of a Service with externalTrafficPolicy Local, answered on its healthCheckNodePort. */
const HEALTH_CHECK = 'health check';

export const nodePortKey = (port: number, protocol: string | undefined) =>
  `nodeport ${port}/${(protocol ?? '').toUpperCase()}`;

/** The Service port a frontend serves: the listing's own name, else the objects'. The health
 * server's frontend serves none: its tree is its own, "ns/name (health check)". */
function nameOf(f: CiliumFrontend, key: string, known: CiliumKnown): ServicePortName | undefined {
  if (healthServerOf(f.service)) return undefined;
  if (f.service && f.portName !== undefined)
    return `${f.service}${f.portName ? `:${f.portName}` : ''}` as ServicePortName;
  return (
    known.get(key) ??
    (f.type === 'NodePort' || f.type === undefined
      ? known.get(nodePortKey(f.port, f.protocol))
      : undefined)
  );
}

export function buildCiliumTrees(table: CiliumTable, known: CiliumKnown): ServiceTrees {
  const trees = new Map<string, ServiceTree>();
  // the frontend each tree's endpoints were read from, where the listing shows all its backends
  const backendsOf = new Map<ServiceTree, CiliumFrontend>();
  // made only where two frontends meet in a tree: a big listing has one frontend per tree
  const backends = wholeBackends();
  for (const f of table.frontends) {
    // the drop entries are no Service port
    if (isDropEntry(f)) continue;
    // made once: a big listing has a frontend per Service port
    const chain = frontendKey(f);
    const name = nameOf(f, chain, known);
    const protocol = f.protocol ?? '';
    // without names, a NodePort's frontends (the wildcard, each node address) are one entry; the
    // internal scope's are another Service entry of their own, with their own backends
    // the health server's frontend answers its Service's health checks: that Service's, said so
    const checked = healthServerOf(f.service);
    const base =
      name ??
      (checked ? `${checked} (health check)` : undefined) ??
      (f.type === 'NodePort'
        ? `node port ${f.port}${f.protocol ? `/${f.protocol.toUpperCase()}` : ''}`
        : undefined);
    // a frontend a Local Redirect Policy takes is a tree of its own: its backends are the
    // policy's Pods on this node, never the Service's endpoints
    const redirected = f.redirectTo !== undefined || f.type === 'LocalRedirect';
    let id = redirected
      ? `${chain} (local redirect)`
      : base === undefined
        ? chain
        : f.internal
          ? `${base} (internal scope)`
          : base;
    let key = `${id} ${protocol}`;
    let tree = trees.get(key);
    // each frontend has its own backends in the map: one whose backends are not its tree's (the
    // scope a Local traffic policy narrows to the node's own) is a tree of its own, by its key
    const whole = !someUnseen(f) && !f.l7Proxy;
    const theirs = tree && backendsOf.get(tree);
    if (!redirected && whole && theirs !== undefined && backends(f) !== backends(theirs)) {
      id = chain;
      key = `${chain} ${protocol} ${backends(f)}`;
      tree = trees.get(key);
    }
    if (!tree) trees.set(key, (tree = emptyTree({ name, id, protocol })));
    const kind = f.type ? KIND[f.type] : 'frontend';
    tree.entries.push({
      kind,
      ...(redirected
        ? { label: LABEL.LocalRedirect! }
        : checked
          ? { label: HEALTH_CHECK }
          : f.type && LABEL[f.type]
            ? { label: LABEL[f.type] }
            : {}),
      ...(redirected ? { redirect: f.redirectTo ? { policy: f.redirectTo } : {} } : {}),
      ...(isWildcard(f.ip) ? {} : { address: f.ip }),
      port: f.port,
      protocol,
      chain,
      from: 'cilium',
      ...(f.l7Proxy ? { l7Proxy: f.l7Proxy } : {}),
      ...(f.internal ? { scope: 'internal' as const } : {}),
      ...(f.status !== undefined ? { status: f.status } : {}),
      line: f.line,
    });
    if (kind === 'cluster-ip' && f.type === 'ClusterIP') {
      tree.clusterIP ??= f.ip;
      tree.port ??= f.port;
    }
    if (kind === 'node-port' && !tree.nodePorts.includes(f.port)) tree.nodePorts.push(f.port);
    if (kind === 'external-ip' && !tree.externalIPs.includes(f.ip)) tree.externalIPs.push(f.ip);
    if (kind === 'load-balancer' && !tree.loadBalancerIPs.includes(f.ip))
      tree.loadBalancerIPs.push(f.ip);
    // the tree's endpoints are the first frontend's (the ClusterIP's where there is one)
    if (tree.endpoints.length === 0 || (f.type === 'ClusterIP' && tree.clusterIP === f.ip)) {
      tree.endpoints = endpointsOf(f);
      // the frontend whose backends these are stands where kube-proxy's KUBE-SVC chain would
      tree.chains = { svc: chain };
      if (f.l7Proxy) tree.l7Proxy = f.l7Proxy;
      else delete tree.l7Proxy;
      if (whole) backendsOf.set(tree, f);
      else backendsOf.delete(tree);
    }
    if (f.backendsNotShown)
      tree.partial = `the listing shows ${f.backends.length} of ${f.backends.length + f.backendsNotShown} backends`;
    if (f.backendsUnread) tree.partial = 'the listing does not show the backends';
    if (f.serviceRowUnseen)
      tree.partial =
        "the listing does not hold the Service's own row (slot 0): its rows need not be all of its backends";
    if (f.backendsElided)
      tree.partial = `the listing elides rows after its backends (line ${f.backendsElided}): more may be there`;
    if (f.grepped)
      tree.partial = `the listing is piped through grep (line ${f.grepped}): its further backends, on rows of their own, show only where they match`;
  }
  return { services: [...trees.values()], orphans: [] };
}

/** A frontend's backends as one string to compare (asked only of one whose listing shows all of
 * them and whose backends the datapath picks among), each frontend's made once. */
function wholeBackends(): (f: CiliumFrontend) => string {
  const made = new Map<CiliumFrontend, string>();
  return (f) => {
    let s = made.get(f);
    if (s === undefined)
      made.set(
        f,
        (s = f.backends
          .map((b) => hostPort(b.ip, b.port))
          .sort()
          .join(',')),
      );
    return s;
  };
}

/** Whether the listing may not show all of a frontend's backends (cut, elided, grepped). */
const someUnseen = (f: CiliumFrontend) =>
  Boolean(
    f.backendsNotShown || f.backendsUnread || f.serviceRowUnseen || f.backendsElided || f.grepped,
  );

type Marks = NonNullable<TreeEndpoint['cilium']>;
/** The marks of a backend the listing marks no way: one frozen object for all of a big listing's. */
const UNMARKED: Marks = Object.freeze({});

/** The entries of a frontend's Maglev table, all its backends' (0: the table is empty). */
const maglevEntries = (backends: CiliumBackend[]) =>
  backends.reduce((sum, b) => sum + (b.maglev ?? 0), 0);

/** A frontend's backends as endpoints, each with its share of new connections. */
export function endpointsOf(f: CiliumFrontend): TreeEndpoint[] {
  const rotation = f.backends.some((b) => b.inRotation !== undefined)
    ? f.backends.filter((b) => b.inRotation)
    : inRotation(f.backends);
  // every backend, as in most listings: no set to look each one up in
  const used = rotation.length === f.backends.length ? undefined : new Set<CiliumBackend>(rotation);
  const share = 1 / (used?.size ?? rotation.length);
  // the Maglev table, where the listing shows it, is the share: Cilium fills it by the backends'
  // weights (pkg/maglev); random selection picks a slot evenly, weights aside (bpf/lib/lb.h)
  const maglev = f.mapLines?.maglev !== undefined ? maglevEntries(f.backends) : 0;
  // said where the listing's marks tell backends apart (service list --clustermesh-affinity): from
  // 1.18 the REST model marks every backend preferred (frontend.go), which says nothing
  const affinity = f.backends.some((b) => b.preferred) && !f.backends.every((b) => b.preferred);
  const partial = someUnseen(f);
  const l7 = f.l7Proxy !== undefined;
  return f.backends.map((b) => {
    const address = hostPort(b.ip, b.port);
    const cilium: Marks = b.state || affinity || b.weight !== undefined || maglev ? {} : UNMARKED;
    if (b.state) cilium.state = b.state;
    if (affinity) cilium.preferred = b.preferred === true;
    if (b.weight !== undefined) cilium.weight = b.weight;
    if (maglev) cilium.maglev = { entries: b.maglev ?? 0, of: maglev };
    const ep: TreeEndpoint = {
      address,
      // a backend has no chain of its own: the walk and the evidence name it so
      chain: `backend ${address}`,
      probability: maglev ? (b.maglev ?? 0) / maglev : !used || used.has(b) ? share : 0,
      hairpinMasquerade: null,
      affinity: false,
      cilium,
      line: b.line,
    };
    if (l7)
      ep.shareUnknown =
        "new connections go to Cilium's L7 proxy (Envoy), not to a backend the map picks";
    else if (partial) ep.shareUnknown = 'the listing does not show every backend';
    return ep;
  });
}
