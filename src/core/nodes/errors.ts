// The node commands that failed in a capture, nodes that failed the same way said once: each
// group holds its failures once and the names of its nodes, so what a run over thousands of
// unreachable nodes keeps grows with the ways they failed, not with the nodes times their commands
// (meta.nodeErrorGroups). Up to FLAT failed nodes a capture records one entry per node and
// command in its own words (meta.nodeErrors), as every kdebug before the groups did and reads:
// the groups only where the flat list would grow with thousands of nodes. All forms read the
// same way. Pure: the fold, the readers and the wording.
import type { Facts } from '../model.js';
import { ownNameAs, PER_NODE, type NodeError } from './access.js';
import { chainStemPrefix, commandStem, type Backend, type NodeCommand } from './commands.js';

/** What a command said on a node, without the node. */
export type NodeFailure = Omit<NodeError, 'node'>;

/**
 * Nodes whose commands failed the same way (meta.nodeErrorGroups): the failures, in the order
 * they happened, and the nodes. In each failure's `error`, NODE stands for the node's own name;
 * past FEW nodes, a word that differed from node to node (an address, a Pod) is kept up to where
 * they part ("kube-system/kube-proxy-…"). Up to FEW nodes, each is a group of its own, in its own
 * words (its name itself, never NODE).
 */
export interface NodeErrorGroup {
  nodes: string[];
  errors: NodeFailure[];
}

/** Where a group's text names its node. */
export const NODE = '{node}';

/** Nodes that failed the same way up to this many keep their own words, each its own group. */
const FEW = 3;

/**
 * Up to this many failed nodes, a capture's meta records each node's failures in its own words
 * (meta.nodeErrors, one entry per node and command): what kdebug before the groups reads, and
 * what a script reads without knowing of NODE. A node's entries take about 5 KB of JSON (a
 * failed --all-nodes run: 28 MB for 5,000 nodes), so 50 nodes stay near 0.3 MB, less than one
 * node's rules dump; a run without --all-nodes reads far fewer nodes. Past it the groups
 * (meta.nodeErrorGroups), which grow with the ways nodes failed, not with the nodes.
 */
export const FLAT = 50;

/** A group while nodes join it: its texts cut at their per-node words, and each word as far as
 * every node's agrees. */
interface Pending<T> {
  nodes: string[];
  items: T[];
  /** The first FEW nodes' own items, as they said them (their names, not NODE). */
  own: T[][];
  parts: string[][];
  words: string[][];
  parted: boolean[][];
}

/** What two words share from their start. */
function sharedStart(a: string, b: string): string {
  let n = 0;
  while (n < a.length && a[n] === b[n]) n++;
  return a.slice(0, n);
}

/** A word the nodes did not agree on, kept to a whole part of what they share ("198.51.…"). */
function partedWord(shared: string): string {
  const cut = Math.max(...['-', '/', '.', ':'].map((c) => shared.lastIndexOf(c)));
  return `${shared.slice(0, cut + 1)}…`;
}

