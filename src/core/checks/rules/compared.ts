// Whether the Rules step compared a node's rules for the Service enough to say what the node does
// with it: the steps after it (Traffic policy, Hairpin) speak of a node's rules only where it did.
import type { IPFamily } from '../../ipv6.js';
import type { CheckContext } from '../context.js';

/** The node's state of its own proxy mode was read and compared, as the Rules step compares it
 * (its drift), with every part that decides whether it forwards the Service. Rules cut short,
 * unreadable or not recorded make the drift throw, and are not compared here either. */
export function rulesCompared(ctx: CheckContext, node: string, family?: IPFamily): boolean {
  const n = ctx.analysis.node(node, undefined, family);
  const dataplane = n.dataplane();
  if (!dataplane || dataplane.mode !== n.mode()) return false;
  try {
    const drift = n.drift(ctx.scope);
    return !dataplane.forwardingNotRead?.(drift);
  } catch {
    return false;
  }
}
