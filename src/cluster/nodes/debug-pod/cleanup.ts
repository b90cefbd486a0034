// `kdebug cleanup`: the debug Pods left behind, each judged by its run's lease, and their deletion,
// each only if it is still the Pod listed. Also a run's own sweep for the Pods of creates whose
// answer it never got.
import { toPod } from '../../../core/kube/objects.js';
import type { KubeObject } from '../../../core/model.js';
import { apiPath } from '../../cluster.js';
import type { KubeApi } from '../../kube-api.js';
import { KubeApiError } from '../../kube/errors.js';
import { DEBUG_NAMESPACE } from '../../permissions.js';
import {
  DEBUG_POD_SELECTOR,
  LEASE_SECONDS,
  notKdebugs,
  OWNER,
  runSelector,
  type RunOwner,
} from './manifest.js';

/** A debug Pod found by `kdebug cleanup`, and whether the run that made it still lives. */
export interface LeftPod {
  namespace: string;
  name: string;
  /** Deleted only if it is still this very Pod (DeleteOptions preconditions). */
  uid: string;
  node?: string;
  phase: string;
  /** Who made it ("host pid N started T"), when it says. */
  owner?: string;
  /** Why it is left behind, or (live) how recently its run renewed it. */
  why: string;
  live: boolean;
}

/** A Pod carrying kdebug's label that kdebug did not make: listed, never deleted. */
export interface ForeignPod {
  namespace: string;
  name: string;
  /** What makes it not kdebug's (an owner, another shape). */
  why: string;
}

export interface CleanupPlan {
  pods: LeftPod[];
  notKdebugs: ForeignPod[];
  /** Where it looked: "all namespaces" or "namespace X". */
  scope: string;
  note?: string;
}

/** The Pod's UID; without one a delete would have no precondition and could hit a Pod made since. */
function uidOf(raw: KubeObject): string | undefined {
  const uid = raw.metadata?.['uid'];
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}

/** Whether a debug Pod's run still lives: it renewed the lease in time and the deadline is ahead. */
function podLiveness(raw: KubeObject, now: Date): { live: boolean; why: string } {
  const p = toPod(raw);
  const a = raw.metadata?.annotations ?? {};
  if (p.phase === 'Succeeded' || p.phase === 'Failed')
    return { live: false, why: `it ended (${p.phase})` };
  const deadline = Date.parse(a[OWNER.deadline] ?? '');
  if (deadline <= now.getTime()) return { live: false, why: 'its deadline passed' };
  const renewed = Date.parse(a[OWNER.renewed] ?? '');
  if (Number.isNaN(renewed)) return { live: false, why: 'it has no lease' };
  const lease = Number(a[OWNER.lease]) || LEASE_SECONDS;
  const ago = Math.max(0, Math.round((now.getTime() - renewed) / 1000));
  return ago > lease
    ? { live: false, why: `its run stopped renewing it ${ago}s ago (lease ${lease}s)` }
    : { live: true, why: `its run renewed it ${ago}s ago` };
}

/** The Pods carrying kdebug's label in one namespace, or in all. */
async function labelled(api: KubeApi, namespace?: string): Promise<KubeObject[]> {
  const path = apiPath({ resource: 'pods', namespace });
  return (await api.list(path, { labelSelector: DEBUG_POD_SELECTOR })).items;
}

/**
 * `kdebug cleanup`'s look: every Pod with kdebug's label, and of those the ones of kdebug's own
 * shape, with their owner's liveness; a label is easy to copy, so the rest are only listed.
 */
export async function debugPodsLeft(
  api: KubeApi,
  o: { namespace?: string; now?: Date } = {},
): Promise<CleanupPlan> {
  let items: KubeObject[];
  let scope = o.namespace ? `namespace ${o.namespace}` : 'all namespaces';
  let note: string | undefined;
  try {
    items = await labelled(api, o.namespace);
  } catch (e) {
    if (o.namespace || !(e instanceof KubeApiError) || e.reason !== 'forbidden') throw e;
    // may not list Pods cluster-wide: look where kdebug puts its debug Pods
    scope = `namespace ${DEBUG_NAMESPACE}`;
    note = `cannot list Pods in all namespaces (${e.message}); looked in ${DEBUG_NAMESPACE} only, kdebug's namespace for debug Pods (use -n for another)`;
    items = await labelled(api, DEBUG_NAMESPACE);
  }
  const now = o.now ?? new Date();
  const pods: LeftPod[] = [];
  const foreign: ForeignPod[] = [];
  for (const raw of items) {
    const p = toPod(raw);
    const uid = uidOf(raw);
    const why = notKdebugs(raw);
    if (why || uid === undefined) {
      foreign.push({ namespace: p.namespace, name: p.name, why: why ?? 'it has no metadata.uid' });
      continue;
    }
    const owner = raw.metadata?.annotations?.[OWNER.owner];
    pods.push({
      namespace: p.namespace,
      name: p.name,
      uid,
      ...(p.nodeName ? { node: p.nodeName } : {}),
      phase: p.phase,
      ...(owner ? { owner } : {}),
      ...podLiveness(raw, now),
    });
  }
  return { pods, notKdebugs: foreign, scope, ...(note ? { note } : {}) };
}

/** Deletes these Pods, each only if it is still the Pod listed; returns those deleted. */
export async function deleteDebugPods(api: KubeApi, pods: LeftPod[]): Promise<LeftPod[]> {
  const deleted: LeftPod[] = [];
  for (const p of pods)
    if (await api.deletePod(p.namespace, p.name, { gracePeriodSeconds: 0, uid: p.uid }))
      deleted.push(p);
  return deleted;
}

/**
 * Deletes the Pods of this run that it holds no UID for: made by a create whose answer was lost
 * (a timeout, a reset connection, a 5xx after the API server stored it). Found by the run's label,
 * on `node` only when given; each deleted only if it is still the Pod listed. Returns how many it
 * found (each now gone).
 */
export async function deleteUnanswered(
  api: KubeApi,
  namespace: string,
  o: { run: RunOwner; node?: string; known: ReadonlySet<string> },
): Promise<number> {
  const path = apiPath({ resource: 'pods', namespace });
  const { items } = await api.list(path, { labelSelector: runSelector(o.run) });
  let found = 0;
  for (const raw of items) {
    const uid = uidOf(raw);
    if (uid === undefined || o.known.has(uid)) continue;
    // a label is easy to copy: only a Pod of kdebug's own shape, naming this run, is deleted
    if (notKdebugs(raw) || raw.metadata?.annotations?.[OWNER.run] !== o.run.id) continue;
    if (o.node !== undefined && toPod(raw).nodeName !== o.node) continue;
    await api.deletePod(namespace, raw.metadata?.name ?? '', { gracePeriodSeconds: 0, uid });
    found++;
  }
  return found;
}
