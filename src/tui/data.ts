// What the screens show, computed by the core from Facts: the Report, each node's parsed rules
// and Service trees, the search index (built on first use). Nothing here decides a status.
import { Analysis } from '../core/nodes/analysis.js';
import type { DataplaneCode } from '../core/dataplane/modes.js';
import type { NodeAnalysis } from '../core/nodes/node-analysis.js';
import { unavailableText } from '../core/nodes/drift-unavailable.js';
import { hasRules, recordedNodes } from '../core/facts/facts.js';
import type { IPFamily } from '../core/ipv6.js';
import type { Ruleset } from '../core/dataplane/iptables/read/parse.js';
import { DriftInputError, type NodeDrift } from '../core/dataplane/drift.js';
import { findService, type ClusterView, type Service } from '../core/kube/objects.js';
import { diagnose, type DiagnoseOptions, type DiagnosedService } from '../core/diagnose.js';
import type { Facts, Report } from '../core/model.js';
import type { Invocation } from '../core/findings/next-command.js';
import { type SearchHit, type SearchIndex } from '../core/dataplane/search/search.js';
import { treeSearchIndex } from '../core/dataplane/search/tree-docs.js';
import { buildSearchIndex } from '../core/dataplane/iptables/search.js';
import type { ServiceTrees } from '../core/dataplane/trees.js';
import { narrowed } from '../core/kube/service-ref.js';
import { pairFamilies, type NftTable } from '../core/dataplane/nftables/read/listing.js';
import type { CiliumTable } from '../core/dataplane/cilium/read/listing.js';
import { buildNftSearchIndex } from '../core/dataplane/nftables/search.js';
import { couldNotRead } from '../core/dataplane/dataplane.js';
import type { TracePacket } from '../core/dataplane/trace/trace.js';
import type { Traced } from '../core/dataplane/trace/answer.js';
import type { Held } from '../output/rules/no-service.js';

export type { DiagnosedService };

export interface NodeData {
  name: string;
  /** The rules' family: a dual-stack node has an IPv4 and an IPv6 entry. */
  family: IPFamily;
  /** What the screens call it: "node-a", or "node-a IPv6" for its IPv6 rules. */
  label: string;
  /** "nodes/NODE/iptables-save.txt" (or nft-ip-kube-proxy.txt), or the file given to `rules --file`. */
  source?: string;
  /** A paste (`rules --file`) or a node's dump (recorded, or read live): the screens' word for it. */
  held: Held;
  /** The iptables dump (iptables mode). */
  rs?: Ruleset;
  /** kube-proxy's nftables table (nftables mode). */
  nft?: NftTable;
  /** The node's ipvsadm listing, line by line (IPVS mode). */
  ipvs?: string[];
  /** Its Cilium agent's table, where Cilium replaces kube-proxy. */
  cilium?: CiliumTable;
  /** That table's listing, line by line (a row's raw lines are its own). */
  ciliumLines?: string[];
  /** Its rules (or agent table) were read: a packet can be walked through them. */
  walkable: boolean;
  trees?: ServiceTrees;
  /** Why the node's rules could not be read. */
  error?: string;
  search(): SearchIndex | undefined;
  /** Expected vs actual (computed on first use), or why it cannot be. */
  drift(): NodeDrift | { error: string };
  /** One packet walked through the node's rules, in its proxy mode, and where the read of them
   * stopped (a listing cut short): the walk `kdebug trace` shows. */
  trace(packet: TracePacket): Traced;
}

export interface TuiData {
  facts: Facts;
  /** The run's analysis of the facts: each dump parsed once, whatever screen asks. */
  analysis: Analysis;
  target?: DiagnosedService;
  report?: Report;
  /** The target Service as the API has it (the header's ports). */
  service?: Service;
  /** The objects, typed. */
  view: ClusterView;
  nodes: NodeData[];
  /** How kdebug was run: the Drift screen's next commands are resolved for it. */
  invocation?: Invocation;
}

