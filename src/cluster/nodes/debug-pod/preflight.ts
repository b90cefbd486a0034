// What kdebug checks before it creates a debug Pod: RBAC in the namespace, its Pod Security
// level, whether the user may make kdebug's namespace, and an image without a digest.
import type { KubeApi } from '../../kube-api.js';
import { DEBUG_POD_RULES } from '../../permissions.js';
import { DEBUG_NAMESPACE_LABELS, pinned, PSA_ENFORCE } from './manifest.js';

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

/** The commands that make kdebug's namespace, for someone who may when the user may not. */
export const createNamespaceCommand = (namespace: string) =>
  `kubectl create namespace ${namespace} && kubectl label namespace ${namespace} ${Object.entries(
    DEBUG_NAMESPACE_LABELS,
  )
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`;

/** A SelfSubjectAccessReview: why this user may not create kdebug's namespace, or undefined. */
export async function namespaceCreateRefusal(
  api: KubeApi,
  namespace: string,
): Promise<string | undefined> {
  const may = await api
    .canI({ verb: 'create', resource: 'namespaces' })
    .then((r) => r.allowed)
    .catch(() => true); // the review itself failed: creating the namespace will say what is wrong
  if (may) return undefined;
  return (
    `namespace ${namespace} does not exist and user "${api.apiServer.user}" may not create namespaces. ` +
    `Ask someone who may to create it for kdebug's debug Pods: ${createNamespaceCommand(namespace)} ` +
    `(kdebug rbac --via pod prints it with the Role), or use --debug-namespace, --via kube-proxy or --via ssh`
  );
}

/** A warning when the image is a tag: whoever can push that tag decides what runs privileged. */
export function imageWarnings(image: string): string[] {
  if (pinned(image)) return [];
  return [
    `image ${image} has no digest: whoever can push that tag decides what runs privileged on the nodes; pin it with --image ${image}@sha256:<digest>`,
  ];
}
