// Exec in the node's own kube-proxy Pod: nothing is created, and the image's iptables wrapper
// reads the backend kube-proxy writes to. The save binary is exec'd directly (the image may have
// no shell), so only the rules commands run here; probes need a debug Pod or SSH.
import { toPod, type Pod } from '../core/kube.js';
import type { NodeCommand, NodeResult } from './cluster.js';
import { apiPath } from './cluster.js';
import { labelSelectorString } from './collect.js';
import type { KubeApi } from './kube-api.js';
import { KubeApiError } from './kube/errors.js';
import { nodeArgv, UnsupportedCommandError } from './node-commands.js';
import { NodeUnavailable, type NodeChannel, type NodeRunner } from './node-channel.js';
import { KUBE_PROXY_EXEC, SYSTEM } from './permissions.js';

/** Running, with the container kdebug execs in running too. */
function usable(p: Pod, container: string): boolean {
  return (
    p.phase === 'Running' &&
    !p.deleting &&
    p.containerStatuses.some((c) => c.name === container && c.state.kind === 'running')
  );
}

/** kube-proxy's container: the one named kube-proxy, else the only one. */
const containerOf = (p: Pod) =>
  (p.containers.find((c) => c.name === 'kube-proxy') ?? p.containers[0])?.name;

export class KubeProxyExec implements NodeChannel {
  readonly name = 'kube-proxy';
  private pods?: Promise<Pod[]>;
  private allowed?: Promise<string | undefined>;

  constructor(
    private readonly api: KubeApi,
    private readonly o: { timeoutMs: number },
  ) {}

  cannotRun(command: NodeCommand): string | undefined {
    try {
      nodeArgv(command, { kind: 'kube-proxy-pod' });
      return undefined;
    } catch (e) {
      if (e instanceof UnsupportedCommandError)
        return 'its image has no tools for them, kdebug runs only iptables-save there';
      throw e;
    }
  }

  async open(node: string): Promise<NodeRunner> {
    const denied = await (this.allowed ??= this.checkExec());
    if (denied) throw new NodeUnavailable(denied);
    const pods = (await (this.pods ??= this.listPods())).filter((p) => p.nodeName === node);
    if (pods.length === 0) throw new NodeUnavailable(`no kube-proxy Pod on node ${node}`);
    const pod = pods.find((p) => usable(p, containerOf(p) ?? ''));
    if (!pod) {
      const p = pods[0]!;
      const waiting = p.containerStatuses.find((c) => c.state.reason)?.state.reason;
      throw new NodeUnavailable(
        `kube-proxy Pod ${SYSTEM}/${p.name} on ${node} is not running (${p.deleting ? 'being deleted' : waiting ? `${p.phase}, ${waiting}` : p.phase})`,
      );
    }
    const container = containerOf(pod)!;
    const via = `exec ${SYSTEM}/${pod.name}`;
    return { via, run: (c) => this.exec(pod.name, container, via, node, c) };
  }

  private async exec(
    pod: string,
    container: string,
    via: string,
    node: string,
    command: NodeCommand,
  ): Promise<NodeResult> {
    const argv = nodeArgv(command, { kind: 'kube-proxy-pod' });
    const r = await this.api.exec(SYSTEM, pod, container, argv, { timeoutMs: this.o.timeoutMs });
    const missing =
      r.exitCode === 127 ||
      /executable file not found|no such file or directory/i.test(r.error ?? '');
    if (missing)
      return {
        ...r,
        exitCode: null,
        error: `${argv[0]} is not in the kube-proxy image on ${node}`,
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

  /** The DaemonSet's Pods, by its selector (k8s-app=kube-proxy when the DaemonSet is unreadable). */
  private async listPods(): Promise<Pod[]> {
    const path = apiPath({ resource: 'pods', namespace: SYSTEM });
    try {
      const ds = await this.api
        .getIfExists(
          apiPath({ group: 'apps', resource: 'daemonsets', namespace: SYSTEM, name: 'kube-proxy' }),
        )
        .catch(() => undefined);
      const selector = (ds?.['spec'] as { selector?: Parameters<typeof labelSelectorString>[0] })
        ?.selector;
      const labelSelector = selector ? labelSelectorString(selector) : 'k8s-app=kube-proxy';
      const pods = (await this.api.list(path, { labelSelector })).items.map(toPod);
      if (pods.length > 0) return pods;
      // static kube-proxy Pods (GKE and others) carry other labels, but the same name
      return (await this.api.list(path)).items
        .map(toPod)
        .filter((p) => p.name.startsWith('kube-proxy-'));
    } catch (e) {
      throw new NodeUnavailable(`cannot find the kube-proxy Pods: ${(e as Error).message}`);
    }
  }

  async close(): Promise<void> {}
}
