// One Service's IPVS state, read by address where its answer does not need the node's whole
// listing (kdebug svc): each virtual server kube-proxy programs for it on the node (its cluster
// IPs, external IPs and load-balancer IPs, and every node address its node ports listen on), and
// a test of each ipset entry it adds. The bytes read grow with the Service, not with the
// cluster's Services. Pure: the cluster layer runs what this asks for.
import type { NodeCommand } from '../../../nodes/commands.js';
import type { ExpectedIpvs } from '../expected/expected.js';
import { ipsetTest, virtualServerRead } from './by-address.js';

/** Reads by address past this many (one exec on the node each): the whole listing instead. */
export const MOST_READS = 64;

export interface ServiceIpvsReads {
  virtualServers: Extract<NodeCommand, { kind: 'ipvs-service' }>[];
  tests: Extract<NodeCommand, { kind: 'ipset-test' }>[];
}

/** The reads of one Service's IPVS state on a node, from what kube-proxy programs there for it
 * (`exps`: each family's); or why its whole listing is read instead. */
export function serviceIpvsReads(exps: ExpectedIpvs[]): ServiceIpvsReads | { whole: string } {
  // node ports listen on every node address: where those were not read, which ones is not known
  if (exps.some((e) => !e.nodeIPsKnown && e.virtualServers.some((v) => v.kind === 'node-port')))
    return {
      whole:
        "the node's addresses were not read (ip -br addr), so which of them its node ports listen on is not known",
    };
  const virtualServers = exps.flatMap((e) => e.virtualServers.map(virtualServerRead));
  const tests = exps.flatMap((e) =>
    [...e.ipsets].flatMap(([set, entries]) => entries.map((entry) => ipsetTest(set, entry))),
  );
  const reads = virtualServers.length + tests.length;
  if (reads > MOST_READS)
    return {
      whole: `this Service needs ${reads} reads by address, more than the ${MOST_READS} kdebug makes on a node`,
    };
  return { virtualServers, tests };
}
