// One way of reaching nodes (exec in kube-proxy, a debug Pod, SSH), as transport.ts uses it.
import type { TransportName } from '../../core/nodes/access.js';
import type { Pod } from '../../core/kube/objects.js';
import type { NodeCommand, NodeResult } from '../cluster.js';

/** A connected node: runs commands of the closed list there. */
export interface NodeRunner {
  /** "exec kube-system/kube-proxy-7xk2p", "debug Pod default/kdebug-node-a-x2x7q", "ssh root@192.0.2.11". */
  readonly via: string;
  /** Never throws: a command that could not run comes back with exitCode null and an error. */
  run(command: NodeCommand): Promise<NodeResult>;
}

/** One way to reach nodes. */
export interface NodeChannel {
  readonly name: TransportName;
  /** A channel for some commands only: those go through it alone, and it takes no others. */
  serves?(command: NodeCommand): boolean;
  /** Why this channel cannot run the command on any node (said before trying), or undefined. */
  cannotRun(command: NodeCommand): string | undefined;
  /** Connects to one node; rejects with NodeUnavailable saying why it cannot. */
  open(node: string): Promise<NodeRunner>;
  /** The Pods the run's API reads returned: a channel that finds a node's Pod among them need
   * not ask the API for it again. */
  podsRead?(pods: readonly Pod[]): void;
  /** The run has nothing more for this node: what was made for it goes now (its debug Pod). */
  done?(node: string): Promise<void>;
  /** Removes what it created and closes its connections. */
  close(): Promise<void>;
}

/** A channel cannot reach a node; the message says why, in a person's words. */
export class NodeUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeUnavailable';
  }
}
