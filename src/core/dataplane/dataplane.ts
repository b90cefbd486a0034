// A node's dataplane: the rules kube-proxy wrote there, read in the node's own proxy mode, behind
// one interface. The analysis asks it for Service trees, drift and a packet walk without knowing
// the mode: iptables, nftables, IPVS and Cilium are one implementation each here.
import { listedEntryLines } from './listed-entries.js';
import type { IPFamily } from '../ipv6.js';
import { NFTABLES_STATE, nftablesEntryLines } from './nftables/traits.js';
import { IPVS_STATE, ipvsForwardingNotRead, ipvsNotCompared } from './ipvs/traits.js';
import { CILIUM_STATE } from './cilium/traits.js';
import { iptablesLocalDrops } from './iptables/local-policy.js';
import { nftablesLocalDrops } from './nftables/local-policy.js';
import { ipvsExternalServers } from './ipvs/local-policy.js';
import type { Hairpin, HairpinQuery } from './hairpin.js';
import { IPTABLES_HAIRPIN, iptablesHairpin } from './iptables/hairpin.js';
import { NFTABLES_HAIRPIN, nftablesHairpin } from './nftables/hairpin.js';
import { IPVS_HAIRPIN, ipvsHairpin, type IpvsHairpinState } from './ipvs/hairpin.js';
import type { PingExplained, PingFacts } from './ping.js';
import { iptablesClusterIpLines, iptablesEntryLines, iptablesPing } from './iptables/ping.js';
import { nftablesClusterIpLines, nftablesPing } from './nftables/ping.js';
import { ipvsClusterIpLines, ipvsPing } from './ipvs/ping.js';
import { ciliumPing } from './cilium/ping.js';
import { watchedServiceCIDRs } from './kube-proxy/releases.js';
import type { CiliumCompared, NodeDrift } from './drift.js';
import { nodeDrift } from './iptables/drift/drift.js';
import type { ExpectedRules } from './kube-proxy/expected.js';
import type { Ruleset } from './iptables/read/parse.js';
import { ipvsDrift } from './ipvs/drift.js';
import { expectedIpvs, type IpvsExpectOptions } from './ipvs/expected/expected.js';
import type { Ipset } from './ipvs/read/ipset.js';
import type { IpsetTested } from './ipvs/read/by-address.js';
import type { IpvsTable } from './ipvs/read/listing.js';
import { buildIpvsTrees, type IpvsKnown } from './ipvs/trees.js';
import { traceIpvsPacket } from './ipvs/trace.js';
import { serviceCIDRs, type ClusterView, type KubeProxyConfig } from '../kube/objects.js';
import type { ServicePortName } from '../model.js';
import { nftablesDrift, unreadFor } from './nftables/drift.js';
import { unreadAt, type NftTable } from './nftables/read/listing.js';
import { traceNftPacket } from './nftables/trace.js';
import { buildNftServiceTrees } from './nftables/trees.js';
import type { CiliumAgent } from './cilium/agent/agent.js';
import { healthServerUnknown, knownMapFlags } from './cilium/agent/comparable.js';
import { ciliumDrift, type CiliumDriftInput } from './cilium/drift.js';
import { healthChecked, healthServerOf } from './cilium/expected/health-server.js';
import { expectedCilium, type CiliumNode } from './cilium/expected/expected.js';
import { frontendKey, type CiliumTable } from './cilium/read/listing.js';
import type { ListingParseError } from './listing-error.js';
import { listingArgv, type ListingCommand } from '../nodes/commands.js';
import { escapeControls } from '../sanitize.js';
import { traceCiliumPacket } from './cilium/trace.js';
import { sendersOf } from './cilium/trace-source.js';
import { refusal } from './cilium/agent/refused.js';
import { buildCiliumTrees, nodePortKey, type CiliumKnown } from './cilium/trees.js';
import { tracePacket } from './iptables/trace.js';
import type { NodeNetwork, TracePacket, TraceResult } from './trace/trace.js';
import type { ServiceTree, ServiceTrees } from './trees.js';
import { buildServiceTrees } from './iptables/trees.js';

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

