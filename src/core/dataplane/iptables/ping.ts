// A ping to a ClusterIP in iptables mode: no interface owns the address, the nat rules match
// only the Service's protocol and ports, so an ICMP echo matches nothing and nobody answers it.
import type { ClusterIpQuery, StateLine } from '../dataplane.js';
import { target, type PingExplained, type PingFacts } from '../ping.js';
import type { Ruleset } from './read/parse.js';
import type { EntryPoint, ServiceTree } from '../trees.js';

export function iptablesPing(p: PingFacts): PingExplained {
  const { ip, protocol: proto, curl, answered } = p;
  return {
    title: answered
      ? p.title('unusual in iptables mode')
      : p.title(
          p.pinged ? 'normal in iptables mode' : `no answer in iptables mode, ${curl} is the test`,
        ),
    text: `In iptables mode no interface owns a ClusterIP: ${ip} exists only as a match in kube-proxy's nat rules, and those rules match only its protocol and port (${p.ports.map((x) => `${x.protocol.toLowerCase()} port ${x.port}`).join(', ')}). ${
      p.connection === 'forwarded'
        ? `A ${proto} packet to ${target(p)} is DNATed to a Pod by the node it is sent from.`
        : p.connection === 'rejected'
          ? `A ${proto} packet to ${target(p)} is rejected right now, by the REJECT rule kube-proxy writes for a Service without ready endpoints; once it has some, it is DNATed to one of them by the node it is sent from.`
          : // the rules were not read: what kube-proxy writes, not what the node holds
            `kube-proxy DNATs a ${proto} packet to ${target(p)} to a Pod on the node it is sent from (or rejects it while the Service has no ready endpoints).`
    } An ICMP echo matches no rule at all, leaves the node unchanged towards the default route, and nobody answers it${answered ? ' (the answer recorded here came from something else on the path that owns the address, which is unusual)' : ''}. So a failing ping says nothing about the Service: test it with ${curl}.`,
  };
}

/** The nat rules that take the ClusterIP in: its Service port's entry rules for that address. */
export function iptablesClusterIpLines(
  rs: Ruleset,
  source: string,
  q: ClusterIpQuery,
): StateLine[] {
  return iptablesEntryLines(rs, source, q.tree, (e) => e.address === q.ip);
}

/** A tree's entry rules as the nat table holds them: "FILE:LINE: RULE". */
export function iptablesEntryLines(
  rs: Ruleset,
  source: string,
  tree: ServiceTree | undefined,
  which: (e: EntryPoint) => boolean = () => true,
): StateLine[] {
  // the tree's own family's nat table, where the dump holds both
  const nat = rs.table('nat', tree?.family);
  if (!nat) return [];
  const file = nat.file ?? source;
  return (tree?.entries ?? []).flatMap((e) => {
    const id = which(e) ? nat.ruleAtLine(e.line) : -1;
    return id >= 0
      ? [{ text: `${file}:${e.line}: ${nat.text(id)}`, source: file, line: e.line }]
      : [];
  });
}

/** The filter (or old nat) rules that reject or drop a tree's traffic (its port without
 * endpoints), each as its table holds it; a rule not read is left out. */
export const iptablesVerdictLines = (rs: Ruleset, source: string, tree: ServiceTree): StateLine[] =>
  tree.verdicts.flatMap((v) => {
    const t = rs.table(v.table);
    const id = t ? t.ruleAtLine(v.line) : -1;
    const file = t?.file ?? source;
    return t && id >= 0
      ? [{ text: `${file}:${v.line}: ${t.text(id)}`, source: file, line: v.line }]
      : [];
  });
