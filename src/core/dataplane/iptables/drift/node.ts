// Drift that belongs to the node rather than to one Service port: the jumps into kube-proxy's
// chains, the masquerade machinery (KUBE-MARK-MASQ, KUBE-POSTROUTING), the node-ports rule, and
// chains no current Service accounts for.
import { chainLines, restartKubeProxy, type DriftContext } from './context.js';
import { hexMark } from '../rule-text.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import type { Table } from '../read/parse.js';
import type { OrphanChain } from '../../trees.js';
import { ruleMatches } from '../trace/match.js';
import type { PacketState } from '../../trace/packet.js';

export const jumpsTo = (t: Table | undefined, chain: string, target: string) =>
  t?.chain(chain)?.ruleIds.some((id) => t.target(id) === target) ?? false;

const fixed = (c: DriftContext, table: 'nat' | 'filter', chain: string) =>
  c.exp.fixed[table].filter((l) => l.chain === chain).map((l) => `-t ${table} ${l.text}`);

export function nodeLevelChecks(c: DriftContext): void {
  const { nat, filter } = c;
  for (const [chain, from] of [
    ['PREROUTING', 'Pods and clients outside the node'],
    ['OUTPUT', 'processes on the node'],
  ] as const) {
    if (jumpsTo(nat, chain, 'KUBE-SERVICES')) continue;
    c.add({
      id: 'entry-jump-missing',
      title: `nat ${chain} does not jump to KUBE-SERVICES`,
      message: `node ${c.node}'s nat ${chain} chain does not jump to KUBE-SERVICES: no Service is reachable by ${from} on this node, whatever the Service rules say.`,
      expected: fixed(c, 'nat', chain),
      actual: chainLines(nat, chain),
      ...restartKubeProxy(
        c,
        'kube-proxy adds this jump on its next full sync (something removed it: a firewall reload, or iptables -F).',
      ),
    });
  }
  masquerading(c);
  const nodePorts = c.exp.servicePorts.some((sp) => sp.nodePort !== undefined && sp.hasEndpoints);
  if (nodePorts && !jumpsTo(nat, 'KUBE-SERVICES', 'KUBE-NODEPORTS'))
    c.add({
      id: 'nodeport-missing',
      title: 'KUBE-SERVICES does not jump to KUBE-NODEPORTS',
      message: `node ${c.node}'s KUBE-SERVICES lacks its last rule, the jump to KUBE-NODEPORTS: no node port of any Service works on this node.`,
      expected: fixed(c, 'nat', 'KUBE-SERVICES'),
      actual: [],
      ...restartKubeProxy(c, ''),
    });
  // which filter chains hold kube-proxy's REJECT / DROP rules, from the model (not the text)
  const holds: Record<string, (sp: ExpectedServicePort) => boolean> = {
    'KUBE-SERVICES': (sp) => !sp.hasInternalEndpoints,
    'KUBE-EXTERNAL-SERVICES': (sp) => sp.externallyAccessible && !sp.hasExternalEndpoints,
    'KUBE-PROXY-FIREWALL': (sp) => sp.chains.fw !== undefined,
  };
  const want = (chain: string) => c.exp.servicePorts.some(holds[chain]!);
  for (const [chain, from, id] of [
    ['KUBE-SERVICES', ['FORWARD', 'OUTPUT'], 'no-endpoints-reject-missing'],
    ['KUBE-EXTERNAL-SERVICES', ['INPUT', 'FORWARD'], 'no-endpoints-reject-missing'],
    ['KUBE-PROXY-FIREWALL', ['INPUT', 'FORWARD', 'OUTPUT'], 'firewall-missing'],
  ] as const) {
    if (!want(chain)) continue;
    const missing = from.filter((b) => !jumpsTo(filter, b, chain));
    if (missing.length === 0) continue;
    c.add({
      id,
      title: `filter ${missing.join(' and ')} ${missing.length === 1 ? 'does' : 'do'} not jump to ${chain}`,
      message: `node ${c.node}'s filter ${missing.join(' and ')} ${missing.length === 1 ? 'chain does' : 'chains do'} not jump to ${chain}, so the ${chain === 'KUBE-PROXY-FIREWALL' ? 'loadBalancerSourceRanges drops' : 'REJECT and DROP rules for Services without (local) endpoints'} in it never apply to that traffic.`,
      expected: missing.flatMap((b) =>
        fixed(c, 'filter', b).filter((l) => l.endsWith(`-j ${chain}`)),
      ),
      actual: missing.flatMap((b) => chainLines(filter, b)),
      ...restartKubeProxy(c, 'kube-proxy adds these jumps on its next full sync.'),
    });
  }
}

