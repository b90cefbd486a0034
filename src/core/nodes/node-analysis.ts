// One node's dataplane for one family: its Service trees, the drift from what kube-proxy would
// write, the lines it holds, its network and a packet's walk, on top of its reads
// (node-reads.ts) and what is expected there (node-expected.ts).
import { familyNotRecorded, nodeDump } from '../facts/facts.js';
import { serviceListScope, type ServiceListScope } from '../facts/service-list-scope.js';
import { notStarted, refusedText } from '../dataplane/cilium/agent/refused.js';
import { agentName, partialText } from '../dataplane/cilium/agent/agent.js';
import type { AgentPod, CiliumAgent } from '../dataplane/cilium/agent/agent.js';
import { servedByCilium } from '../dataplane/cilium/drift/left-to-kube-proxy.js';
import { agentUnread, besideUnread } from '../dataplane/cilium/beside-unread.js';
import { couldNotRead, type Dataplane } from '../dataplane/dataplane.js';
import { iptablesDataplane } from '../dataplane/iptables/dataplane.js';
import { modeTraits } from '../dataplane/mode-traits.js';
import {
  DriftInputError,
  unsupportedMode,
  type DriftFinding,
  type NodeDrift,
} from '../dataplane/drift.js';
import { servicePortName } from '../kube/objects.js';
import type { ServiceTrees } from '../dataplane/trees.js';
import { nodeNetwork, type NodeNetwork, type TracePacket } from '../dataplane/trace/trace.js';
import type { TraceResult } from '../dataplane/trace/trace.js';
import type { Traced } from '../dataplane/trace/answer.js';
import { saidShort, unavailableText, type DriftUnavailable } from './drift-unavailable.js';
import {
  kubeProxyBesideCilium,
  leftoverFinding,
  type OtherModeState,
  type ReplacingAgent,
} from './leftovers.js';
import { kubectl, onNode as onNodeCommand, valid } from '../findings/next-command.js';
import { NodeExpected } from './node-expected.js';
import { versionRead } from './state.js';
import { scopeKey, type Scope } from './node-reads.js';

/** One node's dataplane for one family (iptables mode: iptables-save for IPv4, ip6tables-save
 * for IPv6): rules, trees, expected rules, drift, network, trace. */
export class NodeAnalysis extends NodeExpected {
  private readonly treesMemo = new Map<string, ServiceTrees>();
  private readonly driftMemo = new Map<string, NodeDrift>();
  private readonly driftOnNodeMemo = new Map<string, NodeDrift>();
  private networkMemo: NodeNetwork | undefined;
  private dataplaneMemo: Dataplane | undefined | null = null;
  private heldMemo: ((line: string) => boolean) | undefined;

  /** The node's rules in its proxy mode: kube-proxy's nftables table on a node in nftables mode
   * where it was read, else its iptables dump; undefined when neither was. */
  dataplane(): Dataplane | undefined {
    if (this.dataplaneMemo !== null) return this.dataplaneMemo;
    const nft = this.mode() === 'nftables' ? this.nft() : undefined;
    const ipvs = this.mode() === 'ipvs' ? this.ipvs() : undefined;
    const cilium = this.mode() === 'cilium' ? this.cilium() : undefined;
    // which Services the facts listed whole: where "the API has no Service X" may be said
    const listed = serviceListScope(this.analysis.facts);
    if (cilium?.read) {
      const code = this.modeCode('cilium');
      const agentOf = (n: string) => this.analysis.state(n).cilium;
      const agent = code.ciliumDataplane(cilium.read, this.analysis.view, agentOf, listed);
      // kube-proxy's state beside a full replacement takes what the agent passes
      const kubeProxy = this.otherModes(undefined).find((o) => o.trees.services.length > 0);
      return (this.dataplaneMemo = kubeProxy
        ? code.ciliumBeforeKubeProxy(
            agent,
            kubeProxy.dataplane,
            cilium.read,
            this.analysis.view,
            agentOf,
          )
        : agent);
    }
    const rules = this.rules();
    const own = nft?.table
      ? this.modeCode('nftables').nftablesDataplane(
          nft.table,
          nft.source,
          this.analysis.view,
          listed,
        )
      : ipvs?.read
        ? this.modeCode('ipvs').ipvsDataplane(
            ipvs.read,
            ipvs.source,
            () => this.ipvsKnown(ipvs.read!),
            () => this.analysis.state(this.name).config.value,
            () => this.rules(),
            listed,
          )
        : rules?.ruleset
          ? iptablesDataplane(rules.ruleset, rules.source, this.analysis.view, listed)
          : undefined;
    return (this.dataplaneMemo = own && this.besideAgent(own, listed));
  }

