// Hairpin in iptables mode: kube-proxy writes "-s podIP/32 -j KUBE-MARK-MASQ" first in each
// endpoint's KUBE-SEP chain, so a Pod balanced to itself is masqueraded to the node's address.
import type { StateLine } from '../dataplane.js';
import { BRIDGE_NOTE, type Hairpin, type HairpinQuery } from '../hairpin.js';
import type { Ruleset, Table } from './read/parse.js';
import { jumpsTo, markMasqSets, postroutingMasquerades } from './drift/node.js';

export const IPTABLES_HAIRPIN =
  "Each endpoint's KUBE-SEP chain on its own node marks hairpin traffic for masquerade.";

export function iptablesHairpin(rs: Ruleset, source: string, q: HairpinQuery): Hairpin {
  const ep = q.endpoint;
  if (!ep) return { kind: 'not-checked', why: `no ${familyWord(q.ip)} endpoint chain for it` };
  // the endpoint's chain in its own family's nat table (a dual-stack dump holds both)
  const nat = rs.table('nat', familyWord(q.ip));
  if (ep.hairpinMasquerade === null) return { kind: 'not-checked', why: unknownWhy(nat, ep.chain) };
  if (ep.hairpinMasquerade)
    return (
      nodePath(nat!, source, q) ?? {
        kind: 'masqueraded',
        lines: chainLines(nat, source, ep.chain, (id) => nat?.target(id) === 'KUBE-MARK-MASQ'),
      }
    );
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

/** What the node lacks around a marked endpoint chain: a Pod's connection enters through nat
 * PREROUTING, and the mark is only masqueraded by KUBE-POSTROUTING. Undefined where both hold. */
function nodePath(nat: Table, source: string, q: HairpinQuery): Hairpin | undefined {
  const who = `${q.podName ?? 'the Pod'} (${q.ip})`;
  if (!jumpsTo(nat, 'PREROUTING', 'KUBE-SERVICES'))
    return {
      kind: 'missing',
      title: `nat PREROUTING on ${q.node} does not jump to KUBE-SERVICES`,
      explanation: `A connection from ${who} enters ${q.node} through nat PREROUTING, which does not jump to KUBE-SERVICES: it is never DNATed to the Service's endpoints, so it never reaches its own endpoint chain and its masquerade rule. kube-proxy adds the jump on its next full sync: delete its Pod on ${q.node}.`,
      lines: chainLines(nat, source, 'PREROUTING'),
      next: 'restart-kube-proxy',
      causes: ['entry-jump-missing'],
    };
  const mark = markMasqSets(nat);
  if (
    mark !== 0 &&
    jumpsTo(nat, 'POSTROUTING', 'KUBE-POSTROUTING') &&
    postroutingMasquerades(nat, mark)
  )
    return undefined;
  return {
    kind: 'missing',
    title: `${q.node} does not masquerade the packets KUBE-MARK-MASQ marks`,
    explanation: `The endpoint chain marks the connection of ${who} to itself for masquerade, but on ${q.node} ${mark === 0 ? 'KUBE-MARK-MASQ sets no mark' : 'nat POSTROUTING (through KUBE-POSTROUTING) does not masquerade that mark'}: the reply goes back inside the Pod from its own address and the connection hangs. kube-proxy rewrites these rules on its next full sync: delete its Pod on ${q.node}. ${BRIDGE_NOTE}`,
    lines: [
      ...chainLines(nat, source, 'KUBE-MARK-MASQ'),
      ...chainLines(nat, source, 'KUBE-POSTROUTING'),
    ],
    next: 'restart-kube-proxy',
    causes: ['masquerade-missing'],
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
