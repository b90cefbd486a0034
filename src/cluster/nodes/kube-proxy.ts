// Exec in a node's own agent Pod: nothing is created. In kube-proxy's Pod the image's iptables
// wrapper reads the backend kube-proxy writes to; in Cilium's agent Pod its own read-only
// listings run. The binary is exec'd directly (the image may have no shell), so only the
// commands its place allows run there; probes need a debug Pod or SSH.
import type { TransportName } from '../../core/nodes/access.js';
import { isKubeProxyPod, toPod, type Pod } from '../../core/kube/objects.js';
import { byAgentPreference, isCiliumAgentPod } from '../../core/dataplane/cilium/agent/agent.js';
import type { NodeCommand, NodeResult } from '../cluster.js';
import { apiPath } from '../cluster.js';
import { agentPodAsRead } from '../collect/as-read.js';
import { labelSelectorString } from '../collect/selectors.js';
import type { KubeApi } from '../kube-api.js';
import { KubeApiError } from '../kube/errors.js';
import { nodeArgv, UnsupportedCommandError, type CommandPlace } from './commands.js';
import { NodeUnavailable, type NodeChannel, type NodeRunner } from './channel.js';
import { KUBE_PROXY_EXEC, SYSTEM } from '../permissions.js';

/** Whose Pod a channel execs in, and how its Pods are found. */
interface AgentSpec {
  name: TransportName;
  place: CommandPlace;
  /** "kube-proxy", "Cilium agent": as a person names it. */
  who: string;
  /** The DaemonSet whose selector finds the Pods, and the label when it is unreadable. */
  daemonSet: string;
  label: string;
  /** Its Pod, as the rest of kdebug tells it among the Pods read from the API. */
  isAgent: (p: Pod) => boolean;
  /** Of several on a node, which to exec in first (the one a usable Pod is picked from). */
  order?: (a: Pod, b: Pod) => number;
  /** Pods of other labels found by name instead (static kube-proxy Pods). */
  namePrefix?: string;
  container: string;
  /** Why the commands it cannot run cannot run there. */
  cannot: string;
  /** The commands this channel alone runs (see NodeChannel.serves); none: any it can. */
  serves?: (c: NodeCommand) => boolean;
}

const KUBE_PROXY: AgentSpec = {
  name: 'kube-proxy',
  place: { kind: 'kube-proxy-pod' },
  who: 'kube-proxy',
  daemonSet: 'kube-proxy',
  label: 'k8s-app=kube-proxy',
  isAgent: isKubeProxyPod,
  namePrefix: 'kube-proxy-',
  container: 'kube-proxy',
  cannot: 'its image has no tools for them, kdebug runs only iptables-save there',
};

const CILIUM: AgentSpec = {
  name: 'cilium',
  place: { kind: 'cilium-agent-pod' },
  who: 'Cilium agent',
  daemonSet: 'cilium',
  // GKE's anetd carries the same label
  label: 'k8s-app=cilium',
  // in kube-system and of a DaemonSet: the label alone is any tenant's to set
  isAgent: isCiliumAgentPod,
  order: byAgentPreference,
  container: 'cilium-agent',
  cannot: "only the agent's own listings run in its Pod",
  serves: (c) => c.kind === 'cilium',
};

/** Running, with the container kdebug execs in running too. */
function usable(p: Pod, container: string): boolean {
  return (
    p.phase === 'Running' &&
    !p.deleting &&
    p.containerStatuses.some((c) => c.name === container && c.state.kind === 'running')
  );
}

/** Why a Pod's container cannot take an exec: the Pod's phase, else its container's state. */
function notUsable(p: Pod, container: string): string {
  if (p.deleting) return 'is being deleted';
  const status = p.containerStatuses.find((c) => c.name === container);
  if (p.phase !== 'Running') {
    // a Pod not yet running: whichever container says why (an init container's wait, say)
    const why =
      status?.state.reason ?? p.containerStatuses.find((c) => c.state.reason)?.state.reason;
    return `is not running (${p.phase}${why ? `, ${why}` : ''})`;
  }
  // Running with no status for the container: the kubelet has not reported it
  if (!status) return `is Running, but its container ${container} has no status yet`;
  const why = status.state.reason;
  return `is Running, but its container ${container} is ${status.state.kind}${why ? ` (${why})` : ''}`;
}

