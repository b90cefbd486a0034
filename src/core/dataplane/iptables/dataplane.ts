// iptables mode's Dataplane: the node's iptables dump is kube-proxy's whole state.
import type { IptablesDataplane } from '../dataplane.js';
import { iptablesLocalDrops } from './local-policy.js';
import { IPTABLES_HAIRPIN, iptablesHairpin } from './hairpin.js';
import { iptablesClusterIpLines, iptablesEntryLines, iptablesVerdictLines } from './ping.js';
import { nodeDrift } from './drift/drift.js';
import type { Ruleset } from './read/parse.js';
import type { ClusterView } from '../../kube/objects.js';
import type { ServiceListScope } from '../../facts/service-list-scope.js';
import { tracePacket } from './trace/trace.js';
import { rejectRuleOn } from '../trace/trace.js';
import { readStop } from './trace/trace-cut.js';
import { buildServiceTrees } from './trees.js';

export function iptablesDataplane(
  ruleset: Ruleset,
  source: string,
  view: ClusterView,
  listed: ServiceListScope = { kind: 'none' },
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
        servicesRead: { scope: listed, services: view.services },
        trees,
        servicePortsOnly: scope !== undefined,
      }),
    trace: (packet, net) => tracePacket(ruleset, net, packet),
    readStop: (walked, file) => readStop(ruleset, file, walked.outcomes),
    rejectedBy: (_walked, node) => rejectRuleOn(node),
    clusterIpLines: (q) => iptablesClusterIpLines(ruleset, source, q),
    hairpin: (q) => iptablesHairpin(ruleset, source, q),
    hairpinHow: IPTABLES_HAIRPIN,
    noLocalEndpointLines: (tree) => iptablesLocalDrops(ruleset, source, tree),
    notCompared: () => undefined,
    // a port without endpoints is rejected by a filter rule, not by its entry
    entryLines: (tree) => [
      ...iptablesEntryLines(ruleset, source, tree),
      ...iptablesVerdictLines(ruleset, source, tree),
    ],
    // any line skipped may have held any Service's rule; a cut is said apart (driftUnavailable)
    notReadFor: () =>
      ruleset
        .linesNotRead()
        .map((w) => `${source}${w.line === null ? '' : `:${w.line}`}: ${w.message}`),
  };
}
