// What a live run began to read and lost: an API read that failed for a reason other than a
// refusal (the API server went away, timed out, answered 410 or 5xx) or a node command that began
// and did not finish. A report with any is partial: what it says holds for what was read only.
// Also the limit on what one read may hold: past it the read is lost, never kept in part.
import type { Facts } from '../model.js';
import { namedFew, type NodeError } from '../nodes/access.js';
import {
  nodeErrorsOf,
  ofEach,
  onNode,
  type NodeErrorFold,
  type NodeErrorGroup,
  type NodeErrors,
} from '../nodes/errors.js';

/** What an API read was of, as data: the steps match failures on this, never on `what`. */
export interface ApiRead {
  /** The API resource, plural: "pods", "endpointslices", "services", "nodes". */
  resource: string;
  /** Undefined: every namespace (or a cluster-scoped resource). */
  namespace?: string;
  /** One object by name; undefined for a list. */
  name?: string;
  /** "NS/NAME" of the Service whose objects the list is (its EndpointSlices, its Pods). */
  service?: string;
  /** A read of a cluster add-on in kube-system (kube-proxy, CoreDNS), not of the target's
   * namespace. */
  addon?: boolean;
  /** The Pods whose address (their first, `status.podIP`) is this one, in every namespace. */
  podIP?: string;
}

/** An API read that failed (meta.readErrors); `reason` is the API error's kind, `read` what it
 * was of (captures before 0.1.0's node state recorded only `what`). */
export interface ReadError {
  what: string;
  read?: ApiRead;
  error: string;
  reason?: string;
}

export interface NotRead {
  what: string;
  why: string;
}

/** Refusals are answers (RBAC said no, the object is not there): the steps say them as not observed. */
const ANSWERED = new Set(['forbidden', 'not-found']);

export function readErrorsOf(facts: Facts): ReadError[] {
  const v = facts.meta['readErrors'];
  if (!Array.isArray(v)) return [];
  // the groups' marker is for kdebug that cannot read them: this one reads them
  return Array.isArray(facts.meta['nodeErrorGroups'])
    ? (v as ReadError[]).filter((e) => e?.reason !== GROUPED)
    : (v as ReadError[]);
}

/** The reason of the readErrors entry that stands for the groups (nodeErrorsMeta). */
export const GROUPED = 'node-errors-grouped';

/**
 * What a capture records of its failed node commands in meta. Up to FLAT failed nodes, each
 * failure on its node in its own words (meta.nodeErrors), as every kdebug has read it. Past
 * them, the groups (meta.nodeErrorGroups), and in meta.readErrors an entry a kdebug that knows
 * only meta.nodeErrors takes for a lost read (a reason that is no refusal): it says its report is
 * partial, never that nodes it cannot know failed were read whole. This kdebug drops that entry.
 */
export function nodeErrorsMeta(
  fold: NodeErrorFold,
  readErrors: readonly ReadError[] = [],
): { nodeErrors?: NodeError[] } | { nodeErrorGroups: NodeErrorGroup[]; readErrors: ReadError[] } {
  const flat = fold.flat();
  if (flat) return flat.length > 0 ? { nodeErrors: flat } : {};
  const groups = fold.groups();
  const nodes = new Set(groups.flatMap((g) => g.nodes)).size;
  return {
    nodeErrorGroups: groups,
    readErrors: [
      ...readErrors,
      {
        what: `the failed commands of ${nodes} nodes (meta.nodeErrorGroups)`,
        error:
          'recorded by node group, which only a newer kdebug reads: which nodes they are, and what failed on them, is not known here',
        reason: GROUPED,
      },
    ],
  };
}

/** The endpoint addresses whose Pods were looked up by address, and answered (meta.podIPLookups):
 * the Pods found are in the facts, so an address none of them has is no Pod's first address. */
