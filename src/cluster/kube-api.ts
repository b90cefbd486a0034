// The Kubernetes API through the user's kubeconfig (@kubernetes/client-node 1.4 for kubeconfig,
// credentials, TLS and exec). Reads use raw HTTP so objects stay exactly as the API returned
// them: client-node's typed models drop unknown fields and turn timestamps into Dates.
// Every request has a deadline; client-node has none.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node';
import type * as ClientNodeModule from '@kubernetes/client-node';
import type { KubeObject } from '../core/model.js';
import {
  DEFAULT_MAX_OUTPUT_BYTES,
  OutputBuffer,
  outputOverLimit,
  overLimit,
} from '../core/not-read.js';
import { apiPath, type NodeResult } from './cluster.js';
import {
  loadKubeconfig,
  type KubeconfigOptions,
  type LoadedKubeconfig,
} from './kube/kubeconfig.js';
import {
  bodyPhrase,
  credentialsError,
  foreignAnswer,
  httpError,
  KubeApiError,
  kubeletUnreachable,
  notKubernetes,
  parseStatus,
  refusal,
  timeoutError,
  transportError,
  type ApiServer,
  type HttpAnswer,
  type KubeStatus,
  type RequestInfo,
} from './kube/errors.js';

export interface KubeApiOptions extends KubeconfigOptions {
  /** Deadline for each request, credentials and connection included. Default 15 s. */
  timeoutMs?: number;
  /** Items per page for lists (the API's limit/continue). Default 500, as kubectl. */
  pageSize?: number;
  /** The most one answer, or one list's pages together, may hold. Default 256 MiB. */
  maxBodyBytes?: number;
  /** The most an exec's stdout may hold (see KubeApi.maxExecOutputBytes). Default 256 MiB. */
  maxExecOutputBytes?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** The body's type; default application/json (PATCH needs a patch type). */
  contentType?: string;
  timeoutMs?: number;
  /** The most this answer may hold (a list's pages share one budget); default maxBodyBytes. */
  maxBytes?: number;
}

export interface ListResult {
  /** Items with apiVersion and kind filled in from the list, as `kubectl get -o json` prints them. */
  items: KubeObject[];
  resourceVersion: string;
}

/** A command run in a container: a node command's result before it knows its binary or its
 * transport. */
export type ExecResult = Omit<NodeResult, 'missingBinary' | 'via'>;

export interface AccessCheck {
  verb: string;
  resource: string;
  group?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** The exit code from an exec's channel-3 Status (INTEGRATION.md 2.6). */
export function execOutcome(status: KubeStatus | undefined): {
  exitCode: number | null;
  error?: string;
} {
  if (!status) return { exitCode: null, error: 'the exec stream closed without an exit status' };
  if (status.status === 'Success') return { exitCode: 0 };
  if (status.reason === 'NonZeroExitCode') {
    const code = Number(status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message);
    if (Number.isInteger(code)) return { exitCode: code };
  }
  const said = status.message || status.reason || 'the command could not run';
  return { exitCode: null, error: kubeletUnreachable(said) ?? said };
}

type ClientNode = typeof ClientNodeModule;

export class KubeApi {
  readonly apiServer: ApiServer;
  private readonly timeoutMs: number;
  private readonly pageSize: number;
  private readonly maxBodyBytes: number;
  /** The node transport sets it from --max-output-mib: every exec, kube-proxy's or a debug Pod's. */
  maxExecOutputBytes: number;
  /** Exec credential plugins still running. */
  private readonly plugins = new Set<ChildProcess>();
  /** Aborted by close(): ends every request, stream and exec still running. */
  private readonly closing = new AbortController();
  /** The bytes of the JSON answers read so far (KDEBUG_TIMINGS tells what a run read). */
  bytesRead = 0;
  /** GET /api, asked once the first answer looks like another server's (see discover). */
  private discovery?: Promise<void>;

  private constructor(
    private readonly k8s: ClientNode,
    readonly config: LoadedKubeconfig,
    o: KubeApiOptions,
  ) {
    this.apiServer = { server: config.server, context: config.context, user: config.user };
    this.timeoutMs = o.timeoutMs ?? 15_000;
    this.pageSize = o.pageSize ?? 500;
    this.maxBodyBytes = o.maxBodyBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.maxExecOutputBytes = o.maxExecOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    // every request in flight listens here; collect runs a dozen at once
    setMaxListeners(0, this.closing.signal);
    trackPlugins(config.kc, this.plugins);
    shareTlsContext(config.kc);
  }

