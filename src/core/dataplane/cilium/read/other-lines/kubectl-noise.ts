// What kubectl writes to stderr around a command it runs in the agent's Pod (`kubectl exec ...
// -- cilium-dbg service list`), which a paste of the terminal holds among the listing's lines:
// none of it is a row of the listing.

/** kubectl's own lines: which container it chose, the TTY it could not use, the old exec syntax. */
const NOISE = [
  /^Defaulted container "[^"]*" out of: /,
  /^Unable to use a TTY - input is not a terminal or the right kind of file$/,
  /^kubectl exec \[POD\] \[COMMAND\] is DEPRECATED and will be removed in a future version\./,
];

/** The notice names each container of the Pod, "NAME" or "NAME (init)", with ", " between. */
const CONTAINERS = /^Defaulted container "[^"]*" out of: /;
/** A line that is only more of that list (a terminal wrapped the notice, mid-name too). */
const CONTAINERS_REST = /^[\w.-]+(?: \(init\))?(?:, [\w.-]+(?: \(init\))?)*$/;

/** kubectl's last word on a command that failed in the Pod: what it printed may not be whole. */
const FAILED = /^command terminated with exit code (\d+)$/;

/** The text with kubectl's lines blanked (each line kept, so line numbers hold), and the line
 * where kubectl said the command failed, if it did. */
export function withoutKubectlNoise(text: string): {
  text: string;
  failed?: { line: number; code: number };
} {
  if (!/Defaulted container|Unable to use a TTY|is DEPRECATED|command terminated/.test(text))
    return { text };
  let failed: { line: number; code: number } | undefined;
  let notice = false;
  const lines = text.split('\n').map((l, i) => {
    const t = l.trim();
    // the rest of the notice's container list, wrapped onto the next line by the terminal
    if (notice && CONTAINERS_REST.test(t)) return '';
    notice = CONTAINERS.test(t);
    if (NOISE.some((re) => re.test(t))) return '';
    const m = FAILED.exec(t);
    if (!m) return l;
    failed ??= { line: i + 1, code: Number(m[1]) };
    return '';
  });
  return { text: lines.join('\n'), ...(failed ? { failed } : {}) };
}