export function podIPLookupsOf(facts: Facts): string[] {
  const v = facts.meta['podIPLookups'];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** The Nodes known from their `kubectl get nodes` row only (meta.nodesAsRows): of their addresses,
 * the first InternalIP and ExternalIP are known, not the others (a second family's, say). */
export function nodesAsRowsOf(facts: Facts): string[] {
  const v = facts.meta['nodesAsRows'];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Per node and entry chain (KUBE-SERVICES, KUBE-NODEPORTS), how many rules of other Services a
 * live read for one Service did not keep. */
export function entryRulesNotKeptOf(facts: Facts): Record<string, Record<string, number>> {
  const v = facts.meta['entryRulesNotKept'];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  const out: Record<string, Record<string, number>> = {};
  for (const [node, chains] of Object.entries(v as Record<string, unknown>)) {
    if (typeof chains !== 'object' || chains === null) continue;
    for (const [chain, n] of Object.entries(chains as Record<string, unknown>))
      if (typeof n === 'number') out[node] = { ...out[node], [chain]: n };
  }
  return out;
}

/** Per node, why a live read for one Service read the node's whole table after all (a read by
 * name failed, or could not be made). */
export function rulesReadWholeOf(facts: Facts): Record<string, string> {
  const v = facts.meta['rulesReadWhole'];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    ),
  );
}

/** A lookup by address the user may not make (it lists Pods cluster-wide) leaves the address
 * unjudged, which the Endpoints step says: no warning of its own. */
export const quietWhenRefused = (e: ReadError) =>
  e.reason === 'forbidden' && e.read?.podIP !== undefined;

/** What was lost mid-run, in the order it was read; `errors`: the node errors read already. */
export function notRead(facts: Facts, errors: NodeErrors = nodeErrorsOf(facts)): NotRead[] {
  return [
    ...readErrorsOf(facts)
      .filter((e) => e.reason !== undefined && !ANSWERED.has(e.reason))
      .map((e) => ({ what: e.what, why: e.error })),
    // nodes that lost a read the same way: one entry, not one a node
    ...errors.groups.flatMap(({ nodes, errors }) =>
      errors
        .filter((e) => e.lost)
        .map((e) =>
          nodes.length === 1
            ? { what: `${e.command} on node ${nodes[0]}`, why: onNode(e, nodes[0]!).error }
            : {
                what: `${e.command} on ${nodes.length} nodes (${namedFew(nodes)})`,
                why: ofEach(e.error),
              },
        ),
    ),
  ];
}

/** Of `nodes` (those the run speaks for), the ones a kdebug capture (capturedAt) recorded nothing
 * of, with no error, while it recorded others: their outputs left out of the snapshot. Facts
 * kdebug did not capture say nothing of which nodes it meant to read. */
export function nodesNotRecorded(facts: Facts, nodes: string[], errors: NodeErrors): string[] {
  if (typeof facts.meta.capturedAt !== 'string') return [];
  const recorded = (n: string) => Object.keys(facts.nodes[n] ?? {}).length > 0;
  if (!nodes.some(recorded)) return [];
  const tried = new Set(errors.nodes());
  return nodes.filter((n) => !recorded(n) && !tried.has(n));
}

/** The nodes of `nodesNotRecorded` as reads the run did not make: one entry for all of them. */
export function nodesNotRecordedRead(nodes: string[]): NotRead[] {
  if (nodes.length === 0) return [];
  const one = nodes.length === 1;
  return [
    {
      what: one ? `node ${nodes[0]}` : `${nodes.length} nodes (${namedFew(nodes)})`,
      why: one
        ? `nothing of it recorded (no nodes/${nodes[0]}/ in the snapshot), so every step speaks for the other nodes only`
        : 'nothing of them recorded (no nodes/<node>/ in the snapshot), so every step speaks for the other nodes only',
    },
  ];
}

const MIB = 1024 * 1024;

/** The most one node command may print, and one input or API answer may hold (--max-output-mib). */
export const DEFAULT_MAX_OUTPUT_MIB = 256;
/** The most --max-output-mib may be: past it the text would not fit in one JavaScript string. */
export const MAX_OUTPUT_MIB = 511;
export const DEFAULT_MAX_OUTPUT_BYTES = DEFAULT_MAX_OUTPUT_MIB * MIB;

/** A --max-output-mib that is no limit kdebug can keep. */
export class OutputLimitError extends Error {
  constructor(typed: string) {
    super(`--max-output-mib ${typed}: give a whole number of MiB from 1 to ${MAX_OUTPUT_MIB}`);
    this.name = 'OutputLimitError';
  }
}

/** --max-output-mib as typed, in bytes. */
export function outputLimitBytes(typed: string): number {
  const mib = Number(typed);
  if (!Number.isInteger(mib) || mib < 1 || mib > MAX_OUTPUT_MIB) throw new OutputLimitError(typed);
  return mib * MIB;
}

/** Why an output past the limit was dropped: "over 256 MiB, not read". */
export const overLimit = (bytes: number) => `over ${Math.floor(bytes / MIB)} MiB, not read`;

/** A node command's error when its output went past the limit. */
export const outputOverLimit = (bytes: number) =>
  `output ${overLimit(bytes)} (--max-output-mib raises the limit)`;

/**
 * A node command's output as it streams in. stdout is kept whole up to the limit and past it not
 * at all: a cut dump would read as a smaller one. stderr keeps its head: only its first line is told.
 */
export class OutputBuffer {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  private past = false;

  constructor(
    private readonly limit: number,
    private readonly keep: 'whole' | 'head' = 'whole',
  ) {}

  /** Takes one chunk; false once the output went past the limit (the sender should be stopped). */
  add(chunk: Uint8Array): boolean {
    if (this.past) return false;
    const room = this.limit - this.size;
    this.size += chunk.length;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      return true;
    }
    this.past = true;
    if (this.keep === 'head') this.chunks.push(chunk.subarray(0, room));
    else this.chunks.length = 0;
    return false;
  }

  get over(): boolean {
    return this.past;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  text(): string {
    return this.bytes().toString('utf8');
  }
}
