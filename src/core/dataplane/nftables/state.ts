// kube-proxy's nftables table as the Rules step names it and a person reads it.
import { nftStems } from '../../facts.js';
import type { StateTraits } from '../dataplane.js';

const table = (family: 'IPv4' | 'IPv6') => (family === 'IPv6' ? 'ip6' : 'ip');

export const NFTABLES_STATE: StateTraits = {
  word: 'nftables',
  notObserved: 'rules-nftables-not-observed',
  what: (family) => `its table ${table(family)} kube-proxy`,
  stem: (family) => nftStems(family).json,
  command: (family) => ['nft', '-j', 'list', 'table', table(family), 'kube-proxy'],
  who: (node) => `kube-proxy on ${node} runs in nftables mode`,
  sendsTo: 'endpoints',
  perFamily: true,
  ownBackends: false,
};
