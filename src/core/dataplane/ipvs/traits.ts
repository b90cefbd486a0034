// IPVS mode's state (virtual servers, ipsets, kube-ipvs0) as the Rules step names it and a
// person reads it.
import { commandStem, listingArgv } from '../../nodes/commands.js';
import type { StateTraits } from '../mode-traits.js';

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
  partReadNoMatch: false,
};

/** What of IPVS mode's state was not there to compare: its ipsets, its iptables tables, the reads
 * by address of one Service's state that were not recorded. */
export function ipvsNotCompared(
  tables: string[] | undefined,
  error: string | undefined,
  unread: string[] = [],
): string | undefined {
  const missing = (['nat', 'filter'] as const).filter((t) => !tables?.includes(t));
  const clauses = [
    ...(tables?.includes('ipset')
      ? []
      : [
          `kube-proxy's ipsets were not ${error ? `readable: ${error};` : 'read,'} so they were not compared`,
        ]),
    ...(missing.length > 0
      ? [
          `its iptables ${missing.length === 2 ? 'rules were' : `${missing[0]} table was`} not read, so ${missing.length === 2 ? 'they were' : 'it was'} not compared`,
        ]
      : []),
    ...(ipvsForwardingNotRead(tables)
      ? [
          `${KUBE_IPVS0_NOT_READ}, so whether it takes the Service's addresses for IPVS was not compared`,
        ]
      : []),
    ...(unread.length > 0 ? [notReadByAddress(unread)] : []),
  ];
  return clauses.length > 0 ? clauses.join('; ') : undefined;
}

const KUBE_IPVS0_NOT_READ = "kube-ipvs0's addresses not read (ip -br addr)";

/** kube-ipvs0's addresses not read: whether the node takes the Service's addresses for IPVS at
 * all is not known (drift's `tables` name kube-ipvs0 where they were compared). */
export const ipvsForwardingNotRead = (tables: string[] | undefined) =>
  tables?.includes('kube-ipvs0') ? undefined : KUBE_IPVS0_NOT_READ;

/** Reads by address of one Service's virtual servers or ipset entries that are not in the facts
 * (a snapshot cut, say): what they would have read is neither there nor missing. */
export function notReadByAddress(unread: string[]): string {
  const one = unread.length === 1;
  return `${one ? 'a read' : `${unread.length} reads`} by address of this Service's state ${one ? 'was' : 'were'} not recorded (${unread.slice(0, 3).join(', ')}${unread.length > 3 ? ', …' : ''}), so what ${one ? 'it' : 'they'} would read was not compared`;
}
