// IPVS mode's Dataplane: the virtual servers of one family, kube-proxy's ipsets, kube-ipvs0's
// addresses and the iptables rules kube-proxy writes beside them, each where it was read.
import type { IpvsDataplane } from '../dataplane.js';
import { listedEntryLines } from '../listed-entries.js';
import { ipvsForwardingNotRead, ipvsNotCompared } from './traits.js';
import { ipvsExternalServers } from './local-policy.js';
import { IPVS_HAIRPIN, ipvsHairpin, type IpvsHairpinState } from './hairpin.js';
import { ipvsClusterIpLines } from './ping.js';
import { ipvsDrift } from './drift/drift.js';
import type { ServiceListScope } from '../../facts/service-list-scope.js';
import { expectedIpvs, type IpvsExpectOptions } from './expected/expected.js';
import type { Ipset } from './read/ipset.js';
import type { IpsetTested } from './read/by-address.js';
import type { IpvsTable } from './read/listing.js';
import { buildIpvsTrees, type IpvsKnown } from './trees.js';
import { ipvsRejectedBy, traceIpvsPacket } from './trace/trace.js';
import { ipvsReadStop } from './trace/cut.js';
import type { KubeProxyConfig } from '../../kube/objects.js';

// what the node analysis reads of the mode besides, loaded with it (../modes.ts)
export { listingAt, stateByAddress, virtualServerListed } from './read/by-address.js';
export { parseIpsets } from './read/ipset.js';
export { IpvsParseError, parseIpvs } from './read/listing.js';
export { expectedIpvs } from './expected/expected.js';

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
  listed: ServiceListScope = { kind: 'none' },
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
        listed,
      });
    },
    trace: (packet, net) => {
      const { clusterCIDR, masqueradeAll } = config();
      return traceIpvsPacket(read, net, packet, { clusterCIDR, masqueradeAll });
    },
    readStop: (walked, file) => ipvsReadStop(read.table, file, walked),
    rejectedBy: ipvsRejectedBy,
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
