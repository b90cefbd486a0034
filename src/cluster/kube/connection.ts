// The connection to the API server that KubeApi is built on: each request with its deadline
// (credentials included), its answer read bounded and judged the Kubernetes API's or another
// server's, watches, and close() ending them all. Raw HTTP keeps objects as the API sent them.
import type { ChildProcess } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type * as ClientNodeModule from '@kubernetes/client-node';
import { DEFAULT_MAX_OUTPUT_BYTES, OutputBuffer, overLimit } from '../../core/facts/not-read.js';
import type { KubeconfigOptions, LoadedKubeconfig } from './kubeconfig.js';
import {
  bodyPhrase,
  credentialsError,
  foreignAnswer,
  httpError,
  KubeApiError,
  notKubernetes,
  parseStatus,
  rbacAttributes,
  timeoutError,
  transportError,
  type ApiServer,
  type HttpAnswer,
  type RequestInfo,
} from './errors.js';
import { shareTlsContext, trackPlugins } from './client-node-hooks.js';
import { parseList } from './list-json.js';

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
  /** A list's items, each mapped as it is parsed (parseList): no page's whole tree is held. */
  eachItem?: (item: unknown, page: unknown) => unknown;
  /** The Accept header; default application/json (a Table: see KubeApi.listRows). */
  accept?: string;
}

type ClientNode = typeof ClientNodeModule;

/** Requests, watches and close(): what every call of KubeApi goes through. */
export class KubeConnection {
  readonly apiServer: ApiServer;
  protected readonly timeoutMs: number;
  protected readonly pageSize: number;
  protected readonly maxBodyBytes: number;
  /** The node transport sets it from --max-output-mib: every exec, kube-proxy's or a debug Pod's. */
  maxExecOutputBytes: number;
  /** Exec credential plugins still running. */
  private readonly plugins = new Set<ChildProcess>();
  /** Aborted by close(): ends every request, stream and exec still running. */
  protected readonly closing = new AbortController();
  /** The bytes of the JSON answers read so far (KDEBUG_TIMINGS tells what a run read). */
  bytesRead = 0;
  /** GET /api, asked once the first answer looks like another server's (see discover). */
  private discovery?: Promise<void>;

  protected constructor(
    protected readonly k8s: ClientNode,
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
        Accept: o.accept ?? 'application/json',
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
   * A non-2xx answer as an error. A 404 but the API's NotFound naming the object asked for is
   * another server's (a web site, a proxy without the cluster's path, a stand-in answering a
   * Status NotFound for every path) unless GET /api shows the Kubernetes API there: it answers a
   * path it does not serve (an API group this cluster lacks) with a plain 404 too, never one of
   * its built-in groups.
   */
  private async failure(
    a: HttpAnswer,
    info: RequestInfo,
    signal: AbortSignal,
  ): Promise<KubeApiError> {
    const foreign = foreignAnswer(this.apiServer, info, a);
    if (foreign) return foreign;
    if (a.code === 404) {
      const status = parseStatus(a.body);
      const attrs = rbacAttributes(info);
      // a Status NotFound is no discovery either: a server answering it for every path is no API
      if (DISCOVERY_PATHS.has(info.path))
        return notKubernetes(
          this.apiServer,
          `${info.method} ${info.path} answered 404 with ${status ? `a Status ${status.reason ?? 'Failure'}` : bodyPhrase(a.body)}, not the API's discovery`,
        );
      // the API's NotFound names the object asked for; any other 404 asks whether this is the API
      const named = status?.details?.name !== undefined && status.details.name === attrs?.name;
      // throws the verdict when it is not the API
      if (!named) await raceAbort(this.discover(), signal);
      // every kube-apiserver serves these groups: a 404 there that is not its NotFound naming
      // the object asked for (a plain 404, any 404 to a list) is something in front of it
      if (!named && BUILT_IN_GROUP.test(info.path))
        return notKubernetes(
          this.apiServer,
          `GET /api answers as the Kubernetes API does, but ${info.method} ${info.path} answered 404 with ${status ? `a Status ${status.reason ?? 'Failure'}` : bodyPhrase(a.body)}, which a kube-apiserver never does for its own ${info.path.startsWith('/api/') ? 'core' : 'apps'} group (a proxy serving part of it?)`,
        );
    }
    return httpError(this.apiServer, info, a.code, a.body);
  }

  /**
   * Resolves when the server is the Kubernetes API: GET /api lists its versions (kind
   * APIVersions), or refuses with the API's Status (401, 403). Else rejects with why not. Asked
   * only after a 404 that is not a missing object's, and once however many reads wait.
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
  protected async answer(
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
      // the server closing the connection before the answer's end: said as what happened
      const text = await readText(
        res,
        json ? (o.maxBytes ?? this.maxBodyBytes) : ERROR_BODY_BYTES,
      ).catch((e: unknown) => {
        if (ac.signal.aborted || this.closing.signal.aborted) throw e;
        throw new KubeApiError(
          'unreachable',
          `the API server at ${this.apiServer.server} (context "${this.apiServer.context}") closed the connection in the middle of its answer to ${method} ${path} (${(e as Error).message || 'reset'}): a proxy or load balancer in front of it, or the server restarting`,
        );
      });
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
        return {
          body: o.eachItem ? parseList(text, o.eachItem) : (JSON.parse(text) as unknown),
          size,
        };
      } catch (e) {
        // a list item's mapping that fails is no JSON's fault
        if (!(e instanceof SyntaxError)) throw e;
        throw unreadable(`invalid JSON: ${e.message}`);
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
}

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