/** Nodes whose Pods are asked for one by one before every Pod of the DaemonSet is listed once. */
const BY_NODE = 50;

class AgentExec implements NodeChannel {
  readonly name: TransportName;
  /** Each node's Pods of the DaemonSet, asked for by node: a large cluster's are tens of MB. */
  private readonly pods = new Map<string, Promise<Pod[]>>();
  /** Every Pod of the DaemonSet, listed once when many nodes are read (--all-nodes). */
  private every?: Promise<Pod[]>;
  private selector?: Promise<string | undefined>;
  private allowed?: Promise<string | undefined>;
  /** Each node's Pods of the DaemonSet among those the run's API reads returned. */
  private seeded = new Map<string, Pod[]>();

  constructor(
    private readonly api: KubeApi,
    private readonly spec: AgentSpec,
    private readonly o: { timeoutMs: number },
  ) {
    this.name = spec.name;
    // a channel for some commands only says which (kube-proxy's takes what it can run)
    if (spec.serves) this.serves = spec.serves;
  }

  readonly serves?: (command: NodeCommand) => boolean;

  cannotRun(command: NodeCommand): string | undefined {
    try {
      nodeArgv(command, this.spec.place);
      return undefined;
    } catch (e) {
      if (e instanceof UnsupportedCommandError) return this.spec.cannot;
      throw e;
    }
  }

  /** The DaemonSet's Pods the API reads returned, by node: those nodes are not asked again. */
  podsRead(pods: readonly Pod[]): void {
    for (const p of pods) {
      if (!this.spec.isAgent(p) || p.nodeName === undefined) continue;
      const on = this.seeded.get(p.nodeName);
      if (on) on.push(p);
      else this.seeded.set(p.nodeName, [p]);
    }
  }

  /** The agent's container: the one of its name, else the only one. */
  private containerOf(p: Pod): string | undefined {
    return (p.containers.find((c) => c.name === this.spec.container) ?? p.containers[0])?.name;
  }

  async open(node: string): Promise<NodeRunner> {
    const denied = await (this.allowed ??= this.checkExec());
    if (denied) throw new NodeUnavailable(denied);
    let listed = this.pods.get(node);
    const seeded = this.seeded.get(node);
    if (!listed && seeded) this.pods.set(node, (listed = Promise.resolve(seeded)));
    // past a few dozen nodes one list of every Pod of the DaemonSet costs less than one per node
    if (!listed && this.pods.size >= BY_NODE)
      this.pods.set(node, (listed = this.every ??= this.listPods()));
    if (!listed) this.pods.set(node, (listed = this.listPods(node)));
    const pods = (await listed).filter((p) => p.nodeName === node);
    if (this.spec.order) pods.sort(this.spec.order);
    const who = this.spec.who;
    if (pods.length === 0) throw new NodeUnavailable(`no ${who} Pod on node ${node}`);
    const pod = pods.find((p) => usable(p, this.containerOf(p) ?? ''));
    if (!pod) {
      const p = pods[0]!;
      throw new NodeUnavailable(
        `${who} Pod ${p.namespace}/${p.name} on ${node} ${notUsable(p, this.containerOf(p) ?? '')}`,
      );
    }
    const container = this.containerOf(pod)!;
    const others = pods.filter((p) => p !== pod);
    // several agents on one node: say which were not read
    const via =
      `exec ${pod.namespace}/${pod.name}` +
      (this.spec.order && others.length > 0
        ? ` (${others.length} other ${who} Pod${others.length === 1 ? '' : 's'} on the node ignored: ${others.map((p) => p.name).join(', ')})`
        : '');
    return { via, run: (c) => this.exec(pod, container, via, node, c) };
  }

