// kube-proxy's nftables table as the Rules step names it and a person reads it.
import { nftStems } from '../../facts/facts.js';
import { listingArgv } from '../../nodes/commands.js';
import type { StateLine } from '../dataplane.js';
import type { StateTraits } from '../mode-traits.js';
import type { ServiceTree } from '../trees.js';
import { noEndpointElement } from './trees.js';

const table = (family: 'IPv4' | 'IPv6') => (family === 'IPv6' ? 'ip6' : 'ip');

export const NFTABLES_STATE: StateTraits = {
  word: 'nftables',
  notObserved: 'rules-nftables-not-observed',
  what: (family) => `its table ${table(family)} kube-proxy`,
  stem: (family) => nftStems(family).json,
  command: (family) => listingArgv({ kind: 'nft-list', family: table(family) }),
  who: (node) => `kube-proxy on ${node} runs in nftables mode`,
  sendsTo: 'endpoints',
  perFamily: true,
  ownBackends: false,
};

/** A tree's map elements: how traffic enters it, and the element that rejects or drops a port
 * without endpoints (the only place such a port is). */
export const nftablesEntryLines = (source: string, tree: ServiceTree): StateLine[] => [
  ...tree.entries.map((e) => ({
    text: `${source}: ${e.from} ${e.address ? `${e.address} . ` : ''}${e.protocol} . ${e.port} : goto ${e.chain}`,
    source,
  })),
  ...tree.verdicts.map((v) => ({ text: `${source}: ${noEndpointElement(tree, v)}`, source })),
];
