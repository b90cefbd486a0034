// Cilium's Dataplane: the agent's own table of frontends and backends (and its BPF maps where
// read), compared with what Cilium makes of the objects rather than with kube-proxy's rules.
import type { CiliumDataplane, Dataplane } from '../dataplane.js';
import { listedEntryLines } from '../listed-entries.js';
import type { CiliumCompared } from '../drift.js';
import type { ClusterView } from '../../kube/objects.js';
import type { ServiceListScope } from '../../facts/service-list-scope.js';
import { serviceRefOf, type ServicePortName } from '../../model.js';
import { partialText, type CiliumAgent, type PartialReplacement } from './agent/agent.js';
import { agentFirst, besideKubeProxy } from './beside-kube-proxy.js';
import { healthServerUnknown, knownMapFlags } from './agent/comparable.js';
import { ciliumDrift, type CiliumDriftInput } from './drift.js';
import { unreadFor } from './drift/cut.js';
import { healthChecked, healthServerOf } from './expected/health-server.js';
import { expectedCilium, type CiliumNode } from './expected/expected.js';
import { frontendKey, type CiliumTable } from './read/listing.js';
import { traceCiliumPacket } from './trace.js';
import { rejectRuleOn } from '../trace/trace.js';
import { originOf, sendersOf } from './trace-source.js';
import { refusal } from './agent/refused.js';
import { leftToKubeProxy } from './drift/left-to-kube-proxy.js';
import { settingsStated } from './agent/provenance.js';
import { buildCiliumTrees, nodePortKey, type CiliumKnown } from './trees.js';

// what the node analysis reads of the mode besides, loaded with it (../modes.ts)
export { listedAgent } from './agent/listed.js';
export { CiliumParseError } from './read/listing.js';
export { parseCilium, withBackendStates } from './read/read.js';
export { expectedCilium } from './expected/expected.js';
export { expectedMaps } from './maps/expected.js';
export { ciliumLineSet } from './drift.js';

/** What the Cilium dataplane takes from the node: its agent, its name and labels, the Service
 * ports its frontends serve, the cluster's Pod IPs (a packet from one is a Pod's). */
export interface CiliumRead {
  table: CiliumTable;
  maps?: CiliumTable;
  agent: CiliumAgent;
  node: CiliumNode;
}

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

/** `agentOf`: another node's agent as that node's state has it (its own status first), for a
 * packet its host sends; `kubeProxyBeside`: kube-proxy runs there too (beside-kube-proxy.ts), so
 * nothing the agent leaves is said unserved. */