/** The mark KUBE-MARK-MASQ's rules set on a packet, as read. */
export function markMasqSets(nat: Table): number {
  let set = 0;
  for (const r of nat.chain('KUBE-MARK-MASQ')?.rules ?? [])
    if (r.target?.kind === 'mark') set = ((set & ~r.target.mask) ^ r.target.value) >>> 0;
  return set;
}

/** KUBE-MARK-MASQ must set the mark, KUBE-POSTROUTING must masquerade what carries it. */
function masquerading(c: DriftContext): void {
  const { nat } = c;
  const mark = c.exp.masqueradeMark;
  const problems: string[] = [];
  if (!jumpsTo(nat, 'POSTROUTING', 'KUBE-POSTROUTING'))
    problems.push('nat POSTROUTING does not jump to KUBE-POSTROUTING');
  const set = markMasqSets(nat);
  if ((set & mark) !== mark) problems.push(`KUBE-MARK-MASQ does not set the mark ${hexMark(mark)}`);
  if (!postroutingMasquerades(nat, mark))
    problems.push(`KUBE-POSTROUTING does not masquerade packets marked ${hexMark(mark)}`);
  else if (postroutingMasquerades(nat, 0))
    problems.push('KUBE-POSTROUTING masquerades unmarked packets too');
  if (problems.length === 0) return;
  c.add({
    id: 'masquerade-missing',
    title: problems[0]!,
    message: `node ${c.node}: ${problems.join('; ')}. Service traffic that needs SNAT (from the node itself, hairpin, node ports) is ${problems.some((p) => p.includes('unmarked')) ? 'not the only traffic masqueraded' : 'not masqueraded'}, and replies can take another path than the requests.`,
    expected: [
      ...fixed(c, 'nat', 'POSTROUTING'),
      ...fixed(c, 'nat', 'KUBE-MARK-MASQ'),
      ...fixed(c, 'nat', 'KUBE-POSTROUTING'),
    ],
    actual: [
      ...chainLines(nat, 'POSTROUTING').filter((l) => l.includes('KUBE-POSTROUTING')),
      ...chainLines(nat, 'KUBE-MARK-MASQ'),
      ...chainLines(nat, 'KUBE-POSTROUTING'),
    ],
    ...restartKubeProxy(c, 'If it persists, compare masqueradeBit in its flags and ConfigMap.'),
  });
}

/** Walks KUBE-POSTROUTING for a packet carrying `mark`: is it masqueraded? */
export function postroutingMasquerades(nat: Table, mark: number): boolean {
  const pkt: PacketState = {
    src: 0,
    dst: 0,
    sport: 40000,
    dport: 80,
    protocol: 'tcp',
    mark,
    dnat: true,
    snat: false,
  };
  for (const r of nat.chain('KUBE-POSTROUTING')?.rules ?? []) {
    if (ruleMatches(r, pkt, { isLocal: () => false, assume: () => undefined }) < 1) continue;
    const t = r.target;
    if (!t) continue;
    if (t.kind === 'masquerade' || t.kind === 'snat') return true;
    if (t.kind === 'mark') pkt.mark = ((pkt.mark & ~t.mask) ^ t.value) >>> 0;
    else if (t.kind === 'verdict') return false;
  }
  return false;
}

