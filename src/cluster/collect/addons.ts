// What the cluster's add-ons are read for: kube-proxy (its ConfigMap, its DaemonSet, and its Pods,
// node by node where the DaemonSet is settled), Cilium's agents and their ConfigMap, and cluster
// DNS (the kube-dns Service, its slices, CoreDNS's Pods and Corefile).
import { rolloutOf, settled, type Rollout } from '../../core/kube/daemon-set.js';
import type { KubeObject } from '../../core/model.js';
import { SYSTEM } from '../permissions.js';
import { WHOLE_LIST_PAGE, type Reader } from './api-reader.js';
import { equalitySelector, labelSelectorString, type LabelSelectorSpec } from './selectors.js';

/** The label of Cilium's agents (GKE's anetd carries it too). */
export const CILIUM_AGENTS = 'k8s-app=cilium';

/** Every kube-proxy Pod, in pages of WHOLE_LIST_PAGE. */
export function listKubeProxyPods(r: Reader, labelSelector: string): Promise<KubeObject[]> {
  return r.list('kube-proxy Pods', {
    resource: 'pods',
    namespace: SYSTEM,
    addon: true,
    labelSelector,
    pageSize: WHOLE_LIST_PAGE,
  });
}

/** kube-proxy's Pods read node by node where its DaemonSet is settled: the nodes whose Pods the
 * run asked for (and got an answer), the DaemonSet, and its Pods' label. */
export interface ProxyPodsByNode {
  rollout: Rollout;
  selector: string;
  on: Set<string>;
}

/** Past this many nodes one list of every kube-proxy Pod costs less than one read per node. */
export const PODS_BY_NODE = 50;

/** The kube-proxy Pods on `nodes` not read yet, one read per node; false: too many, or a read
 * failed (then every Pod is listed: a node whose Pod was not read must not look like one
 * without). */
export async function readProxyPodsOn(
  r: Reader,
  p: ProxyPodsByNode,
  nodes: string[],
): Promise<boolean> {
  const more = nodes.filter((n) => !p.on.has(n));
  if (more.length > PODS_BY_NODE) return false;
  const answered = await Promise.all(
    more.map((node) =>
      r.extra(`kube-proxy Pods on ${node}`, {
        resource: 'pods',
        namespace: SYSTEM,
        labelSelector: p.selector,
        fieldSelector: `spec.nodeName=${node}`,
      }),
    ),
  );
  more.forEach((n, i) => answered[i] && p.on.add(n));
  return answered.every(Boolean);
}

/** kube-proxy (ConfigMap, DaemonSet and its Pods), Cilium's agents and their ConfigMap, and cluster DNS (kube-dns Service, slices, CoreDNS Pods, Corefile). */
export function readClusterAddons(
  r: Reader,
  o: { byNode: boolean },
): {
  /** Every agent Pod: seconds on a large cluster. */
  lists: Promise<unknown>[];
  rest: Promise<unknown>[];
  /** The label of kube-proxy's Pods, as its DaemonSet selects them. */
  kubeProxyPods: Promise<string>;
  /** kube-proxy's DaemonSet where its status, settled, spares listing every one of its Pods
   * (`byNode`: the chosen nodes' Pods are read by node instead; see ProxyPodsByNode). */
  settledKubeProxy: Promise<Rollout | undefined>;
} {
  const daemonSet = r.get(`DaemonSet ${SYSTEM}/kube-proxy`, {
    group: 'apps',
    resource: 'daemonsets',
    namespace: SYSTEM,
    name: 'kube-proxy',
    addon: true,
  });
  const kubeProxyPods = daemonSet.then((ds) => {
    const selector = (ds?.['spec'] as { selector?: LabelSelectorSpec } | undefined)?.selector;
    return selector ? labelSelectorString(selector) : 'k8s-app=kube-proxy';
  });
  const settledKubeProxy = daemonSet.then((ds) => {
    const rollout = o.byNode && ds ? rolloutOf(ds) : undefined;
    return rollout && settled(rollout) ? rollout : undefined;
  });
  const kubeProxy = Promise.all([kubeProxyPods, settledKubeProxy]).then(
    ([labelSelector, byNode]) => (byNode ? [] : listKubeProxyPods(r, labelSelector)),
  );
  const dns = r
    .get(`Service ${SYSTEM}/kube-dns`, {
      resource: 'services',
      namespace: SYSTEM,
      name: 'kube-dns',
      addon: true,
    })
    .then((svc) => {
      const selector = (svc?.['spec'] as { selector?: Record<string, string> } | undefined)
        ?.selector;
      return r.list('CoreDNS Pods', {
        resource: 'pods',
        namespace: SYSTEM,
        addon: true,
        labelSelector:
          selector && Object.keys(selector).length > 0
            ? equalitySelector(selector)
            : 'k8s-app=kube-dns',
      });
    });
  return {
    kubeProxyPods,
    settledKubeProxy,
    lists: [
      kubeProxy,
      // where Cilium replaces kube-proxy its agent on each node holds the Services (GKE's anetd too)
      r.list('Cilium agent Pods', {
        resource: 'pods',
        namespace: SYSTEM,
        addon: true,
        labelSelector: CILIUM_AGENTS,
        pageSize: WHOLE_LIST_PAGE,
      }),
    ],
    rest: [
      dns,
      r.get(`ConfigMap ${SYSTEM}/cilium-config`, {
        resource: 'configmaps',
        namespace: SYSTEM,
        name: 'cilium-config',
        addon: true,
      }),
      // kubeadm names it kube-proxy, EKS kube-proxy-config
      r.get(`ConfigMap ${SYSTEM}/kube-proxy`, {
        resource: 'configmaps',
        namespace: SYSTEM,
        name: 'kube-proxy',
        addon: true,
      }),
      r.get(`ConfigMap ${SYSTEM}/kube-proxy-config`, {
        resource: 'configmaps',
        namespace: SYSTEM,
        name: 'kube-proxy-config',
        addon: true,
      }),
      r.list(`EndpointSlices of ${SYSTEM}/kube-dns`, {
        group: 'discovery.k8s.io',
        resource: 'endpointslices',
        namespace: SYSTEM,
        service: `${SYSTEM}/kube-dns`,
        addon: true,
        labelSelector: 'kubernetes.io/service-name=kube-dns',
      }),
      r.get(`ConfigMap ${SYSTEM}/coredns`, {
        resource: 'configmaps',
        namespace: SYSTEM,
        name: 'coredns',
        addon: true,
      }),
    ],
  };
}
