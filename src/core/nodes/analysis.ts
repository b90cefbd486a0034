// One analysis of Facts: each node's rules parsed once, and their Service trees, the rules
// kube-proxy would write there, the drift and the packet walk computed when first asked for, for
// every Service or only for the ones asked about (one Service's answer on a big cluster), and kept.
// The checks, the commands and the TUI all read the node's dataplane through here.
import type { IpvsRead } from '../dataplane/ipvs/dataplane.js';
import type { IpvsParseError, IpvsTable } from '../dataplane/ipvs/read/listing.js';
import { commandStem, listingMode, readByAddress, type ListingCommand } from './commands.js';
import { loadModes, type DataplaneCode } from '../dataplane/modes.js';
import { isCiliumAgentPod } from '../dataplane/cilium/agent/agent.js';
import type { IPFamily } from '../ipv6.js';
import { nodeDump } from '../facts/facts.js';
import type { NftTable } from '../dataplane/nftables/read/listing.js';
import type {
  IptablesParseError,
  NoRulesError,
  Ruleset,
} from '../dataplane/iptables/read/parse.js';
import { clusterView, type ClusterView } from '../kube/objects.js';
import type { Facts } from '../model.js';
import { nodeErrorsOf, type NodeErrors } from './errors.js';
import { clusterConfig, resolveNode, type NodeState } from './state.js';
import { ViewIndex } from '../kube/view-index.js';
import { notCaptured } from '../facts/captured.js';
import type { EndpointsUnread } from '../dataplane/kube-proxy/endpoint-source.js';
import { NodeAnalysis } from './node-analysis.js';

/** A dump given on the command line: read already (its text), or parsed already (its rules). */
export interface GivenDump {
  source: string;
  text?: string;
  table?: string;
  ruleset?: Ruleset;
  /** kube-proxy's nftables table, read already (`rules --file` of an nft listing). */
  nft?: NftTable;
}

export interface AnalysisOptions {
  /** The code of the modes the run loaded (loadDataplanes): each mode's reads ask it. */
  code: DataplaneCode;
  /** A dump's file name in parse errors (the snapshot's path, a live node's command). */
  fileOf?(node: string, source: string): string;
  /** The table of `iptables -S` dumps without `*table` lines. */
  table?: string;
  /** The objects, typed already (while the dumps were parsed aside). */
  view?: ClusterView;
  /** Dumps already parsed (on another thread), by source: their rule set or parse error. */
  parsed?: Map<string, Ruleset | IptablesParseError | NoRulesError>;
}

/** Loads the code of each mode whose state the facts hold (dataplane/modes.ts): a node's listing
 * of it, or a Cilium agent in the API (its expected frontends need no listing). Awaited once
 * where a command's facts are read; the Analysis of them takes the code it returns. */
export function loadDataplanes(
  facts: Facts,
  view: ClusterView = clusterView(facts.objects),
): Promise<DataplaneCode> {
  const listed = Object.values(facts.nodes).flatMap((outputs) => Object.keys(outputs));
  const agents = view.pods.some(isCiliumAgentPod) ? ['cilium'] : [];
  return loadModes([...listed.flatMap((stem) => listingMode(stem) ?? []), ...agents]);
}

/** The analysis of one run's Facts: made once by the command, handed to the checks and the TUI. */
export class Analysis {
  private viewMemo: ClusterView | undefined;
  private indexMemo: ViewIndex | undefined;
  private nodeErrorsMemo: NodeErrors | undefined;
  private readonly nodes = new Map<string, NodeAnalysis>();
  private readonly states = new Map<string, NodeState>();
  private readonly ipvsTables = new Map<string, IpvsTable | IpvsParseError>();
  private readonly ipsetsRead = new Map<string, ReturnType<typeof readIpsets>>();
  private readonly ipvsReadsAt = new Map<string, IpvsTable | IpvsParseError>();

  constructor(
    readonly facts: Facts,
    readonly options: AnalysisOptions,
  ) {}

  /** The code of the modes the run loaded. */
  get code(): DataplaneCode {
    return this.options.code;
  }

  get view(): ClusterView {
    return (this.viewMemo ??= this.options.view ?? clusterView(this.facts.objects));
  }

  /** The node commands that failed in the capture, read once. */
  get nodeErrors(): NodeErrors {
    return (this.nodeErrorsMemo ??= nodeErrorsOf(this.facts));
  }

  /** The objects kube-proxy takes endpoints from that the capture did not read. */
  endpointsUnread(): EndpointsUnread {
    const why = notCaptured(this.facts, this.view, 'Endpoints');
    return why ? { Endpoints: why } : {};
  }

  /** The view's Pods and Nodes by node name. */
  get index(): ViewIndex {
    return (this.indexMemo ??= new ViewIndex(this.view));
  }

  /** The node's kube-proxy, decided once: OS, mode, version, configuration (nodes/state.ts). */
  state(name: string): NodeState {
    let s = this.states.get(name);
    if (!s) {
      const inputs = {
        facts: this.facts,
        view: this.view,
        index: this.index,
        shownMode: () => this.shownMode(name),
      };
      this.states.set(name, (s = resolveNode(name, inputs)));
    }
    return s;
  }

  /** kube-proxy's configuration cluster-wide, as `nodes` serve it or the objects say. */
  config(nodes: readonly string[]): NodeState['config'] {
    return clusterConfig(
      nodes.map((n) => this.state(n)),
      this.view,
    );
  }

