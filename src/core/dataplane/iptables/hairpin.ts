// Hairpin in iptables mode: kube-proxy writes "-s podIP/32 -j KUBE-MARK-MASQ" first in each
// endpoint's KUBE-SEP chain, so a Pod balanced to itself is masqueraded to the node's address.
import type { StateLine } from '../dataplane.js';
import { BRIDGE_NOTE, type Hairpin, type HairpinQuery } from '../hairpin.js';
import type { Ruleset, Table } from './read/parse.js';

export const IPTABLES_HAIRPIN =
  "Each endpoint's KUBE-SEP chain on its own node marks hairpin traffic for masquerade.";

export function iptablesHairpin(rs: Ruleset, source: string, q: HairpinQuery): Hairpin {
  const ep = q.endpoint;
  if (!ep) return { kind: 'not-checked', why: `no ${familyWord(q.ip)} endpoint chain for it` };
  // the endpoint's chain in its own family's nat table (a dual-stack dump holds both)
  const nat = rs.table('nat', familyWord(q.ip));
  if (ep.hairpinMasquerade === null) return { kind: 'not-checked', why: unknownWhy(nat, ep.chain) };
  if (ep.hairpinMasquerade)
    return {
      kind: 'masqueraded',
      lines: chainLines(nat, source, ep.chain, (id) => nat?.target(id) === 'KUBE-MARK-MASQ'),
    };
  return {
    kind: 'missing',
    title: `${ep.chain} on ${q.node} has no masquerade rule`,
    explanation: `When ${q.podName ?? 'the Pod'} (${q.ip}) connects to the Service and is balanced to itself, the DNAT makes source and destination both ${q.ip}. kube-proxy writes "-s ${q.ip}/32 -j KUBE-MARK-MASQ" first in the endpoint's KUBE-SEP chain so the packet is masqueraded to the node's address; ${ep.chain} on ${q.node} lacks it, so the reply goes back inside the Pod from its own address and the connection hangs. The other Pods are not affected. kube-proxy rewrites every rule when it restarts: delete its Pod on ${q.node}. ${BRIDGE_NOTE}`,
    lines: chainLines(nat, source, ep.chain),
    next: 'restart-kube-proxy',
    causes: [
      'masquerade-missing',
      'endpoint-missing',
      'service-rules-missing',
      'service-chain-missing',
    ],
  };
}

/** Why the rules read cannot say whether an endpoint chain masquerades a Pod sent to itself. */
function unknownWhy(nat: Table | undefined, chain: string): string {
  const c = nat ? nat.indexOf(chain) : -1;
  if (!nat || c < 0) return `its chain ${chain} is not in the rules read`;
  if (nat.chainLine(c) === undefined)
    return `the rules read hold part of ${chain}, not its declaration: its masquerade rule may be left out`;
  return `${chain}'s masquerade rule has a match kdebug does not read`;
}

const familyWord = (ip: string) => (ip.includes(':') ? 'IPv6' : 'IPv4');

/** The rules of a nat chain (those `keep` keeps), as evidence names a line: "FILE:LINE: TEXT". */
function chainLines(
  t: Table | undefined,
  source: string,
  chain: string,
  keep: (id: number) => boolean = () => true,
): StateLine[] {
  const c = t?.chain(chain);
  if (!t || !c) return [];
  const file = t.file ?? source;
  return c.ruleIds.filter(keep).map((id) => ({
    text: `${file}:${t.line(id)}: ${t.text(id)}`,
    source: file,
    line: t.line(id),
  }));
}
