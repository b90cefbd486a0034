// The objects a node's state looks up by node name, indexed once per Analysis: asked once per
// node, a scan of every Pod and Node made 5,000 nodes take a minute.
import {
  configMapsMounted,
  isKubeProxyPod,
  type ClusterView,
  type Node,
  type Pod,
} from './objects.js';
import { byAgentPreference, isCiliumAgentPod } from '../dataplane/cilium/agent/agent.js';

export class ViewIndex {
  private readonly nodes = new Map<string, Node>();
  private readonly proxies = new Map<string, Pod>();
  private readonly agents = new Map<string, Pod>();
  /** The names of the ConfigMaps kube-proxy's Pods mount (where its configuration file is). */
  readonly kubeProxyMounts = new Set<string>();

  constructor(view: Pick<ClusterView, 'pods' | 'nodes'>) {
    for (const n of view.nodes) if (!this.nodes.has(n.name)) this.nodes.set(n.name, n);
    for (const p of view.pods) {
      if (isKubeProxyPod(p)) {
        if (p.nodeName !== undefined && !this.proxies.has(p.nodeName))
          this.proxies.set(p.nodeName, p);
        for (const name of configMapsMounted(p)) this.kubeProxyMounts.add(name);
      }
      if (isCiliumAgentPod(p) && p.nodeName !== undefined) {
        const other = this.agents.get(p.nodeName);
        // several on one node (a rollout): the preferred, whatever order they were read in
        if (!other || byAgentPreference(p, other) < 0) this.agents.set(p.nodeName, p);
      }
    }
  }

  /** The Node of that name (the first listed). */
  node(name: string): Node | undefined {
    return this.nodes.get(name);
  }

  /** The node's kube-proxy Pod (the first listed, as a scan would find it). */
  kubeProxyPod(node: string): Pod | undefined {
    return this.proxies.get(node);
  }

  /** The node's Cilium agent Pod: of a DaemonSet in kube-system, the preferred of several
   * (byAgentPreference). */
  ciliumAgentPod(node: string): Pod | undefined {
    return this.agents.get(node);
  }
}