  /** The mode the node's rules show: its IPv4 iptables dump, else kube-proxy's own nftables
   * table or IPVS virtual servers where the node recorded them. */
  private shownMode(name: string): { mode: string; source: string } | undefined {
    const dump = nodeDump(this.facts, name);
    const mode = dump && this.node(name).signs(dump.stem)?.mode;
    // kube-proxy writes its nftables table in nftables mode only (other modes delete it)
    const nft = this.node(name).nft();
    // both: one mode's rules are the other's leftovers (leftovers.ts), the rules tell not which
    if (mode && nft?.table) return undefined;
    if (mode) return { mode, source: dump.source };
    if (nft?.table) return { mode: 'nftables', source: nft.source };
    // IPVS virtual servers: kube-proxy writes them in IPVS mode only
    const ipvs = this.ipvsTable(name);
    if (ipvs)
      return !(ipvs.table instanceof this.code.of('ipvs').IpvsParseError) &&
        ipvs.table.services.length > 0
        ? { mode: 'ipvs', source: ipvs.source }
        : undefined;
    const outputs = this.facts.nodes[name];
    const byAddress =
      readByAddress(outputs) &&
      this.code.of('ipvs').virtualServerListed(outputs, (stem) => this.ipvsAt(name, stem));
    return byAddress ? { mode: 'ipvs', source: `nodes/${name}/${byAddress}.txt` } : undefined;
  }

  /** The node's IPVS listing, parsed once for both families and the mode it shows (or why it is
   * unreadable); undefined where none was recorded. */
  ipvsTable(
    name: string,
  ):
    | { source: string; text: string; command: ListingCommand; table: IpvsTable | IpvsParseError }
    | undefined {
    const outputs = this.facts.nodes[name] ?? {};
    const command = ipvsCommand(outputs);
    const stem = commandStem(command);
    const text = outputs[stem];
    if (text === undefined) return undefined;
    const source = `nodes/${name}/${stem}.txt`;
    let table = this.ipvsTables.get(name);
    if (!table) {
      const { IpvsParseError, parseIpvs } = this.code.of('ipvs');
      try {
        table = parseIpvs(text, source, { recorded: true });
      } catch (e) {
        if (!(e instanceof IpvsParseError)) throw e;
        table = e;
      }
      this.ipvsTables.set(name, table);
    }
    return { source, text, command, table };
  }

  /** The node's read by address `stem` (`ipvsadm -Ln -t IP:PORT`), parsed once: the mode the
   * node shows and the Service's state there both read it. */
  ipvsAt(name: string, stem: string): IpvsTable | IpvsParseError {
    const source = `nodes/${name}/${stem}.txt`;
    let table = this.ipvsReadsAt.get(source);
    if (!table) {
      table = this.code.of('ipvs').listingAt(this.facts.nodes[name]?.[stem] ?? '', source);
      this.ipvsReadsAt.set(source, table);
    }
    return table;
  }

  /** The node's ipsets (IPVS mode), parsed once for both families, or why they are unreadable. */
  ipsets(name: string): ReturnType<typeof readIpsets> | undefined {
    const stem = commandStem({ kind: 'ipset-save' });
    const text = this.facts.nodes[name]?.[stem];
    if (text === undefined) return undefined;
    let read = this.ipsetsRead.get(name);
    if (!read)
      this.ipsetsRead.set(name, (read = readIpsets(this.code, text, `nodes/${name}/${stem}.txt`)));
    return read;
  }

  /** The dumps parsed here that `next` holds unchanged (the TUI's fuller read of the same run):
   * handed to the next Analysis, each dump is parsed once per run. */
  parsedFor(next: Facts): NonNullable<AnalysisOptions['parsed']> {
    const held = [...this.nodes.values()].map((n) => n.parseHeldBy(next));
    return new Map(held.filter((h) => h !== undefined));
  }

  /** The node's analysis for one family's proxier (IPv4 unless asked): its recorded dump, or
   * `dump` (a file given on the command line). */
  node(name: string, dump?: GivenDump, family: IPFamily = 'IPv4'): NodeAnalysis {
    const key = `${family} ${name}`;
    let n = this.nodes.get(key);
    if (!n) this.nodes.set(key, (n = new NodeAnalysis(this, name, dump, family)));
    return n;
  }
}

/** The node's IPVS listing: ipvsadm-save's form, else ipvsadm -Ln's where it had no
 * ipvsadm-save. */
function ipvsCommand(outputs: Record<string, string>): ListingCommand {
  const saved: ListingCommand = { kind: 'ipvs-save' };
  return commandStem(saved) in outputs ? saved : { kind: 'ipvs-save', format: 'list' };
}

/** kube-proxy's ipsets as the node listed them; a listing that does not read leaves the virtual
 * servers readable, and says why the sets are not compared. */
function readIpsets(
  code: DataplaneCode,
  text: string,
  source: string,
): Pick<IpvsRead, 'ipsets' | 'ipsetsSource' | 'ipsetsError'> {
  const { IpvsParseError, parseIpsets } = code.of('ipvs');
  try {
    return { ipsets: parseIpsets(text, source), ipsetsSource: source };
  } catch (e) {
    if (!(e instanceof IpvsParseError)) throw e;
    return { ipsetsError: e.message };
  }
}