  /** kube-proxy's `own` dataplane, with the node's Cilium agent beside it where that serves a
   * partial replacement's kinds ahead of kube-proxy's rules and its table was read. */
  private besideAgent(own: Dataplane, listed: ServiceListScope): Dataplane {
    const agent = this.analysis.state(this.name).cilium;
    if (!agent) return own;
    const listing = this.cilium();
    const read = listing?.read;
    // what of the agent was not read is said, never compared as if absent
    const failure = listing?.failure && couldNotRead(listing.failure);
    // one table holds both families: the IPv6 analysis leaves it to the IPv4 one's
    const tableRead = !!read || this.family === 'IPv6';
    const unread = agentUnread(agent, { read: tableRead, ...(failure ? { failure } : {}) });
    if (unread) return besideUnread(own, agent, unread);
    if (!agent.replacement?.handles || !read) return own;
    return this.modeCode('cilium').ciliumBesideKubeProxy(
      own,
      read,
      agent.replacement,
      this.analysis.view,
      (n) => this.analysis.state(n).cilium,
      listed,
    );
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

  /** Why drift cannot be computed here (state not read, a mode not modelled, a cut), typed for
   * its callers to say with unavailableText; undefined where it can. */
  driftUnavailable(): DriftUnavailable | undefined {
    const mode = this.mode();
    if (mode === 'cilium' && this.family === 'IPv6') return { kind: 'cilium-ipv6' };
    if (mode === 'cilium') {
      const read = this.cilium();
      if (read?.read) return undefined;
      const agent = this.analysis.state(this.name).cilium;
      return {
        kind: 'cilium-not-read',
        ...(read?.failure ? { failure: read.failure } : {}),
        ...(agent ? { agent } : {}),
      };
    }
    // the command that lists the mode's state on a node
    const listing = modeTraits(mode)?.state?.command(this.family).join(' ') ?? '';
    if (mode === 'ipvs') {
      const read = this.ipvs();
      const cut = this.ipvsCut();
      if (cut) return { kind: 'listing-cut', source: read!.source, ...cut };
      return read?.read
        ? undefined
        : {
            kind: 'state-not-read',
            mode,
            listing,
            ...(read?.failure ? { failure: read.failure } : {}),
          };
    }
    if (mode === 'nftables') {
      const read = this.nft();
      const cut = read?.table?.cut;
      if (cut)
        return { kind: 'listing-cut', source: read!.source, line: cut.line, inside: cut.inside };
      return read?.table
        ? undefined
        : {
            kind: 'state-not-read',
            mode,
            listing,
            ...(read?.failure ? { failure: read.failure } : {}),
          };
    }
    const unmodelled = unsupportedMode(mode);
    if (unmodelled) return { kind: 'mode-unmodelled', said: unmodelled };
    // a dump cut short would show everything after the cut as missing: said, not compared
    const read = this.rules();
    const cut = read?.ruleset?.cut;
    return cut && { kind: 'dump-cut', source: read!.source, cut };
  }

  /** The node's Cilium agent Pod, where the agent replaces kube-proxy here (its mode is cilium). */
  replacingAgent(): AgentPod | undefined {
    return this.mode() === 'cilium' ? this.analysis.state(this.name).cilium : undefined;
  }

  /** Where the agent replaces kube-proxy here with no Pod of it in the API, the agent its
   * recorded status shows. */
  recordedAgent(): CiliumAgent | undefined {
    return this.mode() === 'cilium'
      ? this.analysis.state(this.name).agentMissing?.agent
      : undefined;
  }

  /** Why nothing of the node's Cilium agent was listed where its release refuses cilium-config
   * and it is not ready, so has not started (refused.ts); undefined where it started, its
   * readiness was not read, or a listing of it was read (one that failed shows nothing ran). */
  agentNotStarted(): string | undefined {
    const agent = this.replacingAgent();
    if (this.family === 'IPv6' || !agent || this.cilium()?.read) return undefined;
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
      if (unavailable)
        throw new DriftInputError(unavailableText(this.name, unavailable), saidShort(unavailable));
      const dataplane = this.dataplane();
      if (!dataplane) {
        this.ruleset(); // throws why: the dump's parse error
        throw new DriftInputError(
          familyNotRecorded(this.facts, this.name, this.family),
          `no ${this.family} rules recorded`,
        );
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
        ...(dataplane.mode === 'cilium'
          ? {}
          : {
              release: this.expected(scope).release,
              kubeProxy: versionRead(this.analysis.state(this.name)),
            }),
        family,
        findings: found.findings.map(onNode),
        ...(found.notes ? { notes: found.notes.map(onNode) } : {}),
        ...(found.notRead ? { notRead: found.notRead.map(onNode) } : {}),
      };
      // the other mode's rules kube-proxy left on the node act beside the live ones
      const left = this.leftovers(scope).map(onNode);
      if (left.length > 0)
        d = {
          ...d,
          findings: [...d.findings, ...left],
          drifted: d.drifted || left.some((f) => !f.info),
        };
      // kube-proxy's rules beside a Cilium agent serving some kinds ahead of them
      if (dataplane.mode !== 'cilium' && !found.ciliumBeside)
        d = servedByCilium(d, this.analysis.state(this.name).cilium?.replacement);
      this.driftMemo.set(key, d);
    }
    return d;
  }

