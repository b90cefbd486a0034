// How kdebug reaches the nodes of a live cluster (`--via ssh|kube-proxy|pod|auto`). Each way is a
// channel: exec in the node's kube-proxy Pod, a privileged debug Pod, or SSH to the node's
// address. `auto` tries them in that order for every command, falls through when one cannot
// serve, and records per node which one ran what and why the others were skipped.
import { toNode, type Node, type Pod } from '../../core/kube/objects.js';
import type { NodeAccess, TransportName } from '../../core/nodes/access.js';
import { ownWords, SameWayFold } from '../../core/nodes/errors.js';
import type { NodeCommand, NodeResult } from '../cluster.js';
import { apiPath, commandStem, failedResult } from '../cluster.js';
import type { KubeApi } from '../kube-api.js';
import type { NodeTransport, NodeTransportFactory } from '../kube-cluster.js';
import { KubeApiError } from '../kube/errors.js';
import { ciliumAgentExec, kubeProxyExec } from './kube-proxy.js';
import { DebugPods, type DebugPodOptions } from './debug-pod.js';
import { nodeSshHost, SshSession, type SshAddressType } from './ssh.js';
import { SshError, type SshOptions } from '../ssh/route.js';
import { NodeUnavailable, type NodeChannel, type NodeRunner } from './channel.js';
import { typedCommand } from './commands.js';

export { NodeUnavailable, type NodeChannel, type NodeRunner } from './channel.js';

export type Via = Exclude<TransportName, 'cilium'> | 'auto';

export const DEFAULT_NODE_TIMEOUT_MS = 60_000;

const NAMES: Record<TransportName, string> = {
  cilium: 'Cilium agent Pod',
  'kube-proxy': 'kube-proxy Pod',
  pod: 'debug Pod',
  ssh: 'SSH',
};

/** Why the API shows a Node's kubelet unreachable (the node controller's Ready Unknown, or its
 * unreachable taint): an exec through it would wait for the API server's dial to time out. */
function kubeletDown(n: Node): string | undefined {
  const unknown = n.readyCondition?.status === 'Unknown';
  const taint = n.downTaints.some((t) => t.startsWith('node.kubernetes.io/unreachable:'));
  if (!unknown && !taint) return undefined;
  const shown = unknown ? 'Ready Unknown' : 'tainted node.kubernetes.io/unreachable';
  return `Node ${n.name}'s kubelet is unreachable as the API shows it (${shown}): not exec'd through it`;
}

/** SSH to the node's address from its Node object (--ssh-address-type), with ~/.ssh/config. */
export class SshChannel implements NodeChannel {
  readonly name = 'ssh';
  private readonly sessions = new Map<string, Promise<SshSession>>();

  constructor(
    private readonly api: KubeApi,
    private readonly o: SshOptions & { addressType?: SshAddressType },
  ) {}

  cannotRun(): undefined {
    return undefined;
  }

  async open(node: string): Promise<NodeRunner> {
    let session = this.sessions.get(node);
    if (!session) {
      session = this.connect(node);
      this.sessions.set(node, session);
    }
    const s = await session;
    return { via: s.via, run: (c) => s.run(c) };
  }

  private async connect(node: string): Promise<SshSession> {
    const type = this.o.addressType ?? 'InternalIP';
    let raw;
    try {
      raw = await this.api.get(apiPath({ resource: 'nodes', name: node }));
    } catch (e) {
      throw new NodeUnavailable(
        e instanceof KubeApiError ? `cannot read Node ${node}: ${e.message}` : String(e),
      );
    }
    const host = nodeSshHost(toNode(raw), type);
    if (!host)
      throw new NodeUnavailable(`Node ${node} has no ${type} address (see --ssh-address-type)`);
    try {
      return await SshSession.open({ host }, this.o);
    } catch (e) {
      throw new NodeUnavailable(
        e instanceof SshError ? e.message : `ssh ${host}: ${(e as Error).message}`,
      );
    }
  }

  async close(): Promise<void> {
    const open = await Promise.allSettled(this.sessions.values());
    this.sessions.clear();
    for (const s of open) if (s.status === 'fulfilled') await s.value.close();
  }
}

export interface NodeAccessOptions {
  via?: Via;
  /** Each command, and a debug Pod starting (SSH connects within its own --ssh-timeout). */
  timeoutMs?: number;
  /** --max-output-mib: the most one command may print, whichever way runs it. */
  maxOutputBytes?: number;
  ssh?: SshOptions & { addressType?: SshAddressType };
  pod?: Omit<DebugPodOptions, 'timeoutMs'>;
}

