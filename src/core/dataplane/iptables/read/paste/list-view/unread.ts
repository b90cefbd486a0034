// Text an `iptables -L` row printed and kdebug does not read, kept on its rule as a match of its
// own (`-m unread --as "…"`): no packet is known to meet it, so no rule reads as matching more.
import type { Match } from '../../rule/rule.js';

/** What kdebug keeps of text -L printed and it does not read: a match no packet is known to meet;
 * where that text is a template's placeholder for a value, which value it stands for. */
export const unreadMatch = (shown: string, placeholder?: Placeholder) =>
  `-m ${UNREAD} --as ${quoted(shown)}${placeholder ? ` --placeholder ${placeholder.of} --value ${quoted(placeholder.value)}` : ''}`;
const UNREAD = 'unread';

/** A template's placeholder an author typed where -L prints a value ("{{ service port }}"). */
export interface Placeholder {
  of: 'source' | 'destination' | 'sport' | 'dport';
  value: string;
}

/** The text of such a match as -L printed it; undefined for any other match. */
export function unreadText(m: Match): string | undefined {
  return m.kind === 'other' && m.module === UNREAD
    ? (m.options.find((o) => o.name === 'as')?.values[0] ?? '')
    : undefined;
}

export const quoted = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The placeholder such a match stands in for a value; undefined for any other match. */
export function placeholderOf(m: Match): Placeholder | undefined {
  if (m.kind !== 'other' || m.module !== UNREAD) return undefined;
  const of = m.options.find((o) => o.name === 'placeholder')?.values[0];
  const value = m.options.find((o) => o.name === 'value')?.values[0];
  return of !== undefined && value !== undefined && PLACED.has(of)
    ? { of: of as Placeholder['of'], value }
    : undefined;
}
const PLACED = new Set(['source', 'destination', 'sport', 'dport']);