  /** The other proxy modes' kube-proxy state beside the live mode's, one finding each
   * (leftovers.ts). */
  private leftovers(scope: Scope): DriftFinding[] {
    const others = this.otherModes(scope);
    if (others.length === 0) return [];
    const current = new Map<string, Set<string>>();
    for (const sp of this.expected(scope).servicePorts)
      current.set(
        sp.name,
        new Set(
          [...sp.clusterEndpoints, ...sp.localEndpoints, ...sp.reachableEndpoints].map(
            (e) => e.address,
          ),
        ),
      );
    const pod = this.analysis.index.kubeProxyPod(this.name);
    // kube-proxy's own cleanup, where its binary is: its Pod's image, else the node
    const next = pod
      ? kubectl(pod.namespace, 'exec', valid.name(pod.name), '--', 'kube-proxy', '--cleanup')
      : onNodeCommand(this.name, ['kube-proxy', '--cleanup'], { hostBinaries: true });
    const agent = this.replacingAgentSaid();
    return others.flatMap(
      (o) =>
        (agent
          ? kubeProxyBesideCilium(this.name, agent, o, current, pod ? undefined : next)
          : leftoverFinding(this.name, this.mode(), o, current, next)) ?? [],
    );
  }

  /** The Cilium agent that replaces kube-proxy on this node (mode cilium), as the finding on
   * kube-proxy's state beside it names it. */
  private replacingAgentSaid(): ReplacingAgent | undefined {
    const agent = this.replacingAgent() ?? this.recordedAgent();
    if (!agent) return undefined;
    const state = this.analysis.state(this.name);
    const pod = this.analysis.index.kubeProxyPod(this.name);
    return {
      name: agentName(agent),
      replacement: agent.replacement
        ? partialText(agent.replacement)
        : 'full kube-proxy replacement',
      source: agent.replacement?.source ?? state.mode.source,
      ...(pod ? { kubeProxyPod: `${pod.namespace}/${pod.name}` } : {}),
    };
  }

