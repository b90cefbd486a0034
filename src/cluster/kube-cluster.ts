// A live cluster behind the Cluster interface: API reads through the user's kubeconfig, node
// commands through whichever node transport is plugged in (exec in kube-proxy, a debug Pod, SSH).
import type { SnapshotMeta } from '../core/model.js';
import type { Node, Pod } from '../core/kube/objects.js';
import type { Cluster, NodeCommand, NodeResult, ReadRequest } from './cluster.js';
import { commandStem } from './cluster.js';
import { KubeApi } from './kube-api.js';
import type { KubeApiOptions } from './kube/connection.js';
import type { KubeObject } from '../core/model.js';
import type { NodeAccess } from '../core/nodes/access.js';

/** Runs node commands for a live cluster; node-*.ts provide these. */
export interface NodeTransport {
  run(node: string, command: NodeCommand): Promise<NodeResult>;
  /** Removes what it created (debug Pods) and closes connections. */
  close?(): Promise<void>;
  /** Nothing more will run on this node: what was made for it is removed now. */
  done?(node: string): Promise<void>;
  /** The Pods the API reads returned (kube-proxy's and the agents' among them). */
  podsRead?(pods: readonly Pod[]): void;
  /** The Nodes the API reads returned (a kubelet that stopped posting its status takes no exec). */
  nodesRead?(nodes: readonly Node[]): void;
  /** Per node: which way ran which commands, and why others were skipped. */
  describe?(): NodeAccess[];
}

/** Builds the transport once the API is connected (transports create Pods and exec through it). */
export type NodeTransportFactory = (api: KubeApi) => NodeTransport | Promise<NodeTransport>;

/** The transport until one is configured: every command says so instead of failing obscurely. */
export const noNodeTransport: NodeTransport = {
  run: async (node, command) => ({
    stdout: '',
    stderr: '',
    exitCode: null,
    error: `no node transport configured: cannot run ${commandStem(command)} on node ${node}`,
    via: 'none',
  }),
};

export interface KubeClusterOptions extends KubeApiOptions {
  transport?: NodeTransportFactory;
}

export class KubeCluster implements Cluster {
  readonly meta: SnapshotMeta;

  private constructor(
    readonly api: KubeApi,
    private readonly transport: NodeTransport,
  ) {
    this.meta = { context: api.config.context, server: api.config.server, user: api.config.user };
  }

  static async connect(o: KubeClusterOptions = {}): Promise<KubeCluster> {
    const api = await KubeApi.connect(o);
    return new KubeCluster(api, o.transport ? await o.transport(api) : noNodeTransport);
  }

  /** The context's namespace: the default for -n. */
  get defaultNamespace(): string {
    return this.api.namespace;
  }

  async list(request: ReadRequest): Promise<KubeObject[]> {
    return (await this.api.list(request.path, request)).items;
  }

  listRows(request: Pick<ReadRequest, 'path' | 'labelSelector' | 'pageSize'>) {
    return this.api.listRows(request.path, request);
  }

  get(path: string): Promise<KubeObject | undefined> {
    return this.api.getIfExists(path);
  }

  async run(node: string, command: NodeCommand): Promise<NodeResult> {
    try {
      return await this.transport.run(node, command);
    } catch (e) {
      return { stdout: '', stderr: '', exitCode: null, error: (e as Error).message, via: 'none' };
    }
  }

  /** The Pods the API reads returned: the node channels find the agents' Pods there. */
  podsRead(pods: readonly Pod[]): void {
    this.transport.podsRead?.(pods);
  }

  /** The Nodes the API reads returned: the node channels skip a kubelet the API shows down. */
  nodesRead(nodes: readonly Node[]): void {
    this.transport.nodesRead?.(nodes);
  }

  /** Nothing more will run on this node: its debug Pod, if any, is deleted now, not at the end
   * (a run over thousands of nodes keeps no more Pods alive than it reads at once). */
  async nodeDone(node: string): Promise<void> {
    await this.transport.done?.(node);
  }

  /** How each node was reached so far (empty without a node transport). */
  nodeAccess(): NodeAccess[] {
    return this.transport.describe?.() ?? [];
  }

  private closing?: Promise<void>;

  /** Deletes what the transport made (debug Pods) and closes the API's connections, once: a
   * signal's cleanup during a close joins it rather than starting another. */
  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    try {
      await this.transport.close?.();
    } finally {
      this.api.close();
    }
  }
}
