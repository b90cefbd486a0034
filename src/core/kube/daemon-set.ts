// A DaemonSet's rollout as its status says it: how many Pods it schedules, how many are ready and
// of the current template. Where every one is, the status speaks for the Pods kdebug did not list
// one by one (a large cluster's kube-proxy Pods are tens of MB); where it is not, they are listed.
import type { KubeObject } from '../model.js';

export interface Rollout {
  name: string;
  namespace: string;
  /** status.desiredNumberScheduled: the nodes it runs a Pod on. */
  desired: number;
  ready: number;
  updated: number;
  available: number;
  misscheduled: number;
  /** The status describes the current spec (status.observedGeneration caught up). */
  current: boolean;
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) ? v : 0);

export function rolloutOf(ds: KubeObject): Rollout {
  const status = (ds['status'] ?? {}) as Record<string, unknown>;
  const generation = ds.metadata?.['generation'];
  return {
    name: ds.metadata?.name ?? '',
    namespace: ds.metadata?.namespace ?? '',
    desired: count(status['desiredNumberScheduled']),
    ready: count(status['numberReady']),
    updated: count(status['updatedNumberScheduled']),
    available: count(status['numberAvailable']),
    misscheduled: count(status['numberMisscheduled']),
    current: count(status['observedGeneration']) >= count(generation),
  };
}

/** Every Pod it schedules is ready, available and of the current template: nothing to look for
 * among them but restarts. */
export function settled(r: Rollout): boolean {
  return (
    r.current &&
    r.desired > 0 &&
    r.ready === r.desired &&
    r.updated === r.desired &&
    r.available === r.desired &&
    r.misscheduled === 0
  );
}

/** "DaemonSet kube-system/kube-proxy: 5,000 of 5,000 Pods ready, all of the current template". */
export function rolloutText(r: Rollout): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `DaemonSet ${r.namespace}/${r.name}: ${n(r.ready)} of ${n(r.desired)} Pods ready, ${r.updated === r.desired ? 'all' : n(r.updated)} of the current template`;
}

/** The nodes whose kube-proxy Pods a capture read one by one (facts.meta.kubeProxyPodsReadOn):
 * the kube-proxy DaemonSet's status, settled, speaks for the others. Undefined: every Pod read. */
export function kubeProxyPodsReadOn(
  meta: Record<string, unknown>,
): ReadonlySet<string> | undefined {
  const v = meta['kubeProxyPodsReadOn'];
  return Array.isArray(v)
    ? new Set(v.filter((x): x is string => typeof x === 'string'))
    : undefined;
}
