// A node's dataplane: the rules kube-proxy wrote there, read in the node's own proxy mode, behind
// one interface. The analysis asks it for Service trees, drift and a packet walk without knowing
// the mode: iptables, nftables, IPVS and Cilium each implement it in their folder (dataplane.ts);
// what each mode does before any state is read is in mode-traits.ts.
import type { Hairpin, HairpinQuery } from './hairpin.js';
import type { NodeDrift } from './drift.js';
import type { ExpectedRules } from './kube-proxy/expected.js';
import type { Ruleset } from './iptables/read/parse.js';
import type { Ipset } from './ipvs/read/ipset.js';
import type { IpvsTable } from './ipvs/read/listing.js';
import type { ServicePortName } from '../model.js';
import type { NftTable } from './nftables/read/listing.js';
import type { CiliumTable } from './cilium/read/listing.js';
import type { ListingParseError } from './listing-error.js';
import { listingArgv, type ListingCommand } from '../nodes/commands.js';
import { escapeControls } from '../sanitize.js';
import type { NodeNetwork, TracePacket, TraceResult } from './trace/trace.js';
import type { ReadStop } from './trace/answer.js';
import type { ServiceTree, ServiceTrees } from './trees.js';

/** The Service ports trees are built for: `only` these (one Service's answer), else all of the
 * node's, named by `known` where the rules carry no comments. */
export interface TreePorts {
  only?: { name: ServicePortName; protocol: string }[];
  known: { name: ServicePortName; protocol: string }[];
}

/** A line of a node's state that evidence shows: its words, where it was read, its line there. */
export interface StateLine {
  text: string;
  /** The file it was read from; undefined for a line about what no file holds. */
  source?: string;
  line?: number;
}

/** A ClusterIP and one Service port of it, asked about on one node (its tree there, if any). */
export interface ClusterIpQuery {
  node: string;
  ip: string;
  port: number;
  protocol: string;
  tree?: ServiceTree;
}

export interface Common {
  /** Where the rules were read from: "nodes/NODE/iptables-save.txt". */
  readonly source: string;
  trees(ports: TreePorts): ServiceTrees;
  /** What kube-proxy would write (`expected`, computed when asked: Cilium has its own) against
   * these rules; `trees` are theirs. */
  drift(
    node: string,
    expected: () => ExpectedRules,
    trees: ServiceTrees,
    /** The Services compared (one Service's answer), or undefined for the whole node. */
    scope: readonly { namespace: string; name: string }[] | undefined,
  ): NodeDrift;
  /** One packet walked through the node in this mode. */
  trace(packet: TracePacket, net: NodeNetwork): TraceResult;
  /** Where the read of the rules a walk went through stopped (a listing cut short), per outcome
   * what it met there; undefined where they were read whole. `file`: how to name the source. */
  readStop?(walked: TraceResult, file: string): ReadStop | undefined;
  /** What rejected a connection `walked` rejected on `node`, as a phrase ("by the REJECT rule on
   * NODE ..."), in the words of this mode's walk. */
  rejectedBy(walked: TraceResult, node: string): string;
  /** What the node holds for a ClusterIP and one of its ports: what a ping and a connection meet. */
  clusterIpLines(q: ClusterIpQuery): StateLine[];
  /** Whether a Pod balanced to itself through the Service is masqueraded here. */
  hairpin(q: HairpinQuery): Hairpin;
  /** How this mode masquerades hairpin traffic, said when every endpoint checked is. */
  readonly hairpinHow: string;
  /** What the node does with a Service port's external traffic when it has no local endpoint
   * (externalTrafficPolicy Local): its drop rules, or where IPVS sends it instead. */
  noLocalEndpointLines(tree: ServiceTree | undefined): StateLine[];
  /** What a match of the node's state with the objects did not compare (its drift's tables),
   * as a clause; undefined where it compared the whole state. */
  notCompared(drift: NodeDrift): string | undefined;
  /** The part of the state not read without which whether the node forwards the Service at all
   * is not known (IPVS: kube-ipvs0's addresses), as a phrase: no match is said there. */
  forwardingNotRead?(drift: NodeDrift): string | undefined;
  /** How traffic enters a Service port's tree here, as the node's state holds it (and, where the
   * port has no endpoint, the element that rejects or drops it). */
  entryLines(tree: ServiceTree): StateLine[];
  /** The lines of the listing not read that a comparison of these Service ports may rest on, each
   * as "FILE:LINE: why": what they hold is not observed. */
  notReadFor(ports: ReadonlySet<string>): string[];
}

export interface IptablesDataplane extends Common {
  readonly mode: 'iptables';
  readonly ruleset: Ruleset;
}

export interface NftablesDataplane extends Common {
  readonly mode: 'nftables';
  readonly table: NftTable;
}

export interface IpvsDataplane extends Common {
  readonly mode: 'ipvs';
  /** The virtual servers of this family. */
  readonly table: IpvsTable;
  /** kube-proxy's ipsets (undefined: not read). */
  readonly ipsets?: Map<string, Ipset>;
  /** The addresses on kube-ipvs0 (undefined: not read). */
  readonly bound?: Set<string>;
}

export interface CiliumDataplane extends Common {
  readonly mode: 'cilium';
  /** The agent's own table of frontends and backends. */
  readonly table: CiliumTable;
  /** Its BPF maps (`bpf lb list`), where read besides the table. */
  readonly maps?: CiliumTable;
}

export type Dataplane = IptablesDataplane | NftablesDataplane | IpvsDataplane | CiliumDataplane;

/** Why a node's listing of its dataplane (nftables, IPVS, Cilium) could not be read: the node
 * state holds this where it holds no Dataplane. */
export interface DumpReadFailure {
  /** "nodes/NODE/ipvsadm-save.txt". */
  source: string;
  /** The node command the file is the output of. */
  command: ListingCommand;
  /** The listing's line that does not read, where one line is to blame. */
  line?: number;
  reason: string;
}

/** The parse error of `command`'s output, as the node state keeps it. */
export const dumpReadFailure = (
  e: ListingParseError,
  command: ListingCommand,
): DumpReadFailure => ({
  source: e.file,
  command,
  ...(e.line !== undefined ? { line: e.line } : {}),
  reason: e.reason,
});

/** A read failure in words, the one way every finding, command and screen says it: "could not
 * read nodes/N/ipvsadm-save.txt (ipvsadm-save -n) at line 12: why". */
export const couldNotRead = (f: DumpReadFailure): string =>
  `could not read ${f.source} (${listingArgv(f.command).join(' ')})${f.line !== undefined ? ` at line ${f.line}` : ''}: ${escapeControls(f.reason)}`;
