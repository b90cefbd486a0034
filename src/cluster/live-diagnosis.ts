// svc's live read: a diagnosis's facts from the cluster, the nodes it reads chosen once the API
// objects are in (--nodes, --all-nodes, --from), and KDEBUG_TIMINGS' account of where its time
// goes.
import { chooseNodes, firstChosen, type NodeChoice } from '../core/nodes/choice.js';
import { kubeProxyPodsReadOn } from '../core/kube/daemon-set.js';
import type { ClusterView } from '../core/kube/objects.js';
import type { DiagnosedService } from '../core/diagnose.js';
import type { Facts } from '../core/model.js';
import type { DataplaneCode } from '../core/dataplane/modes.js';
import type { KubeCluster } from './kube-cluster.js';
import type { CollectProgress, NodeTally } from './collect.js';
import type { SourceContext } from './facts-source.js';

/** svc's node flags: --nodes, --all-nodes, --max-nodes, --from. */
export interface NodeChoiceFlags {
  nodes?: string[];
  all?: boolean;
  max?: number;
  /** pod/NAME (in the Service's namespace, or NS/NAME) or node/NAME. */
  from?: { kind: 'pod' | 'node'; namespace?: string; name: string };
  /** --node-concurrency: nodes read at once (each may hold a debug Pod while it is read). */
  concurrency?: number;
}

/** The node of --from: the node named, or the node its Pod runs on (read with the objects). */
function clientNode(
  view: ClusterView,
  namespace: string,
  from: NodeChoiceFlags['from'],
): string | undefined {
  if (!from) return undefined;
  if (from.kind === 'node') return from.name;
  const ns = from.namespace ?? namespace;
  return view.pods.find((p) => p.name === from.name && p.namespace === ns)?.nodeName;
}

export type Progress = (p: CollectProgress) => void;

/** KDEBUG_TIMINGS=1: each API read and node command, with how long it took, and each phase of
 * the run, told on stderr as they end (where a live run's time goes; `npm run bench:cluster`
 * prints the slowest). */
export function runTimings(c: Pick<SourceContext, 'tell'>): {
  progress: Progress;
  phase(label: string): void;
  /** What the run read: bytes kept from nodes (the entry chains cut to the Service), API objects and the bytes of the API's answers. */
  sizes(facts: Facts, apiBytes: number): void;
} {
  const started = new Map<string, number>();
  const t0 = performance.now();
  const at = () => Math.round(performance.now() - t0);
  return {
    progress: (p) => {
      const key = `${p.node ? `node ${p.node}: ` : ''}${p.what}`;
      if (p.state === 'start') return void started.set(key, performance.now());
      const took = Math.round(performance.now() - (started.get(key) ?? t0));
      // told once: a run over thousands of nodes keeps no key per node and command
      started.delete(key);
      c.tell(
        `timing: ${took} ms (ends at ${at()} ms) ${key}${p.state === 'failed' ? ' (failed)' : ''}`,
      );
    },
    phase: (label) => c.tell(`timing: phase ${label} at ${at()} ms`),
    sizes: (facts, apiBytes) => {
      const outputs = Object.values(facts.nodes).flatMap((o) => Object.values(o));
      const bytes = outputs.reduce((n, text) => n + Buffer.byteLength(text), 0);
      c.tell(
        `timing: sizes ${bytes} bytes kept from nodes in ${outputs.length} outputs of ${Object.keys(facts.nodes).length} nodes; ${facts.objects.length} API objects in ${apiBytes} bytes from the API`,
      );
    },
  };
}

/**
 * A live diagnosis's facts: the API objects for the Service, then, on every node (a bounded
 * number at once), the basics and the probes the steps read. A node command that cannot run is
 * not recorded: the steps that need it say so. A Service that does not exist gives facts without
 * it and the API's suggestions, so the report can say "did you mean".
 */
