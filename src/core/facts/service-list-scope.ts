// Which namespaces' Service lists the facts hold whole: only there does "no Service X" mean the API
// has none. Read from meta as collect writes it (cluster/collect.ts): one Service's capture
// (meta.service) reads Services by name, `--all -n NS` lists NS (meta.namespace), `--all -A` and
// a live run list every namespace (neither, with the capturedAt every capture writes).
import type { Facts } from '../model.js';

export type ServiceListScope =
  { kind: 'all' } | { kind: 'namespace'; namespace: string } | { kind: 'none' };

/** The namespaces whose Service lists `facts` hold whole. */
export function serviceListScope(facts: Pick<Facts, 'meta'>): ServiceListScope {
  const { service, namespace, capturedAt } = facts.meta;
  if (typeof service === 'string') return { kind: 'none' };
  if (typeof namespace === 'string') return { kind: 'namespace', namespace };
  // a snapshot kdebug did not capture (no meta.json) says nothing of what was listed
  return typeof capturedAt === 'string' ? { kind: 'all' } : { kind: 'none' };
}

/** Whether `namespace`'s Services were all read. */
export const listedWhole = (scope: ServiceListScope, namespace: string): boolean =>
  scope.kind === 'all' || (scope.kind === 'namespace' && scope.namespace === namespace);
