// List-then-watch with what client-node's informer lacks: reconnects with exponential backoff
// and jitter (it re-watches in a tight loop), a relist after 410 Expired, a watchdog for streams
// that go silent, and a stop for errors that retrying cannot fix (401, 403, 404).
import { createInterface } from 'node:readline';
import type { KubeObject } from '../../core/model.js';
import type { KubeApi } from '../kube-api.js';
import { KubeApiError, type KubeStatus } from './errors.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface Backoff {
  /** First delay. Default 500 ms. */
  initialMs: number;
  /** Cap. Default 30 s. */
  maxMs: number;
  factor: number;
  /** Each delay is scaled by a random factor in [1 - jitter, 1]. Default 0.5. */
  jitter: number;
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  backoff?: Partial<Backoff>;
  /** Reconnect when nothing (not even a BOOKMARK) arrives for this long. Default 5 min. */
  idleTimeoutMs?: number;
  /** A stream that lived this long resets the backoff. Default 30 s. */
  healthyAfterMs?: number;
  /** For tests: replaces Math.random in the jitter. */
  random?: () => number;
}

export interface WatchHandlers {
  /** After every (re)list: the full current state. */
  onSync?(items: KubeObject[], resourceVersion: string): void;
  onEvent(type: WatchEventType, object: KubeObject): void;
  /** A failure; `retrying` says whether the watch carries on after a delay of `delayMs`. */
  onError?(error: KubeApiError, retrying: boolean, delayMs?: number): void;
}

export interface WatchHandle {
  stop(): void;
  /** Settles when the watch stops: after stop(), or with the error that ended it. */
  done: Promise<void>;
}

const PERMANENT = new Set([
  'unauthorized',
  'forbidden',
  'not-found',
  'bad-request',
  'kubeconfig',
  'no-kubeconfig',
  'credentials',
  'closed',
]);

/** The delay before reconnect attempt `attempt` (0-based): exponential, capped, jittered. */
export function backoffDelay(b: Backoff, attempt: number, random: () => number): number {
  const base = Math.min(b.maxMs, b.initialMs * b.factor ** attempt);
  return Math.round(base * (1 - b.jitter * random()));
}

/** Lists `path`, then watches it from that resourceVersion, forever, until stop(). */
export function watchList(
  api: KubeApi,
  path: string,
  o: WatchOptions,
  h: WatchHandlers,
): WatchHandle {
  const backoff: Backoff = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.5, ...o.backoff };
  const random = o.random ?? Math.random;
  const stopper = new AbortController();
  let attempt = 0;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      stopper.signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });

  /** Where a watch resumes: the last resourceVersion seen; '' means list again first. */
  const state = { rv: '' };

  /**
   * One watch stream until it ends; returns how many events it delivered. A stream that breaks
   * after it started is a disconnect, not an error: the next one resumes from state.rv.
   */
  async function stream(): Promise<number> {
    const streamAbort = new AbortController();
    const onStop = () => streamAbort.abort();
    stopper.signal.addEventListener('abort', onStop, { once: true });
    let events = 0;
    let idle: NodeJS.Timeout | undefined;
    const kick = () => {
      clearTimeout(idle);
      idle = setTimeout(() => streamAbort.abort(), o.idleTimeoutMs ?? 300_000);
    };
    try {
      const res = await api.stream(
        path,
        {
          watch: true,
          resourceVersion: state.rv,
          allowWatchBookmarks: true,
          labelSelector: o.labelSelector,
          fieldSelector: o.fieldSelector,
          // the server ends the stream after this; spread so many clients do not reconnect together
          timeoutSeconds: 300 + Math.floor(random() * 300),
        },
        streamAbort.signal,
      );
      kick();
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      // an aborted or reset response may never 'end'; closing the reader ends the loop
      res.on('close', () => lines.close());
      res.on('error', () => lines.close());
      try {
        for await (const line of lines) {
          kick();
          let e: { type?: string; object?: KubeObject };
          try {
            e = JSON.parse(line) as typeof e;
          } catch {
            continue;
          }
          if (e.type === 'ERROR') {
            const status = e.object as KubeStatus;
            if (status?.code === 410) {
              state.rv = '';
              return events;
            }
            const message = `watch ${path} failed: ${status?.message ?? 'unknown error'}`;
            throw new KubeApiError('server', message, status?.code, status);
          }
          const rv = e.object?.metadata?.['resourceVersion'];
          if (typeof rv === 'string') state.rv = rv;
          if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') {
            events++;
            h.onEvent(e.type, e.object!);
          }
        }
      } catch (e) {
        // a reset or aborted stream: reconnect from state.rv (a Status the server sent is an error)
        if (e instanceof KubeApiError) throw e;
      }
      return events;
    } finally {
      clearTimeout(idle);
      stopper.signal.removeEventListener('abort', onStop);
      streamAbort.abort();
    }
  }

  async function run(): Promise<void> {
    while (!stopper.signal.aborted) {
      const started = Date.now();
      try {
        if (!state.rv) {
          const list = await api.list(path, {
            labelSelector: o.labelSelector,
            fieldSelector: o.fieldSelector,
          });
          if (stopper.signal.aborted) return;
          state.rv = list.resourceVersion;
          h.onSync?.(list.items, state.rv);
        }
        const events = await stream();
        if (events > 0 || Date.now() - started >= (o.healthyAfterMs ?? 30_000)) attempt = 0;
        if (stopper.signal.aborted) return;
        await sleep(backoffDelay(backoff, attempt++, random));
      } catch (e) {
        if (stopper.signal.aborted) return;
        const err =
          e instanceof KubeApiError
            ? e
            : new KubeApiError('server', `watch ${path} failed: ${(e as Error).message}`);
        if (err.reason === 'expired') state.rv = '';
        else if (PERMANENT.has(err.reason)) {
          h.onError?.(err, false);
          throw err;
        }
        const delay = backoffDelay(backoff, attempt++, random);
        if (err.reason !== 'expired') h.onError?.(err, true, delay);
        await sleep(delay);
      }
    }
  }

  const done = run();
  done.catch(() => undefined);
  return { stop: () => stopper.abort(), done };
}
