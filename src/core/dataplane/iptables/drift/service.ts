// The semantic checks of a Service port's cluster IP traffic and of its endpoints: does the node
// send it to the endpoints kube-proxy would choose, in the shares it would give them,
// masqueraded when it would masquerade, and rejected when it would reject?
import { percent } from '../../../model.js';
import {
  chainLines,
  entryLines,
  filterLines,
  nat,
  syncNext,
  verdictLines,
  vip,
  type DriftContext,
} from './context.js';
import { podOf, quantisedProbability } from '../../kube-proxy/endpoints.js';
import { chainAbsent } from './jumps.js';
import { clusterIPElsewhere } from './stale-port.js';
import type { ExpectedEndpoint, ExpectedServicePort } from '../../kube-proxy/service-port.js';
import type { EntryPoint, ServiceTree, TreeEndpoint } from '../../trees.js';
import { entriesElsewhere } from '../../stale-entries.js';

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
      c.note({
        id: 'local-policy-drop',
        service: sp.name,
        title: `no local endpoint: cluster IP traffic from this node is dropped`,
        message: `node ${c.node} runs none of ${sp.name}'s endpoints, so kube-proxy drops its cluster IP traffic from this node (internalTrafficPolicy: Local), as designed. Pods on this node cannot reach ${where}.`,
        expected: [],
        actual: verdictLines(c, sp),
        advice: `Run one of its Pods on ${c.node}, or set internalTrafficPolicy: Cluster.`,
      });
    return false;
  }
  if (!entry || !t) {
    missingEntry(sp, t, c);
    return false;
  }
  if (chainAbsent(c.nat, entry.chain) || c.nat.chain(entry.chain)!.ruleCount === 0) {
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

/** What an endpoint address that is not expected is, in words. */
function whatIs(sp: ExpectedServicePort, address: string | undefined, c: DriftContext): string {
  if (!address) return 'an endpoint the dump does not name';
  const ip = address.split(':')[0]!;
  const listed = sp.allEndpoints.find((e) => e.address === address);
  const pod = c.pods.get(ip)?.[0];
  const podName = pod ? `Pod ${pod.namespace}/${pod.name}` : undefined;
  if (listed) {
    const state = listed.terminating ? 'terminating' : 'not ready';
    return `${podName ?? 'an endpoint'}, which the EndpointSlices list as ${state}`;
  }
  if (!pod) return 'a Pod that no longer exists';
  if (pod.deleting) return `${podName}, which is being deleted`;
  const ready = pod.conditions.find((x) => x.type === 'Ready')?.status === 'True';
  if (!ready) return `${podName}, which is not ready`;
  return `${podName}, which is no longer an endpoint of the Service`;
}

export function stale(
  sp: ExpectedServicePort,
  ep: TreeEndpoint,
  chain: string,
  why: string,
  c: DriftContext,
  traffic = '',
): void {
  const what = whatIs(sp, ep.address, c);
  c.add({
    id: 'endpoint-stale',
    service: sp.name,
    ...(ep.address ? { endpoint: ep.address } : {}),
    title: `stale endpoint ${ep.address ?? ep.chain}`,
    message: `node ${c.node} still sends ${percent(ep.probability)} of ${sp.name}${traffic} to ${ep.address ?? ep.chain}, ${what}${why ? ` ${why}` : ''}${what.startsWith('a Pod that no longer exists') ? ': those connections time out' : ''}.`,
    expected: nat(sp.nat.filter((l) => l.chain === chain)),
    actual: [
      ...chainLines(c.nat, chain).filter((l) => l.endsWith(` ${ep.chain}`)),
      ...chainLines(c.nat, ep.chain),
    ],
    ...syncNext(c),
  });
}

export function compareEndpoints(
  sp: ExpectedServicePort,
  t: ServiceTree,
  expected: ExpectedEndpoint[],
  actual: TreeEndpoint[],
  chain: string,
  path: 'cluster IP' | 'external',
  c: DriftContext,
): void {
  const traffic = path === 'external' ? "'s external traffic" : '';
  // the common case: the same endpoints in the same (sorted) order
  const same =
    actual.length === expected.length &&
    actual.every((a, i) => !a.chainMissing && a.address === expected[i]!.address);
  if (same) {
    weights(sp, expected, actual, chain, traffic, c);
    hairpin(sp, actual, c);
    affinity(sp, t, chain, c);
    return;
  }
  const byAddress = new Map(expected.map((e) => [e.address, e]));
  const matched = new Map<string, TreeEndpoint>();
  const extra: TreeEndpoint[] = [];
  for (const a of actual) {
    const e = a.address
      ? byAddress.get(a.address)
      : a.inferredIP
        ? expected.find((x) => x.ip === a.inferredIP)
        : undefined;
    if (e && !a.chainMissing) matched.set(e.address, a);
    else extra.push(a);
  }
  const missing = expected.filter((e) => !matched.has(e.address));
  for (const a of extra) {
    if (a.chainMissing) {
      c.add({
        id: 'service-chain-missing',
        service: sp.name,
        title: `jump to ${a.chain}, which does not exist`,
        message: `node ${c.node} sends ${percent(a.probability)} of ${sp.name}${traffic} to ${a.chain}, a chain that is not in the dump.`,
        expected: nat(sp.nat.filter((l) => l.chain === chain)),
        actual: chainLines(c.nat, chain),
        ...syncNext(c),
      });
      continue;
    }
    const offNode = path === 'external' && sp.externalPolicyLocal && !isOnNode(a, sp, c);
    if (offNode)
      c.add({
        id: 'local-policy-wrong',
        service: sp.name,
        title: `external traffic sent off-node to ${a.address}`,
        message: `node ${c.node} sends ${percent(a.probability)} of ${sp.name}'s external traffic to ${a.address}, which does not run on this node, although the Service has externalTrafficPolicy: Local: the client IP is lost and the traffic takes an extra hop.`,
        expected: nat(sp.nat.filter((l) => l.chain === chain)),
        actual: chainLines(c.nat, chain),
        ...syncNext(c),
      });
    else stale(sp, a, chain, '', c, traffic);
  }
  for (const e of missing) {
    const pod = podOf(e) ? `Pod ${podOf(e)}` : 'an endpoint';
    const dropped = path === 'external' && matched.size === 0 && extra.length === 0;
    c.add({
      id: dropped ? 'local-policy-wrong' : 'endpoint-missing',
      service: sp.name,
      title: dropped
        ? `external traffic dropped although ${e.address} is local`
        : `endpoint ${e.address} missing`,
      message: dropped
        ? `node ${c.node} sends none of ${sp.name}'s external traffic to ${e.address} (${pod} on this node): with externalTrafficPolicy: Local it is dropped here although a local endpoint exists.`
        : `node ${c.node} sends none of ${sp.name}${traffic} to ${e.address} (${pod}, ${e.ready ? 'ready' : 'terminating'}): it has no KUBE-SEP rule for this endpoint, so the endpoint gets no traffic from this node.`,
      expected: nat([
        ...sp.nat.filter((l) => l.chain === chain && l.text.endsWith(` ${e.chain}`)),
        ...sp.nat.filter((l) => l.chain === e.chain),
      ]),
      actual: chainLines(c.nat, chain),
      ...syncNext(c),
    });
  }
  if (extra.length > 0 || missing.length > 0) return;
  weights(sp, expected, actual, chain, traffic, c);
  hairpin(sp, actual, c);
  affinity(sp, t, chain, c);
}

export function isOnNode(a: TreeEndpoint, sp: ExpectedServicePort, c: DriftContext): boolean {
  const ip = a.address?.split(':')[0] ?? a.inferredIP;
  const listed = sp.allEndpoints.find((e) => e.ip === ip);
  if (listed?.nodeName) return listed.nodeName === c.node;
  const pod = ip ? c.pods.get(ip)?.[0] : undefined;
  return pod?.nodeName === undefined || pod.nodeName === c.node;
}

function weights(
  sp: ExpectedServicePort,
  expected: ExpectedEndpoint[],
  actual: TreeEndpoint[],
  chain: string,
  traffic: string,
  c: DriftContext,
): void {
  const n = expected.length;
  // the exact check: the same endpoints in the same order with kube-proxy's probabilities
  const exact = actual.every((a, i) => {
    const q =
      a.ruleProbability === undefined ? undefined : Math.round(a.ruleProbability * 0x80000000);
    return (
      a.address === expected[i]?.address &&
      q === (i < n - 1 ? quantisedProbability(n - i) : undefined)
    );
  });
  if (exact) return;
  // the semantic check: every endpoint gets its 1/n
  const total = actual.reduce((s, a) => s + a.probability, 0);
  const uneven = actual.some((a) => Math.abs(a.probability - 1 / n) > 0.0005) || 1 - total > 0.0005;
  if (!uneven) return;
  const shares = actual.map((a) => `${a.address ?? a.chain} ${percent(a.probability)}`).join(', ');
  c.add({
    id: 'weights-uneven',
    service: sp.name,
    title: `endpoints get uneven shares (${shares})`,
    message:
      1 - total > 0.0005
        ? `node ${c.node}'s ${chain} lets ${percent(1 - total)} of new connections to ${sp.name}${traffic} match no endpoint jump (${shares}); each of the ${n} endpoints should get ${percent(1 / n)}.`
        : `node ${c.node} splits new connections to ${sp.name}${traffic} unevenly: ${shares}; each of the ${n} endpoints should get ${percent(1 / n)}.`,
    expected: nat(sp.nat.filter((l) => l.chain === chain)),
    actual: chainLines(c.nat, chain),
    ...syncNext(c),
  });
}

function hairpin(sp: ExpectedServicePort, actual: TreeEndpoint[], c: DriftContext): void {
  const without = actual.filter((a) => !a.hairpinMasquerade && !a.chainMissing);
  if (without.length === 0) return;
  c.add({
    id: 'masquerade-missing',
    service: sp.name,
    title: `no hairpin masquerade for ${without.map((a) => a.address ?? a.chain).join(', ')}`,
    message: `node ${c.node} does not masquerade a Pod that reaches itself through ${sp.name} (${without.map((a) => a.address ?? a.chain).join(', ')}): the Pod sees its own address as the source and such hairpin connections fail.`,
    expected: nat(sp.nat.filter((l) => without.some((a) => l.chain === a.chain))),
    actual: without.flatMap((a) => chainLines(c.nat, a.chain)),
    ...syncNext(c),
  });
}

function affinity(sp: ExpectedServicePort, t: ServiceTree, chain: string, c: DriftContext): void {
  if (sp.affinitySeconds === t.affinitySeconds) return;
  c.add({
    id: 'affinity-wrong',
    service: sp.name,
    title:
      sp.affinitySeconds === undefined
        ? 'session affinity on the node, not on the Service'
        : t.affinitySeconds === undefined
          ? 'no session affinity'
          : `session affinity of ${t.affinitySeconds}s, not ${sp.affinitySeconds}s`,
    message:
      sp.affinitySeconds === undefined
        ? `node ${c.node} keeps each client on one endpoint of ${sp.name} for ${t.affinitySeconds}s, but the Service has no sessionAffinity.`
        : t.affinitySeconds === undefined
          ? `${sp.name} has sessionAffinity: ClientIP (${sp.affinitySeconds}s), but node ${c.node} balances every new connection afresh.`
          : `node ${c.node} keeps clients of ${sp.name} on one endpoint for ${t.affinitySeconds}s, the Service says ${sp.affinitySeconds}s.`,
    expected: nat(sp.nat.filter((l) => l.chain === chain)),
    actual: chainLines(c.nat, chain),
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
  // a condition taken from the rules is said with them (drift.ts reportMasquerade), not compared
  const shown = c.exp.config.masqueradeShown !== undefined;
  if (held && !shown) return;
  if (want === undefined && rules.length === 0) return;
  const expected = nat(
    sp.nat.filter((l) => l.chain === sp.internalChain && l.text.endsWith('-j KUBE-MARK-MASQ')),
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