/** A node's rules, parsed and read into trees when a screen first asks; a parse error is kept. */
export function nodeData(node: NodeAnalysis, view: ClusterView, held: Held = 'dump'): NodeData {
  let index: SearchIndex | undefined;
  let drift: NodeDrift | { error: string } | undefined;
  // kube-proxy's nftables table where the node runs in that mode, read when first asked
  let nftRead: { read: ReturnType<NodeAnalysis['nft']> } | undefined;
  const nft = () =>
    (nftRead ??= { read: node.mode() === 'nftables' ? node.nft() : undefined }).read;
  // IPVS mode's listing, where the node runs in that mode
  let ipvsRead: { read: ReturnType<NodeAnalysis['ipvs']> } | undefined;
  const ipvs = () => (ipvsRead ??= { read: node.mode() === 'ipvs' ? node.ipvs() : undefined }).read;
  let ipvsLines: string[] | undefined;
  // Cilium's agent table, where Cilium replaces kube-proxy on the node
  let ciliumRead: { read: ReturnType<NodeAnalysis['cilium']> } | undefined;
  const cilium = () =>
    (ciliumRead ??= { read: node.mode() === 'cilium' ? node.cilium() : undefined }).read;
  let ciliumText: string[] | undefined;
  const data: NodeData = {
    name: node.name,
    held,
    family: node.family,
    label: node.family === 'IPv6' ? `${node.name} IPv6` : node.name,
    get source() {
      return cilium()?.source ?? nft()?.source ?? ipvs()?.source ?? node.rules()?.source;
    },
    get rs() {
      return nft() || ipvs() || cilium() ? undefined : node.rules()?.ruleset;
    },
    get cilium() {
      return cilium()?.read?.table;
    },
    get ciliumLines() {
      const read = cilium();
      return read && (ciliumText ??= read.text.split('\n'));
    },
    get walkable() {
      return node.dataplane() !== undefined;
    },
    get ipvs() {
      const read = ipvs();
      return read && (ipvsLines ??= read.text.split('\n'));
    },
    get nft() {
      return nft()?.table;
    },
    get trees() {
      return node.trees();
    },
    get error() {
      // the node's mode reads one of these at most
      const state = cilium() ?? nft() ?? ipvs();
      // an agent not started is why its listing holds no table: said first
      if (state)
        return (
          state.failure &&
          [node.agentNotStarted(), couldNotRead(state.failure)].filter((x) => x).join('; ')
        );
      const r = node.rules();
      // a mode whose state was not read says why, as the Drift screen does (an agent not started)
      return r ? r.failure?.headline : (unavailableOn(node) ?? 'no rules recorded for this node');
    },
    search() {
      const trees = node.trees();
      const table = nft()?.table;
      if (!index && trees && table) index = buildNftSearchIndex(table, trees);
      if (!index && trees && ipvs()?.read) index = treeSearchIndex(trees, 'ipvs');
      if (!index && trees && cilium()?.read) index = treeSearchIndex(trees, 'cilium');
      if (!index && data.rs && trees) index = buildSearchIndex(data.rs, trees);
      return index;
    },
    trace: (packet) => node.traced(packet),
    drift() {
      drift ??= driftOf(node, view);
      return drift;
    },
  };
  return data;
}

/** Facts, with the code of the modes they hold (core/dataplane/modes.ts): their analysis reads
 * the nodes with it. */
export interface CodedFacts {
  facts: Facts;
  code: DataplaneCode;
}

export interface AnalyzeOptions {
  target?: DiagnosedService;
  /** Rules read from a file rather than a node (`kdebug rules --file`). */
  rules?: { label: string; text: string; table?: string; ruleset?: Ruleset; nft?: NftTable };
  /** Facts still being read: steps without their input are pending, not skipped. */
  collecting?: DiagnoseOptions['collecting'];
  /** How kdebug was run: "next" commands carry the same snapshot and context. */
  invocation?: DiagnoseOptions['invocation'];
  /** The client the person named (--from). */
  client?: DiagnoseOptions['client'];
}

/** The file given to `rules --file` as a node; a dual-stack nft listing's two kube-proxy tables
 * as two, each with its family, as a recorded dual-stack node's are. */