/** A text cut at its per-node words (PER_NODE), in one pass: the parts around them, and them. */
function perNodeWords(text: string): { parts: string[]; words: string[] } {
  const parts: string[] = [];
  const words: string[] = [];
  let at = 0;
  for (const m of text.matchAll(PER_NODE)) {
    parts.push(text.slice(at, m.index));
    words.push(m[0]);
    at = m.index + m[0].length;
  }
  parts.push(text.slice(at));
  return { parts, words };
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What a fold needs to know of what it folds: its text, what else makes two alike, and the
 * same with another text. */
export interface Way<T> {
  text(t: T): string;
  /** What else makes two alike, as one string (JSON, say). */
  key(t: T): string;
  withText(t: T, text: string): T;
}

/**
 * Folds what each node said (its failed commands, the ways that could not reach it) as the node
 * is done: nodes that said the same, but for their own names and per-node words (an address, a
 * Pod), are one group. Of a node only its name is kept, and the words of the first FEW.
 */
export class SameWayFold<T> {
  private readonly pending = new Map<string, Pending<T>>();
  /** Each node's own items as it was done, while no more than `each` nodes were: then dropped. */
  private byNode?: { node: string; items: T[] }[];
  private readonly named = new Set<string>();

  /** `each`: up to this many nodes, keep each node's own items too (eachNode). */
  constructor(
    private readonly way: Way<T>,
    private readonly each = 0,
  ) {
    if (each > 0) this.byNode = [];
  }

  add(node: string, items: readonly T[]): void {
    if (items.length === 0) return;
    if (this.byNode) {
      this.named.add(node);
      if (this.named.size > this.each) {
        this.byNode = undefined;
        this.named.clear();
      } else this.byNode.push({ node, items: [...items] });
    }
    // its name standing alone (kube-proxy-NODE stays), without an expression built per node
    const texts = items.map((t) => ownNameAs(this.way.text(t), node, NODE, false));
    const cut = texts.map(perNodeWords);
    const parts = cut.map((c) => c.parts);
    const words = cut.map((c) => c.words);
    // as JSON: no text a node printed can pass for another node's failures
    const key = JSON.stringify(items.map((t, i) => [this.way.key(t), parts[i]]));
    const g = this.pending.get(key);
    if (!g) {
      this.pending.set(key, {
        nodes: [node],
        items: [...items],
        own: [[...items]],
        parts,
        words,
        parted: words.map((w) => w.map(() => false)),
      });
      return;
    }
    g.nodes.push(node);
    if (g.own.length < FEW) g.own.push([...items]);
    words.forEach((ws, i) =>
      ws.forEach((w, j) => {
        const had = g.words[i]![j]!;
        if (had === w) return;
        g.parted[i]![j] = true;
        g.words[i]![j] = sharedStart(had, w);
      }),
    );
  }

  /** The groups, their nodes sorted, in the order of their first nodes; up to FEW nodes that
   * said the same are each a group of their own, in their own words. */
  groups(): { nodes: string[]; items: T[] }[] {
    return [...this.pending.values()]
      .flatMap((g) =>
        g.nodes.length <= FEW
          ? g.nodes.map((node, n) => ({ nodes: [node], items: g.own[n]! }))
          : [
              {
                nodes: [...g.nodes].sort(byName),
                items: g.items.map((t, i) => this.shared(g, t, i)),
              },
            ],
      )
      .sort((a, b) => byName(a.nodes[0]!, b.nodes[0]!));
  }

  /** Each node's own items in the order the nodes were done (a node done twice, twice), while
   * no more than `each` nodes said any; undefined past them. */
  eachNode(): { node: string; items: T[] }[] | undefined {
    return this.byNode;
  }

  /** What many nodes said, in the words they share. */
  private shared(g: Pending<T>, t: T, i: number): T {
    const word = (j: number) => (g.parted[i]![j] ? partedWord(g.words[i]![j]!) : g.words[i]![j]!);
    const text = g.parts[i]!.map((part, j) => (j === 0 ? part : word(j - 1) + part)).join('');
    return this.way.withText(t, text);
  }
}

/** The failed commands of each node as it is done, nodes that failed the same way one group. */
export class NodeErrorFold {
  private readonly fold = new SameWayFold<NodeFailure>(
    {
      text: (f) => f.error,
      key: (f) =>
        JSON.stringify([f.command, f.typed ?? [], f.exitCode, f.lost ?? false, f.missingBinary]),
      withText: (f, error) => ({ ...f, error }),
    },
    FLAT,
  );

  add(node: string, failures: readonly NodeFailure[]): void {
    this.fold.add(node, failures);
  }

  groups(): NodeErrorGroup[] {
    return this.fold.groups().map(({ nodes, items }) => ({ nodes, errors: items }));
  }

  /** Up to FLAT failed nodes, each failure on its node in the node's own words, in the order
   * the nodes were done (meta.nodeErrors); undefined past them. */
  flat(): NodeError[] | undefined {
    return this.fold.eachNode()?.flatMap(({ node, items }) => items.map((f) => ({ node, ...f })));
  }
}

/** A group's text for one of its nodes: its name where NODE stands. */
export const ownWords = (text: string, node: string): string => text.split(NODE).join(node);

/** One failure's words on one node. */
export const onNode = (f: NodeFailure, node: string): NodeError => ({
  node,
  ...f,
  error: ownWords(f.error, node),
});

/** A group's failure said of all its nodes: "on node {node}" is "on the node". */
export const ofEach = (error: string): string => error.replace(/(?:node )?\{node\}/g, 'the node');

/** The node commands that failed in a capture, by node: its groups, and an older capture's
 * entries (one per node and command) as groups of one. */
export class NodeErrors {
  private byNode?: Map<string, NodeErrorGroup[]>;

  constructor(readonly groups: readonly NodeErrorGroup[]) {}

  /** Failed commands in all: each group's failures on each of its nodes. */
  get count(): number {
    return this.groups.reduce((n, g) => n + g.nodes.length * g.errors.length, 0);
  }

  /** The nodes where a command failed. */
  nodes(): string[] {
    return [...this.index().keys()];
  }

  /** A node's failures, in its own words. */
  on(node: string): NodeError[] {
    return (this.index().get(node) ?? []).flatMap((g) => g.errors.map((f) => onNode(f, node)));
  }

  /** A node's first failure that `test` picks, in its own words. */
  find(node: string, test: (f: NodeFailure) => boolean): NodeError | undefined {
    for (const g of this.index().get(node) ?? []) {
      const f = g.errors.find(test);
      if (f) return onNode(f, node);
    }
    return undefined;
  }

  /** Every failure node by node: grows with the nodes times their failures (a few nodes only). */
  all(): NodeError[] {
    return this.groups.flatMap((g) => g.nodes.flatMap((n) => g.errors.map((f) => onNode(f, n))));
  }

  private index(): Map<string, NodeErrorGroup[]> {
    if (this.byNode) return this.byNode;
    const by = new Map<string, NodeErrorGroup[]>();
    for (const g of this.groups)
      for (const n of g.nodes) {
        const on = by.get(n);
        if (!on) by.set(n, [g]);
        else if (on.at(-1) !== g) on.push(g);
      }
    return (this.byNode = by);
  }
}

/** The node commands that failed in a capture (meta.nodeErrorGroups, and an older capture's
 * meta.nodeErrors); the run's Analysis reads them once (Analysis.nodeErrors). */
export function nodeErrorsOf(facts: Facts): NodeErrors {
  const groups = facts.meta['nodeErrorGroups'];
  const flat = facts.meta['nodeErrors'];
  // a snapshot's meta.json is input: an entry without its words is no error kdebug can show;
  // the flat entries fold as the capture folds them (nodes that failed alike, one group)
  const byNode = new Map<string, NodeFailure[]>();
  for (const { node, ...f } of Array.isArray(flat) ? (flat as unknown[]).filter(isNodeError) : [])
    if (byNode.has(node)) byNode.get(node)!.push(f);
    else byNode.set(node, [f]);
  const fold = new NodeErrorFold();
  for (const [node, failures] of byNode) fold.add(node, failures);
  return new NodeErrors([
    ...(Array.isArray(groups) ? (groups as unknown[]).filter(isGroup) : []),
    ...fold.groups(),
  ]);
}

function isFailure(v: unknown): v is NodeFailure {
  if (v === null || typeof v !== 'object') return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e['command'] === 'string' &&
    typeof e['error'] === 'string' &&
    (e['typed'] === undefined ||
      (Array.isArray(e['typed']) && e['typed'].every((w) => typeof w === 'string'))) &&
    (e['read'] === undefined || namesItsStem(e['read'], e['command']))
  );
}

