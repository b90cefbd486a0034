// What a live diagnosis keeps of the objects it lists by the thousand on a large cluster — every
// Node, and the node agents' Pods (kube-proxy's and Cilium's, one a node): the fields kdebug
// reads, cut from each as its page of the list arrives. A snapshot keeps them as the API gave
// them. The redaction allowlist says what is read; where it hides or rewrites a field the model
// reads (an image, a command line, a probe), the field is kept as written.
import { isCiliumAgentPod } from '../../core/dataplane/cilium/agent/agent.js';
import { isKubeProxyPod, toPod } from '../../core/kube/objects.js';
import type { KubeObject } from '../../core/model.js';
import { NODE_READ, ruleFor } from '../../core/redact/fields.js';
import { isObj, prune } from '../../core/redact/prune.js';

/** What toPod and kube-proxy's flags read of a container, as written: redaction cuts
 * kube-proxy's command line to the flags it names and an exec probe's command to a
 * placeholder. */
const CONTAINER_AS_WRITTEN = [
  'name',
  'image',
  'command',
  'args',
  'ports',
  'readinessProbe',
  'livenessProbe',
] as const;

function containerAsRead(c: unknown): unknown {
  if (!isObj(c)) return c;
  return Object.fromEntries(CONTAINER_AS_WRITTEN.filter((k) => k in c).map((k) => [k, c[k]]));
}

/** A kube-proxy or Cilium agent Pod as the steps read it (the redaction allowlist's Pod, its
 * containers as CONTAINER_AS_WRITTEN); any other object as it is. */
export function agentPodAsRead(o: KubeObject): KubeObject {
  if (o.kind !== 'Pod') return o;
  const pod = toPod(o);
  const kubeProxy = isKubeProxyPod(pod);
  if (!kubeProxy && !isCiliumAgentPod(pod)) return o;
  const rule = ruleFor(o, {
    isKubeProxyPod: () => kubeProxy,
    isCiliumAgentPod: () => !kubeProxy,
    isKubeProxyConfig: () => false,
  })!;
  const cut = prune(o, rule.keep) as KubeObject;
  const containers = (o['spec'] as { containers?: unknown } | undefined)?.containers;
  if (!Array.isArray(containers)) return cut;
  return {
    ...cut,
    spec: { ...(cut['spec'] as object), containers: containers.map(containerAsRead) },
  };
}

/** A Node as the steps read it (NODE_READ), an agent's Pod as agentPodAsRead; another object as
 * it is. */
export const asRead = (o: KubeObject): KubeObject =>
  o.kind === 'Node' ? (prune(o, NODE_READ) as KubeObject) : agentPodAsRead(o);
