// A protocol-faithful fake Kubernetes API server for tests: HTTPS with its own CA, bearer-token
// and client-certificate users, lists/gets/watches as the apiserver writes them, Status bodies
// with the real wording, an RBAC table, Pod create/delete, SelfSubjectAccessReview, and
// pods/exec over WebSocket. It serves raw objects (a snapshot's) and lets a test change them.
import type { ChildProcess } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { WebSocketServer, type WebSocket } from 'ws';
import type { KubeObject } from '../../../src/core/model.js';
import { certs, type Certs } from './certs.js';
import { CH, queryBool, serveExec, type ExecHandler, type ExecRequest } from './exec.js';
import { writeKubeconfig, type KubeconfigOptions } from './kubeconfig.js';
import { defaultPod, generateName, runningPod } from './pods.js';
import { allowed, type Attributes, type RbacTable } from './rbac.js';
import {
  apiVersionOf,
  parseApiPath,
  RESOURCE_TYPES,
  typeOfKind,
  type ApiPath,
  type ResourceType,
} from './resources.js';
import { fieldSelector, labelSelector, SelectorError } from './selectors.js';
import * as status from './status.js';
import { apiTime, Store, type StoreEvent } from './store.js';

export interface FakeApiOptions {
  /** The objects to serve, e.g. `(await readSnapshot(dir)).objects`. */
  objects?: KubeObject[];
  /** Bearer token -> user name. Default: { 'admin-token': 'admin' }. Client certificates name their user by CN. */
  tokens?: Record<string, string>;
  /** Who may do what; everything is allowed when absent. */
  rbac?: RbacTable;
  /** Runs pods/exec commands. Without one, exec answers with an InternalError Status. */
  exec?: ExecHandler;
  /** Subprotocols exec accepts, in preference order. Default: only v5.channel.k8s.io (1.30+). */
  execProtocols?: string[];
  /** Close every watch right after its initial events (a flaky proxy), instead of holding it open. */
  closeWatches?: boolean;
  /** How a watch from a compacted resourceVersion fails: an ERROR event (default) or HTTP 410. */
  expiredWatch?: 'event' | 'http';
  /** Send a BOOKMARK this often on watches that allow them. */
  bookmarkEveryMs?: number;
  /** Requests for which the server never answers (to test timeouts). */
  stall?: (r: RequestRecord) => boolean;
  /** Requests whose connection is reset unanswered (the API server went away). */
  drop?: (r: RequestRecord) => boolean;
  /** Requests carried out whose answer is lost: the connection reset, or never answered. */
  lose?: (r: RequestRecord) => 'reset' | 'hang' | undefined;
  /** Requests answered 200 with a JSON body that never ends (a hostile API server); see floods. */
  flood?: (r: RequestRecord) => boolean;
  /** Execs whose stdout never ends (a node that never stops writing); see floods. */
  floodExec?: (r: ExecRequest) => boolean;
  /** Lists that carry a continue token get 410 Expired (compacted meanwhile), as the apiserver answers. */
  expireContinue?: boolean;
  /** Answer every request this much later (a distant API server). */
  delayMs?: number;
  /** An admission check for created Pods: return a refusal (e.g. a PodSecurity violation) or undefined. */
  admitPod?: (pod: KubeObject) => string | undefined;
  /** Created Pods with a nodeName turn Running after this many ms (false: they stay Pending). Default 20. */
  startPodsAfterMs?: number | false;
}

export interface RequestRecord {
  method: string;
  path: string;
  query: URLSearchParams;
  user?: string;
  /** When it arrived (Date.now()). */
  at: number;
  /** What RBAC was asked for it (exec: get and create), and whether it refused. */
  authorized?: Attributes[];
  refused?: boolean;
  /** Bytes of the answer's body (a plain answer; not a stream). */
  bytes?: number;
}

export interface FakeApi {
  url: string;
  port: number;
  certs: Certs;
  store: Store;
  /** Every request received, in order. */
  requests: RequestRecord[];
  /** Writes a kubeconfig for this server and returns its path. */
  kubeconfig(options?: KubeconfigOptions): string;
  /** A directory removed on close, for a test's own files. */
  dir: string;
  /** Each endless answer (flood, floodExec): how much was sent, and whether the client hung up. */
  floods: Flood[];
  /** Ends every open watch stream (a dropped connection). */
  dropWatches(): void;
  openWatches(): number;
  close(): Promise<void>;
}

