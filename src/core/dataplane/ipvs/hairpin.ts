// Hairpin in IPVS mode: kube-proxy puts "podIP,proto:port,podIP" of each of the node's endpoints
// in the KUBE-LOOP-BACK ipset, and KUBE-POSTROUTING masquerades what matches it.
import { canonicalAddress } from '../../ipv6.js';
import { onNode } from '../../findings/next-command.js';
import type { StateLine } from '../dataplane.js';
import type { IpvsRead } from './dataplane.js';
import { type Hairpin, type HairpinQuery } from '../hairpin.js';
import type { Ruleset } from '../iptables/read/parse.js';
import { loopBackEntry } from './expected/expected.js';
import { ipsetName } from './expected/ipsets.js';
import { entryKey } from './read/by-address.js';
import type { Ipset } from './read/ipset.js';

export const IPVS_HAIRPIN =
  "On its own node each endpoint is in kube-proxy's KUBE-LOOP-BACK ipset, which KUBE-POSTROUTING masquerades.";

const LOOP_BACK_RULE = /--match-set KUBE-(6-)?LOOP-BACK dst,dst,src -j MASQUERADE/;

/** What the IPVS hairpin rests on: kube-proxy's ipsets and the node's nat rules. */
export interface IpvsHairpinState {
  ipsets?: Map<string, Ipset>;
  ipsetsSource?: string;
  /** Read by address: the entries tested, with ipset's answers. */
  byAddress?: IpvsRead['byAddress'];
  nat?: { ruleset?: Ruleset; source: string };
}

export function ipvsHairpin(state: IpvsHairpinState, q: HairpinQuery): Hairpin {
  if (!state.ipsets) return { kind: 'not-checked', why: 'its ipsets were not read' };
  const family = q.ip.includes(':') ? 'IPv6' : 'IPv4';
  // the set itself, not the real servers: an endpoint IPVS lacks still needs its entry
  const set = ipsetName('KUBE-LOOP-BACK', family);
  const entry = loopBackEntry(canonicalAddress(q.ip), q.protocol.toLowerCase(), q.port);
  // read by address: only the entries tested are known, each by ipset's own answer
  const tested = state.byAddress?.entries?.get(entryKey(set, entry));
  if (state.byAddress?.entries && !tested)
    return { kind: 'not-checked', why: `its ${set} entry ${entry} was not tested` };
  const held = state.ipsets.get(set)?.entries.has(entry) === true;
  // the endpoint's family's nat table, where the dump holds it (ip6tables' matches KUBE-6-LOOP-BACK)
  const rs = state.nat?.ruleset;
  const nat = rs?.families().includes(family) ? rs.table('nat', family) : rs?.table('nat');
  const rule = nat
    ?.chain('KUBE-POSTROUTING')
    ?.ruleIds.map((id) => nat.text(id))
    .find((text) => LOOP_BACK_RULE.test(text));
  const source = state.ipsetsSource ?? 'ipset';
  const setLine: StateLine = tested
    ? { text: `${tested.source}: ${tested.words}`, source: tested.source }
    : { text: `${source}: ${set} ${held ? 'holds' : 'lacks'} ${entry}`, source };
  if (held && rule)
    return {
      kind: 'masqueraded',
      lines: [setLine, { text: `${state.nat!.source}: ${rule}`, source: state.nat!.source }],
    };
  return {
    kind: 'missing',
    title: `${q.node} does not masquerade it (IPVS mode)`,
    explanation: `When ${q.podName ?? 'the Pod'} (${q.ip}) connects to the Service and IPVS balances it to itself, source and destination are both ${q.ip}; kube-proxy lists such endpoints in the ${set} ipset (${entry}) and KUBE-POSTROUTING masquerades what matches it, and on ${q.node} ${rule ? `the set lacks that entry` : `the nat table has no such masquerade rule`}: the reply goes back inside the Pod from its own address and the connection hangs.`,
    lines: [
      setLine,
      ...(rule
        ? []
        : [
            {
              text: `${state.nat?.source ?? 'no nat table read'}: no KUBE-POSTROUTING rule matching ${set}`,
              source: state.nat?.source ?? '',
            },
          ]),
    ],
    next: onNode(q.node, ['ipset', 'list', set], { hostBinaries: true }),
    causes: ['ipset-entry-missing', 'endpoint-missing'],
  };
}