function givenNodes(
  analysis: Analysis,
  rules: NonNullable<AnalyzeOptions['rules']>,
  view: ClusterView,
): NodeData[] {
  const given = { ...rules, source: rules.label };
  const also = rules.nft?.paste?.also;
  if (!rules.nft || !also) return [nodeData(analysis.node(rules.label, given), view, 'paste')];
  const [mine, theirs] = pairFamilies(rules.nft, also);
  return [
    nodeData(analysis.node(rules.label, given, mine), view, 'paste'),
    nodeData(analysis.node(rules.label, { ...given, nft: also }, theirs), view, 'paste'),
  ];
}

/** Why the node's drift is not computed, as drift says it; undefined where it is. */
function unavailableOn(node: NodeAnalysis): string | undefined {
  const why = node.driftUnavailable();
  return why && unavailableText(node.name, why);
}

/** The core's expected rules for the node, compared with its dump, or why they cannot be. */
function driftOf(node: NodeAnalysis, view: ClusterView): NodeDrift | { error: string } {
  const r = node.rules();
  if (!node.dataplane())
    return {
      error: r?.failure?.headline ?? unavailableOn(node) ?? 'no rules recorded for this node',
    };
  if (view.services.length === 0)
    return {
      error:
        'drift compares the rules with the Services and their endpoints: read them from a cluster or a snapshot (--snapshot DIR)',
    };
  try {
    return node.driftOnNode();
  } catch (e) {
    if (e instanceof DriftInputError) return { error: e.message };
    throw e;
  }
}

/** What the screens show of the facts (or of facts analysed already: their dumps parsed); an
 * earlier analysis of the same run hands over the dumps it parsed that are still the same. */
export function analyze(
  from: CodedFacts | Analysis,
  o: AnalyzeOptions = {},
  earlier?: Analysis,
): TuiData {
  const analysis =
    from instanceof Analysis
      ? from
      : new Analysis(from.facts, {
          code: from.code,
          ...(earlier ? { parsed: earlier.parsedFor(from.facts) } : {}),
        });
  const facts = analysis.facts;
  const view = analysis.view;
  const nodes = o.rules
    ? givenNodes(analysis, o.rules, view)
    : recordedNodes(facts).flatMap((n) => [
        nodeData(analysis.node(n), view),
        // the IPv6 proxier's rules, where they were read, beside the IPv4 ones
        ...(hasRules(facts, n, 'IPv6')
          ? [nodeData(analysis.node(n, undefined, 'IPv6'), view)]
          : []),
      ]);
  // a live read that found no such Service carries the API's "did you mean" in its meta
  const suggestions = facts.meta['suggestions'] as DiagnoseOptions['suggestions'];
  const report = o.target
    ? diagnose(facts, o.target, {
        collecting: o.collecting,
        suggestions,
        invocation: o.invocation,
        analysis,
        ...(o.client ? { client: o.client } : {}),
      })
    : undefined;

  // NAME:PORT: the header shows the port diagnosed, as the report does
  const service = o.target
    ? narrowed(findService(view, o.target.namespace, o.target.service), o.target.port)
    : undefined;
  return {
    facts,
    analysis,
    target: o.target,
    report,
    service,
    view,
    nodes,
    invocation: o.invocation,
  };
}

export interface NodeHit extends SearchHit {
  node: number;
}

/**
 * Hits over every node's rules: the node shown (`current`) first, in the core's order, then what
 * only other nodes have. The same chain or address on several nodes is listed once.
 */
export function searchNodes(
  nodes: NodeData[],
  query: string,
  current: number,
  limit = 50,
): NodeHit[] {
  const order = [current, ...nodes.map((_, i) => i).filter((i) => i !== current)];
  const seen = new Set<string>();
  const hits: NodeHit[] = [];
  for (const i of order) {
    for (const h of nodes[i]?.search()?.search(query, limit) ?? []) {
      // as the core's index does within a node: one hit per kind, text and chain
      const key = `${h.kind}\u0000${h.text}\u0000${h.chain ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      hits.push({ ...h, node: i });
    }
  }
  return hits.slice(0, limit);
}
