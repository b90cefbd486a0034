// What kdebug read of one node for one family: its iptables dump parsed once (or taken parsed
// from another thread, or given on the command line), kube-proxy's nftables table, its IPVS
// state, its Cilium agent's tables, each with why it could not be read; and which Services a
// read of part of the node answers for.
import { oldAgentBinary, type CiliumAgent } from '../dataplane/cilium/agent/agent.js';
import type { CiliumNode } from '../dataplane/cilium/expected/expected.js';
import { dumpReadFailure, type DumpReadFailure } from '../dataplane/dataplane.js';
import type { CiliumRead } from '../dataplane/cilium/dataplane.js';
import type { IpvsRead } from '../dataplane/ipvs/dataplane.js';
import type { LoadedMode, ModeCode } from '../dataplane/modes.js';
import type { ExpectedIpvs, IpvsExpectOptions } from '../dataplane/ipvs/expected/expected.js';
import { commandStem, readByAddress, type CiliumList, type ListingCommand } from './commands.js';
import { DriftInputError } from '../dataplane/drift.js';
import type { IPFamily } from '../ipv6.js';
import { familyNotRecorded, nftStems, nodeDump, type NodeDump } from '../facts/facts.js';
import type { NftTable } from '../dataplane/nftables/read/listing.js';
import { rulesetSigns, textSigns, type DumpSigns } from '../dataplane/iptables/backend.js';
import {
  IptablesParseError,
  NoRulesError,
  parseIptables,
  type Ruleset,
} from '../dataplane/iptables/read/parse.js';
import { findService, type Service } from '../kube/objects.js';
import type { Facts } from '../model.js';
import { parseIpBrief } from './outputs.js';
import { familyContradiction } from '../dataplane/iptables/read/dump-family.js';
import type { Analysis, GivenDump } from './analysis.js';

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

/** The listings of one node's dataplane for one family (iptables mode: iptables-save for IPv4,
 * ip6tables-save for IPv6), each read once. */
export abstract class NodeReads {
  private read: ReadRules | undefined | null = null;
  /** The stem of the dump parsed here: a later read of the same run holding the same text
   * reuses the parse. */
  private parsedStem: string | undefined;
  private nftMemo: ReturnType<NodeReads['nft']> | null = null;
  private ipvsMemo: ReturnType<NodeReads['ipvs']> | null = null;
  private ciliumMemo: ReturnType<NodeReads['cilium']> | null = null;
  private readonly signsMemo = new Map<string, DumpSigns | undefined>();

  constructor(
    protected readonly analysis: Analysis,
    readonly name: string,
    protected readonly given?: GivenDump,
    readonly family: IPFamily = 'IPv4',
  ) {}

  protected get facts(): Facts {
    return this.analysis.facts;
  }

