// One analysis of Facts: each node's rules parsed once, and their Service trees, the rules
// kube-proxy would write there, the drift and the packet walk computed when first asked for, for
// every Service or only for the ones asked about (one Service's answer on a big cluster), and kept.
// The checks, the commands and the TUI all read the node's dataplane through here.
import { oldAgentBinary, type CiliumAgent } from './dataplane/cilium/agent/agent.js';
import { ciliumLineSet } from './dataplane/cilium/drift.js';
import { notStarted, refusedText } from './dataplane/cilium/agent/refused.js';
import {
  expectedCilium,
  type CiliumNode,
  type ExpectedFrontend,
} from './dataplane/cilium/expected/expected.js';
import { expectedMaps, type ExpectedMapEntry } from './dataplane/cilium/maps/expected.js';
import { CiliumParseError } from './dataplane/cilium/read/listing.js';
import { parseCilium, withBackendStates } from './dataplane/cilium/read/read.js';
import {
  ciliumDataplane,
  couldNotRead,
  dumpReadFailure,
  iptablesDataplane,
  ipvsDataplane,
  modeTraits,
  nftablesDataplane,
  type CiliumRead,
  type Dataplane,
  type DumpReadFailure,
  type IpvsRead,
} from './dataplane/dataplane.js';
import {
  expectedIpvs,
  type ExpectedIpvs,
  type IpvsExpectOptions,
} from './dataplane/ipvs/expected.js';
import {
  readByAddress,
  stateByAddress,
  virtualServerListed,
} from './dataplane/ipvs/read/by-address.js';
import { parseIpsets } from './dataplane/ipvs/read/ipset.js';
import { IpvsParseError, parseIpvs, type IpvsTable } from './dataplane/ipvs/read/listing.js';
import type { IpvsKnown } from './dataplane/ipvs/trees.js';
import { commandStem, type CiliumList, type ListingCommand } from './nodes/commands.js';
import {
  DriftInputError,
  unsupportedMode,
  type DriftFinding,
  type NodeDrift,
} from './dataplane/drift.js';
import {
  expectedRules,
  type ExpectOptions,
  type ExpectedRules,
} from './dataplane/kube-proxy/expected.js';
import type { IPFamily } from './ipv6.js';
import { nodeKnobs, type NodeKnobs } from './dataplane/kube-proxy/knobs.js';
import { nftStems, nodeDump, type NodeDump } from './facts.js';
import { NftParseError, type NftTable } from './dataplane/nftables/read/listing.js';
import { ruleText } from './dataplane/nftables/render.js';
import { parseNftAny } from './dataplane/nftables/read/read-text.js';
import { rulesetSigns, textSigns, type DumpSigns } from './dataplane/iptables/backend.js';
import {
  IptablesParseError,
  NoRulesError,
  parseIptables,
  type Ruleset,
} from './dataplane/iptables/read/parse.js';
import { clusterView, findService, servicePortName, type ClusterView } from './kube/objects.js';
import type { Service } from './kube/objects.js';
import type { Facts } from './model.js';
import { nodeErrorsOf, type NodeErrors } from './nodes/errors.js';
import { parseIpBrief } from './nodes/outputs.js';
import { clusterConfig, resolveNode, type NodeState } from './nodes/state.js';
import { ViewIndex } from './kube/view-index.js';
import type { ServiceTrees } from './dataplane/trees.js';
import { nodeNetwork, type NodeNetwork, type TracePacket } from './dataplane/trace/trace.js';
import type { TraceResult } from './dataplane/trace/trace.js';

/** The Services to analyse: undefined for every Service (the whole node), else only these. */
export type Scope = readonly Pick<Service, 'namespace' | 'name' | 'ports'>[] | undefined;

