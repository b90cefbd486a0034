// The endpoints of one Service chain compared with kube-proxy's: the same endpoints in the same
// shares, each with its hairpin masquerade, and the Service's session affinity.
import { percent } from '../../../../model.js';
import { chainLines, nat, syncNext, type DriftContext } from '../context.js';
import { podOf, quantisedProbability } from '../../../kube-proxy/endpoints.js';
import type { ExpectedEndpoint, ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import type { ServiceTree, TreeEndpoint } from '../../../trees.js';
import {
  dnatMissing,
  endpointDnatMissing,
  fallsThrough,
  sharesKnown,
  walk,
} from './fall-through.js';

/** What an endpoint address that is not expected is, in words. */
function whatIs(sp: ExpectedServicePort, address: string | undefined, c: DriftContext): string {
  if (!address) return 'an endpoint the dump does not name';
  const ip = address.split(':')[0]!;
  const listed = sp.allEndpoints.find((e) => e.address === address);
  const pod = c.pods.get(ip)?.[0];
  const podName = pod ? `Pod ${pod.namespace}/${pod.name}` : undefined;
  if (listed) {
    const state = listed.terminating ? 'terminating' : 'not ready';
    return `${podName ?? 'an endpoint'}, which the ${c.exp.endpointsFrom.reads} list as ${state}`;
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
    weights(sp, expected, actual, chain, path, c);
    hairpin(sp, actual, c);
    affinity(sp, t, chain, actual, c);
    return;
  }
  const byAddress = new Map(expected.map((e) => [e.address, e]));
  const matched = new Map<string, TreeEndpoint>();
  const extra: TreeEndpoint[] = [];
  const returning = new Map<TreeEndpoint, ExpectedEndpoint | undefined>(); // chains without DNAT
  for (const a of actual) {
    if (a.chainMissing) {
      // the endpoint its chain's name hashes: the chain missing is the one root, so that
      // endpoint is not said missing as well
      const own = expected.find((x) => x.chain === a.chain);
      if (own) matched.set(own.address, a);
      else extra.push(a); // a jump kube-proxy would not write: the shares are not compared
      endpointChainMissing(sp, a, own, chain, traffic, c);
      continue;
    }
    const e = a.address
      ? byAddress.get(a.address)
      : a.inferredIP
        ? expected.find((x) => x.ip === a.inferredIP)
        : undefined;
    if (e) matched.set(e.address, a);
    else if (!a.address && a.chainPartial && expected.some((x) => x.chain === a.chain))
      // its DNAT rule not read (the chain read in part): the endpoint its chain's name hashes,
      // nothing said of where it sends
      matched.set(expected.find((x) => x.chain === a.chain)!.address, a);
    else if (dnatMissing(a)) {
      // the endpoint is named by its chain, kube-proxy's hash of its address
      const own = expected.find((x) => x.chain === a.chain);
      if (own) matched.set(own.address, a);
      returning.set(a, own);
    } else extra.push(a);
  }
  const walked = walk(actual, new Set(returning.keys()));
  for (const [a, e] of returning) endpointDnatMissing(sp, a, e, chain, walked, traffic, c);
  const missing = expected.filter((e) => !matched.has(e.address));
  const through = sharesKnown(actual) ? walked.fallThrough : 0;
  if (through > 0) fallsThrough(sp, missing, [...returning.keys()], through, chain, path, c);
  for (const a of extra) {
    if (a.chainMissing) continue; // said by endpointChainMissing
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
  // endpoints whose share falls through are named by fallsThrough
  for (const e of through > 0 ? [] : missing) {
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
        : `node ${c.node} sends none of ${sp.name}${traffic} to ${e.address} (${pod}, ${e.ready ? 'ready' : 'terminating'}): ${c.nat.chain(e.chain) ? `no rule of ${chain} jumps to ${e.chain}, the endpoint's chain, which the dump holds` : 'it has no KUBE-SEP rule for this endpoint'}, so the endpoint gets no traffic from this node.`,
      expected: nat([
        ...sp.nat.filter((l) => l.chain === chain && l.target === e.chain),
        ...sp.nat.filter((l) => l.chain === e.chain),
      ]),
      actual: chainLines(c.nat, chain),
      ...syncNext(c),
    });
  }
  if (extra.length > 0 || missing.length > 0 || returning.size > 0) return;
  weights(sp, expected, actual, chain, path, c);
  hairpin(sp, actual, c);
  affinity(sp, t, chain, actual, c);
}

/** A jump to an endpoint chain the dump does not hold: said once for the chain (not again by
 * ../jumps.ts), with the jumps as the node holds them and the chain as kube-proxy writes it. */