export interface Flood {
  path: string;
  /** Bytes of output written so far. */
  sent: number;
  /** The client closed the connection (it stopped reading). */
  closed: boolean;
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** What a flood repeats: 64 KiB, big enough to fill a socket quickly. */
const FLOOD_CHUNK = 64 * 1024;

/** Writes chunks for as long as the client reads them, at its pace; `write` says when to go on. */
function pour(
  flood: Flood,
  open: () => boolean,
  write: (chunk: Buffer, next: () => void) => void,
): void {
  const chunk = Buffer.alloc(FLOOD_CHUNK, 'y');
  const next = () => {
    if (!open()) return;
    flood.sent += chunk.length;
    write(chunk, next);
  };
  next();
}

/** A 200 list answer whose items never end. */
function floodBody(res: ServerResponse, flood: Flood): void {
  res.writeHead(200, JSON_HEADERS);
  res.on('close', () => (flood.closed = true));
  res.write('{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[');
  pour(
    flood,
    () => !res.destroyed,
    (chunk, next) =>
      res.write(`"${chunk.toString()}",`) ? setImmediate(next) : res.once('drain', next),
  );
}

/** An exec whose stdout never ends: the ready frame, then stdout frames until the client closes. */
function floodExec(ws: WebSocket, flood: Flood): void {
  ws.on('close', () => (flood.closed = true));
  ws.on('error', () => undefined);
  ws.send(Buffer.from([CH.stdout]));
  pour(
    flood,
    () => ws.readyState === ws.OPEN,
    (chunk, next) =>
      ws.send(Buffer.concat([Buffer.from([CH.stdout]), chunk]), () => setImmediate(next)),
  );
}

/** RFC 7386: objects merge key by key, null removes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** A single object as GET returns it: kind and apiVersion first. */
const withKind = (t: ResourceType, o: KubeObject): KubeObject => ({
  kind: t.kind,
  apiVersion: apiVersionOf(t),
  ...o,
});

/** A list item: the API leaves kind and apiVersion out. */
/** Nodes as the API server prints them for a Table (includeObject=None, wide columns), as
 * kubernetes v1.37.2 pkg/printers/internalversion/printers.go printNode writes each row. */
function nodeTable(items: KubeObject[], metadata: Record<string, unknown>): unknown {
  const columns = ['Name', 'Status', 'Roles', 'Age', 'Version', 'Internal-IP', 'External-IP'];
  const more = ['OS-Image', 'Kernel-Version', 'Container-Runtime'];
  const rows = items.map((o) => {
    const status = (o['status'] ?? {}) as {
      conditions?: { type: string; status: string }[];
      addresses?: { type: string; address: string }[];
      nodeInfo?: { kubeletVersion?: string };
    };
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    const said = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
    if ((o['spec'] as { unschedulable?: boolean } | undefined)?.unschedulable)
      said.push('SchedulingDisabled');
    const first = (type: string) =>
      status.addresses?.find((a) => a.type === type)?.address ?? '<none>';
    return {
      cells: [
        ...[
          o.metadata?.name,
          said.join(','),
          '<none>',
          '1d',
          status.nodeInfo?.kubeletVersion ?? '',
        ],
        ...[first('InternalIP'), first('ExternalIP'), '<unknown>', '<unknown>', '<unknown>'],
      ],
    };
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: [...columns, ...more].map((name) => ({ name, type: 'string' })),
    rows,
  };
}

function asItem(o: KubeObject): KubeObject {
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return rest;
}

/** Every namespace an object lives in exists as a Namespace object, as on a real cluster. */
function withNamespaces(objects: KubeObject[]): KubeObject[] {
  const have = new Set(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata?.name));
  const needed = new Set(
    objects.map((o) => o.metadata?.namespace).filter((n): n is string => !!n && !have.has(n)),
  );
  const made = [...needed].sort().map((name) => ({
    kind: 'Namespace',
    apiVersion: 'v1',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  }));
  return [...objects, ...made];
}

/** metav1.Status for 409 Conflict: `Operation cannot be fulfilled on KIND "name": why` (errors.NewConflict). */
function conflict(resource: string, name: string, why: string): status.StatusBody {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `Operation cannot be fulfilled on ${resource} "${name}": ${why}`,
    reason: 'Conflict',
    details: { name, kind: resource },
    code: 409,
  };
}

