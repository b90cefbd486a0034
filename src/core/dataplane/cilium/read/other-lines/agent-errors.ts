// What Cilium's CLI writes to stderr while it prints a Service listing ("error parsing frontend
// &{...}", "error parsing backend &{...}", "error parsing svc: empty state"): each without a
// newline, so a paste holds them glued together, alone on a line or before the table's next line.

/** One message as printServiceList writes it (Fprint, or Fprintf of the model with %+v). */
const ONE = /error parsing (?:svc: empty state|(?:frontend|backend) &\{[^}\n]*\})/g;
const AT_START = new RegExp(`^(\\s*)((?:${ONE.source})+)`);

/** The text with those messages taken out (each line kept, so line numbers hold), the first of
 * them with its line, and how many there are: the entries they name are not in the listing. */
export function withoutAgentErrors(text: string): {
  text: string;
  first?: { line: number; what: string; count: number };
} {
  if (!text.includes('error parsing ')) return { text };
  let first: { line: number; what: string } | undefined;
  let count = 0;
  const lines = text.split('\n').map((l, i) => {
    const m = AT_START.exec(l);
    if (!m) return l;
    const each = m[2]!.match(ONE)!;
    first ??= { line: i + 1, what: each[0]! };
    count += each.length;
    return m[1]! + l.slice(m[0].length);
  });
  return { text: lines.join('\n'), ...(first ? { first: { ...first, count } } : {}) };
}