  /** Loads the kubeconfig (kubectl's rules) and client-node, lazily: neither is needed offline. */
  static async connect(o: KubeApiOptions = {}): Promise<KubeApi> {
    const config = await loadKubeconfig(o);
    return new KubeApi(await import('@kubernetes/client-node'), config, o);
  }

  get namespace(): string {
    return this.config.namespace;
  }

  /** Ends every request, watch stream and exec still running; later calls fail. */
  close(): void {
    this.closing.abort();
    this.stopPlugins();
  }

  /** A credential plugin past the deadline (waiting for a login, say) would keep kdebug alive. */
  private stopPlugins(): void {
    for (const child of this.plugins) child.kill('SIGKILL');
  }

  /** An AbortController that close() aborts too; call the returned function when done. */
  private controller(): [AbortController, () => void] {
    const ac = new AbortController();
    const stop = () => ac.abort();
    if (this.closing.signal.aborted) ac.abort();
    this.closing.signal.addEventListener('abort', stop, { once: true });
    return [ac, () => this.closing.signal.removeEventListener('abort', stop)];
  }

  private closedError(): KubeApiError {
    return new KubeApiError(
      'closed',
      `the connection to ${this.apiServer.server} was closed by kdebug`,
    );
  }

  /** Opens one request and returns the response once its headers arrive (2xx only). */
  private async open(
    method: string,
    path: string,
    o: RequestOptions,
    signal: AbortSignal,
    info: RequestInfo,
  ): Promise<IncomingMessage> {
    const url = new URL(this.apiServer.server + path);
    for (const [k, v] of Object.entries(o.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    const opts: https.RequestOptions = {
      method,
      headers: {
        Accept: 'application/json',
        // Node sends a DELETE's body unframed unless told its length (DeleteOptions preconditions)
        ...(body
          ? {
              'Content-Type': o.contentType ?? 'application/json',
              'Content-Length': Buffer.byteLength(body),
            }
          : {}),
      },
    };
    try {
      // credentials may come from an exec plugin: that counts against the deadline too
      await raceAbort(this.config.kc.applyToHTTPSOptions(opts), signal);
    } catch (e) {
      if (signal.aborted) {
        this.stopPlugins();
        throw e;
      }
      throw credentialsError(this.apiServer, this.config.execPlugin, e);
    }
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = (url.protocol === 'http:' ? http : https).request(
        url,
        { ...opts, signal },
        resolve,
      );
      req.on('error', reject);
      req.end(body);
    }).catch((e: unknown) => {
      throw signal.aborted ? e : transportError(this.apiServer, e);
    });
    if (res.statusCode && res.statusCode >= 200 && res.statusCode < 300) return res;
    throw await this.failure(await httpAnswer(res, url), info, signal);
  }

  /**
   * A non-2xx answer as an error. A 404 without the API's Status is another server's (a web site,
   * a proxy without the cluster's path) unless GET /api shows the Kubernetes API there: it answers
   * a path it does not serve (an API group this cluster lacks) with a plain 404 too, never one of
   * its built-in groups.
   */
  private async failure(
    a: HttpAnswer,
    info: RequestInfo,
    signal: AbortSignal,
  ): Promise<KubeApiError> {
    const foreign = foreignAnswer(this.apiServer, info, a);
    if (foreign) return foreign;
    if (a.code === 404 && !parseStatus(a.body)) {
      if (DISCOVERY_PATHS.has(info.path))
        return notKubernetes(
          this.apiServer,
          `${info.method} ${info.path} answered 404 with ${bodyPhrase(a.body)}, not the API's discovery`,
        );
      // throws the verdict when it is not the API
      await raceAbort(this.discover(), signal);
      // every kube-apiserver serves these groups: a plain 404 there is something in front of it
      if (BUILT_IN_GROUP.test(info.path))
        return notKubernetes(
          this.apiServer,
          `GET /api answers as the Kubernetes API does, but ${info.method} ${info.path} answered 404 with ${bodyPhrase(a.body)}, which a kube-apiserver never does for its own ${info.path.startsWith('/api/') ? 'core' : 'apps'} group (a proxy serving part of it?)`,
        );
    }
    return httpError(this.apiServer, info, a.code, a.body);
  }

