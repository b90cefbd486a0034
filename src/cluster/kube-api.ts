// The Kubernetes API through the user's kubeconfig (@kubernetes/client-node 1.4 for kubeconfig,
// credentials, TLS and exec). Reads use raw HTTP so objects stay exactly as the API returned
// them: client-node's typed models drop unknown fields and turn timestamps into Dates.
// Every request has a deadline; client-node has none.
// The connection, its requests and watches are in kube/connection.ts.
import { Writable } from 'node:stream';
import type { KubeObject } from '../core/model.js';
import { OutputBuffer, outputOverLimit } from '../core/facts/not-read.js';
import { apiPath, type NodeResult, type TableRow } from './cluster.js';
import { loadKubeconfig } from './kube/kubeconfig.js';
import {
  credentialsError,
  httpError,
  KubeApiError,
  kubeletUnreachable,
  notKubernetes,
  refusal,
  transportError,
  type KubeStatus,
} from './kube/errors.js';
import { KubeConnection, type KubeApiOptions } from './kube/connection.js';

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

/** The API as kdebug uses it: objects and lists read, debug Pods and namespaces made, access
 * reviewed, commands run in containers. */
export class KubeApi extends KubeConnection {
  /** Loads the kubeconfig (kubectl's rules) and client-node, lazily: neither is needed offline. */
  static async connect(o: KubeApiOptions = {}): Promise<KubeApi> {
    const config = await loadKubeconfig(o);
    return new KubeApi(await import('@kubernetes/client-node'), config, o);
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

  /** Every item of a list, page by page (limit/continue), with kind and apiVersion filled in;
   * `cut` keeps of each what is read, as it is parsed. */
  async list(
    path: string,
    o: {
      labelSelector?: string;
      fieldSelector?: string;
      pageSize?: number;
      cut?: (o: KubeObject) => KubeObject;
    } = {},
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
          // each item kept as far as it is read while the page is parsed: one page of 1,000
          // Pods parsed whole holds ten times its text
          eachItem: (item, page) => listItem(item as KubeObject, page as ListPage, o.cut),
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
      const page = answer.body as ListPage;
      // every list a Kubernetes API server answers is a *List of objects: anything else is no list
      if (
        !page.kind?.endsWith('List') ||
        !(Array.isArray(page.items) || page.items === null) ||
        page.items?.some((x) => x === null || typeof x !== 'object')
      )
        throw notKubernetes(
          this.apiServer,
          `GET ${path} answered ${page.kind ? `a ${page.kind}` : 'JSON that is no Kubernetes list'}`,
        );
      for (const item of page.items ?? []) items.push(item);
      resourceVersion ||= page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue || undefined;
      if (!cont) return { items, resourceVersion };
    }
  }

  /** The rows of a list as the API server prints it for `kubectl get` (a meta.k8s.io/v1 Table),
   * without the objects: a Node is ~100 bytes a row, against kilobytes whole. Undefined where the
   * server answers with the objects instead (it serves no Tables). */
  async listRows(
    path: string,
    o: { labelSelector?: string; pageSize?: number } = {},
  ): Promise<TableRow[] | undefined> {
    const rows: TableRow[] = [];
    let cont: string | undefined;
    let room = this.maxBodyBytes;
    for (;;) {
      const answer = await this.answer('GET', path, {
        query: {
          labelSelector: o.labelSelector,
          includeObject: 'None',
          limit: o.pageSize ?? this.pageSize,
          continue: cont,
        },
        accept: TABLE,
        maxBytes: room,
      });
      room -= answer.size;
      const page = answer.body as TablePage;
      if (page.kind?.endsWith('List')) return undefined;
      if (page.kind !== 'Table' || !Array.isArray(page.columnDefinitions))
        throw notKubernetes(this.apiServer, `GET ${path} as a Table answered no Table`);
      const names = page.columnDefinitions.map((c) => String(c?.name ?? ''));
      for (const row of page.rows ?? [])
        rows.push(Object.fromEntries(names.map((n, k) => [n, row?.cells?.[k]])));
      cont = page.metadata?.continue || undefined;
      if (!cont) return rows;
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
    // an API server dials an unreachable kubelet for 30 s: a stream not open by now will not be
    const startMs = Math.min(ms, EXEC_START_MS);
    let startTimer: NodeJS.Timeout | undefined;
    const notStarted = new Promise<'timeout'>(
      (resolve) => (startTimer = setTimeout(() => resolve('timeout'), startMs)),
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
      const ws = await Promise.race([connecting, notStarted]);
      clearTimeout(startTimer);
      if (ws === 'timeout') {
        void connecting.then(
          (w) => w.close(),
          () => undefined,
        );
        return result({
          exitCode: null,
          error: `exec in pod ${namespace}/${pod} did not start within ${startMs / 1000}s (is its node's kubelet reachable from the API server?)`,
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
      clearTimeout(startTimer);
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

/** How long an exec's stream may take to open: the API server's upgrade answered, the kubelet
 * reached through it (a loaded lab's take under 2.5 s; a managed cluster's tunnel to its kubelets
 * adds seconds; a kubelet that is down, the API server's 30 s dial). */
export const EXEC_START_MS = 10_000;

/** How much of a command's stderr is kept: only its first line is told. */
const STDERR_KEPT = 64 * 1024;

/** What `kubectl get` asks for: a Table where the server serves one, else the list itself. */
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json';

/** A page of a list as a Table (meta.k8s.io/v1), or the list itself. */
interface TablePage {
  kind?: string;
  metadata?: { continue?: string };
  columnDefinitions?: { name?: string }[];
  rows?: { cells?: unknown[] }[];
}

/** A page of a list, as the API answers it. */
interface ListPage {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: KubeObject[];
}

/** One item of a list as kdebug keeps it: its kind and apiVersion from the page, without what
 * kdebug never reads, cut to what it reads where `cut` says. */
function listItem(item: KubeObject, page: ListPage, cut?: (o: KubeObject) => KubeObject): unknown {
  // not an object: the page is no list, and list() says so
  if (item === null || typeof item !== 'object' || typeof page.kind !== 'string') return item;
  const kind = page.kind.slice(0, -4);
  // which client wrote which field: nothing kdebug reads, and a third of a Pod's bytes
  delete (item.metadata as { managedFields?: unknown } | undefined)?.managedFields;
  // the images a Node holds (each one's names and size): nothing kdebug reads, and most of a
  // busy Node's bytes; thousands of Nodes are read whole for --all-nodes
  if (kind === 'Node') delete (item['status'] as { images?: unknown } | undefined)?.images;
  const typed = { apiVersion: page.apiVersion, kind, ...item };
  return cut ? cut(typed) : typed;
}
