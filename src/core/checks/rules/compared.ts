// Whether the Rules step compared a node's rules for the Service enough to say what the node does
// with it: the steps after it (Traffic policy, Hairpin) speak of a node's rules only where it did.
import type { NodeDrift } from '../../dataplane/drift.js';
import { isDriftReadFailure } from '../../nodes/drift-unavailable.js';
import { familyOf, type IPFamily } from '../../ipv6.js';
import type { Service } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import type { CheckContext, RulesMatched } from '../context.js';

/** The node's state of its own proxy mode was read and compared, as the Rules step compares it
 * (its drift), with every part that decides whether it forwards the Service. Rules cut short,
 * unreadable or not recorded make the drift throw, and are not compared here either. */
export function rulesCompared(ctx: CheckContext, node: string, family?: IPFamily): boolean {
  const drift = driftOf(ctx, node, family);
  const dataplane = ctx.analysis.node(node, undefined, family).dataplane();
  return drift !== undefined && !dataplane?.forwardingNotRead?.(drift);
}

/** The node's state of its own proxy mode was read whole (its drift computed), whether or not
 * it holds what decides forwarding: facts besides that (IPVS's ipsets) are still observed. */
export const rulesRead = (ctx: CheckContext, node: string, family?: IPFamily): boolean =>
  driftOf(ctx, node, family) !== undefined;

function driftOf(ctx: CheckContext, node: string, family?: IPFamily): NodeDrift | undefined {
  const n = ctx.analysis.node(node, undefined, family);
  const dataplane = n.dataplane();
  if (!dataplane || dataplane.mode !== n.mode()) return undefined;
  try {
    return n.drift(ctx.scope);
  } catch (e) {
    if (isDriftReadFailure(e)) return undefined;
    throw e; // anything else is a bug, not rules left unread
  }
}

/** The rules of `families` on `nodes` that `f`, their rules-match, passed as expected: each with
 * the Service's cluster IP of its family. None where the pass did not stand (a part not observed
 * makes it a skip). */
export function matchedOn(
  svc: Service,
  nodes: readonly string[],
  families: readonly IPFamily[],
  f: Finding | undefined,
): RulesMatched[] {
  if (f?.id !== 'rules-match' || f.status !== 'pass') return [];
  return nodes.flatMap((node) =>
    svc.clusterIPs.flatMap((clusterIP) => {
      const family = familyOf(clusterIP);
      return family && families.includes(family) ? [{ node, family, clusterIP }] : [];
    }),
  );
}
