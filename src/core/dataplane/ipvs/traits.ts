// IPVS mode's state (virtual servers, ipsets, kube-ipvs0) as the Rules step names it and a
// person reads it.
import { commandStem, listingArgv } from '../../nodes/commands.js';
import type { StateTraits } from '../dataplane.js';

export const IPVS_STATE: StateTraits = {
  word: 'IPVS',
  notObserved: 'rules-ipvs-not-observed',
  what: () => 'its virtual servers',
  stem: () => commandStem({ kind: 'ipvs-save' }),
  command: () => listingArgv({ kind: 'ipvs-save' }),
  who: (node) => `kube-proxy on ${node} runs in IPVS mode`,
  sendsTo: 'endpoints',
  perFamily: true,
  ownBackends: false,
};

/** What of IPVS mode's state was not there to compare. */
export const ipvsNotCompared = (tables: string[] | undefined, error: string | undefined) =>
  tables?.includes('ipset')
    ? undefined
    : `kube-proxy's ipsets were not ${error ? `readable: ${error};` : 'read,'} so they were not compared`;
