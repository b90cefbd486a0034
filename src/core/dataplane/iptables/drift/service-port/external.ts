// The semantic checks of a Service port's external traffic (node ports, external IPs,
// load-balancer IPs): entry rules, where externalTrafficPolicy sends it, masquerading, the
// REJECT / DROP rules when there is no (local) endpoint, and loadBalancerSourceRanges.
import { percent } from '../../../../model.js';
import { hostCidr } from '../../../../ipv6.js';
import {
  chainLines,
  filterLines,
  nat,
  syncNext,
  verdictLines,
  vip,
  type DriftContext,
} from '../context.js';
import { noVerdict } from './service.js';
import { compareEndpoints, isOnNode, stale } from './endpoints.js';
import { podOf } from '../../../kube-proxy/endpoints.js';
import type { ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import type { Rule } from '../../read/parse.js';
import { externalOrLb, type EntryPoint, type ServiceTree } from '../../../trees.js';
import { entriesElsewhere } from '../../../stale-entries.js';
import { elsewhere, entryRules } from './stale-port.js';

const unconditional = (r: Rule) =>
  !r.source && !r.inInterface && r.matches.every((m) => m.kind === 'comment');

/** Where a Service port's external traffic ends up: its local or cluster endpoints, or nowhere. */
function externalTarget(
  c: DriftContext,
  t: ServiceTree,
  entry: EntryPoint,
): 'local' | 'cluster' | 'none' {
  const nat = c.nat;
  const seen = new Set<string>();
  let chain: string | undefined = entry.chain;
  while (chain && !seen.has(chain)) {
    seen.add(chain);
    if (/^KUBE-(SVL|XLB)-/.test(chain)) return 'local';
    if (chain.startsWith('KUBE-SVC-')) return 'cluster';
    // KUBE-FW: the jump allowed sources take; elsewhere the last unconditional jump (KUBE-EXT
    // sends Pod and local traffic elsewhere first). Hot fields find it; one typed rule checks it.
    const fw = chain.startsWith('KUBE-FW-');
    const index = nat.indexOf(chain);
    let next: string | undefined;
    for (let k = index < 0 ? -1 : nat.ruleCountOf(index) - 1; k >= 0 && !next; k--) {
      const id = nat.ruleIdOf(index, k);
      const to = nat.targetIndex(id);
      const kind = to >= 0 ? nat.kindOf(to) : undefined;
      if (kind === undefined || kind === 'KUBE-SEP' || kind === 'KUBE-FW') continue;
      if (!nat.nameOf(to).endsWith(t.hash ?? '')) continue;
      if (fw || unconditional(nat.rule(id))) next = nat.nameOf(to);
    }
    chain = next;
  }
  return 'none';
}

export function externalPath(
  sp: ExpectedServicePort,
  t: ServiceTree | undefined,
  c: DriftContext,
  clusterCompared: boolean,
): void {
  if (!sp.externallyAccessible) return;
  const entries = t?.entries ?? [];
  // an entry whose kind the dump does not say (no comment: external or load-balancer) is either
  const has = (kind: EntryPoint['kind'], address: string) =>
    entries.some(
      (e) => (e.kind === kind || externalOrLb(e)) && e.address === address && e.port === sp.port,
    );
  if (sp.hasEndpoints) {
    // nat's own rule for it: a tree's node ports may come from filter's "has no endpoints" rule
    if (
      sp.nodePort !== undefined &&
      !entries.some((e) => e.kind === 'node-port' && e.port === sp.nodePort)
    ) {
      const want = { ...sp, kind: 'node-port' as const, port: sp.nodePort };
      const moved = entriesElsewhere(t, want);
      c.add({
        id: 'nodeport-missing',
        service: sp.name,
        title: `no rule for node port ${sp.nodePort}/${sp.protocol}`,
        message: `node ${c.node} does not forward node port ${sp.nodePort}/${sp.protocol} to ${sp.name}: connections to ${c.exp.node.ips[0] ?? 'the node'}:${sp.nodePort} reach the node itself and are refused or time out${elsewhere(want, moved)}.`,
        expected: nat(sp.nat.filter((l) => l.chain === 'KUBE-NODEPORTS')),
        actual: [
          ...chainLines(c.nat, 'KUBE-NODEPORTS').filter((l) =>
            l.includes(`--dport ${sp.nodePort} `),
          ),
          ...entryRules(c, moved),
        ],
        ...syncNext(c),
      });
    }
    for (const [kind, ips, word] of [
      ['external-ip', sp.externalIPs, 'external IP'],
      ['load-balancer', sp.loadBalancerIPs, 'load-balancer IP'],
    ] as const)
      for (const ip of ips) {
        if (has(kind, ip)) continue;
        const want = { ...sp, kind, address: ip };
        const moved = entriesElsewhere(t, want);
        c.add({
          id: 'service-rules-missing',
          service: sp.name,
          title: `no rule for the ${word} ${vip(ip, sp.port, sp.protocol)}`,
          message: `node ${c.node} has no rule for ${sp.name}'s ${word} ${vip(ip, sp.port, sp.protocol)}: traffic to it is not redirected to any endpoint${elsewhere(want, moved)}.`,
          expected: nat(
            sp.nat.filter(
              (l) => l.chain === 'KUBE-SERVICES' && l.destination?.cidr === hostCidr(ip),
            ),
          ),
          actual: entryRules(c, moved),
          ...syncNext(c),
        });
      }
  }
  // a node port or external IP goes straight to the policy; a load-balancer IP may pass KUBE-FW
  const entry =
    entries.find((e) => e.kind === 'node-port' || e.kind === 'external-ip') ??
    entries.find((e) => e.kind === 'load-balancer' || externalOrLb(e));
  if (!t || !entry) {
    if (!sp.hasExternalEndpoints) externalVerdicts(sp, t, c);
    return;
  }
  const target = externalTarget(c, t, entry);
  const extLines = () => chainLines(c.nat, entry.chain);
  if (sp.hasExternalEndpoints) {
    if (sp.externalPolicyLocal) {
      if (target === 'local')
        compareEndpoints(
          sp,
          t,
          sp.localEndpoints,
          t.localEndpoints ?? [],
          t.chains.svl ?? t.chains.xlb!,
          'external',
          c,
        );
      else
        c.add({
          id: 'local-policy-wrong',
          service: sp.name,
          title:
            target === 'cluster'
              ? 'external traffic goes to endpoints on every node (externalTrafficPolicy: Local)'
              : `external traffic dropped although ${sp.localEndpoints.map((e) => e.address).join(', ')} is local`,
          message:
            target === 'cluster'
              ? `node ${c.node} sends ${sp.name}'s external traffic to all of its endpoints, also those on other nodes, but the Service has externalTrafficPolicy: Local: the client IP is lost.`
              : `node ${c.node} sends ${sp.name}'s external traffic nowhere although ${sp.localEndpoints.map((e) => `${e.address}${podOf(e) ? ` (Pod ${podOf(e)})` : ''}`).join(', ')} runs on this node (externalTrafficPolicy: Local): it is dropped.`,
          expected: nat(sp.nat.filter((l) => l.chain === sp.chains.ext)),
          actual: extLines(),
          ...syncNext(c),
        });
      const drops = t.verdicts.filter(
        (v) => v.table === 'filter' && v.comment?.endsWith(' has no local endpoints'),
      );
      if (drops.length > 0)
        c.add({
          id: 'local-policy-wrong',
          service: sp.name,
          title: 'external traffic dropped although a local endpoint exists',
          message: `node ${c.node} drops ${sp.name}'s external traffic ("has no local endpoints") although ${sp.localEndpoints.map((e) => e.address).join(', ')} runs on this node.`,
          expected: [],
          actual: verdictLines(c, sp),
          ...syncNext(c),
        });
    } else {
      if (target !== 'cluster')
        c.add({
          id: target === 'local' ? 'local-policy-wrong' : 'service-chain-missing',
          service: sp.name,
          title:
            target === 'local'
              ? 'external traffic goes only to this node (externalTrafficPolicy: Cluster)'
              : `${entry.chain} never reaches an endpoint`,
          message:
            target === 'local'
              ? `node ${c.node} sends ${sp.name}'s external traffic only to endpoints on this node, but the Service has externalTrafficPolicy: Cluster.`
              : `node ${c.node} sends ${sp.name}'s external traffic into ${entry.chain}, which never jumps to ${sp.chains.svc}: it is not load-balanced to any endpoint.`,
          expected: nat(sp.nat.filter((l) => l.chain === sp.chains.ext)),
          actual: extLines(),
          ...syncNext(c),
        });
      else if (!clusterCompared)
        compareEndpoints(sp, t, sp.clusterEndpoints, t.endpoints, t.chains.svc!, 'external', c);
      externalMasquerade(sp, t, c);
    }
    return;
  }
  // no endpoint for external traffic on this node (or none at all)
  if (target !== 'none') {
    const eps = (target === 'local' ? t.localEndpoints : t.endpoints) ?? [];
    const chain = target === 'local' ? (t.chains.svl ?? t.chains.xlb!) : t.chains.svc!;
    for (const ep of eps)
      if (sp.hasEndpoints && !isOnNode(ep, sp, c))
        c.add({
          id: 'local-policy-wrong',
          service: sp.name,
          title: `external traffic sent off-node to ${ep.address}`,
          message: `node ${c.node} sends ${percent(ep.probability)} of ${sp.name}'s external traffic to ${ep.address} on another node, although the Service has externalTrafficPolicy: Local and this node runs none of its endpoints: it should drop it.`,
          expected: nat(sp.nat.filter((l) => l.chain === sp.chains.ext)),
          actual: extLines(),
          ...syncNext(c),
        });
      else
        stale(
          sp,
          ep,
          chain,
          sp.hasEndpoints
            ? 'although this node runs none of its endpoints'
            : 'although the Service has no endpoints',
          c,
          "'s external traffic",
        );
  }
  externalVerdicts(sp, t, c);
}

/** The REJECT / DROP rules for external addresses when there is no endpoint for them here. */
function externalVerdicts(
  sp: ExpectedServicePort,
  t: ServiceTree | undefined,
  c: DriftContext,
): void {
  const verdicts = t?.verdicts.filter((v) => v.table === 'filter') ?? [];
  const missing: string[] = [];
  for (const ip of [...sp.externalIPs, ...sp.loadBalancerIPs])
    if (!verdicts.some((v) => v.address === ip && v.port === sp.port))
      missing.push(vip(ip, sp.port, sp.protocol));
  if (sp.nodePort !== undefined) {
    const found = verdicts.some((v) => v.address === undefined && v.port === sp.nodePort);
    if (!found) missing.push(`node port ${sp.nodePort}/${sp.protocol}`);
  }
  if (missing.length > 0) {
    noVerdict(
      sp,
      missing.join(', '),
      sp.externalVerdict!,
      sp.filter.filter((l) => l.chain === 'KUBE-EXTERNAL-SERVICES'),
      c,
    );
    return;
  }
  if (sp.externalVerdict === 'DROP') {
    const where = [
      ...(sp.nodePort !== undefined ? [`node port ${sp.nodePort}`] : []),
      ...sp.externalIPs.map((ip) => `external IP ${ip}`),
      ...sp.loadBalancerIPs.map((ip) => `load-balancer IP ${ip}`),
    ].join(', ');
    const nodes = [
      ...new Set(sp.allEndpoints.filter((e) => e.ready && e.nodeName).map((e) => e.nodeName!)),
    ];
    c.note(
      {
        id: 'local-policy-drop',
        service: sp.name,
        title: `no local endpoint: external traffic arriving here is dropped`,
        message: `node ${c.node} runs none of ${sp.name}'s endpoints, so with externalTrafficPolicy: Local kube-proxy drops traffic arriving here for ${where}, as designed${nodes.length ? `; only ${nodes.join(', ')} ${nodes.length === 1 ? 'answers' : 'answer'}` : ''}. Pods and processes on this node still reach the Service.`,
        expected: [],
        actual: verdictLines(c, sp),
        advice: `Send external traffic to ${nodes.length ? nodes.join(' or ') : 'a node that runs one of its Pods'}${sp.healthCheckNodePort ? ` (the load balancer finds them through health check node port ${sp.healthCheckNodePort})` : ''}, or set externalTrafficPolicy: Cluster if the client IP does not matter.`,
      },
      'external',
    );
  }
}

function externalMasquerade(sp: ExpectedServicePort, t: ServiceTree, c: DriftContext): void {
  const chains = new Set([t.chains.ext, t.chains.fw, 'KUBE-NODEPORTS', 'KUBE-SERVICES']);
  if (t.masquerade.some((m) => chains.has(m.chain) && m.condition === 'all')) return;
  c.add({
    id: 'masquerade-missing',
    service: sp.name,
    title: 'external traffic is not masqueraded',
    message: `node ${c.node} does not masquerade ${sp.name}'s external traffic (externalTrafficPolicy: Cluster): when it is sent to an endpoint on another node, the reply goes straight back to the client, which drops it.`,
    expected: nat(sp.nat.filter((l) => l.chain === sp.chains.ext)),
    actual: chainLines(c.nat, t.chains.ext),
    ...syncNext(c),
  });
}

/** loadBalancerSourceRanges: the FW chain, the ranges it accepts, and the drop for the rest. */
export function firewall(
  sp: ExpectedServicePort,
  t: ServiceTree | undefined,
  c: DriftContext,
): void {
  if (!sp.chains.fw || !t) return;
  const lb = t.entries.filter((e) => e.kind === 'load-balancer');
  const fw = t.chains.fw;
  const accepted = new Set(
    (fw ? (c.nat.chain(fw)?.rules ?? []) : [])
      .filter(
        (r) =>
          r.source &&
          !r.source.negated &&
          r.target?.kind === 'chain' &&
          r.target.name !== 'KUBE-MARK-DROP',
      )
      .map((r) => r.source!.cidr),
  );
  const expectedSources = sp.nat
    .filter((l) => l.chain === sp.chains.fw)
    .flatMap((l) => (l.source && !l.source.negated ? [l.source.cidr] : []));
  const dropped = t.verdicts.some(
    (v) => v.chain === 'KUBE-PROXY-FIREWALL' || (v.table === 'nat' && v.kind === 'drop'),
  );
  const bypass = lb.filter((e) => !e.chain.startsWith('KUBE-FW-'));
  const missing = expectedSources.filter((s) => !accepted.has(s));
  const extra = [...accepted].filter((s) => !expectedSources.includes(s));
  if (bypass.length === 0 && missing.length === 0 && extra.length === 0 && dropped) return;
  const problems = [
    ...(bypass.length
      ? [`the load-balancer IP rule skips ${sp.chains.fw}, so any source gets in`]
      : []),
    ...(missing.length ? [`sources ${missing.join(', ')} are not let in`] : []),
    ...(extra.length
      ? [`sources ${extra.join(', ')} are let in although not in loadBalancerSourceRanges`]
      : []),
    ...(!dropped ? ['other sources are not dropped (no KUBE-PROXY-FIREWALL rule)'] : []),
  ];
  c.add({
    id: 'firewall-missing',
    service: sp.name,
    title: 'loadBalancerSourceRanges not enforced as configured',
    message: `node ${c.node} does not enforce ${sp.name}'s loadBalancerSourceRanges (${sp.sourceRanges.join(', ')}): ${problems.join('; ')}.`,
    expected: [
      ...nat(sp.nat.filter((l) => l.chain === sp.chains.fw)),
      ...filterLines(sp.filter.filter((l) => l.chain === 'KUBE-PROXY-FIREWALL')),
    ],
    actual: [
      ...chainLines(c.nat, fw),
      ...chainLines(c.filter, 'KUBE-PROXY-FIREWALL').filter((l) => l.includes(sp.name)),
    ],
    ...syncNext(c),
  });
}
