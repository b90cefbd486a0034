// The one small interface between kdebug and the outside world, and the closed list of
// commands kdebug may run on a node. Every command is read-only and has a fixed argv: nothing
// from the cluster is ever spliced into a shell string.
import type { NodeCommand } from '../core/nodes/commands.js';
import type { KubeObject, SnapshotMeta } from '../core/model.js';
import type { Node, Pod } from '../core/kube/objects.js';

export { commandStem, type NodeCommand } from '../core/nodes/commands.js';

export interface NodeResult {
  stdout: string;
  stderr: string;
  /** null when the command could not run at all (see `error`). */
  exitCode: number | null;
  error?: string;
  /** The command began and did not finish: its stream dropped, it ran past its time, or its Pod
   * went away. What it printed is not its output (a run with one is partial). */
  lost?: boolean;
  /** It printed more than --max-output-mib: not read, and another way would read the same. */
  overLimit?: boolean;
  /** Its binary is not where it ran (an image without it): another binary may be. */
  missingBinary?: boolean;
  /** Which transport ran it, e.g. "ssh root@192.0.2.10" or "exec kube-system/kube-proxy-abcde". */
  via: string;
}

/** A path under the API server: /api/v1/... for the core group, /apis/GROUP/VERSION/... otherwise. */
export function apiPath(p: {
  group?: string;
  version?: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}): string {
  const base = p.group ? `/apis/${p.group}/${p.version ?? 'v1'}` : `/api/${p.version ?? 'v1'}`;
  const ns = p.namespace ? `/namespaces/${encodeURIComponent(p.namespace)}` : '';
  const name = p.name ? `/${encodeURIComponent(p.name)}` : '';
  return `${base}${ns}/${p.resource}${name}${p.subresource ? `/${p.subresource}` : ''}`;
}

/** A command that could not run at all: no output, and why. */
export const failedResult = (error: string, via: string): NodeResult => ({
  stdout: '',
  stderr: '',
  exitCode: null,
  error,
  via,
});

/** What to read from the API for one target. */
export interface ReadRequest {
  /** A path under the API server, e.g. "/api/v1/namespaces/default/services". */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Items per page, where not the API client's own (kubectl's 500). */
  pageSize?: number;
  /** What to keep of each item, applied as its page arrives: a page is let go before the next
   * (thousands of agent Pods are not held whole). */
  cut?: (o: KubeObject) => KubeObject;
}

/** One row of a list as the API server prints it (a meta.k8s.io Table): its cells by column
 * name ("Name", "Status", "Internal-IP"). */
export type TableRow = Record<string, unknown>;

export interface Cluster {
  /** Where the objects come from: context and server (snapshot meta.json). */
  readonly meta: SnapshotMeta;
  /**
   * The items of one list request, exactly as the API returned them (or as request.cut keeps
   * them), with kind and apiVersion filled in from the list (the API leaves them out of items),
   * as `kubectl get -o json` prints.
   */
  list(request: ReadRequest): Promise<KubeObject[]>;
  /** The rows of a list as the API server prints them, without the objects; undefined where it
   * serves no Tables (then list() reads the objects). */
  listRows?(
    request: Pick<ReadRequest, 'path' | 'labelSelector' | 'pageSize'>,
  ): Promise<TableRow[] | undefined>;
  /** One object (path ends in its name), exactly as the API returned it; undefined when it does not exist. */
  get(path: string): Promise<KubeObject | undefined>;
  /** Runs one command from the closed list on a node. Never throws for a failed command. */
  run(node: string, command: NodeCommand): Promise<NodeResult>;
  /** Nothing more will run on this node: what kdebug created for it goes now. */
  nodeDone?(node: string): Promise<void>;
  /** The Pods the API reads returned, before any node command: a node's agent Pod among them
   * is not asked for again. */
  podsRead?(pods: readonly Pod[]): void;
  /** The Nodes the API reads returned, before any node command: where one's kubelet is down,
   * nothing is exec'd through it. */
  nodesRead?(nodes: readonly Node[]): void;
  /** Releases connections and removes anything kdebug created (debug Pods). */
  close(): Promise<void>;
}