/** A failure's message naming where it happened, unless it already does. */
function named(r: NodeResult): string {
  const error = r.error ?? 'the command could not run';
  const where = r.via.split(' ').pop() ?? r.via;
  return error.includes(where) ? error : `${r.via}: ${error}`;
}

/**
 * The node transport of a live cluster: the channels of --via, tried in order for each command.
 * `describe()` tells, per node, which channel ran which commands and why others were skipped.
 */
export class NodeAccessTransport implements NodeTransport {
  private readonly runners = new Map<string, Promise<NodeRunner>>();
  /** A channel that failed on a node stays failed there: its reason, per "channel node". */
  private readonly dead = new Map<string, string>();
  /** Channels that died with a command half done: what they skip afterwards is lost too. */
  private readonly broken = new Set<string>();
  /** How the nodes in hand, and those done that some way reached, were reached. */
  private readonly access = new Map<string, NodeAccess>();
  /** The nodes done that no way reached: what each way said, nodes refused the same way as one
   * (a thousand unreachable kubelets keep a thousand names, not a thousand records). */
  private readonly unreached = new SameWayFold<NodeAccess['skipped'][number]>({
    text: (s) => s.reason,
    key: (s) => JSON.stringify([s.transport, s.commands, s.cannotRun ?? false]),
    withText: (s, reason) => ({ ...s, reason }),
  });
  /** Each command's stem once, however many nodes name it. */
  private readonly stems = new Map<string, string>();
  /** Nodes whose kubelet the API shows unreachable: no channel through it is tried there. */
  private readonly kubeletDown = new Map<string, string>();

  constructor(private readonly channels: NodeChannel[]) {}

  /** Builds the channels of `--via` on a connected API. */
  static create(api: KubeApi, o: NodeAccessOptions = {}): NodeAccessTransport {
    const timeoutMs = o.timeoutMs ?? DEFAULT_NODE_TIMEOUT_MS;
    // exec in the kube-proxy Pod and in a debug Pod both go through the API's exec
    if (o.maxOutputBytes !== undefined) api.maxExecOutputBytes = o.maxOutputBytes;
    const make: Record<Exclude<TransportName, 'cilium'>, () => NodeChannel> = {
      'kube-proxy': () => kubeProxyExec(api, { timeoutMs }),
      pod: () => new DebugPods(api, { ...o.pod, timeoutMs }),
      // SSH connects within --ssh-timeout (10 s by default), like `rules --ssh`
      ssh: () => new SshChannel(api, { ...o.ssh, commandTimeoutMs: timeoutMs }),
    };
    const via = o.via ?? 'auto';
    const order = via === 'auto' ? (['kube-proxy', 'pod', 'ssh'] as const) : [via];
    // a Cilium agent's own listings are read in its Pod whatever --via says: nothing is created
    return new NodeAccessTransport([
      ciliumAgentExec(api, { timeoutMs }),
      ...order.map((n) => make[n]()),
    ]);
  }

  async run(node: string, command: NodeCommand): Promise<NodeResult> {
    const made = commandStem(command);
    const stem = this.stems.get(made) ?? (this.stems.set(made, made), made);
    const reasons: string[] = [];
    let last: NodeResult | undefined;
    let lost = false;
    // a command a channel claims goes through it alone; the others take everything else
    const claimed = this.channels.filter((c) => c.serves?.(command));
    const serving = claimed.length > 0 ? claimed : this.channels.filter((c) => !c.serves);
    for (const channel of serving) {
      const key = `${channel.name} ${node}`;
      const cannot = channel.cannotRun(command);
      const why =
        cannot ??
        this.dead.get(key) ??
        (channel.name !== 'ssh' ? this.kubeletDown.get(node) : undefined);
      if (why !== undefined) {
        lost ||= cannot === undefined && this.broken.has(key);
        this.skip(node, channel.name, why, stem, cannot !== undefined);
        reasons.push(`${NAMES[channel.name]}: ${why}`);
        continue;
      }
      let runner: NodeRunner;
      try {
        runner = await this.runner(channel, node);
      } catch (e) {
        const reason = (e as Error).message;
        this.dead.set(key, reason);
        this.skip(node, channel.name, reason, stem);
        reasons.push(`${NAMES[channel.name]}: ${reason}`);
        continue;
      }
      const r = await runner.run(command);
      if (r.exitCode !== null) {
        this.use(node, channel.name, r.via, stem);
        return r;
      }
      // the node printed too much: another way would read the same, and this one still works
      if (r.overLimit) {
        this.use(node, channel.name, r.via, stem);
        return { ...r, error: named(r) };
      }
      // it could not run there at all: that channel is done with this node, try the next
      lost ||= r.lost === true;
      const reason = named(r);
      this.dead.set(key, reason);
      if (r.lost) this.broken.add(key);
      this.skip(node, channel.name, reason, stem);
      reasons.push(`${NAMES[channel.name]}: ${reason}`);
      last = r;
    }
    if (serving.length === 1 && last)
      return { ...last, error: named(last), ...(lost ? { lost } : {}) };
    return {
      ...failedResult(
        `cannot run ${typedCommand(command).join(' ')} on node ${node}: ${reasons.join('; ')}`,
        'none',
      ),
      ...(lost ? { lost } : {}),
    };
  }

