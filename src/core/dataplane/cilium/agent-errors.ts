// What Cilium's CLI writes to stderr while it prints a Service listing ("error parsing frontend
// &{...}", "error parsing backend &{...}", "error parsing svc: empty state"): each without a
// newline, so a paste holds them glued together, alone on a line or before the table's next line.

const AT_START =
  /^(\s*)((?:error parsing (?:svc: empty state|(?:frontend|backend) &\{[^}\n]*\}))+)/;

/** The text with those messages taken out (each line kept, so line numbers hold), and the first
 * of them with its line: the entries it names are not in the listing. */
export function withoutAgentErrors(text: string): {
  text: string;
  first?: { line: number; what: string };
} {
  if (!text.includes('error parsing ')) return { text };
  let first: { line: number; what: string } | undefined;
  const lines = text.split('\n').map((l, i) => {
    const m = AT_START.exec(l);
    if (!m) return l;
    first ??= { line: i + 1, what: m[2]!.replace(/(?<=\})error parsing .*$/, '') };
    return m[1]! + l.slice(m[0].length);
  });
  return { text: lines.join('\n'), ...(first ? { first } : {}) };
}
