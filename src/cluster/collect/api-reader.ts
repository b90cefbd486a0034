// Reads from the API through a Cluster, each read reported as it starts and ends: every object is
// kept once, in a stable order, and a read that fails is recorded (meta.readErrors), except one the
// run cannot do without, which stops it.
import type { KubeObject } from '../../core/model.js';
import type { ApiRead, ReadError } from '../../core/facts/not-read.js';
import { canonicalAddress } from '../../core/ipv6.js';
import { apiPath, type Cluster, type ReadRequest, type TableRow } from '../cluster.js';
import { KubeApiError } from '../kube/errors.js';
import type { CollectProgress } from './options.js';

// Failures that no read can get past: stop rather than record. Others are recorded: an API
// server that goes away after the Service was read leaves a report that says what it lost; one
// that never answered fails the Service read, which stops the run.
const FATAL = new Set(['no-kubeconfig', 'kubeconfig', 'credentials', 'closed', 'not-kubernetes']);

const KIND_ORDER = [
  'Service',
  'EndpointSlice',
  'Endpoints',
  'Pod',
  'Node',
  'ServiceCIDR',
  'ConfigMap',
  'DaemonSet',
  'NetworkPolicy',
];

const keyOf = (o: KubeObject) =>
  `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** One API read, as data: where apiPath points, and what the read is for (ApiRead). */
export interface ApiQuery extends ApiRead {
  group?: string;
  labelSelector?: string;
  fieldSelector?: string;
  pageSize?: number;
}

/** Pages of the cluster-wide lists (every Node, every agent Pod): an API server serves pages
 * from its watch cache, and each page costs a round trip (500 at a time makes ten at 5,000
 * nodes: seconds); a page's text and whole tree, managedFields and all, are held while it parses
 * (5,000 kube-proxy Pods: 24 MB of text, 180 MiB peak against 135 MiB in pages of 1,000). */
export const WHOLE_LIST_PAGE = 1000;

/** What a failed read was of, for the checks (never its progress label). */
const readOf = ({ resource, namespace, name, service, addon, podIP }: ApiQuery): ApiRead => ({
  resource,
  ...(namespace !== undefined ? { namespace } : {}),
  ...(name !== undefined ? { name } : {}),
  ...(service !== undefined ? { service } : {}),
  ...(addon ? { addon } : {}),
  ...(podIP !== undefined ? { podIP } : {}),
});

/** Reads through a Cluster, keeping every object once and reporting progress and failures. */
export class Reader {
  private readonly objects = new Map<string, KubeObject>();
  /** The keys of the objects kept from rows, not whole (keepPartial). */
  private readonly partial = new Set<string>();
  readonly errors: ReadError[] = [];
  /** A read the run cannot do without failed: nothing more is started. */
  private stopped = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly progress: (p: CollectProgress) => void,
    /** Keeps of an object only what is read (a diagnosis's Nodes and agent Pods: as-read.ts). */
    private readonly slim?: (o: KubeObject) => KubeObject,
  ) {}

  private async read<T>(
    what: string,
    read: ApiRead,
    f: () => Promise<T>,
    count: (t: T) => number,
    required: boolean,
    fallback: T,
  ): Promise<T> {
    if (this.stopped) return fallback;
    this.progress({ what, state: 'start' });
    try {
      const r = await f();
      this.progress({ what, state: 'done', count: count(r) });
      return r;
    } catch (e) {
      const message = (e as Error).message;
      this.progress({ what, state: 'failed', error: message });
      if (this.stopped) return fallback;
      if (required || !(e instanceof KubeApiError) || FATAL.has(e.reason)) {
        this.stopped = true;
        throw e;
      }
      this.errors.push({ what, read, error: message, reason: e.reason });
      return fallback;
    }
  }

  /** `absentIsEmpty`: an API server that does not serve the resource (404) has none of it. */
  async list(
    what: string,
    q: ApiQuery,
    required = false,
    absentIsEmpty = false,
  ): Promise<KubeObject[]> {
    const request: ReadRequest = {
      path: apiPath(q),
      ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}),
      ...(q.fieldSelector ? { fieldSelector: q.fieldSelector } : {}),
      ...(q.pageSize ? { pageSize: q.pageSize } : {}),
      ...(this.slim ? { cut: this.slim } : {}),
    };
    const items = await this.read(
      what,
      readOf(q),
      () =>
        this.cluster.list(request).catch((e: unknown) => {
          if (absentIsEmpty && e instanceof KubeApiError && e.reason === 'not-found') return [];
          throw e;
        }),
      (r) => r.length,
      required,
      [] as KubeObject[],
    );
    this.keep(items, false);
    return items;
  }

  async get(what: string, q: ApiQuery, required = false): Promise<KubeObject | undefined> {
    const o = await this.read(
      what,
      readOf(q),
      () => this.cluster.get(apiPath(q)),
      (r) => (r ? 1 : 0),
      required,
      undefined,
    );
    if (o) this.keep([o]);
    return o;
  }

  /** A read that only brings early what a later read brings whole (one node's Pods before every
   * node's): kept when it answers; a failure is no loss to record, the whole read says it. */
  async extra(what: string, q: ApiQuery): Promise<boolean> {
    if (this.stopped) return false;
    this.progress({ what, state: 'start' });
    const path = apiPath(q);
    const read =
      q.name !== undefined
        ? this.cluster.get(path).then((x) => (x ? [x] : []))
        : this.cluster.list({
            path,
            ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}),
            ...(q.fieldSelector ? { fieldSelector: q.fieldSelector } : {}),
            ...(this.slim ? { cut: this.slim } : {}),
          });
    const items = await read.catch(() => undefined);
    this.keep(items ?? [], q.name !== undefined);
    this.progress({ what, state: 'done', count: items?.length ?? 0 });
    return items !== undefined;
  }

  /** The rows of a list as the API server prints them (Cluster.listRows); undefined where it
   * serves no Tables or the read failed: the caller lists the objects, and that read says it. */
  async rows(what: string, q: ApiQuery): Promise<TableRow[] | undefined> {
    if (this.stopped || !this.cluster.listRows) return undefined;
    this.progress({ what, state: 'start' });
    const rows = await this.cluster
      .listRows({
        path: apiPath(q),
        ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}),
        ...(q.pageSize ? { pageSize: q.pageSize } : {}),
      })
      .catch(() => undefined);
    this.progress({ what, state: 'done', count: rows?.length ?? 0 });
    return rows;
  }

  /** Objects made of rows (they hold part of what the API has): a read of the whole object
   * replaces each. */
  keepPartial(objects: KubeObject[]): void {
    for (const o of objects)
      if (!this.objects.has(keyOf(o))) {
        this.objects.set(keyOf(o), o);
        this.partial.add(keyOf(o));
      }
  }

  /** Whether only part of this object was read (keepPartial). */
  isPartial(kind: string, namespace: string, name: string): boolean {
    return this.partial.has(`${kind}/${namespace}/${name}`);
  }

  /** The endpoint addresses whose Pods were looked up by address, and answered. */
  readonly podIPLookups: string[] = [];

  /** What the reads record in meta, so far: the failures, the lookups by address, and the Nodes
   * known from their rows only. */
  meta(): { readErrors?: ReadError[]; podIPLookups?: string[]; nodesAsRows?: string[] } {
    const rows = [...this.partial].filter((k) => k.startsWith('Node/')).map((k) => k.slice(6));
    return {
      ...(this.errors.length > 0 ? { readErrors: [...this.errors] } : {}),
      ...(this.podIPLookups.length > 0 ? { podIPLookups: [...this.podIPLookups] } : {}),
      ...(rows.length > 0 ? { nodesAsRows: rows.sort() } : {}),
    };
  }

  /** The Pods, in every namespace, whose first address is `ip` (an API server selects on
   * `status.podIP` only: `status.podIPs` is accepted and matches nothing). */
  async podsWithIP(address: string): Promise<void> {
    // the API server matches the text: Pod addresses are written canonical
    const ip = canonicalAddress(address);
    const q: ApiQuery = { resource: 'pods', podIP: ip };
    const request = {
      path: apiPath(q),
      fieldSelector: `status.podIP=${ip}`,
      ...(this.slim ? { cut: this.slim } : {}),
    };
    const items = await this.read(
      `Pods with address ${ip}`,
      readOf(q),
      () => this.cluster.list(request),
      (r: KubeObject[] | undefined) => r?.length ?? 0,
      false,
      undefined,
    );
    if (!items) return;
    this.keep(items, false);
    this.podIPLookups.push(ip);
  }

  has(kind: string, namespace: string, name: string): boolean {
    return this.objects.has(`${kind}/${namespace}/${name}`);
  }

  /** `cut`: false where the list cut each item as its page arrived (ReadRequest.cut). */
  private keep(objects: KubeObject[], cut = true): void {
    const slim = cut ? this.slim : undefined;
    for (const o of objects)
      if (!this.objects.has(keyOf(o)) || this.partial.delete(keyOf(o)))
        this.objects.set(keyOf(o), slim ? slim(o) : o);
  }

  /** Every object read, in a stable order: by kind, then namespace, then name. */
  sorted(): KubeObject[] {
    const rank = (o: KubeObject) => {
      const i = KIND_ORDER.indexOf(o.kind ?? '');
      return i < 0 ? KIND_ORDER.length : i;
    };
    return [...this.objects.values()].sort(
      (a, b) => rank(a) - rank(b) || (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0),
    );
  }
}