  private runner(channel: NodeChannel, node: string): Promise<NodeRunner> {
    const key = `${channel.name} ${node}`;
    let r = this.runners.get(key);
    if (!r) {
      r = channel.open(node);
      r.catch(() => undefined); // reported through run()
      this.runners.set(key, r);
    }
    return r;
  }

  private entry(node: string): NodeAccess {
    let a = this.access.get(node);
    if (!a) this.access.set(node, (a = { node, used: [], skipped: [] }));
    return a;
  }

  private use(node: string, transport: TransportName, via: string, stem: string): void {
    const a = this.entry(node);
    const u =
      a.used.find((x) => x.via === via) ??
      (a.used.push({ transport, via, commands: [] }), a.used.at(-1)!);
    if (!u.commands.includes(stem)) u.commands.push(stem);
  }

  private skip(
    node: string,
    transport: TransportName,
    reason: string,
    stem: string,
    cannotRun = false,
  ): void {
    const a = this.entry(node);
    const s =
      a.skipped.find((x) => x.transport === transport && x.reason === reason) ??
      (a.skipped.push({ transport, reason, commands: [], ...(cannotRun ? { cannotRun } : {}) }),
      a.skipped.at(-1)!);
    if (!s.commands.includes(stem)) s.commands.push(stem);
  }

  /** Per node, sorted: which channel ran which commands, and why others were skipped. */
  describe(): NodeAccess[] {
    const out = new Map<string, NodeAccess>();
    const add = (a: NodeAccess) => {
      const had = out.get(a.node);
      // a node read again after it was done (more commands for it): one entry still
      if (had) {
        had.used.push(...a.used);
        had.skipped.push(...a.skipped);
      } else out.set(a.node, a);
    };
    for (const { nodes, items } of this.unreached.groups())
      for (const node of nodes)
        add({
          node,
          used: [],
          skipped: items.map((s) => ({
            ...s,
            reason: ownWords(s.reason, node),
            commands: [...s.commands],
          })),
        });
    for (const a of this.access.values()) add(structuredClone(a));
    return [...out.values()].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  }

  podsRead(pods: readonly Pod[]): void {
    for (const c of this.channels) c.podsRead?.(pods);
  }

  nodesRead(nodes: readonly Node[]): void {
    for (const n of nodes) {
      const down = kubeletDown(n);
      if (down) this.kubeletDown.set(n.name, down);
      else this.kubeletDown.delete(n.name);
    }
  }

  async done(node: string): Promise<void> {
    for (const c of this.channels) this.runners.delete(`${c.name} ${node}`);
    // a node no way reached is one name among those refused the same way
    const a = this.access.get(node);
    if (a && a.used.length === 0) {
      this.unreached.add(node, a.skipped);
      this.access.delete(node);
    }
    await Promise.allSettled(this.channels.map((c) => c.done?.(node)));
  }

  async close(): Promise<void> {
    // every channel cleans up, even when one fails
    const results = await Promise.allSettled(this.channels.map((c) => c.close()));
    const failure = results.find((r) => r.status === 'rejected');
    if (failure) throw (failure as PromiseRejectedResult).reason;
  }
}

/** The transport factory KubeCluster.connect takes; `onCreate` hands the transport back for describe(). */
export function nodeAccess(
  o: NodeAccessOptions,
  onCreate?: (t: NodeAccessTransport) => void,
): NodeTransportFactory {
  return (api) => {
    const t = NodeAccessTransport.create(api, o);
    onCreate?.(t);
    return t;
  };
}
