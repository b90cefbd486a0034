// The node state kube-proxy's IPVS mode leaves on node-a of the bench cluster (cluster-dump.ts),
// as kdebug reads it: `ipvsadm-save -n`, `ipset list -o save`, kube-ipvs0's addresses and the
// iptables rules of IPVS mode, rendered by src/core/dataplane/ipvs/expected/expected.ts (proven
// equal to what kube-proxy 1.30-1.37 programs by test/fixtures/releases/*/ipvs).
import {
  expectedIpvs,
  ipsetSaveLines,
  ipvsadmSaveLines,
  ipvsIptablesSave,
} from '../../src/core/dataplane/ipvs/expected/expected.js';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import type { Release } from '../../src/core/dataplane/kube-proxy/releases.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { clusterObjects, NODE, type DumpShape } from './cluster-dump.js';

/** node-a's addresses outside kube-ipvs0 (`ip -br addr`): where its node ports listen. */
export const NODE_ADDRESSES = ['192.0.2.10'];

export interface IpvsState {
  ipvsadm: string;
  ipsets: string;
  /** The addresses on kube-ipvs0. */
  bound: string[];
  iptables: string;
}

/** What kube-proxy `release` programs on node-a in IPVS mode. */
export function ipvsState(shape: DumpShape, release: Release): IpvsState {
  const exp = expectedRules(clusterView(clusterObjects(shape)), NODE, { release });
  const e = expectedIpvs(exp, { nodeAddresses: NODE_ADDRESSES });
  return {
    ipvsadm: `${ipvsadmSaveLines(e).join('\n')}\n`,
    ipsets: `${ipsetSaveLines(e).join('\n')}\n`,
    bound: e.bound,
    iptables: `${ipvsIptablesSave(e).join('\n')}\n`,
  };
}
