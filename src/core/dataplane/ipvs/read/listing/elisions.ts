// An elision ("...") in or above an ipvsadm listing: the virtual server above it may have more
// real servers, those below it may be another's left out with it, and one above the listing's
// first line left its start out when no header follows.
import { ELISION } from '../../../paste/elisions.js';
import type { ListingRead } from './state.js';

/** Reads an elision line; false for any other line. */
export function readElision(r: ListingRead, t: string, no: number): boolean {
  if (!ELISION.test(t)) return false;
  if (!r.inListing) {
    r.elidedAbove = no;
    r.skipped.push(no);
    return true;
  }
  r.elided.push(no);
  if (r.current)
    r.current.partial ??= `an elision follows it at line ${no}: it may have more real servers`;
  r.current = undefined;
  r.afterElision = true;
  r.savedAfter = no;
  return true;
}

/** The listing starts without its header below an elision: that elision left its start out. */
export function bareStart(r: ListingRead): void {
  if (r.inListing || r.elidedAbove === undefined) return;
  r.skipped.splice(r.skipped.indexOf(r.elidedAbove), 1);
  r.elided.push(r.elidedAbove);
  r.afterElision = r.inListing = true;
}
