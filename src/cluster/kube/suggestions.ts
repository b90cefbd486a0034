// "service "wbe" not found; did you mean "web"?": a fuzzy match (fuse.js) over the Service
// names in the namespace, and the same or similar names in other namespaces.
import { apiPath, type Cluster } from '../cluster.js';
import { KubeApiError } from './errors.js';

export interface ServiceRef {
  namespace: string;
  name: string;
}

export class ServiceNotFoundError extends KubeApiError {
  constructor(
    readonly target: ServiceRef,
    readonly suggestions: ServiceRef[],
    message: string,
  ) {
    super('not-found', message, 404);
    this.name = 'ServiceNotFoundError';
  }
}

/** Up to `max` Services whose names look like `name`: exact names in other namespaces first. */
export async function suggestServices(
  name: string,
  namespace: string,
  candidates: ServiceRef[],
  max = 3,
): Promise<ServiceRef[]> {
  const { default: Fuse } = await import('fuse.js');
  const others = candidates.filter((c) => !(c.namespace === namespace && c.name === name));
  const exact = others.filter((c) => c.name === name.toLowerCase()); // names are lower case
  const fuzzy = new Fuse(others, {
    keys: ['name'],
    threshold: 0.35,
    distance: 20,
    includeScore: true,
  })
    .search(name)
    .filter((r) => r.item.name !== name.toLowerCase())
    // same namespace first, then by score, then the length closest to what was typed
    .sort(
      (a, b) =>
        Number(a.item.namespace !== namespace) - Number(b.item.namespace !== namespace) ||
        (a.score ?? 1) - (b.score ?? 1) ||
        Math.abs(a.item.name.length - name.length) - Math.abs(b.item.name.length - name.length),
    )
    .map((r) => r.item);
  return [...exact, ...fuzzy].slice(0, max);
}

function phrase(s: ServiceRef, namespace: string): string {
  return s.namespace === namespace
    ? `"${s.name}"`
    : `"${s.name}" in namespace ${s.namespace} (-n ${s.namespace})`;
}

/** The 404 for a target Service, with suggestions from the namespace and, if readable, the cluster. */
export async function serviceNotFound(
  cluster: Cluster,
  namespace: string,
  name: string,
): Promise<ServiceNotFoundError> {
  const names = async (ns?: string): Promise<ServiceRef[]> => {
    try {
      const items = await cluster.list({ path: apiPath({ resource: 'services', namespace: ns }) });
      return items.map((o) => ({
        namespace: o.metadata?.namespace ?? '',
        name: o.metadata?.name ?? '',
      }));
    } catch {
      return []; // suggestions are a courtesy: no access to list Services means none
    }
  };
  const [here, everywhere] = await Promise.all([names(namespace), names()]);
  const candidates = [...here, ...everywhere.filter((s) => s.namespace !== namespace)];
  const suggestions = await suggestServices(name, namespace, candidates);
  const base = `service "${name}" not found in namespace ${namespace}`;
  let message: string;
  if (suggestions.length > 0) {
    const parts = suggestions.map((s) => phrase(s, namespace));
    const last = parts.pop()!;
    message = `${base}; did you mean ${parts.length > 0 ? `${parts.join(', ')} or ${last}` : last}?`;
  } else {
    message =
      here.length === 0
        ? `${base} (namespace ${namespace} has no Services)`
        : `${base} (no Service has a similar name)`;
  }
  return new ServiceNotFoundError({ namespace, name }, suggestions, message);
}