export function ciliumDataplane(
  read: CiliumRead,
  view: ClusterView,
  agentOf?: (node: string) => CiliumAgent | undefined,
  listed: ServiceListScope = { kind: 'none' },
  kubeProxyBeside = false,
): CiliumDataplane {
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
      const services = ports.only?.map((p) => serviceRefOf(p.name));
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
    drift: (node, _kubeProxy, trees, scope) => {
      const d = ciliumDrift({
        node,
        expected: expected(scope),
        table,
        ...(read.maps ? { maps: read.maps } : {}),
        mapExpectations: {
          services: view.services,
          nodePortAddresses: agent.nodePorts?.addresses ?? [],
          // the node's own addresses: its devices' as the agent listed them, the Node's
          nodeAddresses: [
            ...(agent.nodePorts?.devices.flatMap((d) => d.addresses) ?? []),
            ...(view.nodes.find((n) => n.name === read.node.name)?.ips ?? []),
          ],
          options: agent.settings,
          known: knownMapFlags(agent),
          sources: { agent, of: agent.sources },
        },
        services: view.services.map((s) => `${s.namespace}/${s.name}`),
        listed,
        scoped: scope !== undefined,
        // no Pod of it in the API: the DaemonSet's log
        ...(agent.pod
          ? {
              agent: {
                namespace: agent.pod.namespace,
                pod: agent.pod.name,
                container: agent.container,
              },
            }
          : { podAbsent: true }),
        ...healthServers(view, agent, scope),
        ...(refused ? { refused } : {}),
        // beside kube-proxy, `trees` are its rules' (beside-kube-proxy.ts)
        ...(kubeProxyBeside && agent.replacement
          ? { kubeProxyBeside: { trees, replacement: partialText(agent.replacement) } }
          : {}),
      });
      // the kinds a partial replacement leaves to kube-proxy, where it does not run
      const left = kubeProxyBeside
        ? []
        : leftToKubeProxy(view, agent, { node, source: table.source }, scope);
      const all = left.length > 0 ? { ...d, findings: [...d.findings, ...left], drifted: true } : d;
      // the settings it took, with their sources, for drift's JSON
      return all.cilium
        ? { ...all, cilium: { ...all.cilium, settings: settingsStated(agent) } }
        : all;
    },
    trace: (packet, net) => {
      const walked = traceCiliumPacket(table, net, packet, {
        ...agent.settings,
        ...(agent.nodePorts ? { nodePorts: agent.nodePorts } : {}),
        ...(read.maps ? { maps: read.maps } : {}),
        ...sendersOf(view, agent, read.node.name, agentOf),
        sources: { agent, of: agent.sources },
      });
      return refused ? { ...walked, notes: [...walked.notes, refused.why] } : walked;
    },
    // a rejection said in kube-proxy's words here too: the agent's own are not modelled yet
    rejectedBy: (_walked, node) => rejectRuleOn(node),
    // the agent's table holds no per-address line a ping meets: its walk says what happens
    clusterIpLines: () => [],
    hairpin: () => ({ kind: 'not-checked', why: "Cilium's agent, not kube-proxy, handles it" }),
    hairpinHow: '',
    noLocalEndpointLines: () => [],
    notCompared: (drift) => CILIUM_NOT_COMPARED[drift.cilium?.read ?? 'table'],
    entryLines: (tree) => listedEntryLines(table.source, tree, 'frontend'),
    // what of these Service ports the table read in part leaves out: their frontends not in a
    // table cut short, their backends not all shown
    notReadFor: (ports) => {
      return unreadFor(table, expected([...ports].map(serviceRefOf)), ports);
    },
  };
}

/** kube-proxy's `dataplane` on a node whose agent, read, serves `replacement`'s kinds ahead of it
 * (beside-kube-proxy.ts): both compared, a packet walked through whichever takes it. */
export function ciliumBesideKubeProxy(
  dataplane: Dataplane,
  read: CiliumRead,
  replacement: PartialReplacement,
  view: ClusterView,
  agentOf?: (node: string) => CiliumAgent | undefined,
  listed: ServiceListScope = { kind: 'none' },
): Dataplane {
  const agent = ciliumDataplane(read, view, agentOf, listed, true);
  const senders = sendersOf(view, read.agent, read.node.name, agentOf);
  return besideKubeProxy(
    dataplane,
    agent,
    replacement,
    (packet, net) => originOf(packet, net.localAddresses, senders).from === 'network',
  );
}

/** The agent's dataplane on a node where it replaces kube-proxy (fully, or in part with no
 * kube-proxy Pod there) and kube-proxy's state is there too (cilium-kube-proxy-rules says it): the agent's table is compared alone, and
 * a packet it passes untranslated (no frontend for it) is walked on through kube-proxy's. */
export function ciliumBeforeKubeProxy(
  agent: CiliumDataplane,
  kubeProxy: Dataplane,
  read: CiliumRead,
  view: ClusterView,
  agentOf?: (node: string) => CiliumAgent | undefined,
): CiliumDataplane {
  const senders = sendersOf(view, read.agent, read.node.name, agentOf);
  const partial = read.agent.replacement;
  return {
    ...agent,
    ...agentFirst(kubeProxy, agent, {
      text: partial ? partialText(partial) : 'full kube-proxy replacement',
      // a full replacement turns NodePort on: the agent load-balances at the devices
      atDevice: partial ? (partial.handles?.includes('NodePort') ?? false) : true,
      fromOutside: (packet, net) =>
        originOf(packet, net.localAddresses, senders).from === 'network',
    }),
  };
}
