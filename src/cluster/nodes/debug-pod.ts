// A privileged debug Pod on the node, shaped like `kubectl debug node/NAME --profile=sysadmin`:
// the node's network and PIDs, the node's `/` read-only at /host, every taint tolerated. Rules are
// read with the node's own binaries (`chroot /host`), probes with the image's tools on the
// node's network. The Pods live in kdebug's own namespace (made, with consent, when absent),
// since anyone who can exec where they run is root on the node. Before creating one kdebug checks
// RBAC and the namespace's Pod Security level and asks (or needs --yes); it deletes its Pods when
// it ends, and activeDeadlineSeconds stops them even if kdebug is killed (`kdebug cleanup` then
// removes what is left). A create whose answer is lost may still have made a Pod: the run finds
// it by its run label and deletes it, at once and again at close. Each Pod names the run (one
// DebugPods, not the process) that owns it and carries a lease that run renews: cleanup spares
// the Pods of live runs. A name can be reused: every exec, renewal and delete is tied to the UID
// the API gave the Pod at create.
// The Pod's shape, the checks before it, its state and `kdebug cleanup` are in debug-pod/.
import { sanitize } from '../../core/sanitize.js';
import { toPod, type Pod } from '../../core/kube/objects.js';
import type { KubeObject } from '../../core/model.js';
import type { NodeCommand, NodeResult } from '../cluster.js';
import { apiPath } from '../cluster.js';
import type { KubeApi } from '../kube-api.js';
import { KubeApiError } from '../kube/errors.js';
import { NodeUnavailable, type NodeChannel, type NodeRunner } from './channel.js';
import { nodeArgv } from './commands.js';
import { DEBUG_NAMESPACE } from '../permissions.js';
import { DEFAULT_DEBUG_IMAGE } from '../debug-image.js';
import { deleteUnanswered } from './debug-pod/cleanup.js';
import { preflight } from './debug-pod/consent.js';
import {
  CONTAINER,
  DEBUG_POD_LIFETIME_S,
  debugPodManifest,
  LEASE_SECONDS,
  newRun,
  OWNER,
  PSA_ENFORCE,
  type RunOwner,
} from './debug-pod/manifest.js';
import {
  acknowledged,
  GONE,
  KUBELET_ACK_MS,
  renewalLoss,
  running,
  startFailure,
} from './debug-pod/pod-state.js';

const POLL_MS = 250;

/** What a person is asked before kdebug creates debug Pods. */
export interface DebugPodConsent {
  namespace: string;
  image: string;
  lifetimeSeconds: number;
  /** The namespace does not exist: kdebug creates it (Pod Security privileged) and leaves it for the next run. */
  createNamespace: boolean;
  /** What to weigh before saying yes: other Pods in the namespace, an image without a digest. */
  warnings: string[];
}

/** A debug Pod a run holds: one it made (by name), or one its create on a node may have made. */
export type HeldPod = { name: string } | { unanswered: string };

/** Holds debug Pods until closed: the signal handler asks whether there are any to delete. */
export interface PodHolder {
  /** The Pods created and not deleted yet. */
  readonly pods: readonly HeldPod[];
}

export interface DebugPodOptions {
  /** --debug-namespace; default DEBUG_NAMESPACE, kdebug's own, created (with consent) when absent. */
  namespace?: string;
  /** --image; default DEFAULT_DEBUG_IMAGE. */
  image?: string;
  /** --yes: create without asking. */
  yes?: boolean;
  /** Asks the person (the TUI). Without it and without --yes, no Pod is created. */
  confirm?: (q: DebugPodConsent) => Promise<boolean>;
  /** Waiting for the Pod to run, and each command. */
  timeoutMs?: number;
  /** Waiting for the node's kubelet to acknowledge the Pod; default KUBELET_ACK_MS. */
  kubeletAckMs?: number;
  lifetimeSeconds?: number;
  /** Who owns the Pods; default a run of this DebugPods' own (newRun). */
  run?: RunOwner;
  /** How often the lease is renewed; default a quarter of LEASE_SECONDS. */
  renewEveryMs?: number;
  /** Under --yes, nobody is asked: the warnings and the namespace made are told here; default stderr. */
  tell?: (line: string) => void;
  /** Where the channel lists itself until closed, so a signal can say whether it deletes Pods. */
  holders?: Set<PodHolder>;
}

