// A listing of a node's dataplane outside iptables (nft's, ipvsadm's, a Cilium agent's) that does
// not read: one error shape for all three, each mode's its own class for what catches it.
import { escapeControls } from '../sanitize.js';

/** Where a listing does not read and why; the message is `FILE[:LINE]: reason`, escaped. */
export class ListingParseError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly reason: string,
  ) {
    super(`${file}${line !== undefined ? `:${line}` : ''}: ${escapeControls(reason)}`);
  }
}