  /**
   * Resolves when the server is the Kubernetes API: GET /api lists its versions (kind
   * APIVersions), or refuses with the API's Status (401, 403). Else rejects with why not. Asked
   * only after a foreign-looking 404, never on a healthy run, and once however many reads wait.
   */
  private discover(): Promise<void> {
    this.discovery ??= this.request('GET', '/api').then(
      (body) => {
        const kind = (body as { kind?: unknown } | null)?.kind;
        if (kind !== 'APIVersions')
          throw notKubernetes(
            this.apiServer,
            `GET /api answered JSON${typeof kind === 'string' ? ` of kind ${kind}` : ''}, not the API's list of versions (APIVersions)`,
          );
      },
      (e: unknown) => {
        if (!(e instanceof KubeApiError && e.status)) throw e;
      },
    );
    return this.discovery;
  }

  /** One request with a deadline; returns the parsed JSON body exactly as sent. */
  async request(method: string, path: string, o: RequestOptions = {}): Promise<unknown> {
    return (await this.answer(method, path, o)).body;
  }

  /** request(), and the answer's size in bytes. */
  private async answer(
    method: string,
    path: string,
    o: RequestOptions,
  ): Promise<{ body: unknown; size: number }> {
    const ms = o.timeoutMs ?? this.timeoutMs;
    const info: RequestInfo = { method, path, watch: o.query?.['watch'] === true };
    const [ac, done] = this.controller();
    const timer = setTimeout(() => ac.abort(), ms);
    try {
      const res = await this.open(method, path, o, ac.signal, info);
      const type = res.headers['content-type'] ?? 'no Content-Type';
      const unreadable = (why: string) =>
        new KubeApiError(
          'server',
          `the API server at ${this.apiServer.server} answered ${method} ${path} with ${why}`,
        );
      const json = /json/.test(type);
      // what is not JSON is read only as far as telling a web page from a broken answer
      const text = await readText(res, json ? (o.maxBytes ?? this.maxBodyBytes) : ERROR_BODY_BYTES);
      const code = res.statusCode ?? 200;
      const page = foreignAnswer(this.apiServer, info, {
        code,
        body: text ?? '',
        contentType: type,
      });
      if (page) throw page;
      if (!json) throw unreadable(`${type}, not JSON`);
      if (text === undefined) throw unreadable(overLimit(this.maxBodyBytes));
      try {
        const size = Buffer.byteLength(text);
        this.bytesRead += size;
        return { body: JSON.parse(text) as unknown, size };
      } catch (e) {
        throw unreadable(`invalid JSON: ${(e as Error).message}`);
      }
    } catch (e) {
      if (this.closing.signal.aborted) throw this.closedError();
      if (ac.signal.aborted) throw timeoutError(this.apiServer, info, ms);
      throw e;
    } finally {
      clearTimeout(timer);
      done();
    }
  }