/** A 422 Status: its causes name the field (metav1.StatusCause). */
type InvalidBody = Omit<status.StatusBody, 'details'> & {
  details: {
    name: string;
    kind: string;
    causes: { reason: string; message: string; field: string }[];
  };
};

/** The 422 an update that changes metadata.uid gets (ValidateObjectMetaUpdate: uid is immutable). */
function uidImmutable(kind: string, name: string, uid: string): InvalidBody {
  const cause = `Invalid value: ${JSON.stringify(uid)}: field is immutable`;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${kind} "${name}" is invalid: metadata.uid: ${cause}`,
    reason: 'Invalid',
    details: {
      name,
      kind,
      causes: [{ reason: 'FieldValueInvalid', message: cause, field: 'metadata.uid' }],
    },
    code: 422,
  };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

export async function startFakeApi(options: FakeApiOptions = {}): Promise<FakeApi> {
  const c = certs();
  const store = new Store(withNamespaces(options.objects ?? []));
  const tokens = options.tokens ?? { 'admin-token': 'admin' };
  const requests: RequestRecord[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-fake-api-'));
  const watches = new Set<ServerResponse>();
  const stalled = new Set<ServerResponse>();
  const processes = new Set<ChildProcess>();
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const floods: Flood[] = [];
  const floodOf = (path: string) => {
    const f = { path, sent: 0, closed: false };
    floods.push(f);
    return f;
  };

  const authenticate = (req: IncomingMessage): string | undefined => {
    const socket = req.socket as TLSSocket;
    if (socket.authorized) {
      const cn = socket.getPeerCertificate()?.subject?.CN;
      if (cn) return Array.isArray(cn) ? cn[0] : cn;
    }
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    return m ? tokens[m[1]!] : undefined;
  };

  const refuse = (user: string, verb: string, p: ApiPath) =>
    status.forbidden({
      user,
      verb,
      type: p.type,
      subresource: p.subresource,
      namespace: p.namespace,
      name: p.name,
    });

  const may = (user: string, verb: string, p: ApiPath, record?: RequestRecord) => {
    const a = { user, verb, type: p.type, subresource: p.subresource, namespace: p.namespace };
    const ok = allowed(options.rbac, a);
    if (record) {
      (record.authorized ??= []).push(a);
      record.refused ||= !ok;
    }
    return ok;
  };

  function list(res: ServerResponse, p: ApiPath, q: URLSearchParams, accept = ''): void {
    const match = compileSelectors(p, q);
    let items = store.list(p.type, p.namespace).filter(match);
    const metadata: Record<string, unknown> = { resourceVersion: String(store.rv) };
    // paging: continue holds the last key served, like the apiserver's continue token
    const cont = q.get('continue');
    if (cont && options.expireContinue)
      return send(
        res,
        410,
        status.expired(
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        ),
      );
    if (cont) {
      const start = (
        JSON.parse(Buffer.from(cont, 'base64url').toString('utf8')) as { start: string }
      ).start;
      items = items.filter((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}` > start);
    }
    const limit = Number(q.get('limit') ?? 0);
    if (limit > 0 && items.length > limit) {
      const last = items[limit - 1]!;
      const start = `${last.metadata?.namespace ?? ''}/${last.metadata?.name}`;
      metadata['continue'] = Buffer.from(
        JSON.stringify({ v: 'meta.k8s.io/v1', rv: store.rv, start }),
      ).toString('base64url');
      metadata['remainingItemCount'] = items.length - limit;
      items = items.slice(0, limit);
    }
    if (p.type.resource === 'endpoints') {
      res.setHeader(
        'Warning',
        '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"',
      );
    }
    // kubectl get's Table, where asked for (Nodes only: the one kind kdebug lists as rows)
    if (p.type.resource === 'nodes' && accept.includes('as=Table'))
      return send(res, 200, nodeTable(items, metadata));
    send(res, 200, {
      kind: `${p.type.kind}List`,
      apiVersion: apiVersionOf(p.type),
      metadata,
      items: items.map(asItem),
    });
  }

  function compileSelectors(p: ApiPath, q: URLSearchParams): (o: KubeObject) => boolean {
    const labels = labelSelector(q.get('labelSelector'));
    const fields = fieldSelector(q.get('fieldSelector'), p.type.fields);
    return (o) =>
      (p.namespace === undefined || o.metadata?.namespace === p.namespace) &&
      labels(o) &&
      fields(o);
  }

  function watch(res: ServerResponse, p: ApiPath, q: URLSearchParams): void {
    const match = compileSelectors(p, q);
    const rvParam = q.get('resourceVersion');
    const write = (type: string, object: unknown) =>
      res.write(JSON.stringify({ type, object }) + '\n');
    if (rvParam && rvParam !== '0' && Number(rvParam) < store.compactedRv) {
      const gone = status.expired(`too old resource version: ${rvParam} (${store.compactedRv})`);
      if (options.expiredWatch === 'http') return send(res, 410, gone);
      res.writeHead(200, { ...JSON_HEADERS, 'Transfer-Encoding': 'chunked' });
      write('ERROR', gone);
      res.end();
      return;
    }
    res.writeHead(200, { ...JSON_HEADERS, 'Transfer-Encoding': 'chunked' });
    // the apiserver sends the headers at once, before any event
    res.flushHeaders();
    // label-filtered watches see an object leave or enter the selection as DELETED/ADDED
    const translate = (e: StoreEvent) => {
      if (e.resourceType !== p.type) return;
      const now = match(e.object);
      const before = e.previous ? match(e.previous) : false;
      if (e.type === 'ADDED' && now) write('ADDED', e.object);
      else if (e.type === 'DELETED' && now) write('DELETED', e.object);
      else if (e.type === 'MODIFIED' && now) write(before ? 'MODIFIED' : 'ADDED', e.object);
      else if (e.type === 'MODIFIED' && before) write('DELETED', e.object);
    };
    const unsubscribe = store.subscribe(translate);
    if (!rvParam || rvParam === '0') {
      for (const o of store.list(p.type, p.namespace).filter(match))
        write('ADDED', withKind(p.type, o));
    } else {
      for (const e of store.since(Number(rvParam))) translate(e);
    }
    watches.add(res);
    const own: NodeJS.Timeout[] = [];
    const end = () => {
      unsubscribe();
      watches.delete(res);
      for (const t of own) {
        clearTimeout(t);
        clearInterval(t);
        timers.delete(t);
      }
    };
    res.on('close', end);
    if (options.closeWatches) {
      res.end();
      return;
    }
    if (options.bookmarkEveryMs && queryBool(q, 'allowWatchBookmarks')) {
      const bookmark = () =>
        write('BOOKMARK', {
          kind: p.type.kind,
          apiVersion: apiVersionOf(p.type),
          metadata: { resourceVersion: String(store.rv) },
        });
      own.push(setInterval(bookmark, options.bookmarkEveryMs));
    }
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    if (timeout > 0) own.push(setTimeout(() => res.end(), timeout * 1000));
    own.forEach((t) => timers.add(t));
  }

  function startLater(pod: KubeObject): void {
    if (options.startPodsAfterMs === false) return;
    const nodeName = (pod['spec'] as { nodeName?: string } | undefined)?.nodeName;
    if (!nodeName) return;
    const t = setTimeout(() => {
      timers.delete(t);
      const pods = typeOfKind('Pod')!;
      const current = store.get(pods, pod.metadata?.namespace, pod.metadata?.name ?? '');
      if (!current) return;
      const node = store.get(typeOfKind('Node')!, undefined, nodeName);
      const addresses =
        (node?.['status'] as { addresses?: { type: string; address: string }[] })?.addresses ?? [];
      const hostIP = addresses.find((a) => a.type === 'InternalIP')?.address ?? '192.0.2.10';
      store.put(runningPod(current, hostIP));
    }, options.startPodsAfterMs ?? 20);
    timers.add(t);
  }

  async function create(
    req: IncomingMessage,
    res: ServerResponse,
    p: ApiPath,
    user: string,
  ): Promise<void> {
    let body: KubeObject;
    try {
      body = (await readBody(req)) as KubeObject;
    } catch (e) {
      send(
        res,
        400,
        status.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`),
      );
      return;
    }
    if (p.type.resource === 'selfsubjectaccessreviews') {
      const attrs =
        (body['spec'] as { resourceAttributes?: Record<string, string> })?.resourceAttributes ?? {};
      const type = RESOURCE_TYPES.find(
        (t) => t.resource === attrs['resource'] && t.group === (attrs['group'] ?? ''),
      );
      const ok =
        type !== undefined &&
        allowed(options.rbac, {
          user,
          verb: attrs['verb'] ?? '',
          type,
          subresource: attrs['subresource'] || undefined,
          namespace: attrs['namespace'] || undefined,
        });
      send(res, 201, {
        kind: 'SelfSubjectAccessReview',
        apiVersion: 'authorization.k8s.io/v1',
        metadata: { creationTimestamp: null },
        spec: body['spec'],
        status: ok
          ? { allowed: true, reason: "RBAC: allowed by the fake API server's RBAC table" }
          : { allowed: false },
      });
      return;
    }
    if (p.type.kind === 'Namespace' && !p.namespace) return createNamespace(res, p, body);
    if (p.type.kind !== 'Pod' || !p.namespace) {
      send(res, 405, status.methodNotAllowed());
      return;
    }
    const meta = body.metadata ?? {};
    if (meta.namespace && meta.namespace !== p.namespace) {
      send(
        res,
        400,
        status.badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        ),
      );
      return;
    }
    const base = meta['generateName'];
    const name = meta.name || (typeof base === 'string' && base ? generateName(base) : '');
    if (!name) {
      send(res, 422, {
        ...status.badRequest(
          'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
        ),
        reason: 'Invalid',
        code: 422,
      });
      return;
    }
    if (store.get(p.type, p.namespace, name)) {
      send(res, 409, status.alreadyExists(p.type, name));
      return;
    }
    const refusal = options.admitPod?.(body);
    if (refusal) {
      send(res, 403, status.admissionForbidden(p.type, name, refusal));
      return;
    }
    const pod = store.put(defaultPod(body, p.namespace, name));
    startLater(pod);
    send(res, 201, pod);
  }

  /** A Namespace as the apiserver makes one: its name label, the kubernetes finalizer, Active. */
  function createNamespace(res: ServerResponse, p: ApiPath, body: KubeObject): void {
    const name = body.metadata?.name ?? '';
    if (store.get(p.type, undefined, name))
      return send(res, 409, status.alreadyExists(p.type, name));
    const made = store.put({
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: {
        ...body.metadata,
        labels: { ...body.metadata?.labels, 'kubernetes.io/metadata.name': name },
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
    send(res, 201, made);
  }

  /**
   * DeleteOptions preconditions, checked before the delete as rest.BeforeDelete does: another
   * uid answers 409 and the object stays. True when it answered.
   */
  async function deletePreconditionFailed(
    req: IncomingMessage,
    res: ServerResponse,
    p: ApiPath,
  ): Promise<boolean> {
    const want = ((await readBody(req)) as { preconditions?: { uid?: string } }).preconditions?.uid;
    const current = p.name ? store.get(p.type, p.namespace, p.name) : undefined;
    const uid = current?.metadata?.['uid'];
    if (!want || !current || want === uid) return false;
    const why = `the UID in the precondition (${want}) does not match the UID in record (${String(uid)}). The object might have been deleted and then recreated`;
    send(res, 409, conflict(p.type.kind, p.name!, why));
    return true;
  }

  /** PATCH as the apiserver takes a JSON merge patch (RFC 7386); other patch types are 415. */
  async function patch(req: IncomingMessage, res: ServerResponse, p: ApiPath): Promise<void> {
    const type = req.headers['content-type'] ?? '';
    if (type !== 'application/merge-patch+json') {
      send(res, 415, {
        ...status.badRequest(
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
        ),
        reason: 'UnsupportedMediaType',
        code: 415,
      });
      return;
    }
    const current = store.get(p.type, p.namespace, p.name!);
    if (!current) return send(res, 404, status.notFound(p.type, p.name!));
    const body = await readBody(req);
    // a patch naming another uid is refused: the name now means another object
    const uid = (body as KubeObject | null)?.metadata?.['uid'];
    if (typeof uid === 'string' && uid !== current.metadata?.['uid'])
      return send(res, 422, uidImmutable(p.type.kind, p.name!, uid));
    send(res, 200, withKind(p.type, store.put(mergePatch(current, body) as KubeObject)));
  }

  function remove(res: ServerResponse, p: ApiPath): void {
    if (p.type.kind !== 'Pod' || !p.name) {
      send(res, 405, status.methodNotAllowed());
      return;
    }
    const current = store.get(p.type, p.namespace, p.name);
    if (!current) {
      send(res, 404, status.notFound(p.type, p.name));
      return;
    }
    const grace = Number(
      (current['spec'] as { terminationGracePeriodSeconds?: number })
        ?.terminationGracePeriodSeconds ?? 30,
    );
    current.metadata = {
      ...current.metadata,
      deletionTimestamp: apiTime(new Date(Date.now() + grace * 1000)),
      deletionGracePeriodSeconds: grace,
    };
    send(res, 200, store.remove(p.type, p.namespace, p.name, current));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://fake');
    const record: RequestRecord = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      at: Date.now(),
    };
    requests.push(record);
    // what the answer weighs: for the benches' bytes per request
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    res.end = ((...a: unknown[]) => {
      if (typeof a[0] === 'string' || Buffer.isBuffer(a[0]))
        record.bytes = (record.bytes ?? 0) + Buffer.byteLength(a[0]);
      return end(...a);
    }) as typeof res.end;
    if (options.stall?.(record)) {
      stalled.add(res);
      return;
    }
    if (options.drop?.(record)) return void req.socket.destroy();
    const lost = options.lose?.(record);
    // the request is carried out; its answer never reaches the client
    if (lost)
      res.end = (() => {
        if (lost === 'reset') req.socket.destroy();
        else stalled.add(res);
        return res;
      }) as typeof res.end;
    if (options.flood?.(record)) return floodBody(res, floodOf(record.path));
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    const user = authenticate(req);
    if (!user) return send(res, 401, status.unauthorized());
    record.user = user;
    const p = parseApiPath(url.pathname);
    if (!p) return send(res, 404, status.noSuchResource());
    const q = url.searchParams;
    if (p.subresource && p.subresource !== 'exec') return send(res, 404, status.noSuchResource());
    const verb =
      req.method === 'GET'
        ? p.name
          ? 'get'
          : queryBool(q, 'watch')
            ? 'watch'
            : 'list'
        : req.method === 'POST'
          ? 'create'
          : req.method === 'DELETE'
            ? 'delete'
            : req.method === 'PATCH' && p.name
              ? 'patch'
              : undefined;
    if (!verb) return send(res, 405, status.methodNotAllowed());
    if (p.type.resource !== 'selfsubjectaccessreviews' && !may(user, verb, p, record))
      return send(res, 403, refuse(user, verb, p));
    if (p.subresource === 'exec')
      return send(res, 400, status.badRequest('Upgrade request required'));
    try {
      if (verb === 'get') {
        const o = store.get(p.type, p.namespace, p.name!);
        return o
          ? send(res, 200, withKind(p.type, o))
          : send(res, 404, status.notFound(p.type, p.name!));
      }
      if (verb === 'list') return list(res, p, q, req.headers.accept ?? '');
      if (verb === 'watch') return watch(res, p, q);
      if (verb === 'create') return await create(req, res, p, user);
      if (verb === 'patch') return await patch(req, res, p);
      if (await deletePreconditionFailed(req, res, p)) return;
      return remove(res, p);
    } catch (e) {
      if (e instanceof SelectorError) return send(res, 400, status.badRequest(e.message));
      throw e;
    }
  }

  const server: Server = createServer(
    {
      key: c.server.key,
      cert: c.server.cert,
      ca: c.ca.cert,
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      handle(req, res).catch((e: Error) => {
        if (!res.headersSent) send(res, 500, status.internalError(e.message));
      });
    },
  );
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const protocols = options.execProtocols ?? ['v5.channel.k8s.io'];
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => protocols.find((p) => offered.has(p)) ?? false,
  });

  // pods/exec: authenticate, authorize (get and create, as 1.35+ does), resolve the container, upgrade
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'https://fake');
    const record: RequestRecord = {
      method: 'GET',
      path: url.pathname,
      query: url.searchParams,
      at: Date.now(),
    };
    requests.push(record);
    if (options.drop?.(record)) return void socket.destroy();
    // an upgrade never answered: the kubelet behind it is not reached (closed with the server)
    if (options.stall?.(record)) return;
    const reject = (code: number, body: unknown) => {
      const text = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${code} ${code === 403 ? 'Forbidden' : code === 404 ? 'Not Found' : code === 401 ? 'Unauthorized' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
      );
    };
    const user = authenticate(req);
    if (!user) return reject(401, status.unauthorized());
    record.user = user;
    const p = parseApiPath(url.pathname);
    if (!p || p.type.kind !== 'Pod' || p.subresource !== 'exec' || !p.name || !p.namespace)
      return reject(404, status.noSuchResource());
    for (const verb of ['get', 'create']) {
      if (!may(user, verb, p, record)) return reject(403, refuse(user, verb, p));
    }
    const q = url.searchParams;
    const streams = {
      stdin: queryBool(q, 'stdin'),
      stdout: queryBool(q, 'stdout'),
      stderr: queryBool(q, 'stderr'),
      tty: queryBool(q, 'tty'),
    };
    if (!streams.stdin && !streams.stdout && !streams.stderr)
      return reject(400, status.badRequest('you must specify at least 1 of stdin, stdout, stderr'));
    const pod = store.get(p.type, p.namespace, p.name);
    if (!pod) return reject(404, status.notFound(p.type, p.name));
    const containers = ((pod['spec'] as { containers?: { name: string }[] })?.containers ?? []).map(
      (x) => x.name,
    );
    let container = q.get('container') ?? '';
    if (!container) {
      if (containers.length !== 1) {
        return reject(
          400,
          status.badRequest(
            `a container name must be specified for pod ${p.name}, choose one of: [${containers.join(' ')}]`,
          ),
        );
      }
      container = containers[0]!;
    }
    if (!containers.includes(container))
      return reject(
        400,
        status.badRequest(`container ${container} is not valid for pod ${p.name}`),
      );
    if (!(pod['spec'] as { nodeName?: string })?.nodeName)
      return reject(400, status.badRequest(`pod ${p.name} does not have a host assigned`));
    const handler: ExecHandler =
      options.exec ??
      (() => {
        throw new Error('exec is not configured on this fake API server');
      });
    wss.handleUpgrade(req, socket, head, (ws) => {
      const execReq = {
        namespace: p.namespace!,
        pod,
        container,
        command: q.getAll('command'),
        user,
        protocol: ws.protocol,
        ...streams,
      };
      if (options.floodExec?.(execReq)) return floodExec(ws, floodOf(url.pathname));
      void serveExec(ws, execReq, handler, (proc) => {
        processes.add(proc);
        proc.on('close', () => processes.delete(proc));
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `https://127.0.0.1:${port}`;
  return {
    url,
    port,
    certs: c,
    store,
    requests,
    dir,
    kubeconfig: (o = {}) => writeKubeconfig({ url, certs: c, tokens, dir }, o),
    floods,
    dropWatches: () => {
      for (const w of watches) w.destroy();
    },
    openWatches: () => watches.size,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      for (const w of [...watches, ...stalled]) w.destroy();
      for (const proc of processes) proc.kill('SIGKILL');
      for (const client of wss.clients) client.terminate();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
