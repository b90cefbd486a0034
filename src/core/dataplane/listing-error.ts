// A listing of a node's dataplane outside iptables (nft's, ipvsadm's, a Cilium agent's) that does
// not read: one error shape for all three, each mode's its own class for what catches it.
import { escapeControls } from '../sanitize.js';

/** Where a listing does not read and why; the message is `FILE[:LINE]: read as KIND: reason`,
 * escaped, KIND what the reader took the input for (left out where the reason names it). */
export class ListingParseError extends Error {
  /** What the reader took the input for ("an nft listing"); each mode's class names its own. */
  static readonly kind: string | undefined = undefined;
  /** A reason that already names the kind ("the nft listing holds no table") is not prefixed. */
  static readonly namesKind: RegExp | undefined = undefined;
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly reason: string,
  ) {
    const { kind, namesKind } = new.target;
    super(
      `${file}${line !== undefined ? `:${line}` : ''}: ${readAs(kind, namesKind, reason)}${escapeControls(reason)}`,
    );
  }
}

/** "read as KIND: ", the one place a parse error names the kind of input; '' where the reason
 * names it already. Also IptablesParseError's. */
export const readAs = (kind: string | undefined, namesKind: RegExp | undefined, reason: string) =>
  kind === undefined || namesKind?.test(reason) ? '' : `read as ${kind}: `;
