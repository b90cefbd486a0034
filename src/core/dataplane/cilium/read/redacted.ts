// An address its author hid in a pasted listing ("10.x.x.31:60443", "10.*.*.5:80"): the row is
// not read, and what that leaves unknown is said (cilium/cilium#35518 pastes a service list so).

/** An IPv4 address and port with an octet hidden by x's or stars, as authors hide them. */
const HIDDEN = /^(?:\d{1,3}|[xX]+|\*+)(?:\.(?:\d{1,3}|[xX]+|\*+)){3}:\d+(?:\/\S+)?$/;

/** Whether the cell is an address its author hid (one octet or more not a number). */
export const isHidden = (cell: string): boolean => HIDDEN.test(cell) && /[xX*]/.test(cell);

/** What is said of a row whose address is hidden: not read, and why. */
export const hiddenRow = (
  line: number,
  address: string,
  what: 'frontend' | 'backend',
): { line: number; reason: string } => ({
  line,
  reason:
    what === 'frontend'
      ? `a frontend whose address its author hid ("${address}"): its row and its backends' rows not read`
      : `a backend whose address its author hid ("${address}"): not read, so its frontend's backends are not all known`,
});