interface Common {
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

/** How a mode whose state lives outside iptables is read and named (nftables, IPVS, Cilium). */
export interface StateTraits {
  /** "nftables", "IPVS", "Cilium". */
  word: string;
  /** The finding that says it was not read. */
  notObserved:
    'rules-nftables-not-observed' | 'rules-ipvs-not-observed' | 'rules-cilium-not-observed';
  /** What was not read: "its table ip kube-proxy". */
  what(family: IPFamily): string;
  /** The file stem a snapshot keeps it under. */
  stem(family: IPFamily): string;
  /** The command that lists it on the node (empty: it is read from an agent Pod, not the node). */
  command(family: IPFamily): string[];
  /** Who keeps it on the node: "kube-proxy on node-a runs in nftables mode". */
  who(node: string): string;
  /** What it sends a Service to: "endpoints", or a Cilium frontend's "backends". */
  sendsTo: string;
  /** One state per family (kube-proxy's tables), or one for both (Cilium's agent). */
  perFamily: boolean;
  /** A frontend's backends are its own (Cilium): no local-only trees to pick from. */
  ownBackends: boolean;
}

/** What each mode does, known before any node's state was read. */
interface ModeTraits {
  /** Undefined for iptables mode, whose rules are the iptables dump itself. */
  state?: StateTraits;
  /** Why a ping to a Service address behaves as it does. */
  ping(p: PingFacts): PingExplained;
  /** External traffic on a node with no local endpoint under externalTrafficPolicy Local: dropped,
   * or (IPVS, kubernetes#97081) sent to other nodes' endpoints without masquerading. */
  withoutLocalEndpoint: 'drop' | 'forward-unmasqueraded';
}

const MODES: Record<Dataplane['mode'], ModeTraits> = {
  iptables: { ping: iptablesPing, withoutLocalEndpoint: 'drop' },
  nftables: { ping: nftablesPing, withoutLocalEndpoint: 'drop', state: NFTABLES_STATE },
  ipvs: { ping: ipvsPing, withoutLocalEndpoint: 'forward-unmasqueraded', state: IPVS_STATE },
  cilium: { ping: ciliumPing, withoutLocalEndpoint: 'drop', state: CILIUM_STATE },
};

/** What a mode does, by the name a node's state gives it; undefined for a mode kdebug does not
 * model (userspace, kernelspace, or whatever a ConfigMap says). */
export const modeTraits = (mode: string | undefined): ModeTraits | undefined =>
  mode !== undefined && Object.hasOwn(MODES, mode) ? MODES[mode as Dataplane['mode']] : undefined;

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

export type Dataplane = IptablesDataplane | NftablesDataplane | IpvsDataplane | CiliumDataplane;

export function iptablesDataplane(
  ruleset: Ruleset,
  source: string,
  view: ClusterView,
): IptablesDataplane {
  return {
    mode: 'iptables',
    source,
    ruleset,
    // one Service's trees walk only its chains; the whole node's are named by every port known
    trees: (ports) =>
      buildServiceTrees(ruleset, ports.only ? { only: ports.only } : { servicePorts: ports.known }),
    drift: (node, expected, trees, scope) =>
      nodeDrift({
        node,
        source,
        expected: expected(),
        actual: ruleset,
        view,
        trees,
        servicePortsOnly: scope !== undefined,
      }),
    trace: (packet, net) => tracePacket(ruleset, net, packet),
    clusterIpLines: (q) => iptablesClusterIpLines(ruleset, source, q),
    hairpin: (q) => iptablesHairpin(ruleset, source, q),
    hairpinHow: IPTABLES_HAIRPIN,
    noLocalEndpointLines: (tree) => iptablesLocalDrops(ruleset, source, tree),
    notCompared: () => undefined,
    entryLines: (tree) => iptablesEntryLines(ruleset, source, tree),
    // any line skipped may have held any Service's rule; a cut is said apart (driftUnavailable)
    notReadFor: () =>
      ruleset
        .linesNotRead()
        .map((w) => `${source}${w.line === null ? '' : `:${w.line}`}: ${w.message}`),
  };
}

export function nftablesDataplane(
  table: NftTable,
  source: string,
  view: ClusterView,
): NftablesDataplane {
  let trees: ServiceTrees | undefined;
  return {
    mode: 'nftables',
    source,
    table,
    // the table's maps are read whole: building it costs less than choosing in it
    trees: () =>
      (trees ??= buildNftServiceTrees(table, {
        loadBalancerIPs: new Set(view.services.flatMap((s) => s.loadBalancerIPs)),
      })),
    drift: (node, expected, own, scope) =>
      nftablesDrift({
        node,
        source,
        expected: expected(),
        serviceCIDRs: watchedServiceCIDRs(expected().release, serviceCIDRs(view)),
        table,
        trees: own,
        scoped: scope !== undefined,
      }),
    trace: (packet, net) => traceNftPacket(table, net, packet),
    clusterIpLines: (q) => nftablesClusterIpLines(table, source, q),
    hairpin: (q) => nftablesHairpin(table, source, q),
    hairpinHow: NFTABLES_HAIRPIN,
    noLocalEndpointLines: (tree) => nftablesLocalDrops(source, tree),
    notCompared: () => undefined,
    entryLines: (tree) => nftablesEntryLines(source, tree),
    notReadFor: (ports) => unreadFor(table, ports).map((u) => unreadAt(source, u)),
  };
}

/** IPVS mode's state as the node listed it: virtual servers (of one family), kube-proxy's
 * ipsets and kube-ipvs0's addresses, each undefined where not read. */
export interface IpvsRead {
  table: IpvsTable;
  ipsets?: Map<string, Ipset>;
  /** Where the ipsets were read from ("nodes/NODE/ipset-save.txt"). */
  ipsetsSource?: string;
  /** Why the recorded ipsets could not be read (FILE:LINE first). */
  ipsetsError?: string;
  bound?: Set<string>;
  /** Options for the expected state: the scheduler, the node's own addresses. */
  expect: IpvsExpectOptions;
  /** One Service's state read by address (kdebug svc): the virtual servers read, there or not
   * ("tcp 10.96.0.30:80"), the ipset entries tested ("SET ENTRY") with their answers (undefined:
   * the sets read whole, or not at all), and the files of the reads its expected state needs
   * that are not in the facts. Anything else of the node was not read. Undefined: read whole. */
  byAddress?: {
    virtualServers: ReadonlySet<string>;
    entries?: ReadonlyMap<string, IpsetTested>;
    unread: string[];
  };
}

/** The node's KUBE-LOOP-BACK entries ("10.244.1.5,tcp:80,10.244.1.5"), where its ipsets were read. */
const loopBack = (read: IpvsRead) =>
  read.ipsets &&
  new Set([
    ...(read.ipsets.get('KUBE-LOOP-BACK')?.entries ?? []),
    ...(read.ipsets.get('KUBE-6-LOOP-BACK')?.entries ?? []),
  ]);

/** `known`: what the objects say each virtual server is ("tcp 10.96.0.10:53" -> its Service
 * port), from what kube-proxy would program. */
export function ipvsDataplane(
  read: IpvsRead,
  source: string,
  known: () => Map<string, IpvsKnown>,
  /** The configuration the node state settled on for this node. */
  config: () => KubeProxyConfig,
  /** The node's iptables rules of this family: kube-proxy's in IPVS mode (KUBE-POSTROUTING
   * masquerades the loop-back set). */
  iptables: () => IpvsHairpinState['nat'],
): IpvsDataplane {
  return {
    mode: 'ipvs',
    source,
    ...read,
    trees: (ports) => {
      const all = buildIpvsTrees(read.table, { known: known(), loopBack: loopBack(read) });
      if (!ports.only) return all;
      const only = new Set(ports.only.map((p) => `${p.name} ${p.protocol.toLowerCase()}`));
      return { ...all, services: all.services.filter((t) => only.has(`${t.name} ${t.protocol}`)) };
    },
    drift: (node, expectedRules, _trees, scope) => {
      const expected = expectedRules();
      const exp = expectedIpvs(expected, read.expect);
      return ipvsDrift({
        node,
        source,
        expected: exp,
        table: read.table,
        ...(read.ipsets ? { ipsets: read.ipsets, ipsetsSource: read.ipsetsSource } : {}),
        ...(read.ipsetsError ? { ipsetsError: read.ipsetsError } : {}),
        ...(read.bound ? { bound: read.bound } : {}),
        ...(iptables() ? { iptables: iptables()! } : {}),
        ...(read.byAddress ? { byAddress: read.byAddress } : {}),
        localEndpoints: new Set(
          expected.servicePorts.flatMap((sp) =>
            sp.allEndpoints.filter((e) => e.local).map((e) => e.address),
          ),
        ),
        scoped: scope !== undefined,
      });
    },
    trace: (packet, net) => {
      const { clusterCIDR, masqueradeAll } = config();
      return traceIpvsPacket(read, net, packet, { clusterCIDR, masqueradeAll });
    },
    clusterIpLines: (q) => ipvsClusterIpLines(read.table, source, q),
    hairpin: (q) => ipvsHairpin({ ...read, nat: iptables() }, q),
    hairpinHow: IPVS_HAIRPIN,
    noLocalEndpointLines: (tree) => ipvsExternalServers(source, tree),
    notCompared: (drift) => ipvsNotCompared(drift.tables, read.ipsetsError, read.byAddress?.unread),
    forwardingNotRead: (drift) => ipvsForwardingNotRead(drift.tables),
    entryLines: (tree) => listedEntryLines(source, tree, 'virtual server'),
    notReadFor: () => [], // read whole, or its reads by address not recorded said as not compared
  };
}

export interface CiliumDataplane extends Common {
  readonly mode: 'cilium';
  /** The agent's own table of frontends and backends. */
  readonly table: CiliumTable;
  /** Its BPF maps (`bpf lb list`), where read besides the table. */
  readonly maps?: CiliumTable;
}

/** What the Cilium dataplane takes from the node: its agent, its name and labels, the Service
 * ports its frontends serve, the cluster's Pod IPs (a packet from one is a Pod's). */
export interface CiliumRead {
  table: CiliumTable;
  maps?: CiliumTable;
  agent: CiliumAgent;
  node: CiliumNode;
}

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

/** Where the health server's frontends are not compared: why, and the Services in scope with a
 * health check node port. */
function healthServers(
  view: ClusterView,
  agent: CiliumAgent,
  scope: readonly { namespace: string; name: string }[] | undefined,
): Pick<CiliumDriftInput, 'healthServers'> {
  const why = healthServerUnknown(agent);
  if (!why) return {};
  const wanted = scope && new Set(scope.map((s) => `${s.namespace}/${s.name}`));
  const services = view.services
    .filter((s) => healthChecked(s) && (!wanted || wanted.has(`${s.namespace}/${s.name}`)))
    .map((s) => `${s.namespace}/${s.name}`);
  return { healthServers: { why, services } };
}

/** What of the agent was not compared, by what was read of it. */
const CILIUM_NOT_COMPARED: Record<CiliumCompared, string | undefined> = {
  table: "its BPF maps were not read, so kdebug compared the agent's table only",
  maps: "the agent's own table was not read, so kdebug compared its BPF maps only",
  both: undefined,
};

export function ciliumDataplane(read: CiliumRead, view: ClusterView): CiliumDataplane {
  const { table, agent } = read;
  // its table read, an agent said refused ran on an earlier configuration: read as usual
  const refused = refusal(agent, true);
  const expected = (only?: readonly { namespace: string; name: string }[]) =>
    expectedCilium(view, read.node, agent.settings, only);
  return {
    mode: 'cilium',
    source: table.source,
    table,
    ...(read.maps ? { maps: read.maps } : {}),
    trees: (ports) => {
      // one Service's trees need only its own frontends named: not the whole cluster's
      const services = ports.only?.map((p) => {
        const [namespace, name] = p.name.split(':')[0]!.split('/');
        return { namespace: namespace!, name: name! };
      });
      const known: CiliumKnown = new Map();
      // the health server's frontends serve no Service port
      for (const f of expected(services).filter((x) => !healthServerOf(x.service))) {
        const name = `${f.service}${f.portName ? `:${f.portName}` : ''}` as ServicePortName;
        known.set(frontendKey(f), name);
        if (f.type === 'NodePort') known.set(nodePortKey(f.port, f.protocol), name);
      }
      const all = buildCiliumTrees(table, known);
      if (!ports.only) return all;
      const only = new Set(ports.only.map((p) => `${p.name} ${p.protocol.toLowerCase()}`));
      return { ...all, services: all.services.filter((t) => only.has(`${t.name} ${t.protocol}`)) };
    },
    drift: (node, _kubeProxy, _trees, scope) =>
      ciliumDrift({
        node,
        expected: expected(scope),
        table,
        ...(read.maps ? { maps: read.maps } : {}),
        mapExpectations: {
          services: view.services,
          nodePortAddresses: agent.nodePorts?.addresses ?? [],
          options: agent.settings,
          known: knownMapFlags(agent),
        },
        scoped: scope !== undefined,
        agent: {
          namespace: agent.pod.namespace,
          pod: agent.pod.name,
          container: agent.container,
        },
        ...healthServers(view, agent, scope),
        ...(refused ? { refused } : {}),
      }),
    trace: (packet, net) => {
      const walked = traceCiliumPacket(table, net, packet, {
        ...agent.settings,
        ...(agent.nodePorts ? { nodePorts: agent.nodePorts } : {}),
        ...(read.maps ? { maps: read.maps } : {}),
        ...sendersOf(view, agent, read.node.name),
      });
      return refused ? { ...walked, notes: [...walked.notes, refused.why] } : walked;
    },
    // the agent's table holds no per-address line a ping meets: its walk says what happens
    clusterIpLines: () => [],
    hairpin: () => ({ kind: 'not-checked', why: "Cilium's agent, not kube-proxy, handles it" }),
    hairpinHow: '',
    noLocalEndpointLines: () => [],
    notCompared: (drift) => CILIUM_NOT_COMPARED[drift.cilium?.read ?? 'table'],
    entryLines: (tree) => listedEntryLines(table.source, tree, 'frontend'),
    notReadFor: () => [], // read whole, or refused, or its cut said apart
  };
}
