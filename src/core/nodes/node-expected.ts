// What kube-proxy (or the Cilium agent that replaces it) should have written on one node, in
// its mode: the iptables rules, the IPVS virtual servers and ipsets, the agent's frontends and
// BPF map entries; from the objects and what the node tells of itself (knobs.ts).
import type { ExpectedFrontend } from '../dataplane/cilium/expected/expected.js';
import type { ExpectedMapEntry } from '../dataplane/cilium/maps/expected.js';
import type { IpvsRead } from '../dataplane/ipvs/dataplane.js';
import type { ExpectedIpvs } from '../dataplane/ipvs/expected/expected.js';
import type { IpvsKnown } from '../dataplane/ipvs/trees.js';
import {
  expectedRules,
  type ExpectOptions,
  type ExpectedRules,
} from '../dataplane/kube-proxy/expected.js';
import { nodeKnobs, type NodeKnobs } from '../dataplane/kube-proxy/knobs.js';
import type { Shown } from '../dataplane/kube-proxy/releases.js';
import { parseIpBrief } from './outputs.js';
import { NodeReads, scopeKey, type Scope } from './node-reads.js';

/** A node's reads, and what kube-proxy would write there. */
export abstract class NodeExpected extends NodeReads {
  private readonly expectedMemo = new Map<string, ExpectedRules>();
  private readonly expectsMemo = new Map<string, Set<string>>();
  private knobsMemo: NodeKnobs | undefined;
  private shownMemo: Shown | undefined;

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
      // nftables: where the version read is not a modelled release, the one its table shows
      const table = this.mode() === 'nftables' ? this.nft()?.table : undefined;
      const options = {
        ...this.knobs().options,
        interfaceAddresses: addresses,
        family: this.family,
        unread: this.analysis.endpointsUnread(),
        ...(this.mode() === 'nftables' ? { nftables: true } : {}),
        ...(table
          ? { shown: () => (this.shownMemo ??= this.modeCode('nftables').nftShown(table)) }
          : {}),
        ...overrides,
      };
      exp = expectedRules(this.analysis.view, this.name, options, { only: scope && [...scope] });
      this.expectedMemo.set(key, exp);
    }
    return exp;
  }

  /** Whether kube-proxy would write a line the node holds, for `scope`'s answer: in iptables
   * mode the expected dump's lines ("-t nat -A ..."); in the other modes drift shows no line
   * the node holds as unexpected, so every one counts. */
  protected expects(line: string, scope?: Scope): boolean {
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

  /** What kube-proxy programs here in IPVS mode, for `scope`'s Services or what was read for. */
  ipvsExpected(scope?: Scope): ExpectedIpvs {
    return this.modeCode('ipvs').expectedIpvs(this.expected(scope), this.ipvsOptions());
  }

  /** What the node's Cilium agent should hold (its frontends and their backends), for `scope`'s
   * Services or all; undefined where no agent replaces kube-proxy there. */
  ciliumExpected(scope?: Scope): ExpectedFrontend[] | undefined {
    // the agent as its listing shows it, where one was read
    const agent = this.cilium()?.read?.agent ?? this.analysis.state(this.name).cilium;
    if (!agent) return undefined;
    return this.modeCode('cilium').expectedCilium(
      this.analysis.view,
      this.ciliumNode(agent),
      agent.settings,
      scope,
    );
  }

  /** What the node's Cilium agent should write to its BPF maps for `scope`'s Services or all. */
  ciliumMaps(scope?: Scope): ExpectedMapEntry[] | undefined {
    const agent = this.cilium()?.read?.agent ?? this.analysis.state(this.name).cilium;
    const frontends = this.ciliumExpected(scope);
    if (!agent || !frontends) return undefined;
    return this.modeCode('cilium').expectedMaps(frontends, {
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

  /** What the objects say each of this node's virtual servers is, from what kube-proxy would
   * program here. */
  protected ipvsKnown(read: IpvsRead): Map<string, IpvsKnown> {
    const known = new Map<string, IpvsKnown>();
    const { expectedIpvs } = this.modeCode('ipvs');
    for (const v of expectedIpvs(this.expected(), read.expect).virtualServers) {
      known.set(`${v.protocol} ${v.ip}:${v.port}`, { name: v.name, kind: v.kind });
    }
    return known;
  }
}
