// The debug Pod's shape: its labels, the annotations naming the run that owns it, the Pod as
// POSTed, and what tells a Pod carrying kdebug's label that kdebug did not make it.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeObject } from '../../../core/model.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Every Pod kdebug creates carries this label: `kdebug cleanup` finds them by it. */
export const DEBUG_POD_SELECTOR = `${MANAGED_BY_LABEL}=kdebug`;
/** How long a debug Pod may live: its sleep and its activeDeadlineSeconds. */
export const DEBUG_POD_LIFETIME_S = 900;
const NAME_PREFIX = 'kdebug-';
export const CONTAINER = 'debugger';
export const PSA_ENFORCE = 'pod-security.kubernetes.io/enforce';
/** The labels of the namespace kdebug makes for its debug Pods. */
export const DEBUG_NAMESPACE_LABELS: Record<string, string> = {
  [PSA_ENFORCE]: 'privileged',
  [MANAGED_BY_LABEL]: 'kdebug',
};
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
/** The label naming the run that made a Pod (as its annotation does): a create whose answer was
 * lost is found by it. */
export const RUN_LABEL = OWNER.run;

/** Which run made a Pod: a random id, and the host, the pid and when the process started. */
export interface RunOwner {
  id: string;
  owner: string;
}

/** A run of its own: one per DebugPods, as one process (the MCP server) may hold several at once,
 * and one's sweep for its lost creates must not find another's live Pods. */
export function newRun(): RunOwner {
  const started = new Date(Date.now() - process.uptime() * 1000).toISOString();
  return {
    id: randomBytes(8).toString('hex'),
    owner: `${hostname()} pid ${process.pid} started ${started}`,
  };
}

/** A run id as a label value: a selector built from it selects that run's Pods and nothing else. */
const RUN_ID = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The selector of one run's debug Pods; the id is checked, as it goes into a query. */
export function runSelector(run: RunOwner): string {
  return `${DEBUG_POD_SELECTOR},${RUN_LABEL}=${runId(run)}`;
}

/** The run's id for a label and a selector; refused when it is not a plain label value. */
function runId(run: RunOwner): string {
  if (!RUN_ID.test(run.id)) throw new Error(`invalid kdebug run id ${JSON.stringify(run.id)}`);
  return run.id;
}

/** A digest pins what the kubelet runs; a tag is whatever its registry serves today. */
export const pinned = (image: string) => /@sha256:[a-f0-9]{64}$/.test(image);

/** The debug Pod for one node, as POSTed (the API adds its defaults). */
export function debugPodManifest(
  node: string,
  o: { image: string; lifetimeSeconds: number; run?: RunOwner; now?: Date },
): KubeObject {
  // a valid name prefix however long or dotted the node name is
  const base = `${NAME_PREFIX}${node}`.slice(0, 52).replace(/[.-]+$/, '');
  const now = o.now ?? new Date();
  const run = o.run ?? newRun();
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${base}-`,
      labels: {
        [MANAGED_BY_LABEL]: 'kdebug',
        'app.kubernetes.io/name': 'kdebug-node-debugger',
        [RUN_LABEL]: runId(run),
      },
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
          // a digest cannot change under the node's cache: pulling it again would bring the same
          ...(pinned(o.image) ? { imagePullPolicy: 'IfNotPresent' } : {}),
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

/** Why a Pod carrying kdebug's label is not one kdebug made, or undefined when it has kdebug's shape. */
export function notKdebugs(raw: KubeObject): string | undefined {
  const meta = raw.metadata ?? {};
  const owners = (meta['ownerReferences'] as { kind?: string; name?: string }[] | undefined) ?? [];
  const containers =
    (raw['spec'] as { containers?: { name?: string; command?: unknown }[] } | undefined)
      ?.containers ?? [];
  const [c] = containers;
  const command = c?.command;
  const sleeps =
    Array.isArray(command) &&
    command.length === 2 &&
    command[0] === 'sleep' &&
    /^\d+$/.test(String(command[1]));
  const why = [
    owners.length > 0 ? `owned by ${owners.map((o) => `${o.kind} ${o.name}`).join(', ')}` : '',
    (meta.name ?? '').startsWith(NAME_PREFIX) ? '' : `its name does not start with ${NAME_PREFIX}`,
    containers.length !== 1 ? `${containers.length} containers, not one` : '',
    c && containers.length === 1 && c.name !== CONTAINER ? `its container is not ${CONTAINER}` : '',
    c && containers.length === 1 && !sleeps ? 'its container does not run sleep N' : '',
    meta.annotations?.[OWNER.run] ? '' : `no ${OWNER.run} annotation`,
  ].filter(Boolean);
  return why.length > 0 ? why.join(', ') : undefined;
}
