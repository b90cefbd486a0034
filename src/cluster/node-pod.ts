// A privileged debug Pod on the node, shaped like `kubectl debug node/NAME --profile=sysadmin`:
// the node's network and PIDs, the node's `/` read-only at /host, every taint tolerated. Rules are
// read with the node's own binaries (`chroot /host`), probes with the image's tools on the
// node's network. Before creating one kdebug checks RBAC and the namespace's Pod Security level
// and asks (or needs --yes); it deletes its Pods when it ends, and activeDeadlineSeconds stops
// them even if kdebug is killed (`kdebug cleanup` then removes what is left). Each Pod names the
// run that owns it and carries a lease that run renews: cleanup spares the Pods of live runs.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { toPod, type Pod } from '../core/kube.js';
import type { KubeObject } from '../core/model.js';
import type { NodeCommand, NodeResult } from './cluster.js';
import { apiPath } from './cluster.js';
import type { KubeApi } from './kube-api.js';
import { KubeApiError } from './kube/errors.js';
import { NodeUnavailable, type NodeChannel, type NodeRunner } from './node-channel.js';
import { nodeArgv } from './node-commands.js';
import { DEBUG_POD_RULES } from './permissions.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Every Pod kdebug creates carries this label: `kdebug cleanup` finds them by it. */
export const DEBUG_POD_SELECTOR = `${MANAGED_BY_LABEL}=kdebug`;
/**
 * One image for rules and probes: rules come from the node's own binaries through chroot, so
 * the image only brings sh, timeout, chroot and the probe tools (nc, ping, dig, curl).
 */
export const DEFAULT_DEBUG_IMAGE = 'nicolaka/netshoot:v0.13';
/** How long a debug Pod may live: its sleep and its activeDeadlineSeconds. */
export const DEBUG_POD_LIFETIME_S = 900;
const CONTAINER = 'debugger';
const POLL_MS = 250;
/** A run that has not renewed its Pods' lease for this long is gone (kill -9, a closed laptop). */
export const LEASE_SECONDS = 60;

/** The annotations that say who owns a debug Pod and whether that owner still lives. */
export const OWNER = {
  run: 'kdebug.io/run',
  owner: 'kdebug.io/owner',
  renewed: 'kdebug.io/lease-renewed',
  lease: 'kdebug.io/lease-seconds',
  deadline: 'kdebug.io/deadline',
} as const;

/** Which kdebug process made a Pod: a random id, the host, the pid and when the process started. */
export interface RunOwner {
  id: string;
  owner: string;
}

/** This process as a run owner (one per process: its Pods share it). */
const THIS_RUN: RunOwner = {
  id: randomBytes(8).toString('hex'),
  owner: `${hostname()} pid ${process.pid} started ${new Date(Date.now() - process.uptime() * 1000).toISOString()}`,
};

/** What a person is asked before kdebug creates debug Pods. */
export interface DebugPodConsent {
  namespace: string;
  image: string;
  lifetimeSeconds: number;
}

export interface DebugPodOptions {
  /** --debug-namespace; default: the kubeconfig context's namespace (as kubectl debug). */
  namespace?: string;
  /** --image; default DEFAULT_DEBUG_IMAGE. */
  image?: string;
  /** --yes: create without asking. */
  yes?: boolean;
  /** Asks the person (the TUI). Without it and without --yes, no Pod is created. */
  confirm?: (q: DebugPodConsent) => Promise<boolean>;
  /** Waiting for the Pod to run, and each command. */
  timeoutMs?: number;
  lifetimeSeconds?: number;
  /** Who owns the Pods; default this process. */
  run?: RunOwner;
  /** How often the lease is renewed; default a quarter of LEASE_SECONDS. */
  renewEveryMs?: number;
}

