// Whether the Rules step compared a node's rules for the Service enough to say what the node does
// with it: the steps after it (Traffic policy, Hairpin) speak of a node's rules only where it did.
import { DriftInputError } from '../../dataplane/drift.js';
import { IptablesParseError, NoRulesError } from '../../dataplane/iptables/read/errors.js';
import { ListingParseError } from '../../dataplane/listing-error.js';
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
  } catch (e) {
    if (readFailure(e)) return false;
    throw e; // anything else is a bug, not rules left unread
  }
}

/** What drift throws for input it cannot read: the node not checkable, or its dump unparsed. */
const readFailure = (e: unknown): boolean =>
  e instanceof DriftInputError ||
  e instanceof IptablesParseError ||
  e instanceof NoRulesError ||
  e instanceof ListingParseError;
