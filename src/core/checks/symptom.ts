// A success observed on a node (a probe answered, a hairpin masqueraded) where the Rules step found
// that node's rules of the address's family losing a share of connections: that one success is
// the share that works, so it is the Rules finding's symptom there, never a pass.
import { canonicalAddress, familyOf, type IPFamily } from '../ipv6.js';
import type { Cause } from './check.js';
import type { CheckContext } from './context.js';
import { connectionsLost, type WalkRequest } from './reachability/packet-evidence.js';

/** The nodes whose rules for this cluster IP the Rules step read, observed, as expected. */
export const rulesAsExpected = (ctx: CheckContext, ip: string): Set<string> =>
  new Set(
    ctx.rulesMatched
      .filter((m) => canonicalAddress(m.clusterIP) === canonicalAddress(ip))
      .map((m) => m.node),
  );

export const isOn = (c: Cause, node: string) =>
  c.finding.node === node || c.finding.nodes?.includes(node);

/** A finding about one family's rules explains only that family's connections; one of no family
 * (kube-proxy not running), every family's. */
export const ofFamily = (c: Cause, family: IPFamily | undefined) =>
  c.finding.family === undefined || c.finding.family === family;

/** The Rules step's failure on the node for the family's rules. */
const rulesFail = (ctx: CheckContext, node: string, family: IPFamily | undefined) =>
  ctx.earlier.find(
    (c) =>
      c.step === 'Rules' && c.finding.status === 'fail' && isOn(c, node) && ofFamily(c, family),
  );

/** The share of new connections to `to` the node's rules do not take to an endpoint, and the
 * Rules finding of that node and family it follows from; undefined where the Rules step passed
 * them, did not fail there, or the walk takes every connection to an endpoint. */
export function trafficLost(
  ctx: CheckContext,
  node: string,
  to: WalkRequest,
): { lost: { share: number; unknown: boolean }; cause: Cause } | undefined {
  if (rulesAsExpected(ctx, to.dst).has(node)) return undefined;
  const cause = rulesFail(ctx, node, familyOf(to.dst));
  const lost = cause && connectionsLost(ctx, node, to);
  return lost && cause && { lost, cause };
}

/** The rule lines a Rules finding read on the node, as read (not as a drift's side). */
export const readOn = (cause: Cause | undefined, node: string) =>
  (cause?.finding.evidence ?? [])
    .filter((e) => e.kind === 'observed' && e.node === node)
    .map(({ diff: _diff, ...e }) => e);
