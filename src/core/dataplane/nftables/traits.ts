// kube-proxy's nftables table as the Rules step names it.
import { nftStems } from '../../facts/facts.js';
import { listingArgv } from '../../nodes/commands.js';
import type { StateTraits } from '../mode-traits.js';

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
  partReadNoMatch: false,
};