  /** A streaming GET (watch): resolves once the headers arrive; `signal` ends it. */
  async stream(
    path: string,
    query: RequestOptions['query'],
    signal: AbortSignal,
    connectTimeoutMs = this.timeoutMs,
  ): Promise<IncomingMessage> {
    const info: RequestInfo = { method: 'GET', path, watch: true };
    const [ac, done] = this.controller();
    const onAbort = () => ac.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => ac.abort(), connectTimeoutMs);
    try {
      const res = await this.open('GET', path, { query }, ac.signal, info);
      res.on('close', () => {
        signal.removeEventListener('abort', onAbort);
        done();
      });
      return res;
    } catch (e) {
      signal.removeEventListener('abort', onAbort);
      done();
      if (this.closing.signal.aborted) throw this.closedError();
      if (ac.signal.aborted && !signal.aborted)
        throw timeoutError(this.apiServer, info, connectTimeoutMs);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** One object as the API returned it. */
  async get(path: string): Promise<KubeObject> {
    return (await this.request('GET', path)) as KubeObject;
  }

  /** One object, or undefined when the API says 404. */
  async getIfExists(path: string): Promise<KubeObject | undefined> {
    try {
      const o = await this.get(path);
      // every object a Kubernetes API server answers says its kind and has metadata
      if (typeof o.kind !== 'string' || o.metadata === null || typeof o.metadata !== 'object')
        throw notKubernetes(
          this.apiServer,
          `GET ${path} answered JSON that is no Kubernetes object`,
        );
      return o;
    } catch (e) {
      if (e instanceof KubeApiError && e.reason === 'not-found') return undefined;
      throw e;
    }
  }

  /** Every item of a list, page by page (limit/continue), with kind and apiVersion filled in. */
  async list(
    path: string,
    o: { labelSelector?: string; fieldSelector?: string; pageSize?: number } = {},
  ): Promise<ListResult> {
    const items: KubeObject[] = [];
    let resourceVersion = '';
    let cont: string | undefined;
    let limit: number | undefined = o.pageSize ?? this.pageSize;
    // the pages share one budget: a server that never stops paging is bounded too
    let room = this.maxBodyBytes;
    for (;;) {
      let answer;
      try {
        answer = await this.answer('GET', path, {
          query: {
            labelSelector: o.labelSelector,
            fieldSelector: o.fieldSelector,
            limit,
            continue: cont,
          },
          maxBytes: room,
        });
      } catch (e) {
        // the continue token expired (410): start again in one page, as client-go's pager does
        if (!(e instanceof KubeApiError && e.reason === 'expired' && cont)) throw e;
        items.length = 0;
        resourceVersion = '';
        cont = undefined;
        limit = undefined;
        room = this.maxBodyBytes;
        continue;
      }
      room -= answer.size;
      const page = answer.body as {
        apiVersion?: string;
        kind?: string;
        metadata?: { resourceVersion?: string; continue?: string };
        items?: KubeObject[];
      };
      // every list a Kubernetes API server answers is a *List with items: anything else is no list
      if (!page.kind?.endsWith('List') || !(Array.isArray(page.items) || page.items === null))
        throw notKubernetes(
          this.apiServer,
          `GET ${path} answered ${page.kind ? `a ${page.kind}` : 'JSON that is no Kubernetes list'}`,
        );
      const kind = page.kind.slice(0, -4);
      for (const item of page.items ?? []) {
        // which client wrote which field: nothing kdebug reads, and a third of a Pod's bytes
        delete (item.metadata as { managedFields?: unknown } | undefined)?.managedFields;
        // the images a Node holds (each one's names and size): nothing kdebug reads, and most of
        // a busy Node's bytes; thousands of Nodes are read whole for --all-nodes
        if (kind === 'Node') delete (item['status'] as { images?: unknown } | undefined)?.images;
        items.push({ apiVersion: page.apiVersion, kind, ...item });
      }
      resourceVersion ||= page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue || undefined;
      if (!cont) return { items, resourceVersion };
    }
  }

  async createPod(namespace: string, pod: KubeObject): Promise<KubeObject> {
    const body = { apiVersion: 'v1', kind: 'Pod', ...pod };
    return (await this.request('POST', apiPath({ resource: 'pods', namespace }), {
      body,
    })) as KubeObject;
  }

  /** A JSON merge patch of a Pod (RFC 7386: what is given replaces, null removes). */
  async patchPod(namespace: string, name: string, patch: unknown): Promise<KubeObject> {
    return (await this.request('PATCH', apiPath({ resource: 'pods', namespace, name }), {
      body: patch,
      contentType: 'application/merge-patch+json',
    })) as KubeObject;
  }

  /**
   * Deletes a Pod; false when it was already gone. With `uid`, only that very Pod: one of the same
   * name made since is refused by the API server (409, DeleteOptions preconditions) and left.
   */
  async deletePod(
    namespace: string,
    name: string,
    o: { gracePeriodSeconds?: number; uid?: string } = {},
  ): Promise<boolean> {
    try {
      await this.request('DELETE', apiPath({ resource: 'pods', namespace, name }), {
        query: { gracePeriodSeconds: o.gracePeriodSeconds },
        ...(o.uid
          ? {
              body: {
                apiVersion: 'v1',
                kind: 'DeleteOptions',
                preconditions: { uid: o.uid },
              },
            }
          : {}),
      });
      return true;
    } catch (e) {
      if (e instanceof KubeApiError && e.reason === 'not-found') return false;
      if (o.uid && e instanceof KubeApiError && e.reason === 'conflict') return false;
      throw e;
    }
  }

  getPod(namespace: string, name: string): Promise<KubeObject | undefined> {
    return this.getIfExists(apiPath({ resource: 'pods', namespace, name }));
  }

  /** SelfSubjectAccessReview: may the current user do this? (`kubectl auth can-i`) */
  async canI(a: AccessCheck): Promise<{ allowed: boolean; reason?: string }> {
    const review = (await this.request(
      'POST',
      apiPath({ group: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' }),
      {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { group: a.group ?? '', ...a } },
        },
      },
    )) as { status?: { allowed?: boolean; reason?: string } };
    return { allowed: review.status?.allowed === true, reason: review.status?.reason || undefined };
  }

  /** Creates a namespace with these labels (kdebug's own, for its debug Pods). */
  async createNamespace(name: string, labels: Record<string, string>): Promise<KubeObject> {
    return (await this.request('POST', apiPath({ resource: 'namespaces' }), {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } },
    })) as KubeObject;
  }

