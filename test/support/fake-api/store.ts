// The fake server's objects: kept as raw JSON with kind/apiVersion, a resourceVersion counter
// like etcd's revision, and the event history that watches replay from a resourceVersion.
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../../../src/core/model.js';
import type { ResourceType } from './resources.js';
import { apiVersionOf, typeOfKind } from './resources.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  rv: number;
  resourceType: ResourceType;
  object: KubeObject;
  /** The object before a MODIFIED, so label-filtered watches can turn it into ADDED/DELETED. */
  previous?: KubeObject;
}

const keyOf = (t: ResourceType, namespace: string | undefined, name: string) =>
  `${t.resource}.${t.group}/${namespace ?? ''}/${name}`;

/** RFC 3339 without fractions, as the API writes creationTimestamp. */
export const apiTime = (d = new Date()) => d.toISOString().replace(/\.\d+Z$/, 'Z');

export class Store {
  private readonly objects = new Map<string, KubeObject>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  /** The current resourceVersion (etcd revision). */
  rv: number;
  /** resourceVersions below this are "too old" for a watch: 410 Expired. */
  compactedRv: number;

  constructor(initial: KubeObject[] = []) {
    let max = 0;
    for (const o of initial) {
      const t = this.typeOf(o);
      const copy = structuredClone(o);
      this.objects.set(keyOf(t, copy.metadata?.namespace, copy.metadata?.name ?? ''), copy);
      const rv = Number(copy.metadata?.['resourceVersion']);
      if (Number.isInteger(rv)) max = Math.max(max, rv);
    }
    this.rv = Math.max(max, 1000) + 1;
    this.compactedRv = this.rv;
  }

  typeOf(o: KubeObject): ResourceType {
    const t = typeOfKind(o.kind);
    if (!t) throw new Error(`the fake API server does not serve kind ${o.kind ?? '(none)'}`);
    return t;
  }

  get(t: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const o = this.objects.get(keyOf(t, t.namespaced ? namespace : undefined, name));
    return o && structuredClone(o);
  }

  /** Objects of one type, sorted by namespace then name as etcd keys are; all namespaces when ns is undefined. */
  list(t: ResourceType, namespace?: string): KubeObject[] {
    const prefix = `${t.resource}.${t.group}/`;
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([, o]) => o)
      .filter((o) => namespace === undefined || o.metadata?.namespace === namespace)
      .sort((a, b) => {
        const ka = `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`;
        const kb = `${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`;
        return ka < kb ? -1 : ka > kb ? 1 : 0;
      })
      .map((o) => structuredClone(o));
  }

  /** Creates or replaces an object (kind required), bumping its resourceVersion; emits ADDED or MODIFIED. */
  put(object: KubeObject): KubeObject {
    const t = this.typeOf(object);
    const o = structuredClone(object);
    o.apiVersion ??= apiVersionOf(t);
    o.metadata ??= {};
    const key = keyOf(t, o.metadata.namespace, o.metadata.name ?? '');
    const previous = this.objects.get(key);
    this.rv++;
    o.metadata['resourceVersion'] = String(this.rv);
    o.metadata['uid'] ??= previous?.metadata?.['uid'] ?? randomUUID();
    o.metadata['creationTimestamp'] ??= previous?.metadata?.['creationTimestamp'] ?? apiTime();
    this.objects.set(key, o);
    this.emit({
      type: previous ? 'MODIFIED' : 'ADDED',
      rv: this.rv,
      resourceType: t,
      object: structuredClone(o),
      previous,
    });
    return structuredClone(o);
  }

  /** Removes an object; emits DELETED. Returns the removed object, or undefined if absent. */
  remove(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    last?: KubeObject,
  ): KubeObject | undefined {
    const key = keyOf(t, t.namespaced ? namespace : undefined, name);
    const current = this.objects.get(key);
    if (!current) return undefined;
    this.objects.delete(key);
    this.rv++;
    const gone = structuredClone(last ?? current);
    gone.metadata!['resourceVersion'] = String(this.rv);
    this.emit({ type: 'DELETED', rv: this.rv, resourceType: t, object: gone });
    return structuredClone(gone);
  }

  /** Forgets history: watches from an older resourceVersion now get 410 Expired. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history.length = 0;
  }

  /** Events after `rv`, for a watch that resumes. */
  since(rv: number): StoreEvent[] {
    return this.history.filter((e) => e.rv > rv);
  }

  subscribe(listener: (e: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: StoreEvent): void {
    this.history.push(e);
    for (const l of this.listeners) l(e);
  }
}
