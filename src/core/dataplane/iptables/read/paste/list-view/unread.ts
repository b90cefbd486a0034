// Text an `iptables -L` row printed and kdebug does not read, kept on its rule as a match of its
// own (`-m unread --as "…"`): no packet is known to meet it, so no rule reads as matching more.
import type { Match } from '../../rule/rule.js';

/** What kdebug keeps of text -L printed and it does not read: a match no packet is known to meet. */
export const unreadMatch = (shown: string) => `-m ${UNREAD} --as ${quoted(shown)}`;
const UNREAD = 'unread';

/** The text of such a match as -L printed it; undefined for any other match. */
export function unreadText(m: Match): string | undefined {
  return m.kind === 'other' && m.module === UNREAD
    ? (m.options.find((o) => o.name === 'as')?.values[0] ?? '')
    : undefined;
}

export const quoted = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
