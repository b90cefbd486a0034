// What to read for a target Service, read in parallel, turned into Facts (the same shape as a
// snapshot). Progress events say what is being read, so the TUI can show it. Secrets are
// never read. Only the target Service is required: any other read that RBAC refuses or that
// fails is recorded in meta.readErrors and the rest carries on. The API reads start here; the
// nodes are read in collect/finish.ts.
import type { Facts } from '../core/model.js';
import type { Cluster } from './cluster.js';
import { EVERY_MODE, loadModes } from '../core/dataplane/modes.js';
import { serviceNotFound } from './kube/suggestions.js';
import { readClusterAddons } from './collect/addons.js';
import { Reader, WHOLE_LIST_PAGE } from './collect/api-reader.js';
import { asRead } from './collect/as-read.js';
import { addressesNamingNoPod, endpointPodRefs } from './collect/endpoint-pods.js';
import { finish, startEarly } from './collect/finish.js';
import { listNodeRows } from './collect/node-rows.js';
import type { CollectOptions } from './collect/options.js';
import { equalitySelector } from './collect/selectors.js';

export type { CollectOptions, CollectProgress, NodeTally } from './collect/options.js';
export { diagnosisCommands, nodeBasics } from './collect/node-plan.js';
export type { ReadError } from '../core/facts/not-read.js';

/** The ServiceCIDRs (networking.k8s.io/v1, 1.33+): a cluster that does not serve them has none. */
function readServiceCIDRs(r: Reader): Promise<unknown> {
  return r.list(
    'ServiceCIDRs',
    { group: 'networking.k8s.io', resource: 'servicecidrs' },
    false,
    true,
  );
}

/** Reads everything kdebug needs to diagnose one Service. Throws ServiceNotFoundError with suggestions. */
export async function collect(
  cluster: Cluster,
  target: { namespace: string; service: string },
  o: CollectOptions = {},
): Promise<Facts> {
  const progress = o.onProgress ?? (() => undefined);
  const r = new Reader(cluster, progress, o.asRead ? asRead : undefined);
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
    o.nodeRows
      ? listNodeRows(r)
      : r.list('Nodes', { resource: 'nodes', pageSize: WHOLE_LIST_PAGE }),
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
  // a live run loads every mode's code up front (its nodes' modes are known only as they are
  // read), alongside the API reads: only snapshots load just the modes they hold
  const [code] = await Promise.all([loadModes(EVERY_MODE), ...reads]);
  if (!(await svc)) throw await serviceNotFound(cluster, ns, name);
  const meta = { namespace: ns, service: name };
  const rollout = await addons.settledKubeProxy;
  const proxy = rollout
    ? { rollout, selector: await addons.kubeProxyPods, on: new Set<string>() }
    : undefined;
  const early = await startEarly(cluster, r, meta, o, progress, addons.kubeProxyPods, code, proxy);
  await listed;
  return finish(cluster, r, meta, o, progress, code, early, proxy);
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
  const [code] = await Promise.all([
    // every mode's code up front, as collect does: the nodes' modes are known only as read
    loadModes(EVERY_MODE),
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
    code,
  );
}