  /** Each other mode's kube-proxy state as read on the node, with its Service trees: iptables
   * rules in nftables mode, the nftables table in iptables or IPVS mode, IPVS virtual servers in
   * iptables or nftables mode. */
  private otherModes(scope: Scope): OtherModeState[] {
    if (this.given) return [];
    const mode = this.mode();
    const listed = serviceListScope(this.analysis.facts);
    const { view } = this.analysis;
    const outputs = this.facts.nodes[this.name] ?? {};
    const known = servicePortsOf(scope ?? view.services);
    const treesOf = (dataplane: OtherModeState['dataplane'], text?: string): OtherModeState => ({
      dataplane,
      trees: dataplane.trees({ only: scope && known, known }),
      ...(text !== undefined ? { lines: text.split('\n') } : {}),
    });
    const out: OtherModeState[] = [];
    // beside Cilium's agent, kube-proxy's state in any mode is the other one
    const cilium = mode === 'cilium';
    const rules = mode === 'nftables' || cilium ? this.rules() : undefined;
    if (rules?.ruleset)
      out.push(
        treesOf(
          iptablesDataplane(rules.ruleset, rules.source, view, listed),
          nodeDump(this.facts, this.name, this.family)?.text,
        ),
      );
    const nft = mode === 'iptables' || mode === 'ipvs' || cilium ? this.nft() : undefined;
    if (nft?.table)
      out.push(
        treesOf(this.modeCode('nftables').nftablesDataplane(nft.table, nft.source, view, listed)),
      );
    const ipvs = mode === 'iptables' || mode === 'nftables' || cilium ? this.ipvs() : undefined;
    const read = ipvs?.read;
    if (read && read.table.services.length > 0)
      out.push({
        ...treesOf(
          this.modeCode('ipvs').ipvsDataplane(
            read,
            ipvs.source,
            () => this.ipvsKnown(read),
            () => this.analysis.state(this.name).config.value,
            () => this.rules(),
            listed,
          ),
          ipvs.text,
        ),
        ...('ip-addr' in outputs ? { boundSource: `nodes/${this.name}/ip-addr.txt` } : {}),
      });
    return out;
  }

  /** The drift, each finding with what the node's rules say of its lines (drift.ts LinesOnNode):
   * what the Rules step and the Drift screen show as a difference. Apart from drift(), which
   * `kdebug drift` prints, as deciding it reads every rule of the node. */
  driftOnNode(asked?: Scope): NodeDrift {
    const scope = asked ?? this.readScope();
    const key = scopeKey(scope);
    let d = this.driftOnNodeMemo.get(key);
    if (!d) {
      const found = this.drift(scope);
      const lined = (f: DriftFinding) => this.withLinesOnNode(f, scope);
      d = {
        ...found,
        findings: found.findings.map(lined),
        ...(found.notes ? { notes: found.notes.map(lined) } : {}),
        ...(found.notRead ? { notRead: found.notRead.map(lined) } : {}),
      };
      this.driftOnNodeMemo.set(key, d);
    }
    return d;
  }

  /** A drift finding with what the node's rules say of its lines. */
  private withLinesOnNode(f: DriftFinding, scope: Scope): DriftFinding {
    const { expected, actual, quoted } = f.drift;
    if (expected.length === 0 && actual.length === 0) return f;
    // a quote of the node's state is one of its lines, and its drift check said if it differs
    const quote = (i: number) => quoted?.[i] ?? null;
    const onNode = {
      expected: expected.map((l) => this.holds(l)),
      actual: actual.map((l, i) => quote(i) !== null || this.holds(l)),
      written: actual.map((l, i) => {
        const differs = quote(i);
        return differs === null ? this.expects(l, scope) : !differs;
      }),
    };
    return { ...f, drift: { ...f.drift, onNode } };
  }

  /** Whether the node's rules hold a line as drift writes it ("-t nat -A ...", "add rule ...",
   * an IPVS or agent listing's line). */
  private holds(line: string): boolean {
    this.heldMemo ??= this.heldLines();
    return this.heldMemo(line.trim());
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
      const lines = table ? this.modeCode('cilium').ciliumLineSet(table) : new Set<string>();
      return (l) => lines.has(l);
    }
    if (mode === 'nftables') {
      const table = this.nft()?.table;
      if (!table) return () => false;
      const { ruleText } = this.modeCode('nftables');
      // each rule as nftables drift writes an expected one: "add rule ip kube-proxy CHAIN TEXT"
      const lines = new Set(
        table.chains.flatMap((c) =>
          c.rules.map((r) => `add rule ${table.family} ${table.name} ${c.name} ${ruleText(r)}`),
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

  /** One packet walked, and where the read of the rules it went through stopped (a listing cut
   * short: the walk holds up to there): what `kdebug trace` and the TUI's Trace screen show. */
  traced(packet: TracePacket): Traced {
    const result = this.trace(packet);
    const dataplane = this.dataplane()!;
    const { fileOf } = this.analysis.options;
    const file = fileOf && !this.given ? fileOf(this.name, dataplane.source) : dataplane.source;
    const stop = dataplane.readStop?.(result, file);
    return stop ? { result, stop } : { result };
  }
}

function servicePortsOf(services: Scope & object) {
  return services.flatMap((s) =>
    s.ports.map((p) => ({ name: servicePortName(s, p), protocol: p.protocol })),
  );
}