/** The debug Pod for one node, as POSTed (the API adds its defaults). */
export function debugPodManifest(
  node: string,
  o: { image: string; lifetimeSeconds: number; run?: RunOwner; now?: Date },
): KubeObject {
  // a valid name prefix however long or dotted the node name is
  const base = `kdebug-${node}`.slice(0, 52).replace(/[.-]+$/, '');
  const now = o.now ?? new Date();
  const run = o.run ?? THIS_RUN;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${base}-`,
      labels: { [MANAGED_BY_LABEL]: 'kdebug', 'app.kubernetes.io/name': 'kdebug-node-debugger' },
      annotations: {
        'kdebug.io/node': node,
        [OWNER.run]: run.id,
        [OWNER.owner]: run.owner,
        [OWNER.renewed]: now.toISOString(),
        [OWNER.lease]: String(LEASE_SECONDS),
        [OWNER.deadline]: new Date(now.getTime() + o.lifetimeSeconds * 1000).toISOString(),
      },
    },
    spec: {
      nodeName: node,
      hostNetwork: true,
      hostPID: true,
      // DNS probes resolve through the cluster's DNS, not the node's resolv.conf
      dnsPolicy: 'ClusterFirstWithHostNet',
      restartPolicy: 'Never',
      tolerations: [{ operator: 'Exists' }],
      activeDeadlineSeconds: o.lifetimeSeconds,
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      containers: [
        {
          name: CONTAINER,
          image: o.image,
          command: ['sleep', String(o.lifetimeSeconds)],
          securityContext: { privileged: true },
          // kdebug never modifies a node: the node's files are mounted read-only
          volumeMounts: [{ name: 'host-root', mountPath: '/host', readOnly: true }],
        },
      ],
      volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
    },
  };
}

const PSA_ENFORCE = 'pod-security.kubernetes.io/enforce';

/** Why a namespace's Pod Security level refuses a privileged Pod, or undefined when it allows one. */
export function podSecurityRefusal(
  namespace: string,
  labels: Record<string, string>,
): string | undefined {
  const level = labels[PSA_ENFORCE];
  if (level !== 'baseline' && level !== 'restricted') return undefined;
  return (
    `namespace ${namespace} enforces Pod Security "${level}" (label ${PSA_ENFORCE}=${level}), which refuses a privileged Pod with the node's network, PIDs and files. ` +
    `Use --debug-namespace with a namespace labelled ${PSA_ENFORCE}=privileged, ` +
    `or allow it here: kubectl label namespace ${namespace} ${PSA_ENFORCE}=privileged --overwrite (or use --via kube-proxy or --via ssh)`
  );
}

/** What a debug Pod needs from RBAC in its namespace, one review per verb. */
const NEEDED = DEBUG_POD_RULES.flatMap((r) => {
  const [resource, subresource] = r.resource.split('/') as [string, string | undefined];
  return r.verbs.map((verb) => ({ verb, resource, ...(subresource ? { subresource } : {}) }));
});

/** SelfSubjectAccessReviews for everything a debug Pod needs; the refusal in words, or undefined. */
export async function debugPodAccess(api: KubeApi, namespace: string): Promise<string | undefined> {
  const answers = await Promise.all(
    NEEDED.map(
      (n) =>
        api
          .canI({ ...n, namespace })
          .then((r) => r.allowed)
          .catch(() => true), // the review itself failed: creating the Pod will say what is wrong
    ),
  );
  const refused = NEEDED.filter((_, i) => !answers[i]).map(
    (n) => `${n.verb} ${n.resource}${n.subresource ? `/${n.subresource}` : ''}`,
  );
  if (refused.length === 0) return undefined;
  return (
    `access denied by RBAC: user "${api.apiServer.user}" cannot ${refused.join(', ')} in namespace ${namespace}. ` +
    `A debug Pod needs create, get, patch and delete on pods and get and create on pods/exec there ` +
    `(kdebug rbac --via pod prints the Role): ask for them, pick another namespace with --debug-namespace, or use --via kube-proxy or --via ssh`
  );
}

const CANNOT_START =
  /^(ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull|CreateContainerConfigError|CreateContainerError|RunContainerError)$/;

/** Why a debug Pod will never run, or undefined while it still may. */
function startFailure(p: Pod): string | undefined {
  if (p.phase === 'Failed' || p.phase === 'Succeeded')
    return `it ended (${p.phase}${p.containerStatuses[0]?.state.reason ? `, ${p.containerStatuses[0].state.reason}` : ''})`;
  const waiting = p.containerStatuses.find((c) => CANNOT_START.test(c.state.reason ?? ''));
  if (waiting)
    return `${waiting.state.reason}${waiting.state.message ? ` (${waiting.state.message})` : ''}`;
  return undefined;
}