/** A recorded command that is the one whose output the failure names (`command`, its stem): a
 * meta.json is input, and a read that is not that command is no failure kdebug can place. */
function namesItsStem(read: unknown, stem: string): boolean {
  if (read === null || typeof read !== 'object') return false;
  try {
    return commandStem(read as NodeCommand) === stem;
  } catch {
    return false; // a command missing its fields
  }
}

function isNodeError(v: unknown): v is NodeError {
  return isFailure(v) && typeof (v as unknown as Record<string, unknown>)['node'] === 'string';
}

function isGroup(v: unknown): v is NodeErrorGroup {
  if (v === null || typeof v !== 'object') return false;
  const g = v as Record<string, unknown>;
  return (
    Array.isArray(g['nodes']) &&
    g['nodes'].length > 0 &&
    g['nodes'].every((n) => typeof n === 'string') &&
    Array.isArray(g['errors']) &&
    g['errors'].length > 0 &&
    g['errors'].every(isFailure)
  );
}

/** Whether a command reads a node's IPv4 rules: a dump (any backend, any table) or a chain by name. */
const readsRules = (c: NodeCommand): boolean =>
  c.kind === 'iptables-save' || (c.kind === 'iptables-chain' && c.tool === 'iptables');

const BACKENDS: Backend[] = ['auto', 'legacy', 'nft'];

/** The IPv4 rules read whose output `stem` names, for a failure recorded without its command (an
 * older capture's, a snapshot output over its cap): the stems as commandStem writes them. */
function rulesReadOfStem(stem: string): NodeCommand | undefined {
  for (const backend of BACKENDS) {
    for (const table of [undefined, 'nat', 'filter'] as const) {
      const dump: NodeCommand = { kind: 'iptables-save', backend, ...(table ? { table } : {}) };
      if (commandStem(dump) === stem) return dump;
    }
    for (const table of ['nat', 'filter'] as const) {
      const prefix = chainStemPrefix('iptables', backend, table);
      if (stem.startsWith(prefix) && stem.length > prefix.length)
        return {
          kind: 'iptables-chain',
          tool: 'iptables',
          backend,
          chain: stem.slice(prefix.length),
          ...(table === 'filter' ? { table } : {}),
        };
    }
  }
  return undefined;
}

/** How the capture's read of a node's rules failed, when it tried: `lost` where it began and did
 * not finish (the report is partial there), else refused or failed. */
export function rulesReadFailure(errors: NodeErrors, node: string): NodeError | undefined {
  return errors.find(node, (e) => {
    const read = e.read ?? rulesReadOfStem(e.command);
    return read !== undefined && readsRules(read);
  });
}

/** Why a node's rules were not read, when the capture tried and failed. */
export const rulesReadError = (errors: NodeErrors, node: string): string | undefined =>
  rulesReadFailure(errors, node)?.error;
