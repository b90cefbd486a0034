// The semantic checks of a Service port's cluster IP traffic: does the node send it into the
// Service chain kube-proxy would (its endpoints compared in endpoints.ts), masqueraded when it
// would masquerade, and rejected when it would reject?
import {
  chainLines,
  entryLines,
  filterLines,
  nat,
  syncNext,
  verdictLines,
  vip,
  type DriftContext,
} from '../context.js';
import { chainAbsent } from '../jumps.js';
import { compareEndpoints, stale } from './endpoints.js';
import { clusterIPElsewhere } from './stale-port.js';
import type { ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import type { EntryPoint, ServiceTree } from '../../../trees.js';
import { entriesElsewhere } from '../../../stale-entries.js';

/** Cluster IP traffic. Returns whether the endpoints of the SVC chain were compared. */
export function internalPath(
  sp: ExpectedServicePort,
  t: ServiceTree | undefined,
  c: DriftContext,
): boolean {
  const entry = t?.entries.find(
    (e) =>
      e.from === 'KUBE-SERVICES' &&
      e.kind === 'cluster-ip' &&
      e.address === sp.clusterIP &&
      e.port === sp.port,
  );
  const where = vip(sp.clusterIP, sp.port, sp.protocol);
  if (!sp.hasInternalEndpoints) {
    if (entry && t) {
      const eps = (isLocalChain(entry.chain) ? t.localEndpoints : t.endpoints) ?? [];
      const why =
        sp.internalVerdict === 'REJECT'
          ? 'although the Service has no endpoints'
          : 'although none of its endpoints runs on this node (internalTrafficPolicy: Local)';
      for (const ep of eps) stale(sp, ep, entry.chain, `${why}`, c);
    }
    const ok = t?.verdicts.some(
      (v) => v.table === 'filter' && v.address === sp.clusterIP && v.port === sp.port,
    );
    if (!ok) noVerdict(sp, `${where} (cluster IP)`, sp.internalVerdict!, sp.filter, c);
    else if (sp.internalVerdict === 'DROP')
      c.note(
        {
          id: 'local-policy-drop',
          service: sp.name,
          title: `no local endpoint: cluster IP traffic from this node is dropped`,
          message: `node ${c.node} runs none of ${sp.name}'s endpoints, so kube-proxy drops its cluster IP traffic from this node (internalTrafficPolicy: Local), as designed. Pods on this node cannot reach ${where}.`,
          expected: [],
          actual: verdictLines(c, sp),
          advice: `Run one of its Pods on ${c.node}, or set internalTrafficPolicy: Cluster.`,
        },
        'internal',
      );
    return false;
  }
  if (!entry || !t) {
    missingEntry(sp, t, c);
    return false;
  }
  if (chainAbsent(c.nat, entry.chain) || c.nat.ruleCountOf(c.nat.indexOf(entry.chain)) === 0) {
    chainMissing(sp, entry.chain, c);
    return false;
  }
  const localChain = isLocalChain(entry.chain);
  if (localChain !== sp.internalPolicyLocal) {
    c.add({
      id: 'local-policy-wrong',
      service: sp.name,
      title: sp.internalPolicyLocal
        ? 'cluster IP traffic goes to endpoints on every node (internalTrafficPolicy: Local)'
        : 'cluster IP traffic goes only to this node (internalTrafficPolicy: Cluster)',
      message: sp.internalPolicyLocal
        ? `node ${c.node} sends ${sp.name}'s cluster IP traffic to ${entry.chain}, which holds endpoints on every node, but the Service has internalTrafficPolicy: Local: it should only use this node's endpoints.`
        : `node ${c.node} sends ${sp.name}'s cluster IP traffic to ${entry.chain}, which holds only this node's endpoints, but the Service has internalTrafficPolicy: Cluster.`,
      expected: nat(sp.nat.filter((l) => l.chain === 'KUBE-SERVICES')),
      actual: entryLines(c, sp),
      ...syncNext(c),
    });
  }
  const actual = (localChain ? t.localEndpoints : t.endpoints) ?? [];
  const expected = sp.internalPolicyLocal ? sp.localEndpoints : sp.clusterEndpoints;
  compareEndpoints(sp, t, expected, actual, entry.chain, 'cluster IP', c);
  clusterIPMasquerade(sp, t, entry, c);
  return !localChain;
}

const isLocalChain = (chain: string) => /^KUBE-(SVL|XLB)-/.test(chain);

/** The cluster IP rule jumps to a Service chain the dump lacks or holds empty. */
function chainMissing(sp: ExpectedServicePort, chain: string, c: DriftContext): void {
  const absent = chainAbsent(c.nat, chain);
  if (absent) c.reported.add(chain);
  c.add({
    id: 'service-chain-missing',
    service: sp.name,
    title: absent ? `${chain} missing` : `${chain} has no rules`,
    message: `node ${c.node} sends ${sp.name}'s cluster IP ${vip(sp.clusterIP, sp.port, sp.protocol)} to ${chain}, ${absent ? 'a chain that is not in the dump' : 'which holds no rule'}: its connections are not load-balanced to any endpoint and not masqueraded.`,
    expected: nat(sp.nat.filter((l) => l.chain === chain)),
    actual: [...entryLines(c, sp), ...chainLines(c.nat, chain)],
    ...syncNext(c),
  });
}

function missingEntry(sp: ExpectedServicePort, t: ServiceTree | undefined, c: DriftContext): void {
  const where = vip(sp.clusterIP, sp.port, sp.protocol);
  const actual = entryLines(c, sp);
  const dangling = actual.find((l) => !/-j KUBE-MARK-MASQ$/.test(l));
  if (dangling) {
    const target = /-j (\S+)/.exec(dangling)?.[1];
    if (target) c.reported.add(target);
    c.add({
      id: 'service-chain-missing',
      service: sp.name,
      title: `the cluster IP rule jumps to ${target}, which does not exist`,
      message: `node ${c.node} sends ${sp.name} (${where}) to ${target}, a chain that is not in the dump: connections to the cluster IP are not load-balanced to any endpoint.`,
      expected: nat(
        sp.nat.filter((l) => l.chain === sp.internalChain || l.chain === 'KUBE-SERVICES'),
      ),
      actual,
      ...syncNext(c),
    });
    return;
  }
  const moved = entriesElsewhere(t, { ...sp, kind: 'cluster-ip', address: sp.clusterIP }).filter(
    (e) => e.from === 'KUBE-SERVICES',
  );
  if (moved.length > 0) {
    clusterIPElsewhere(sp, moved, c);
    return;
  }
  const rejected = t?.verdicts.find((v) => v.table === 'filter' && v.address === sp.clusterIP);
  // a chain something else jumps to (an external chain) is not said to be left alone
  const leftover = [sp.chains.svc, sp.chains.svl].filter(
    (x): x is string => !!x && !!c.nat.chain(x) && !c.nat.jumpsTo([x]),
  );
  const eps = sp.hasEndpoints
    ? `${sp.clusterEndpoints.length || sp.localEndpoints.length} ready endpoint(s)`
    : '';
  c.add({
    id: 'service-rules-missing',
    service: sp.name,
    title: `no rule for the cluster IP ${where}`,
    message: rejected
      ? `node ${c.node} rejects connections to ${sp.name} (${where}) as if the Service had no endpoints, but it has ${eps}: kube-proxy on this node has not seen them.`
      : `node ${c.node} has no rule for ${sp.name} (${where}): connections to the cluster IP from this node and its Pods are not redirected to any endpoint. kube-proxy on this node has not written this Service${leftover.length ? ` (its chain ${leftover.join(', ')} exists, but nothing jumps to it)` : ''}.`,
    expected: nat(sp.nat),
    actual: [
      ...actual,
      ...(rejected
        ? chainLines(c.filter, 'KUBE-SERVICES').filter((l) => l.includes(`${sp.clusterIP}/32`))
        : []),
    ],
    ...syncNext(c),
  });
}

export function noVerdict(
  sp: ExpectedServicePort,
  where: string,
  verdict: 'REJECT' | 'DROP',
  expected: { chain: string; text: string }[],
  c: DriftContext,
): void {
  c.add({
    id: 'no-endpoints-reject-missing',
    service: sp.name,
    title: `no ${verdict} rule for ${where}`,
    message:
      verdict === 'REJECT'
        ? `${sp.name} has no endpoints, but node ${c.node} does not reject connections to ${where}: clients wait for a timeout instead of getting "connection refused" at once.`
        : `node ${c.node} has no local endpoint for ${sp.name}, but does not drop traffic to ${where} as kube-proxy would: it reaches the node itself instead.`,
    expected: filterLines(expected),
    actual: [],
    ...syncNext(c),
  });
}

function clusterIPMasquerade(
  sp: ExpectedServicePort,
  t: ServiceTree,
  entry: EntryPoint,
  c: DriftContext,
): void {
  // kube-proxy 1.21+ marks in KUBE-SVC/SVL, older ones in KUBE-SERVICES next to the entry
  const rules = t.masquerade.filter((m) => m.chain === 'KUBE-SERVICES' || m.chain === entry.chain);
  const want = sp.clusterIPMasquerade;
  const held = want !== undefined && rules.some((m) => m.condition === want);
  // a condition taken from the rules is said with them (../drift.ts reportMasquerade), not compared
  const shown = c.exp.config.masqueradeShown !== undefined;
  if (held && !shown) return;
  if (want === undefined && rules.length === 0) return;
  const expected = nat(
    sp.nat.filter((l) => l.chain === sp.internalChain && l.target === 'KUBE-MARK-MASQ'),
  );
  const actual = [...chainLines(c.nat, entry.chain), ...entryLines(c, sp)].filter((l) =>
    l.endsWith('-j KUBE-MARK-MASQ'),
  );
  if (rules.length > 0) {
    c.masquerade.push({
      service: sp.name,
      want: want ?? 'none',
      got: held ? want : rules[0]!.condition,
      expected,
      actual,
    });
    return;
  }
  c.add({
    id: 'masquerade-missing',
    service: sp.name,
    title: `cluster IP traffic from outside the Pod network is not masqueraded`,
    message: `node ${c.node} does not mark ${sp.name}'s cluster IP traffic for masquerade when it matches "${want}" (traffic from the node itself or from outside the Pod network): replies from endpoints on other nodes may not come back through this node.`,
    expected,
    actual: chainLines(c.nat, entry.chain).slice(0, 4),
    ...syncNext(c),
  });
}