/** The debug Pods of one kdebug run: created on first use per node, all deleted by close(). */
export class DebugPods implements NodeChannel {
  readonly name = 'pod';
  readonly namespace: string;
  readonly image: string;
  private readonly lifetime: number;
  private readonly timeoutMs: number;
  /** Checks and consent, once per run: undefined means go, a string says why not. */
  private go?: Promise<string | undefined>;
  /** Set when the API refused a create: every other node would be refused the same way. */
  private refused?: string;
  /** The Pods this run made and has not deleted: name -> the UID the API gave it at create. */
  private readonly created = new Map<string, string>();
  /** Nodes whose create went unanswered and whose Pod was not found yet: looked for at close. */
  private readonly unanswered = new Set<string>();
  /** Each node's Pod, by name: deleted once the run is done with the node. */
  private readonly onNode = new Map<string, string>();
  private readonly creating = new Set<Promise<unknown>>();
  private closing = false;
  /** Pods that stopped being this run's while it used them, and how (GONE). */
  private readonly lost = new Map<string, string>();
  private renewer?: ReturnType<typeof setInterval>;
  private renewing?: Promise<void>;
  private readonly tell: (line: string) => void;
  private readonly run: RunOwner;

  constructor(
    private readonly api: KubeApi,
    private readonly o: DebugPodOptions = {},
  ) {
    this.namespace = o.namespace ?? DEBUG_NAMESPACE;
    this.image = o.image ?? DEFAULT_DEBUG_IMAGE;
    this.lifetime = o.lifetimeSeconds ?? DEBUG_POD_LIFETIME_S;
    this.timeoutMs = o.timeoutMs ?? 60_000;
    this.run = o.run ?? newRun();
    // a namespace or image name from the cluster never reaches the terminal raw
    this.tell = o.tell ?? ((line) => process.stderr.write(`kdebug: ${sanitize(line)}\n`));
    o.holders?.add(this);
  }

  cannotRun(): undefined {
    return undefined;
  }

  /** RBAC, the namespace, then consent: once per run. */
  private preflight(): Promise<string | undefined> {
    const { namespace, image, lifetime, tell } = this;
    const { yes, confirm } = this.o;
    return preflight(this.api, { namespace, image, lifetime, tell, yes, confirm });
  }

  async open(node: string): Promise<NodeRunner> {
    const why = this.refused ?? (await (this.go ??= this.preflight()));
    if (why) throw new NodeUnavailable(why);
    if (this.closing) throw new NodeUnavailable('kdebug is ending');
    const creation = this.create(node);
    this.creating.add(creation);
    try {
      const name = await creation;
      this.onNode.set(node, name);
      const via = `debug Pod ${this.namespace}/${name}`;
      await this.waitRunning(name, node, via);
      return { via, run: (c) => this.exec(name, via, node, c) };
    } finally {
      this.creating.delete(creation);
    }
  }

  private async create(node: string): Promise<string> {
    let pod: KubeObject;
    try {
      pod = await this.api.createPod(
        this.namespace,
        debugPodManifest(node, {
          image: this.image,
          lifetimeSeconds: this.lifetime,
          run: this.run,
        }),
      );
    } catch (e) {
      if (!refusedCreate(e)) await this.sweep(node);
      const message = (e as Error).message;
      if (e instanceof KubeApiError && e.reason === 'forbidden') {
        this.refused = /Pod Security/.test(message)
          ? `${message}. Use --debug-namespace with a namespace labelled ${PSA_ENFORCE}=privileged, or --via kube-proxy or --via ssh`
          : message;
        throw new NodeUnavailable(this.refused);
      }
      throw new NodeUnavailable(`cannot create a debug Pod on ${node}: ${message}`);
    }
    const name = pod.metadata?.name ?? '';
    this.created.set(name, String(pod.metadata?.['uid'] ?? ''));
    // one renewal at a time: a slow API server must not stack them, nor land one after a
    // renewal found the name taken by another Pod; none once close() began (it deletes the Pods)
    if (!this.closing)
      this.renewer ??= setInterval(
        () => {
          this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
        },
        this.o.renewEveryMs ?? (LEASE_SECONDS * 1000) / 4,
      ).unref();
    // close() began while the create was on its way: the Pod must not outlive kdebug
    if (this.closing) {
      await this.remove(name);
      throw new NodeUnavailable('kdebug is ending');
    }
    return name;
  }