export async function readLive(
  cluster: KubeCluster,
  target: DiagnosedService,
  kdebugVersion: string,
  progress?: Progress,
  partial?: (read: { facts: Facts; code: DataplaneCode }, collecting: { nodes: boolean }) => void,
  which: NodeChoiceFlags = {},
  onNodes?: (t: NodeTally) => void,
): Promise<{
  facts: Facts;
  suggestions?: { namespace: string; name: string }[];
  /** The objects typed once, while the nodes were chosen: the diagnosis need not again. */
  view?: ClusterView;
}> {
  const { collect, diagnosisCommands } = await import('./collect.js');
  const { ServiceNotFoundError } = await import('./kube/suggestions.js');
  let choice: NodeChoice | undefined;
  let typed: ClusterView | undefined;
  let objectsRead: { facts: Facts; code: DataplaneCode } | undefined;
  try {
    const facts = await collect(cluster, target, {
      onProgress: progress,
      ...(onNodes ? { onNodes } : {}),
      meta: { kdebugVersion },
      // every Node and agent Pod is listed: of each, what the steps read
      asRead: true,
      // every Node as a row, the chosen and the endpoints' whole (--all-nodes: every one whole)
      nodeRows: !which.all,
      wholeNodes: (f, { view }) =>
        firstChosen(view, target, {
          client: clientNode(view, target.namespace, which.from),
          max: Infinity,
        }),
      ...(which.concurrency !== undefined ? { nodeConcurrency: which.concurrency } : {}),
      ...(which.from?.kind === 'pod'
        ? {
            clientPod: {
              namespace: which.from.namespace ?? target.namespace,
              name: which.from.name,
            },
          }
        : {}),
      // the client's and the endpoints' nodes first, while every Node is still being listed
      early: {
        nodes: (f, { view }) =>
          firstChosen(view, target, {
            ...which,
            client: clientNode(view, target.namespace, which.from),
          }),
        commands: (f, analysis) => diagnosisCommands(f, target, true, analysis),
      },
      // which nodes, decided once the objects are in; recorded before the steps see them
      nodes: (f, { view }) => {
        typed = view;
        const podsOn = kubeProxyPodsReadOn(f.meta);
        choice = chooseNodes(view, target, {
          ...which,
          ...(podsOn ? { kubeProxyPodsOn: podsOn } : {}),
          client: clientNode(view, target.namespace, which.from),
          ...(which.from
            ? {
                clientAsked: `${which.from.kind}/${which.from.namespace ? `${which.from.namespace}/` : ''}${which.from.name}`,
              }
            : {}),
        });
        f.meta['nodeChoice'] = choice;
        return choice.chosen.map((c) => c.node);
      },
      nodeCommands: (f, analysis) => {
        // the API objects are in: the steps that need only them can finish now
        objectsRead = { facts: f, code: analysis.code };
        partial?.(objectsRead, { nodes: true });
        // the chosen nodes' kube-proxy Pods may have been read after the choice: this view has them
        typed = analysis.view;
        return diagnosisCommands(f, target, true, analysis);
      },
      // then the nodes as they are read (--all-nodes on a large cluster takes a while)
      ...(partial
        ? {
            onNodeFacts: (nodes: Facts['nodes']) =>
              objectsRead &&
              partial(
                { facts: { ...objectsRead.facts, nodes }, code: objectsRead.code },
                { nodes: true },
              ),
          }
        : {}),
      // one Service's answer: its chains by name, not every node's whole table
      rulesOf: { namespace: target.namespace, name: target.service },
    });
    if (choice) facts.meta['nodeChoice'] = choice;
    // how each node was reached is told on stderr from the transport (cluster.nodeAccess()),
    // and kept in a snapshot: a diagnosis has no use for a copy of it
    return { facts, ...(typed ? { view: typed } : {}) };
  } catch (e) {
    if (!(e instanceof ServiceNotFoundError)) throw e;
    // the API's "did you mean" travels with the facts, so the TUI's diagnosis says it too
    const meta = { ...cluster.meta, suggestions: e.suggestions };
    return { facts: { objects: [], nodes: {}, meta }, suggestions: e.suggestions };
  }
}
