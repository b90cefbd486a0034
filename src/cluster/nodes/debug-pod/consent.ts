// Before a run's first debug Pod: RBAC, the namespace (its Pod Security level, or made with
// consent when it is kdebug's own and absent), then the person's yes (or --yes, warnings told).
import { apiPath } from '../../cluster.js';
import type { KubeApi } from '../../kube-api.js';
import { KubeApiError } from '../../kube/errors.js';
import type { KubeObject } from '../../../core/model.js';
import { DEBUG_NAMESPACE } from '../../permissions.js';
import type { DebugPodConsent, DebugPodOptions } from '../debug-pod.js';
import { DEBUG_NAMESPACE_LABELS, notKdebugs } from './manifest.js';
import {
  createNamespaceCommand,
  debugPodAccess,
  imageWarnings,
  namespaceCreateRefusal,
  podSecurityRefusal,
} from './preflight.js';

/** What the checks and the question are about: the run's namespace, image and Pod lifetime. */
export interface PreflightSettings extends Pick<DebugPodOptions, 'yes' | 'confirm'> {
  namespace: string;
  image: string;
  lifetime: number;
  tell: (line: string) => void;
}

/** RBAC, the namespace (its Pod Security level, or whether it may be made), then consent. */
export async function preflight(api: KubeApi, s: PreflightSettings): Promise<string | undefined> {
  const denied = await debugPodAccess(api, s.namespace);
  if (denied) return denied;
  const ns = await namespaceState(api, s);
  if (ns.refusal) return ns.refusal;
  const declined = await consent(s, {
    namespace: s.namespace,
    image: s.image,
    lifetimeSeconds: s.lifetime,
    createNamespace: ns.absent,
    warnings: [...(await sharedNamespace(api, s, ns.absent)), ...imageWarnings(s.image)],
  });
  if (declined) return declined;
  return ns.absent ? createNamespace(api, s) : undefined;
}

/** Whether the namespace is there and allows privileged Pods, or is kdebug's to make. */
async function namespaceState(
  api: KubeApi,
  s: PreflightSettings,
): Promise<{ absent: boolean; refusal?: string }> {
  try {
    const labels = await api.namespaceLabels(s.namespace);
    return { absent: false, refusal: podSecurityRefusal(s.namespace, labels) };
  } catch (e) {
    // the labels cannot be read: the create will say if Pod Security refuses it
    if (!(e instanceof KubeApiError && e.reason === 'not-found')) return { absent: false };
    // only kdebug's own namespace is made: another name may be a typo
    if (s.namespace !== DEBUG_NAMESPACE)
      return {
        absent: true,
        refusal: `namespace ${s.namespace} does not exist (see --debug-namespace)`,
      };
    return { absent: true, refusal: await namespaceCreateRefusal(api, s.namespace) };
  }
}

/** Warns when others use the namespace: anyone who can exec there is root on the node. */
async function sharedNamespace(
  api: KubeApi,
  s: PreflightSettings,
  absent: boolean,
): Promise<string[]> {
  if (absent) return [];
  const risk = `anyone who can exec there gets root on the node for up to ${s.lifetime} s while the debug Pod lives`;
  if ((await otherPods(api, s).catch(() => 0)) > 0)
    return [`namespace ${s.namespace} holds other Pods: ${risk}`];
  if (s.namespace !== DEBUG_NAMESPACE)
    return [`namespace ${s.namespace} is not kdebug's own (${DEBUG_NAMESPACE}): ${risk}`];
  return [];
}

/** How many Pods in the namespace are not kdebug's; one page is enough to know. */
async function otherPods(api: KubeApi, s: PreflightSettings): Promise<number> {
  const path = apiPath({ resource: 'pods', namespace: s.namespace });
  const page = (await api.request('GET', path, { query: { limit: 100 } })) as {
    items?: KubeObject[];
  };
  return (page.items ?? []).filter((p) => notKdebugs(p) !== undefined).length;
}

/** The person's yes (or --yes, and then the warnings are told): undefined, or why not. */
async function consent(s: PreflightSettings, q: DebugPodConsent): Promise<string | undefined> {
  if (s.yes) {
    for (const w of q.warnings) s.tell(`warning: ${w}`);
    return undefined;
  }
  if (!s.confirm) return 'kdebug creates a privileged debug Pod only with your consent: add --yes';
  return (await s.confirm(q)) ? undefined : 'you declined to create debug Pods';
}

/** Makes kdebug's namespace, as consented; it stays for the next run. */
async function createNamespace(api: KubeApi, s: PreflightSettings): Promise<string | undefined> {
  try {
    await api.createNamespace(s.namespace, DEBUG_NAMESPACE_LABELS);
  } catch (e) {
    // another run made it meanwhile: Pod Security still judges each create
    if (e instanceof KubeApiError && e.reason === 'conflict') return undefined;
    return `cannot create namespace ${s.namespace}: ${(e as Error).message}. Someone who may can: ${createNamespaceCommand(s.namespace)}`;
  }
  if (s.yes)
    s.tell(
      `created namespace ${s.namespace} (Pod Security "privileged") for debug Pods; kdebug leaves it for the next run (kubectl delete namespace ${s.namespace} removes it)`,
    );
  return undefined;
}