  /** A namespace's labels (Pod Security levels live there). */
  async namespaceLabels(namespace: string): Promise<Record<string, string>> {
    return (
      (await this.get(apiPath({ resource: 'namespaces', name: namespace }))).metadata?.labels ?? {}
    );
  }

  /**
   * Runs a command in a container over WebSocket (v5.channel.k8s.io) and waits for its exit
   * status. Never throws for a failed command. Closing the socket does not stop the remote
   * process, so callers wrap long commands in `timeout N`.
   */
  async exec(
    namespace: string,
    pod: string,
    container: string | undefined,
    command: string[],
    o: { timeoutMs?: number } = {},
  ): Promise<ExecResult> {
    const ms = o.timeoutMs ?? this.timeoutMs;
    const limit = this.maxExecOutputBytes;
    const out = new OutputBuffer(limit);
    const err = new OutputBuffer(STDERR_KEPT, 'head');
    let socket:
      { close(): void; terminate?(): void; on(ev: 'close', f: () => void): void } | undefined;
    const sink = (into: OutputBuffer, past?: () => void) =>
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          if (!into.add(chunk)) past?.();
          cb();
        },
      });
    let status: KubeStatus | undefined;
    const result = (extra: Omit<ExecResult, 'stdout' | 'stderr'>): ExecResult => ({
      stdout: out.text(),
      stderr: err.text(),
      ...extra,
    });
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), ms)),
    );
    try {
      const connecting = new this.k8s.Exec(this.config.kc).exec(
        namespace,
        pod,
        container ?? '',
        command,
        // past the limit the socket is closed, so the node stops sending
        sink(out, () => socket?.terminate?.()),
        sink(err),
        null,
        false,
        (s) => {
          status = s as KubeStatus;
        },
      );
      const ws = await Promise.race([connecting, expired]);
      if (ws === 'timeout') {
        void connecting.then(
          (w) => w.close(),
          () => undefined,
        );
        return result({
          exitCode: null,
          error: `exec in pod ${namespace}/${pod} did not connect within ${ms / 1000}s`,
          lost: true,
        });
      }
      socket = ws as unknown as typeof socket;
      const closed = new Promise<'closed'>((resolve) =>
        socket!.on('close', () => resolve('closed')),
      );
      const terminate = () => socket!.terminate?.();
      if (out.over) terminate();
      this.closing.signal.addEventListener('abort', terminate, { once: true });
      void closed.then(() => this.closing.signal.removeEventListener('abort', terminate));
      const ended = await Promise.race([closed, expired]);
      if (out.over)
        return result({
          exitCode: null,
          error: outputOverLimit(limit),
          lost: true,
          overLimit: true,
        });
      if (ended === 'timeout') {
        socket!.terminate?.();
        return result({
          exitCode: null,
          error: `command in pod ${namespace}/${pod} did not finish within ${ms / 1000}s`,
          lost: true,
        });
      }
      // no status: the stream broke off before the command ended
      return result({ ...execOutcome(status), ...(status ? {} : { lost: true }) });
    } catch (e) {
      return result({
        exitCode: null,
        error: await this.explainExecFailure(namespace, pod, container, e),
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The WebSocket handshake loses the Status body; say what went wrong from what we can ask. */
  private async explainExecFailure(
    namespace: string,
    pod: string,
    container: string | undefined,
    e: unknown,
  ): Promise<string> {
    const ev = e as { message?: string; error?: unknown };
    const code = Number(/Unexpected server response: (\d+)/.exec(ev.message ?? '')?.[1]);
    if (!code) {
      if (e instanceof KubeApiError) return e.message;
      return ev.error
        ? transportError(this.apiServer, ev.error).message
        : credentialsError(this.apiServer, this.config.execPlugin, e).message;
    }
    const what = `exec into pod ${namespace}/${pod}`;
    try {
      if (code === 403 || code === 401) {
        if (code === 401)
          return `${what}: ${httpError(this.apiServer, { method: 'GET', path: '' }, 401, '').message}`;
        for (const verb of ['create', 'get']) {
          const check = { verb, resource: 'pods', subresource: 'exec', namespace };
          if (!(await this.canI(check)).allowed)
            return `${what}: access denied by RBAC: user "${this.apiServer.user}" ${refusal({ verb, resource: 'pods/exec', namespace })}`;
        }
        return `${what} was refused (403 Forbidden)`;
      }
      const p = await this.getPod(namespace, pod);
      if (!p) return `${what}: pod "${pod}" not found in namespace ${namespace}`;
      const spec = (p['spec'] ?? {}) as { nodeName?: string; containers?: { name: string }[] };
      const names = (spec.containers ?? []).map((c) => c.name);
      if (container && !names.includes(container))
        return `${what}: container ${container} is not valid for pod ${pod} (containers: ${names.join(', ')})`;
      if (!container && names.length > 1)
        return `${what}: a container name must be specified, choose one of: ${names.join(', ')}`;
      if (!spec.nodeName) return `${what}: pod ${pod} does not have a node assigned yet`;
    } catch (inner) {
      if (inner instanceof KubeApiError) return `${what} failed (${code}); ${inner.message}`;
    }
    return `${what} failed: the API server answered ${code}`;
  }
}

/**
 * client-node spawns exec credential plugins and keeps no handle; give its ExecAuth a spawn that
 * records them, so a deadline or close() can stop one that hangs. (Pinned to client-node ~1.4.)
 */
function trackPlugins(kc: KubeConfig, running: Set<ChildProcess>): void {
  const authenticators =
    (kc as unknown as { authenticators?: { execFn?: typeof spawn }[] }).authenticators ?? [];
  const execAuth = authenticators.find((a) => typeof a.execFn === 'function');
  if (!execAuth) return;
  execAuth.execFn = ((command: string, args: string[], options: SpawnOptions) => {
    const child = spawn(command, args, options);
    running.add(child);
    child.on('exit', () => running.delete(child));
    return child;
  }) as typeof spawn;
}

/** Every connection, requests' and execs' alike (client-node's Exec asks the KubeConfig too),
 * takes one TLS context while the credentials stay the same: building one parses the key and
 * every CA again, tens of milliseconds of CPU per exec on a large run. */
function shareTlsContext(kc: KubeConfig): void {
  const apply = kc.applyToHTTPSOptions.bind(kc);
  let shared: { of: string; context: tls.SecureContext } | undefined;
  kc.applyToHTTPSOptions = async (opts) => {
    await apply(opts);
    const o = opts as tls.SecureContextOptions & { secureContext?: tls.SecureContext };
    const { ca, cert, key, pfx, passphrase } = o;
    // a credential plugin may hand out a new certificate: a new context then
    const of = JSON.stringify([ca, cert, key, pfx, passphrase]);
    if (shared?.of !== of)
      shared = { of, context: tls.createSecureContext({ ca, cert, key, pfx, passphrase }) };
    o.secureContext = shared.context;
  };
}

/** How much of a command's stderr is kept: only its first line is told. */
const STDERR_KEPT = 64 * 1024;

/** An API error's body: its Status is small, and only its message is told. */
const ERROR_BODY_BYTES = 1024 * 1024;

/** Paths every Kubernetes API server serves: a 404 there is no Kubernetes API. */
const DISCOVERY_PATHS = new Set(['/api', '/version']);
/** Groups every kube-apiserver kdebug supports serves (core v1, apps/v1): it answers a missing
 * object there with its Status, and a list always, whatever the namespace. */
const BUILT_IN_GROUP = /^\/(api\/v1|apis\/apps\/v1)\//;

/** A non-2xx answer: its code, type, Location and body (bounded). */
async function httpAnswer(res: IncomingMessage, url: URL): Promise<HttpAnswer> {
  const location = res.headers.location;
  return {
    code: res.statusCode ?? 0,
    body: (await readText(res, ERROR_BODY_BYTES)) ?? '',
    contentType: res.headers['content-type'],
    location: location === undefined ? undefined : pageAddress(location, url),
  };
}

/** A redirect's target without its query: that holds the login's state, not a place to name. */
function pageAddress(location: string, base: URL): string {
  try {
    const u = new URL(location, base);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return location.slice(0, 200);
  }
}

/** The body as text, or undefined once it passes `limit` bytes (then the rest is not read). */
async function readText(res: IncomingMessage, limit: number): Promise<string | undefined> {
  const body = new OutputBuffer(limit);
  for await (const c of res) {
    if (!body.add(c as Buffer)) {
      res.destroy();
      return undefined;
    }
  }
  return body.text();
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