/** A node's rules dump as read: its rule set, or why it cannot be read (FILE:LINE first). */
export interface ReadRules {
  /** "nodes/NODE/iptables-save.txt", or the file a person gave. */
  source: string;
  ruleset?: Ruleset;
  /** The parse error, thrown again where a command must fail on it. */
  failure?: IptablesParseError | NoRulesError;
}

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
  /** A dump's file name in parse errors (the snapshot's path, a live node's command). */
  fileOf?(node: string, source: string): string;
  /** The table of `iptables -S` dumps without `*table` lines. */
  table?: string;
  /** The objects, typed already (while the dumps were parsed aside). */
  view?: ClusterView;
  /** Dumps already parsed (on another thread), by source: their rule set or parse error. */
  parsed?: Map<string, Ruleset | IptablesParseError | NoRulesError>;
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

  constructor(
    readonly facts: Facts,
    readonly options: AnalysisOptions = {},
  ) {}

  get view(): ClusterView {
    return (this.viewMemo ??= this.options.view ?? clusterView(this.facts.objects));
  }

  /** The node commands that failed in the capture, read once. */
  get nodeErrors(): NodeErrors {
    return (this.nodeErrorsMemo ??= nodeErrorsOf(this.facts));
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
    if (mode) return { mode, source: dump.source };
    // kube-proxy writes its nftables table in nftables mode only (other modes delete it)
    const nft = this.node(name).nft();
    if (nft?.table) return { mode: 'nftables', source: nft.source };
    // IPVS virtual servers: kube-proxy writes them in IPVS mode only
    const ipvs = this.ipvsTable(name);
    if (ipvs)
      return !(ipvs.table instanceof IpvsParseError) && ipvs.table.services.length > 0
        ? { mode: 'ipvs', source: ipvs.source }
        : undefined;
    const byAddress = virtualServerListed(this.facts.nodes[name]);
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
      try {
        table = parseIpvs(text, source);
      } catch (e) {
        if (!(e instanceof IpvsParseError)) throw e;
        table = e;
      }
      this.ipvsTables.set(name, table);
    }
    return { source, text, command, table };
  }

  /** The node's ipsets (IPVS mode), parsed once for both families, or why they are unreadable. */
  ipsets(name: string): ReturnType<typeof readIpsets> | undefined {
    const stem = commandStem({ kind: 'ipset-save' });
    const text = this.facts.nodes[name]?.[stem];
    if (text === undefined) return undefined;
    let read = this.ipsetsRead.get(name);
    if (!read) this.ipsetsRead.set(name, (read = readIpsets(text, `nodes/${name}/${stem}.txt`)));
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

/** One node's dataplane for one family (iptables mode: iptables-save for IPv4, ip6tables-save
 * for IPv6): rules, trees, expected rules, drift, network, trace. */
export class NodeAnalysis {
  private read: ReadRules | undefined | null = null;
  /** The stem of the dump parsed here: a later read of the same run holding the same text
   * reuses the parse. */
  private parsedStem: string | undefined;
  private readonly treesMemo = new Map<string, ServiceTrees>();
  private readonly expectedMemo = new Map<string, ExpectedRules>();
  private readonly driftMemo = new Map<string, NodeDrift>();
  private knobsMemo: NodeKnobs | undefined;
  private networkMemo: NodeNetwork | undefined;
  private nftMemo: ReturnType<NodeAnalysis['nft']> | null = null;
  private ipvsMemo: ReturnType<NodeAnalysis['ipvs']> | null = null;
  private ciliumMemo: ReturnType<NodeAnalysis['cilium']> | null = null;
  private dataplaneMemo: Dataplane | undefined | null = null;
  private heldMemo: ((line: string) => boolean) | undefined;
  private readonly expectsMemo = new Map<string, Set<string>>();
  private readonly signsMemo = new Map<string, DumpSigns | undefined>();

  constructor(
    private readonly analysis: Analysis,
    readonly name: string,
    private readonly given?: GivenDump,
    readonly family: IPFamily = 'IPv4',
  ) {}

  private get facts(): Facts {
    return this.analysis.facts;
  }

  /** The node's rules dump, parsed once; undefined when none was recorded. */
  rules(): ReadRules | undefined {
    if (this.read !== null) return this.read;
    if (this.given?.nft) return (this.read = undefined); // an nftables table, no iptables dump
    const dump = this.given ?? nodeDump(this.facts, this.name, this.family);
    if (!dump) return (this.read = undefined);
    const chains = 'chains' in dump ? dump.chains : undefined;
    const { fileOf, table, parsed } = this.analysis.options;
    const file = fileOf && !this.given ? fileOf(this.name, dump.source) : dump.source;
    if (!this.given && !chains && 'stem' in dump) this.parsedStem = dump.stem;
    const aside = this.given ? undefined : parsed?.get(dump.source);
    if (aside)
      return (this.read =
        aside instanceof Error
          ? { source: dump.source, failure: aside }
          : { source: dump.source, ruleset: aside });
    try {
      const ruleset =
        this.given?.ruleset ??
        parseIptables(dump.text ?? '', {
          file,
          table: this.given?.table ?? (chains ? 'nat' : table),
        });
      if (chains) withChainsRead(ruleset, chains, fileOf ? (s) => fileOf(this.name, s) : undefined);
      this.read = { source: dump.source, ruleset };
    } catch (e) {
      if (!(e instanceof IptablesParseError) && !(e instanceof NoRulesError)) throw e;
      this.read = { source: dump.source, failure: e };
    }
    return this.read;
  }

  /** This node's parse, where `next` holds the very dump it parsed (a fuller read of the same
   * run): its source and rule set or parse error. */
  parseHeldBy(next: Facts): [string, Ruleset | IptablesParseError | NoRulesError] | undefined {
    const r = this.read;
    const stem = this.parsedStem;
    if (!r || stem === undefined) return undefined;
    const now = next.nodes[this.name]?.[stem];
    if (now === undefined || now !== this.facts.nodes[this.name]?.[stem]) return undefined;
    return [r.source, r.ruleset ?? r.failure!];
  }

  /** What the node's iptables dump `stem` shows of kube-proxy: read from the parsed rules when it
   * is the dump analysed (a big dump's text is never scanned again), else from its text. */
  signs(stem: string): DumpSigns | undefined {
    if (!this.signsMemo.has(stem)) {
      const outputs = this.facts.nodes[this.name];
      const analysed = !this.given && nodeDump(this.facts, this.name, this.family)?.stem === stem;
      const rs = analysed ? this.rules()?.ruleset : undefined;
      this.signsMemo.set(
        stem,
        rs ? rulesetSigns(rs) : outputs && stem in outputs ? textSigns(outputs[stem]!) : undefined,
      );
    }
    return this.signsMemo.get(stem);
  }

  /** The rule set, or the parse error thrown (commands that cannot go on without it). */
  ruleset(): Ruleset {
    const r = this.rules();
    if (!r)
      throw new DriftInputError(
        `no ${this.family === 'IPv6' ? 'ip6tables ' : ''}rules recorded for node "${this.name}"`,
      );
    if (r.failure) throw r.failure;
    return r.ruleset!;
  }

  /** The node's rules in its proxy mode: kube-proxy's nftables table on a node in nftables mode
   * where it was read, else its iptables dump; undefined when neither was. */
  dataplane(): Dataplane | undefined {
    if (this.dataplaneMemo !== null) return this.dataplaneMemo;
    const nft = this.mode() === 'nftables' ? this.nft() : undefined;
    const ipvs = this.mode() === 'ipvs' ? this.ipvs() : undefined;
    const cilium = this.mode() === 'cilium' ? this.cilium() : undefined;
    if (cilium?.read)
      return (this.dataplaneMemo = ciliumDataplane(cilium.read, this.analysis.view));
    const rules = this.rules();
    return (this.dataplaneMemo = nft?.table
      ? nftablesDataplane(nft.table, nft.source, this.analysis.view)
      : ipvs?.read
        ? ipvsDataplane(
            ipvs.read,
            ipvs.source,
            () => this.ipvsKnown(ipvs.read!),
            () => this.analysis.state(this.name).config.value,
            () => this.rules(),
          )
        : rules?.ruleset
          ? iptablesDataplane(rules.ruleset, rules.source, this.analysis.view)
          : undefined);
  }

  /** The Service trees of the node's rules, for `scope`'s Services or all. */
  trees(asked?: Scope): ServiceTrees | undefined {
    const dataplane = this.dataplane();
    if (!dataplane) return undefined;
    const scope = asked ?? this.readScope();
    const key = scopeKey(scope);
    let t = this.treesMemo.get(key);
    if (!t) {
      const known = servicePortsOf(scope ?? this.analysis.view.services);
      t = dataplane.trees({ only: scope && known, known });
      this.treesMemo.set(key, t);
    }
    return t;
  }

  /** What kube-proxy on this node takes from the node itself (see dataplane/kube-proxy/knobs.ts). */
  knobs(): NodeKnobs {
    return (this.knobsMemo ??= nodeKnobs(
      this.analysis.state(this.name),
      this.facts.nodes[this.name],
      this.rules()?.ruleset,
    ));
  }

  /** The rules kube-proxy would write here; `overrides` (command-line flags) win over the knobs. */
  expected(asked?: Scope, overrides: ExpectOptions = {}): ExpectedRules {
    const scope = asked ?? this.readScope();
    const key = `${scopeKey(scope)}\u0000${JSON.stringify(overrides)}`;
    let exp = this.expectedMemo.get(key);
    if (!exp) {
      // both families: each rule set takes its own
      const addresses = parseIpBrief(this.facts.nodes[this.name]?.['ip-addr'] ?? '').flatMap((i) =>
        i.addresses.map((a) => a.split('/')[0]!),
      );
      const options = {
        ...this.knobs().options,
        interfaceAddresses: addresses,
        family: this.family,
        ...overrides,
      };
      exp = expectedRules(this.analysis.view, this.name, options, { only: scope && [...scope] });
      this.expectedMemo.set(key, exp);
    }
    return exp;
  }

  /** The chains of a table read, where only one Service's were (by name); undefined: the whole
   * table. */
  chainsRead(table: 'nat' | 'filter' = 'nat'): ReadonlySet<string> | undefined {
    if (this.mode() !== 'iptables') return undefined;
    return this.rules()?.ruleset?.table(table)?.chainsRead;
  }

  /** What a question about the whole node is answered for: the Service whose chains were read
   * by name, or whose virtual servers by address, where only those were (nothing is known of the
   * others); undefined: every Service. */
  private readScope(): Scope {
    const byAddress =
      !this.analysis.ipvsTable(this.name) && readByAddress(this.facts.nodes[this.name]);
    if (!this.chainsRead() && !byAddress) return undefined;
    const { namespace, service } = this.facts.meta;
    const svc =
      namespace && service ? findService(this.analysis.view, namespace, service) : undefined;
    return svc ? [svc] : [];
  }

  /** The node's proxy mode, as its state decided it (a given nftables table is nftables). */
  mode(): string {
    if (this.given?.nft) return 'nftables';
    return this.given ? 'iptables' : this.analysis.state(this.name).mode.value.toLowerCase();
  }

  /** Why drift cannot be computed here (another proxy mode, no Services), if it cannot. */
  driftUnavailable(): string | undefined {
    if (this.mode() === 'cilium' && this.family === 'IPv6')
      return `node ${this.name}: Cilium's agent holds both families in one table, compared as the node's IPv4`;
    // a listing that does not read is said with its file and command; one not recorded, with
    // the command that lists it
    const notRead = (
      what: string,
      verb: 'was' | 'were',
      listed: string,
      read: { failure?: DumpReadFailure } | undefined,
    ) =>
      read?.failure
        ? `${what} ${verb} not read: ${couldNotRead(read.failure)}`
        : `${what} (${listed}) ${verb} not read`;
    // the command that lists the mode's state on a node (none for Cilium's agent table)
    const listing = modeTraits(this.mode())?.state?.command(this.family).join(' ') ?? '';
    if (this.mode() === 'cilium') {
      if (this.cilium()?.read) return undefined;
      const table = `Cilium replaces kube-proxy and ${notRead("its agent's Service table", 'was', 'cilium-dbg service list, db/show frontends or bpf lb list', this.cilium())}`;
      const agent = this.analysis.state(this.name).cilium;
      const refused = agent && refusedText(agent, false);
      const notStarted = this.agentNotStarted();
      // an agent not started first, a listing recorded that did not read beside it; else the
      // table not read, beside it the start cilium-config would stop (readiness not read)
      const said = notStarted
        ? [notStarted, ...(this.cilium()?.failure ? [table] : [])]
        : [table, ...(refused ? [refused] : [])];
      return `node ${this.name}: ${said.join('; ')}`;
    }
    if (this.mode() === 'ipvs')
      return this.ipvs()?.read
        ? undefined
        : `node ${this.name}: kube-proxy runs in IPVS mode and ${notRead('its virtual servers', 'were', listing, this.ipvs())}`;
    if (this.mode() === 'nftables') {
      const table = this.nft()?.table;
      if (table?.cut)
        return `node ${this.name}: ${this.nft()!.source} ends at line ${table.cut.line} inside ${table.cut.inside}: the listing was cut, so it is not compared (what is missing could be missing from the listing only)`;
      return table
        ? undefined
        : `node ${this.name}: kube-proxy runs in nftables mode and ${notRead('its table', 'was', listing, this.nft())}`;
    }
    const mode = unsupportedMode(this.mode());
    if (mode) return `node ${this.name}: ${mode}`;
    // a dump cut short would show everything after the cut as missing: said, not compared
    const read = this.rules();
    const cut = read?.ruleset?.cut;
    return cut
      ? `node ${this.name}: ${read!.source}${cut.line ? `:${cut.line}` : ''}: ${cut.reason}, so it is not compared (what is missing could be missing from the dump only)`
      : undefined;
  }

  /** Why nothing of the node's Cilium agent was listed where its release refuses cilium-config
   * and it is not ready, so has not started (refused.ts); undefined where it started, its
   * readiness was not read, or a listing of it was read (one that failed shows nothing ran). */
  agentNotStarted(): string | undefined {
    const agent = this.analysis.state(this.name).cilium;
    if (this.mode() !== 'cilium' || this.family === 'IPv6' || !agent || this.cilium()?.read)
      return undefined;
    return notStarted(agent) ? refusedText(agent, false) : undefined;
  }

  /**
   * Expected vs actual, for `scope`'s Services (then only what their answer uses) or the whole
   * node. Throws DriftInputError when the node cannot be checked, the parse error when its dump
   * cannot be read.
   */
  drift(asked?: Scope): NodeDrift {
    const scope = asked ?? this.readScope();
    const key = scopeKey(scope);
    let d = this.driftMemo.get(key);
    if (!d) {
      const unavailable = this.driftUnavailable();
      if (unavailable) throw new DriftInputError(unavailable);
      const dataplane = this.dataplane();
      if (!dataplane) {
        this.ruleset(); // throws why: the dump's parse error
        throw new DriftInputError(`no rules recorded for node "${this.name}"`);
      }
      const found = dataplane.drift(
        this.name,
        () => this.expected(scope),
        this.trees(scope)!,
        scope,
      );
      // every finding names the rule set it was found in
      const family = this.family;
      const onNode = (f: DriftFinding) => ({ ...f, drift: { ...f.drift, family } });
      d = {
        ...found,
        ...(dataplane.mode === 'cilium' ? {} : { release: this.expected(scope).release }),
        family,
        findings: found.findings.map(onNode),
        ...(found.notes ? { notes: found.notes.map(onNode) } : {}),
        ...(found.notRead ? { notRead: found.notRead.map(onNode) } : {}),
      };
      this.driftMemo.set(key, d);
    }
    return d;
  }

  /** Whether the node's rules hold a line as drift writes it ("-t nat -A ...", "add rule ...",
   * an IPVS or agent listing's line): a drift finding's actual shows only the lines that differ. */
  holds(line: string): boolean {
    this.heldMemo ??= this.heldLines();
    return this.heldMemo(line.trim());
  }

  /** Whether kube-proxy would write a line the node holds, for `scope`'s answer: in iptables
   * mode the expected dump's lines ("-t nat -A ..."); in the other modes drift shows no line
   * the node holds as unexpected, so every one counts. */
  expects(line: string, scope?: Scope): boolean {
    if (this.mode() !== 'iptables') return true;
    const key = scopeKey(scope ?? this.readScope());
    let lines = this.expectsMemo.get(key);
    if (!lines) {
      const exp = this.expected(scope);
      lines = new Set(
        (['filter', 'nat'] as const).flatMap((table) =>
          [...exp.fixed[table], ...exp.servicePorts.flatMap((sp) => sp[table])].map(
            (l) => `-t ${table} ${l.text}`,
          ),
        ),
      );
      this.expectsMemo.set(key, lines);
    }
    return lines.has(line.trim());
  }

  private heldLines(): (line: string) => boolean {
    const mode = this.mode();
    if (mode === 'ipvs') {
      const lines = new Set((this.ipvs()?.text ?? '').split('\n').map((l) => l.trim()));
      return (l) => lines.has(l);
    }
    if (mode === 'cilium') {
      const table = this.cilium()?.read?.table;
      // a frontend or backend written as drift writes them: the agent lists one so
      const lines = table ? ciliumLineSet(table) : new Set<string>();
      return (l) => lines.has(l);
    }
    if (mode === 'nftables') {
      const table = this.nft()?.table;
      // each rule as nftables drift writes an expected one: "add rule ip kube-proxy CHAIN TEXT"
      const lines = new Set(
        (table?.chains ?? []).flatMap((c) =>
          c.rules.map((r) => `add rule ${table!.family} ${table!.name} ${c.name} ${ruleText(r)}`),
        ),
      );
      return (l) => lines.has(l);
    }
    const lines = new Set(
      (this.rules()?.ruleset?.tables ?? []).flatMap((t) =>
        t.chains.flatMap((c) =>
          c.ruleIds.map((id) => `-t ${t.name} ${t.text(id).replace(/^\[\d+:\d+\] /, '')}`),
        ),
      ),
    );
    return (l) => lines.has(l);
  }

  /** The node's state in its own mode where it lives outside iptables (nftables, IPVS, Cilium):
   * where it was read, and why it could not be; undefined where none was recorded. */
  stateRead():
    | { source: string; failure?: DumpReadFailure; cut?: { line: number; inside: string } }
    | undefined {
    const mode = this.mode();
    const read =
      mode === 'nftables'
        ? this.nft()
        : mode === 'ipvs'
          ? this.ipvs()
          : mode === 'cilium'
            ? this.cilium()
            : undefined;
    if (!read) return undefined;
    const cut = mode === 'nftables' ? this.nft()?.table?.cut : undefined;
    return {
      source: read.source,
      ...(read.failure ? { failure: read.failure } : {}),
      ...(cut ? { cut } : {}),
    };
  }

  /** kube-proxy's nftables table of this family (`ip` or `ip6` kube-proxy) as the node recorded
   * it (nftables mode): its JSON listing, else its text listing; or why it is unreadable. */
  nft(): { source: string; table?: NftTable; failure?: DumpReadFailure } | undefined {
    if (this.nftMemo !== null) return this.nftMemo;
    if (this.given?.nft)
      return (this.nftMemo = { source: this.given.source, table: this.given.nft });
    const outputs = this.facts.nodes[this.name];
    const stems = nftStems(this.family);
    const stem = outputs && stems.json in outputs ? stems.json : stems.text;
    const text = outputs?.[stem];
    if (text === undefined) return (this.nftMemo = undefined);
    const source = `nodes/${this.name}/${stem}.txt`;
    const family = this.family === 'IPv6' ? 'ip6' : 'ip';
    const command: ListingCommand = {
      kind: 'nft-list',
      family,
      ...(stem === stems.text ? { format: 'text' as const } : {}),
    };
    try {
      // nft's JSON, its listing, or the script kube-proxy feeds nft -f (put in a snapshot by hand)
      const table = parseNftAny(text, source).table(family, 'kube-proxy');
      return (this.nftMemo = table
        ? { source, table }
        : {
            source,
            failure: { source, command, reason: `it holds no table ${family} kube-proxy` },
          });
    } catch (e) {
      if (!(e instanceof NftParseError)) throw e;
      return (this.nftMemo = { source, failure: dumpReadFailure(e, command) });
    }
  }

  /** IPVS mode's state as the node recorded it: the virtual servers of this family (ipvsadm-save
   * -n), kube-proxy's ipsets and kube-ipvs0's addresses where read; or why it is unreadable. */
  ipvs(): { source: string; text: string; read?: IpvsRead; failure?: DumpReadFailure } | undefined {
    if (this.ipvsMemo !== null) return this.ipvsMemo;
    const listing = this.analysis.ipvsTable(this.name);
    if (!listing) return (this.ipvsMemo = this.ipvsByAddress());
    const { source, text, command, table } = listing;
    if (table instanceof IpvsParseError)
      return (this.ipvsMemo = { source, text, failure: dumpReadFailure(table, command) });
    const v6 = this.family === 'IPv6';
    const bound = this.interfaceAddresses((n) => n === 'kube-ipvs0');
    const read: IpvsRead = {
      // one family's proxier programs its own family's virtual servers
      table: {
        ...table,
        services: table.services.filter((s) => s.address.startsWith('[') === v6),
      },
      ...this.analysis.ipsets(this.name),
      ...(bound ? { bound: new Set(bound) } : {}),
      expect: this.ipvsOptions(),
    };
    return (this.ipvsMemo = { source, text, read });
  }

  /** Where only one Service's virtual servers were read, by address (kdebug svc): its state as
   * read for the Service the facts are for. */
  private ipvsByAddress(): ReturnType<NodeAnalysis['ipvs']> {
    const outputs = this.facts.nodes[this.name];
    if (!outputs || !readByAddress(outputs)) return undefined;
    const bound = this.interfaceAddresses((n) => n === 'kube-ipvs0');
    const whole = this.analysis.ipsets(this.name);
    return stateByAddress(outputs, this.ipvsExpected(), this.name, {
      ...(bound ? { bound: new Set(bound) } : {}),
      expect: this.ipvsOptions(),
      ...(whole ? { ipsetsWhole: whole } : {}),
    });
  }

  /** What kube-proxy programs here in IPVS mode, for `scope`'s Services or what was read for. */
  ipvsExpected(scope?: Scope): ExpectedIpvs {
    return expectedIpvs(this.expected(scope), this.ipvsOptions());
  }

  /** Where the node's IPVS state was read for one Service only, by address: how many virtual
   * servers were read and ipset entries tested (undefined: not tested), or the ipsets read whole. */
  ipvsReadByAddress():
    { virtualServers: number; entries?: number; ipsetsWhole: boolean } | undefined {
    const read = this.mode() === 'ipvs' ? this.ipvs()?.read : undefined;
    const by = read?.byAddress;
    return (
      by && {
        virtualServers: by.virtualServers.size,
        ...(by.entries ? { entries: by.entries.size } : {}),
        ipsetsWhole: !by.entries && read.ipsets !== undefined,
      }
    );
  }

  /** What the node's Cilium agent should hold (its frontends and their backends), for `scope`'s
   * Services or all; undefined where no agent replaces kube-proxy there. */
  ciliumExpected(scope?: Scope): ExpectedFrontend[] | undefined {
    const agent = this.analysis.state(this.name).cilium;
    if (!agent) return undefined;
    return expectedCilium(this.analysis.view, this.ciliumNode(agent), agent.settings, scope);
  }

  /** The node as Cilium's model takes it: its name, labels and the agent's NodePort addresses. */
  private ciliumNode(agent: CiliumAgent): CiliumNode {
    const addresses = agent.nodePorts?.addresses;
    return {
      name: this.name,
      labels: this.analysis.index.node(this.name)?.labels ?? {},
      ...(addresses ? { nodePortAddresses: addresses } : {}),
    };
  }

  /** What the node's Cilium agent should write to its BPF maps for `scope`'s Services or all. */
  ciliumMaps(scope?: Scope): ExpectedMapEntry[] | undefined {
    const agent = this.analysis.state(this.name).cilium;
    const frontends = this.ciliumExpected(scope);
    if (!agent || !frontends) return undefined;
    return expectedMaps(frontends, {
      services: this.analysis.view.services,
      nodePortAddresses: agent.nodePorts?.addresses ?? [],
      // the node's own addresses: its devices' as the agent listed them, the Node's
      nodeAddresses: [
        ...(agent.nodePorts?.devices.flatMap((d) => d.addresses) ?? []),
        ...(this.analysis.index.node(this.name)?.ips ?? []),
      ],
      options: agent.settings,
    });
  }

  /** Cilium's tables as the node's agent listed them (both families): its load-balancer tables
   * (frontends with the backends' states), else its Service list, else its BPF maps; the BPF
   * maps besides, where both were read. Or why they are unreadable. */
  cilium():
    { source: string; text: string; read?: CiliumRead; failure?: DumpReadFailure } | undefined {
    if (this.ciliumMemo !== null) return this.ciliumMemo;
    const state = this.analysis.state(this.name);
    const outputs = this.facts.nodes[this.name] ?? {};
    const binary = oldAgentBinary(state.cilium);
    const command = (list: CiliumList): ListingCommand => ({
      kind: 'cilium',
      list,
      ...(binary ? { binary } : {}),
    });
    const stemOf = (list: CiliumList) => commandStem(command(list));
    const has = (list: CiliumList) => stemOf(list) in outputs;
    const list = (['frontends', 'service-list', 'bpf-lb-list'] as const).find(has);
    if (!list || !state.cilium) return (this.ciliumMemo = undefined);
    const file = (l: CiliumList) => `nodes/${this.name}/${stemOf(l)}.txt`;
    // one table holds both families: it is the IPv4 analysis's
    if (this.family === 'IPv6') return (this.ciliumMemo = undefined);
    // the listing being parsed: a parse error is its output's
    let reading: CiliumList = list;
    const parse = (l: CiliumList) => {
      reading = l;
      return parseCilium(outputs[stemOf(l)]!, file(l));
    };
    try {
      let table = parse(list);
      // the states are the backends table's where it was read; without it they are unread, not none
      const states = list === 'frontends' && has('backends') ? parse('backends') : undefined;
      if (states?.backendStates) table = withBackendStates(table, states.backendStates);
      const bpf = list !== 'bpf-lb-list' && has('bpf-lb-list') ? parse('bpf-lb-list') : undefined;
      return (this.ciliumMemo = {
        source: file(list),
        text: outputs[stemOf(list)]!,
        read: {
          table,
          ...(bpf ? { maps: bpf } : {}),
          agent: state.cilium,
          node: this.ciliumNode(state.cilium),
        },
      });
    } catch (e) {
      if (!(e instanceof CiliumParseError)) throw e;
      // the evidence is the listing that did not read, not the one read before it
      return (this.ciliumMemo = {
        source: file(reading),
        text: outputs[stemOf(reading)]!,
        failure: dumpReadFailure(e, command(reading)),
      });
    }
  }

  /** What IPVS mode's expected state takes from the node: the scheduler, its own addresses
   * (outside kube-ipvs0) where `ip -br addr` was recorded. */
  ipvsOptions(): IpvsExpectOptions {
    const own = this.interfaceAddresses((n) => n !== 'kube-ipvs0');
    return {
      scheduler: this.analysis.state(this.name).config.value.ipvsScheduler,
      ...(own ? { nodeAddresses: own } : {}),
    };
  }

  /** The addresses of the node's interfaces `on` picks, from `ip -br addr`; undefined when it
   * was not recorded. */
  private interfaceAddresses(on: (name: string) => boolean): string[] | undefined {
    const text = this.facts.nodes[this.name]?.['ip-addr'];
    if (text === undefined) return undefined;
    return parseIpBrief(text)
      .filter((i) => on(i.name))
      .flatMap((i) => i.addresses.map((a) => a.split('/')[0]!));
  }

  /** What the objects say each of this node's virtual servers is, from what kube-proxy would
   * program here. */
  private ipvsKnown(read: IpvsRead): Map<string, IpvsKnown> {
    const known = new Map<string, IpvsKnown>();
    for (const v of expectedIpvs(this.expected(), read.expect).virtualServers) {
      known.set(`${v.protocol} ${v.ip}:${v.port}`, { name: v.name, kind: v.kind });
    }
    return known;
  }

  /** The node's addresses and interfaces, for the packet walk. */
  network(): NodeNetwork {
    return (this.networkMemo ??= nodeNetwork(
      this.analysis.index.node(this.name),
      this.facts.nodes[this.name]?.['ip-addr'],
    ));
  }

  /** One packet walked through the node's rules in its proxy mode. */
  trace(packet: TracePacket): TraceResult {
    const dataplane = this.dataplane();
    if (!dataplane) this.ruleset(); // throws why: the dump's parse error, or none recorded
    return dataplane!.trace(packet, this.network());
  }
}

/** kube-proxy's ipsets as the node listed them; a listing that does not read leaves the virtual
 * servers readable, and says why the sets are not compared. */
function readIpsets(
  text: string,
  source: string,
): Pick<IpvsRead, 'ipsets' | 'ipsetsSource' | 'ipsetsError'> {
  try {
    return { ipsets: parseIpsets(text, source), ipsetsSource: source };
  } catch (e) {
    if (!(e instanceof IpvsParseError)) throw e;
    return { ipsetsError: e.message };
  }
}

function servicePortsOf(services: Scope & object) {
  return services.flatMap((s) =>
    s.ports.map((p) => ({ name: servicePortName(s, p), protocol: p.protocol })),
  );
}

/** A Service narrowed to one port (`NAME:PORT`) is a scope of its own. */
const scopeKey = (scope: Scope) =>
  scope
    ? scope
        .map((s) => `${s.namespace}/${s.name}:${s.ports.map((p) => `${p.port}/${p.protocol}`)}`)
        .join(',')
    : '*';

/** One Service's nat chains, read by name, with the filter table (by name or whole) beside them. */
function withChainsRead(
  ruleset: Ruleset,
  chains: NonNullable<NodeDump['chains']>,
  fileOf: ((source: string) => string) | undefined,
): void {
  // the chains read by name are of each family's nat table
  for (const nat of ruleset.tables) if (nat.name === 'nat') nat.chainsRead = chains.read;
  if (!chains.filter) return;
  const { source, text, read } = chains.filter;
  const filter = parseIptables(text, { file: fileOf?.(source) ?? source, table: 'filter' }).table(
    'filter',
  );
  if (!filter) return;
  filter.file = source;
  filter.chainsRead = read;
  ruleset.tables.push(filter);
}