const running = (p: Pod) =>
  p.phase === 'Running' &&
  p.containerStatuses.some((c) => c.name === CONTAINER && c.state.kind === 'running');

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
  private readonly created = new Map<string, string>();
  private readonly creating = new Set<Promise<unknown>>();
  private closing = false;
  /** Pods someone else deleted while this run used them. */
  private readonly lost = new Set<string>();
  private renewer?: ReturnType<typeof setInterval>;
  private renewing?: Promise<void>;

  constructor(
    private readonly api: KubeApi,
    private readonly o: DebugPodOptions = {},
  ) {
    this.namespace = o.namespace ?? api.namespace;
    this.image = o.image ?? DEFAULT_DEBUG_IMAGE;
    this.lifetime = o.lifetimeSeconds ?? DEBUG_POD_LIFETIME_S;
    this.timeoutMs = o.timeoutMs ?? 60_000;
  }

  cannotRun(): undefined {
    return undefined;
  }

  /** RBAC, the namespace's Pod Security level, then the person's consent. */
  private async preflight(): Promise<string | undefined> {
    const denied = await debugPodAccess(this.api, this.namespace);
    if (denied) return denied;
    try {
      const psa = podSecurityRefusal(
        this.namespace,
        await this.api.namespaceLabels(this.namespace),
      );
      if (psa) return psa;
    } catch (e) {
      if (e instanceof KubeApiError && e.reason === 'not-found')
        return `namespace ${this.namespace} does not exist (see --debug-namespace)`;
      // the labels cannot be read: the create will say if Pod Security refuses it
    }
    if (this.o.yes) return undefined;
    const consent = {
      namespace: this.namespace,
      image: this.image,
      lifetimeSeconds: this.lifetime,
    };
    if (!this.o.confirm)
      return 'kdebug creates a privileged debug Pod only with your consent: add --yes';
    return (await this.o.confirm(consent)) ? undefined : 'you declined to create debug Pods';
  }

  async open(node: string): Promise<NodeRunner> {
    const why = this.refused ?? (await (this.go ??= this.preflight()));
    if (why) throw new NodeUnavailable(why);
    if (this.closing) throw new NodeUnavailable('kdebug is ending');
    const creation = this.create(node);
    this.creating.add(creation);
    try {
      const name = await creation;
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
          run: this.o.run,
        }),
      );
    } catch (e) {
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
    this.created.set(name, node);
    this.renewer ??= setInterval(
      () => void (this.renewing = this.renew()),
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
    let last: Pod | undefined;
    let problem = 'unknown';
    try {
      for (;;) {
        const raw = await this.getPod(name, deadline);
        if (!raw) {
          problem = 'it was deleted by someone else';
          break;
        }
        last = toPod(raw);
        if (running(last)) return;
        const failure = startFailure(last);
        if (failure) {
          problem = failure;
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

  /** Renews the lease of every Pod of this run; one found gone was deleted by someone else. */
  private async renew(): Promise<void> {
    const renewed = new Date().toISOString();
    await Promise.all(
      [...this.created.keys()].map((name) =>
        this.api
          .patchPod(this.namespace, name, {
            metadata: { annotations: { [OWNER.renewed]: renewed } },
          })
          .catch((e: unknown) => {
            if (e instanceof KubeApiError && e.reason === 'not-found') {
              this.created.delete(name);
              this.lost.add(name);
            }
            // anything else: the next renewal tries again, well within the lease
          }),
      ),
    );
  }

  private async exec(
    name: string,
    via: string,
    node: string,
    command: NodeCommand,
  ): Promise<NodeResult> {
    const gone = () => ({
      stdout: '',
      stderr: '',
      exitCode: null,
      error: `${via} on ${node} was deleted by someone else while kdebug used it`,
      via,
      lost: true,
    });
    if (this.lost.has(name)) return gone();
    const argv = nodeArgv(command, { kind: 'debug-pod' });
    const r = await this.api.exec(this.namespace, name, CONTAINER, argv, {
      timeoutMs: this.timeoutMs,
    });
    // a stream that broke off: was the Pod deleted under it?
    if (r.exitCode === null && !(await this.getPod(name, Date.now() + 5000).catch(() => true))) {
      this.created.delete(name);
      this.lost.add(name);
      return gone();
    }
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

  private async remove(name: string): Promise<void> {
    await this.api.deletePod(this.namespace, name, { gracePeriodSeconds: 0 });
    this.created.delete(name);
  }

  /** The Pods this run created and has not deleted yet ("namespace/name"). */
  get pods(): string[] {
    return [...this.created.keys()].map((n) => `${this.namespace}/${n}`);
  }

  /** Deletes every Pod this run created, waiting for creates still on their way. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.renewer);
    await this.renewing; // a renewal on its way lands before the Pods go
    await Promise.allSettled([...this.creating]);
    const results = await Promise.allSettled([...this.created.keys()].map((n) => this.remove(n)));
    const left = this.pods;
    if (left.length > 0) {
      const why = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      throw new Error(
        `could not delete debug Pod${left.length > 1 ? 's' : ''} ${left.join(', ')}: ${(why?.reason as Error)?.message ?? 'unknown error'}; they stop by themselves after ${this.lifetime}s, and kdebug cleanup removes them`,
      );
    }
  }
}

/** A debug Pod found by `kdebug cleanup`, and whether the run that made it still lives. */
export interface LeftPod {
  namespace: string;
  name: string;
  node?: string;
  phase: string;
  /** Who made it ("host pid N started T"), when it says. */
  owner?: string;
  /** Why it is left behind, or (live) how recently its run renewed it. */
  why: string;
  live: boolean;
}

export interface CleanupPlan {
  pods: LeftPod[];
  /** Where it looked: "all namespaces" or "namespace X". */
  scope: string;
  note?: string;
}

/** Whether a debug Pod's run still lives: it renewed the lease in time and the deadline is ahead. */
function podLiveness(raw: KubeObject, now: Date): { live: boolean; why: string } {
  const p = toPod(raw);
  const a = raw.metadata?.annotations ?? {};
  if (p.phase === 'Succeeded' || p.phase === 'Failed')
    return { live: false, why: `it ended (${p.phase})` };
  const deadline = Date.parse(a[OWNER.deadline] ?? '');
  if (deadline <= now.getTime()) return { live: false, why: 'its deadline passed' };
  const renewed = Date.parse(a[OWNER.renewed] ?? '');
  if (Number.isNaN(renewed))
    return { live: false, why: 'it has no lease (made by an older kdebug)' };
  const lease = Number(a[OWNER.lease]) || LEASE_SECONDS;
  const ago = Math.max(0, Math.round((now.getTime() - renewed) / 1000));
  return ago > lease
    ? { live: false, why: `its run stopped renewing it ${ago}s ago (lease ${lease}s)` }
    : { live: true, why: `its run renewed it ${ago}s ago` };
}

/** `kdebug cleanup`'s look: every debug Pod, found by its label, with its owner's liveness. */
export async function debugPodsLeft(
  api: KubeApi,
  o: { namespace?: string; now?: Date } = {},
): Promise<CleanupPlan> {
  let items: KubeObject[];
  let scope = o.namespace ? `namespace ${o.namespace}` : 'all namespaces';
  let note: string | undefined;
  try {
    items = (
      await api.list(apiPath({ resource: 'pods', namespace: o.namespace }), {
        labelSelector: DEBUG_POD_SELECTOR,
      })
    ).items;
  } catch (e) {
    if (o.namespace || !(e instanceof KubeApiError) || e.reason !== 'forbidden') throw e;
    // may not list Pods cluster-wide: look where the context points
    scope = `namespace ${api.namespace}`;
    note = `cannot list Pods in all namespaces (${e.message}); looked in ${api.namespace} only (use -n for another)`;
    items = (
      await api.list(apiPath({ resource: 'pods', namespace: api.namespace }), {
        labelSelector: DEBUG_POD_SELECTOR,
      })
    ).items;
  }
  const now = o.now ?? new Date();
  const pods = items.map((raw): LeftPod => {
    const p = toPod(raw);
    const owner = raw.metadata?.annotations?.[OWNER.owner];
    return {
      namespace: p.namespace,
      name: p.name,
      ...(p.nodeName ? { node: p.nodeName } : {}),
      phase: p.phase,
      ...(owner ? { owner } : {}),
      ...podLiveness(raw, now),
    };
  });
  return { pods, scope, ...(note ? { note } : {}) };
}

/** Deletes these Pods; returns those that were still there. */
export async function deleteDebugPods(api: KubeApi, pods: LeftPod[]): Promise<LeftPod[]> {
  const deleted: LeftPod[] = [];
  for (const p of pods)
    if (await api.deletePod(p.namespace, p.name, { gracePeriodSeconds: 0 })) deleted.push(p);
  return deleted;
}
