// What a capture is asked (CollectOptions: which nodes, which commands, one Service's rules) and
// what it tells as it goes: each read starting and ending, and the nodes read so far.
import type { NodeCommand } from '../cluster.js';
import type { Analysis } from '../../core/nodes/analysis.js';
import type { Facts, SnapshotMeta } from '../../core/model.js';

/** A read starting or ending: an API read, or a command on `node`. */
export interface CollectProgress {
  /** What is read or run, e.g. "EndpointSlices of default/web" or "iptables-save". */
  what: string;
  node?: string;
  state: 'start' | 'done' | 'failed';
  /** Objects a read returned. */
  count?: number;
  error?: string;
}

/** A capture's nodes so far: read (something recorded), failed (nothing could be), left. */
export interface NodeTally {
  read: number;
  failed: number;
  left: number;
}

export interface CollectOptions {
  onProgress?: (p: CollectProgress) => void;
  /** Told when the node reads start and as each node is done. */
  onNodes?: (t: NodeTally) => void;
  /** The nodes read so far, at most once a second while the others are read: a report can
   * show them as they arrive. */
  onNodeFacts?: (nodes: Facts['nodes']) => void;
  /**
   * Commands to run on each node, or a function of the objects read that says which; their
   * stdout lands in facts.nodes[node][commandStem]. Default none.
   */
  nodeCommands?: NodeCommand[] | ((facts: Facts, analysis: Analysis) => NodeCommand[]);
  /** Nodes to run them on, or a function of the objects read that says which. Default: every
   * Node read. */
  nodes?: string[] | ((facts: Facts, analysis: Analysis) => string[]);
  /**
   * The nodes read whatever the cluster-wide lists say (the endpoints', the client's), and their
   * commands: they start once the other reads are in, while every Node and agent Pod is still
   * being listed (seconds on a large cluster). `nodes` then reads them with what it adds.
   */
  early?: {
    nodes: (facts: Facts, analysis: Analysis) => string[];
    commands: (facts: Facts, analysis: Analysis) => NodeCommand[];
  };
  /** Added to facts.meta (e.g. kdebugVersion). */
  meta?: SnapshotMeta;
  /** The client Pod of --from pod/NAME: read too, for the node it runs on. */
  clientPod?: { namespace: string; name: string };
  /** Nodes handled at once. Default 8. */
  nodeConcurrency?: number;
  /** Keep of each Node and each node agent's Pod only what the steps read (collect/as-read.ts): a
   * diagnosis lists thousands of each on a large cluster, where a snapshot keeps them as the API
   * gave them. */
  asRead?: boolean;
  /** List every Node as a row of the API server's Table (collect/node-rows.ts), and read whole
   * only the nodes chosen and those `wholeNodes` names: a large cluster's Nodes are kilobytes
   * each, their rows ~100 bytes. */
  nodeRows?: boolean;
  /** Besides the nodes chosen, the Nodes the steps read whole (the endpoints', the client's). */
  wholeNodes?: (facts: Facts, analysis: Analysis) => string[];
  now?: () => Date;
  /** Read each node's iptables rules for this Service only, chain by chain (kdebug svc), where
   * kube-proxy runs in iptables mode: see core/dataplane/iptables/service-chains.ts. */
  rulesOf?: {
    namespace: string;
    name: string;
    /** Below this many KUBE-SERVICES rules the whole table is read: one read of a small table
     * costs less than a dozen by name. Default WHOLE_BELOW. */
    wholeBelow?: number;
  };
}