  private async exec(
    pod: Pod,
    container: string,
    via: string,
    node: string,
    command: NodeCommand,
  ): Promise<NodeResult> {
    const argv = nodeArgv(command, this.spec.place);
    const r = await this.api.exec(pod.namespace, pod.name, container, argv, {
      timeoutMs: this.o.timeoutMs,
    });
    const missing =
      r.exitCode === 127 ||
      /executable file not found|no such file or directory/i.test(r.error ?? '');
    if (missing)
      return {
        ...r,
        exitCode: null,
        error: `${argv[0]} is not in the ${this.spec.who} image on ${node}`,
        missingBinary: true,
        via,
      };
    return { ...r, via };
  }

  /** get and create on pods/exec: WebSocket exec is authorized as both (1.35+). */
  private async checkExec(): Promise<string | undefined> {
    try {
      const refused: string[] = [];
      for (const verb of KUBE_PROXY_EXEC.verbs) {
        const check = { verb, resource: 'pods', subresource: 'exec', namespace: SYSTEM };
        if (!(await this.api.canI(check)).allowed) refused.push(verb);
      }
      if (refused.length === 0) return undefined;
      return `access denied by RBAC: user "${this.api.apiServer.user}" cannot ${refused.join(' or ')} pods/exec in namespace ${SYSTEM}`;
    } catch (e) {
      // the review itself failed: exec will say what is wrong
      return e instanceof KubeApiError && e.reason !== 'forbidden' ? e.message : undefined;
    }
  }

  /** The DaemonSet's selector, read once (undefined when the DaemonSet is unreadable). */
  private daemonSetSelector(): Promise<string | undefined> {
    return (this.selector ??= this.api
      .getIfExists(
        apiPath({
          group: 'apps',
          resource: 'daemonsets',
          namespace: SYSTEM,
          name: this.spec.daemonSet,
        }),
      )
      .then((ds) => {
        const selector = (
          ds?.['spec'] as { selector?: Parameters<typeof labelSelectorString>[0] } | undefined
        )?.selector;
        return selector ? labelSelectorString(selector) : undefined;
      })
      .catch(() => undefined));
  }

  /** The DaemonSet's Pods on one node (or on every node), by its selector (its usual label
   * when the DaemonSet is unreadable) and the node's name. */
  private async listPods(node?: string): Promise<Pod[]> {
    const path = apiPath({ resource: 'pods', namespace: SYSTEM });
    const { label, namePrefix } = this.spec;
    const fieldSelector = node === undefined ? undefined : `spec.nodeName=${node}`;
    try {
      const labelSelector = (await this.daemonSetSelector()) ?? label;
      // each Pod cut as its page arrives: every node's, thousands, are held for the run
      const list = { labelSelector, fieldSelector, cut: agentPodAsRead };
      const listedPods = (await this.api.list(path, list)).items.map(toPod);
      // the selector is labels only: a bare Pod carrying them is no agent
      const pods = namePrefix === undefined ? listedPods.filter(this.spec.isAgent) : listedPods;
      if (pods.length > 0 || namePrefix === undefined) return pods;
      // static kube-proxy Pods (GKE and others) carry other labels, but the same name
      return (await this.api.list(path, { fieldSelector, cut: agentPodAsRead })).items
        .map(toPod)
        .filter((p) => p.name.startsWith(namePrefix));
    } catch (e) {
      throw new NodeUnavailable(`cannot find the ${this.spec.who} Pods: ${(e as Error).message}`);
    }
  }

  async close(): Promise<void> {}
}

/** Exec in the node's kube-proxy Pod. */
export const kubeProxyExec = (api: KubeApi, o: { timeoutMs: number }): NodeChannel =>
  new AgentExec(api, KUBE_PROXY, o);

/** Exec in the node's Cilium agent Pod, for its own listings only. */
export const ciliumAgentExec = (api: KubeApi, o: { timeoutMs: number }): NodeChannel =>
  new AgentExec(api, CILIUM, o);