  /** `mode`'s code, as the run loaded it (dataplane/modes.ts). */
  protected modeCode<M extends LoadedMode>(mode: M): ModeCode<M> {
    return this.analysis.code.of(mode);
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
          : this.ownFamily(dump.source, aside, file));
    try {
      const ruleset =
        this.given?.ruleset ??
        parseIptables(dump.text ?? '', {
          file,
          table: this.given?.table ?? (chains ? 'nat' : table),
          ...(this.given ? {} : { noun: 'dump' as const }),
        });
      if (chains) withChainsRead(ruleset, chains, fileOf ? (s) => fileOf(this.name, s) : undefined);
      this.read = this.given
        ? { source: dump.source, ruleset }
        : this.ownFamily(dump.source, ruleset, file);
    } catch (e) {
      if (!(e instanceof IptablesParseError) && !(e instanceof NoRulesError)) throw e;
      this.read = { source: dump.source, failure: e };
    }
    return this.read;
  }

  /** The recorded dump's rule set, or why not: its contents say the other family than its name. */
  private ownFamily(source: string, ruleset: Ruleset, file: string): ReadRules {
    const failure = familyContradiction(ruleset, this.family, file);
    return failure ? { source, failure } : { source, ruleset };
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
        familyNotRecorded(this.facts, this.name, this.family),
        `no ${this.family} rules recorded`,
      );
    if (r.failure) throw r.failure;
    return r.ruleset!;
  }

  /** The node's proxy mode, as its state decided it (a given nftables table is nftables). */
  mode(): string {
    if (this.given?.nft) return 'nftables';
    return this.given ? 'iptables' : this.analysis.state(this.name).mode.value.toLowerCase();
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
  protected readScope(): Scope {
    const byAddress =
      !this.analysis.ipvsTable(this.name) && readByAddress(this.facts.nodes[this.name]);
    if (!this.chainsRead() && !byAddress) return undefined;
    const { namespace, service } = this.facts.meta;
    const svc =
      namespace && service ? findService(this.analysis.view, namespace, service) : undefined;
    return svc ? [svc] : [];
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
    const cut = mode === 'nftables' ? this.nft()?.table?.cut : this.ipvsCut();
    return {
      source: read.source,
      ...(read.failure ? { failure: read.failure } : {}),
      ...(cut ? { cut } : {}),
    };
  }

  /** Where the node's IPVS listing was cut short (IPVS mode), and inside what. */
  ipvsCut(): { line: number; inside: string } | undefined {
    const table = this.mode() === 'ipvs' ? this.ipvs()?.read?.table : undefined;
    return table?.cut ? { line: table.cut, inside: table.cutInside ?? 'a line' } : undefined;
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
    const { NftParseError, parseNftAny } = this.modeCode('nftables');
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
    if (table instanceof this.modeCode('ipvs').IpvsParseError)
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
  private ipvsByAddress(): ReturnType<NodeReads['ipvs']> {
    const outputs = this.facts.nodes[this.name];
    if (!outputs || !readByAddress(outputs)) return undefined;
    const bound = this.interfaceAddresses((n) => n === 'kube-ipvs0');
    const whole = this.analysis.ipsets(this.name);
    return this.modeCode('ipvs').stateByAddress(
      outputs,
      this.ipvsExpected(),
      this.name,
      {
        ...(bound ? { bound: new Set(bound) } : {}),
        expect: this.ipvsOptions(),
        ...(whole ? { ipsetsWhole: whole } : {}),
      },
      (stem) => this.analysis.ipvsAt(this.name, stem),
    );
  }

  /** What kube-proxy programs here in IPVS mode (node-expected.ts): a read by address is of it. */
  abstract ipvsExpected(scope?: Scope): ExpectedIpvs;

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
    // an agent with no Pod in the API is compared on what it listed when it was recorded
    const agent = state.cilium ?? state.agentMissing?.agent;
    if (!list || !agent) return (this.ciliumMemo = undefined);
    const file = (l: CiliumList) => `nodes/${this.name}/${stemOf(l)}.txt`;
    // one table holds both families: it is the IPv4 analysis's
    if (this.family === 'IPv6') return (this.ciliumMemo = undefined);
    const { CiliumParseError, listedAgent, parseCilium, withBackendStates } =
      this.modeCode('cilium');
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
      if (states?.backendStates) table = withBackendStates(table, states.backendStates, states);
      const bpf = list !== 'bpf-lb-list' && has('bpf-lb-list') ? parse('bpf-lb-list') : undefined;
      return (this.ciliumMemo = {
        source: file(list),
        text: outputs[stemOf(list)]!,
        read: {
          table,
          ...(bpf ? { maps: bpf } : {}),
          agent: listedAgent(agent, [table, bpf], this.analysis.view.services),
          node: this.ciliumNode(agent),
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

  /** The node as Cilium's model takes it: its name, labels and the agent's NodePort addresses. */
  protected ciliumNode(agent: CiliumAgent): CiliumNode {
    const addresses = agent.nodePorts?.addresses;
    return {
      name: this.name,
      labels: this.analysis.index.node(this.name)?.labels ?? {},
      ...(addresses ? { nodePortAddresses: addresses } : {}),
    };
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
  protected interfaceAddresses(on: (name: string) => boolean): string[] | undefined {
    const text = this.facts.nodes[this.name]?.['ip-addr'];
    if (text === undefined) return undefined;
    return parseIpBrief(text)
      .filter((i) => on(i.name))
      .flatMap((i) => i.addresses.map((a) => a.split('/')[0]!));
  }
}

/** A Service narrowed to one port (`NAME:PORT`) is a scope of its own. */
export const scopeKey = (scope: Scope) =>
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