const SERVICE_COMMENT =
  /^(.*?)(?: -> \S+| cluster IP| external IP| loadbalancer IP| has no endpoints| has no local endpoints)?$/;

/** Service and endpoint chains nothing jumps to and no current Service port would create. */
export function orphanChains(c: DriftContext, orphans: OrphanChain[]): void {
  if (orphans.length === 0) return;
  const current = new Set<string>();
  const byHash = new Map<string, string>();
  for (const sp of c.exp.servicePorts) {
    for (const ch of Object.values(sp.chains)) if (ch) current.add(ch);
    for (const e of sp.reachableEndpoints) current.add(e.chain);
    byHash.set(sp.hash, sp.name);
  }
  const left = orphans.filter((o) => !current.has(o.chain));
  const seps = new Set(left.filter((o) => o.chain.startsWith('KUBE-SEP-')).map((o) => o.chain));
  const groups: string[][] = [];
  for (const o of left) {
    if (o.chain.startsWith('KUBE-SEP-')) continue;
    const group = [o.chain];
    for (const r of c.nat.chain(o.chain)?.rules ?? []) {
      const to = r.target?.name;
      if (to && seps.delete(to)) group.push(to);
    }
    groups.push(group);
  }
  // endpoint chains left alone are grouped by the Service port their comments name
  const byName = new Map<string, string[]>();
  for (const sep of seps) {
    const name = commentName(c, [sep]) ?? sep;
    byName.set(name, [...(byName.get(name) ?? []), sep]);
  }
  groups.push(...byName.values());
  for (const group of groups) {
    const hash = /^KUBE-(?:SVC|SVL|EXT|FW|XLB)-([A-Z0-9]{16})$/.exec(group[0]!)?.[1];
    const currentPort = hash ? byHash.get(hash) : undefined;
    const name = currentPort ?? commentName(c, group);
    const targets = group.flatMap((ch) =>
      (c.nat.chain(ch)?.rules ?? []).flatMap((r) =>
        r.target?.kind === 'dnat' && r.target.to ? [r.target.to.text] : [],
      ),
    );
    const seps = group.filter((g) => g.startsWith('KUBE-SEP-')).length;
    const what = [
      ...group.filter((g) => !g.startsWith('KUBE-SEP-')),
      ...(seps
        ? [
            `${seps} KUBE-SEP chain${seps > 1 ? 's' : ''}${targets.length ? ` (DNAT to ${targets.join(', ')})` : ''}`,
          ]
        : []),
    ].join(' and ');
    c.add({
      id: 'orphan-chain',
      ...(name ? { service: name } : {}),
      title: `leftover chains ${group.length > 1 ? `${group[0]} (+${group.length - 1})` : group[0]}`,
      message: currentPort
        ? `node ${c.node} has ${what} of ${currentPort}, which kube-proxy no longer writes and nothing jumps to (left by an older kube-proxy or a failed cleanup). They route no traffic.`
        : `node ${c.node} has leftover chains of ${name ? name : 'a Service port kdebug cannot name'}: ${what}. No current Service accounts for them and nothing jumps to them, so they route no traffic, but kube-proxy deletes such chains when it syncs: they stay when its cleanup fails (iptables-save errors during a sync) or when another proxy wrote them.`,
      expected: [],
      actual: group.flatMap((ch) => chainLines(c.nat, ch)),
      ...restartKubeProxy(
        c,
        `They go away on kube-proxy's next successful full sync; by hand, iptables -t nat -F then -X each of ${group.join(', ')}.`,
      ),
    });
  }
}

/** The Service port name the comments of these chains give, if any. */
function commentName(c: DriftContext, chains: string[]): string | undefined {
  for (const ch of chains)
    for (const r of c.nat.chain(ch)?.rules ?? [])
      for (const m of r.matches)
        if (m.kind === 'comment' && /^[^ ]+\/[^ ]+/.test(m.comment)) {
          const name = SERVICE_COMMENT.exec(m.comment)?.[1];
          if (name && !name.includes(' ')) return name;
        }
  return undefined;
}
