// The demo's kube-proxy (v1.15) proxies one family, from the legacy Endpoints: a fixture made
// dual-stack runs the first release that proxies both by default (IPv6DualStack on in 1.21).
import type { KubeObject } from '../../src/core/model.js';

export const DUAL_STACK_KUBE_PROXY = 'v1.21.14';

/** Retags the kube-proxy Pods and DaemonSet of the demo's objects as that release (or `release`,
 * where the rules are written as it writes them). */
export function dualStackKubeProxy(objects: KubeObject[], release = DUAL_STACK_KUBE_PROXY): void {
  for (const o of objects)
    if (o.metadata?.namespace === 'kube-system' && o.metadata.name?.startsWith('kube-proxy'))
      Object.assign(
        o,
        JSON.parse(JSON.stringify(o).replaceAll('/kube-proxy:v1.15.2', `/kube-proxy:${release}`)),
      );
}