function endpointChainMissing(
  sp: ExpectedServicePort,
  a: TreeEndpoint,
  own: ExpectedEndpoint | undefined,
  chain: string,
  traffic: string,
  c: DriftContext,
): void {
  if (c.reported.has(a.chain)) return; // the SVC and SVL chains share their endpoints' chains
  c.reported.add(a.chain);
  const whose = own
    ? `the chain of endpoint ${own.address} (${podOf(own) ? `Pod ${podOf(own)}` : 'an endpoint'})`
    : `a chain kube-proxy would not jump to for it${a.address ? ` (its comment names ${a.address})` : ''}`;
  const from = [...new Set([chain, sp.chains.svc, sp.chains.svl])];
  c.add({
    id: 'jump-target-missing',
    service: sp.name,
    ...(own ? { endpoint: own.address } : {}),
    title: `jump to ${a.chain}, which is missing`,
    message: `node ${c.node}'s ${chain} sends ${percent(a.probability)} of ${sp.name}${traffic} to ${a.chain}, ${whose}, which the dump does not hold: iptables-restore refuses such a rule set, so the chain was lost from the dump or deleted by hand, and the dump does not show where that share goes.`,
    // the chain's own rules; a chain kube-proxy would not write: the Service chain without the jump
    expected: nat(sp.nat.filter((l) => l.chain === (own ? a.chain : chain))),
    actual: from.flatMap((x) => chainLines(c.nat, x).filter((l) => l.endsWith(` -j ${a.chain}`))),
    ...syncNext(c),
  });
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
  path: 'cluster IP' | 'external',
  c: DriftContext,
): void {
  const traffic = path === 'external' ? "'s external traffic" : '';
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
  // a share no endpoint takes is not DNATed at all: worse than uneven
  const { fallThrough } = walk(actual, new Set());
  if (fallThrough > 0 && sharesKnown(actual)) {
    fallsThrough(sp, [], [], fallThrough, chain, path, c);
    return;
  }
  // the semantic check: every endpoint gets its 1/n
  const uneven = actual.some((a) => Math.abs(a.probability - 1 / n) > 0.0005);
  if (!uneven) return;
  const shares = actual.map((a) => `${a.address ?? a.chain} ${percent(a.probability)}`).join(', ');
  c.add({
    id: 'weights-uneven',
    service: sp.name,
    title: `endpoints get uneven shares (${shares})`,
    message: `node ${c.node} splits new connections to ${sp.name}${traffic} unevenly: ${shares}; each of the ${n} endpoints should get ${percent(1 / n)}.`,
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

function affinity(
  sp: ExpectedServicePort,
  t: ServiceTree,
  chain: string,
  actual: TreeEndpoint[],
  c: DriftContext,
): void {
  if (sp.affinitySeconds === t.affinitySeconds) {
    if (sp.affinitySeconds !== undefined) unremembered(sp, actual, c);
    return;
  }
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

/** ClientIP affinity's --rcheck only matches a client a `-m recent --set` remembered: kube-proxy
 * writes that in each KUBE-SEP chain's DNAT rule, and where it is not, no client is kept there. */
function unremembered(sp: ExpectedServicePort, actual: TreeEndpoint[], c: DriftContext): void {
  const remembers = (chain: string) =>
    c.nat
      .chain(chain)
      ?.ruleIds.some((id) =>
        c.nat
          .rule(id)
          .matches.some((m) => m.kind === 'recent' && m.action === 'set' && m.name === chain),
      ) ?? true; // a chain not in the dump is said by the endpoint checks
  const without = actual.filter((a) => !remembers(a.chain));
  if (without.length === 0) return;
  const all = without.length === actual.length;
  c.add({
    id: 'affinity-wrong',
    service: sp.name,
    title: `session affinity never remembers a client${all ? '' : ` of ${without.map((a) => a.address ?? a.chain).join(', ')}`}`,
    message: `${sp.name} has sessionAffinity: ClientIP (${sp.affinitySeconds}s), but on node ${c.node} ${all ? 'no endpoint chain' : `the chains of ${without.map((a) => a.address ?? a.chain).join(', ')}`} ${all ? 'remembers' : 'remember'} the client (-m recent --set): the affinity rules' --rcheck never matches ${all ? '' : 'those clients '}and every new connection is balanced afresh, so ClientIP affinity is gone.`,
    expected: nat(sp.nat.filter((l) => without.some((a) => l.chain === a.chain))),
    actual: without.flatMap((a) => chainLines(c.nat, a.chain)),
    ...syncNext(c),
  });
}