  private async waitRunning(name: string, node: string, via: string): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    const ackWait = Math.min(this.o.kubeletAckMs ?? KUBELET_ACK_MS, this.timeoutMs);
    const ackDeadline = Date.now() + ackWait;
    let last: Pod | undefined;
    let problem = 'unknown';
    try {
      for (;;) {
        const raw = await this.getPod(name, deadline);
        const gone = this.gone(name, raw);
        if (gone || !raw) {
          problem = `it ${gone}`;
          break;
        }
        last = toPod(raw);
        if (running(last)) return;
        const failure = startFailure(last);
        if (failure) {
          problem = failure;
          break;
        }
        // no kubelet will run it: said as such, not waited on to the deadline
        if (!acknowledged(raw) && Date.now() > ackDeadline && !this.closing) {
          problem = `no kubelet took it within ${Math.round(ackWait / 1000)}s (no status.startTime: is the node's kubelet running?)`;
          break;
        }
        if (Date.now() > deadline || this.closing) {
          const waiting = last.containerStatuses[0]?.state.reason;
          problem = this.closing
            ? 'kdebug is ending'
            : `still ${last.phase}${waiting ? ` (${waiting})` : ''} after ${Math.round(this.timeoutMs / 1000)}s`;
          break;
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    } catch (e) {
      problem = (e as Error).message;
    }
    await this.remove(name).catch(() => undefined);
    const hint = /Image|image/.test(problem)
      ? `; give an image node ${node} can pull with --image`
      : '';
    throw new NodeUnavailable(`${via} on ${node} did not start: ${problem}${hint}`);
  }

  /** The Pod, or undefined once it is gone; the wait's deadline bounds the request too. */
  private async getPod(name: string, deadline: number): Promise<KubeObject | undefined> {
    const path = apiPath({ resource: 'pods', namespace: this.namespace, name });
    const timeoutMs = Math.max(1000, deadline - Date.now());
    try {
      return (await this.api.request('GET', path, { timeoutMs })) as KubeObject;
    } catch (e) {
      if (e instanceof KubeApiError && e.reason === 'not-found') return undefined;
      throw e;
    }
  }

  /** How the name stopped meaning the Pod this run made (GONE), or undefined while it does. */
  private gone(name: string, raw: KubeObject | undefined): string | undefined {
    if (!raw) return GONE.deleted;
    return raw.metadata?.['uid'] === this.created.get(name) ? undefined : GONE.replaced;
  }

  /** Renews the lease of every Pod of this run, each only if it is still the Pod made. */
  private async renew(): Promise<void> {
    const renewed = new Date().toISOString();
    await Promise.all(
      [...this.created].map(([name, uid]) =>
        this.api
          .patchPod(this.namespace, name, {
            // the API server refuses to change metadata.uid: a Pod of that name made since fails
            metadata: { uid, annotations: { [OWNER.renewed]: renewed } },
          })
          .catch((e: unknown) => {
            const why = renewalLoss(e);
            if (why) this.forget(name, why);
            // anything else: the next renewal tries again, well within the lease
          }),
      ),
    );
  }

  /** A Pod that is no longer this run's: never exec'd, renewed or deleted again. */
  private forget(name: string, why: string): void {
    this.created.delete(name);
    this.lost.set(name, why);
  }

  private async exec(
    name: string,
    via: string,
    node: string,
    command: NodeCommand,
  ): Promise<NodeResult> {
    const lost = (why: string): NodeResult => {
      this.forget(name, why);
      return {
        stdout: '',
        stderr: '',
        exitCode: null,
        error: `${via} on ${node} ${why} while kdebug used it`,
        via,
        lost: true,
      };
    };
    const known = this.lost.get(name);
    if (known) return lost(known);
    // exec goes by name: make sure the name still means the Pod this run made
    let before: string | undefined;
    try {
      before = this.gone(name, await this.getPod(name, Date.now() + this.timeoutMs));
    } catch (e) {
      const error = `cannot make sure ${via} on ${node} is still the Pod kdebug made: ${(e as Error).message}`;
      return { stdout: '', stderr: '', exitCode: null, error, via };
    }
    if (before) return lost(before);
    const argv = nodeArgv(command, { kind: 'debug-pod' });
    const r = await this.api.exec(this.namespace, name, CONTAINER, argv, {
      timeoutMs: this.timeoutMs,
    });
    // exec goes by name: the output is believed only if the Pod is still the one made
    let after: string | undefined;
    try {
      after = this.gone(name, await this.getPod(name, Date.now() + 5000));
    } catch (e) {
      const error = `cannot make sure ${via} on ${node} was still the Pod kdebug made: ${(e as Error).message}`;
      return { stdout: '', stderr: '', exitCode: null, error, via };
    }
    if (after) return lost(after);
    // the rules are read with the node's binaries: one may simply not be installed there
    const host = argv.indexOf('/host');
    if (host > 0 && r.exitCode === 127)
      return { ...r, error: `${argv[host + 1]} is not installed on node ${node}`, via };
    if (host > 0 && r.exitCode === 124)
      return {
        ...r,
        error: `${argv[host + 1]} did not finish within its time limit on node ${node}`,
        via,
      };
    return { ...r, via };
  }

  async done(node: string): Promise<void> {
    const name = this.onNode.get(node);
    this.onNode.delete(node);
    if (name !== undefined && this.created.has(name)) await this.remove(name);
  }

  /** Deletes the Pod this run made by that name; one of the same name made since is left. */
  private async remove(name: string): Promise<void> {
    await this.api.deletePod(this.namespace, name, {
      gracePeriodSeconds: 0,
      uid: this.created.get(name),
    });
    this.created.delete(name);
  }

  /**
   * Deletes the Pods of this run's unanswered creates, on `node` or (at close) all; a node whose
   * Pod is not found is looked for again at close, as its create may still be on its way there.
   */
  private async sweep(node?: string): Promise<void> {
    if (node !== undefined) this.unanswered.add(node);
    const known = new Set(this.created.values());
    const run = this.run;
    try {
      const found = await deleteUnanswered(this.api, this.namespace, { run, node, known });
      if (node === undefined) this.unanswered.clear();
      else if (found > 0) this.unanswered.delete(node);
    } catch (e) {
      if (node === undefined) throw e;
      // close() looks again
    }
  }

  /** The Pods this run created and has not deleted yet, and those its unanswered creates may
   * have made (by node). */
  get pods(): HeldPod[] {
    return [
      ...[...this.created.keys()].map((name) => ({ name })),
      ...[...this.unanswered].map((unanswered) => ({ unanswered })),
    ];
  }

  /** A held Pod as a person reads it: "namespace/name", or the node whose create went unanswered. */
  private said(p: HeldPod): string {
    return 'name' in p
      ? `${this.namespace}/${p.name}`
      : `${this.namespace}/? (node ${p.unanswered}, create unanswered)`;
  }

  /** Deletes every Pod this run created, waiting for creates still on their way. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.renewer);
    this.renewer = undefined;
    await this.renewing; // a renewal on its way lands before the Pods go
    await Promise.allSettled([...this.creating]);
    const results = await Promise.allSettled([
      ...[...this.created.keys()].map((n) => this.remove(n)),
      ...(this.unanswered.size > 0 ? [this.sweep()] : []),
    ]);
    // Pods a failed delete leaves are said in the error below; no later signal deletes them
    this.o.holders?.delete(this);
    const left = this.pods;
    if (left.length > 0) {
      const why = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      throw new Error(
        `could not delete debug Pod${left.length > 1 ? 's' : ''} ${left.map((p) => this.said(p)).join(', ')}: ${(why?.reason as Error)?.message ?? 'unknown error'}; they stop by themselves after ${this.lifetime}s, and kdebug cleanup removes them`,
      );
    }
  }
}

/** The API answered the create with a refusal (4xx): no Pod was made. A timeout, a reset or a
 * 5xx (the API server's own 504 lets the create go on) leaves it unknown. */
function refusedCreate(e: unknown): boolean {
  const code = e instanceof KubeApiError ? e.code : undefined;
  return code !== undefined && code >= 400 && code < 500 && code !== 408;
}
