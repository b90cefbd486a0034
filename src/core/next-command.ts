// A "next" command must run as printed: replayed from a snapshot, kdebug's own commands read
// that snapshot too, and the context the person chose is named in every command that uses one.

export interface Invocation {
  /** The snapshot the report was replayed from. */
  snapshot?: string;
  /** --context, when it was given. */
  context?: string;
}

const KDEBUG = /\bkdebug (?:svc|drift|trace|rules|expect)\b[^;()]*/g;

/** The command with --snapshot and --context added where it needs them. */
export function runnable(next: string, how: Invocation): string {
  const quote = (s: string) => (/^[\w./:@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  let out = next;
  if (how.context !== undefined)
    out = out.replace(/\bkubectl (?!.*--context)/g, `kubectl --context ${quote(how.context)} `);
  const live = /\(live\b/.test(next) || /--via /.test(next); // said to be run against the cluster
  return out.replace(KDEBUG, (cmd) => {
    const end = cmd.match(/\s*$/)![0];
    let c = cmd.trimEnd();
    if (how.snapshot !== undefined && !live && !c.includes('--snapshot'))
      c += ` --snapshot ${quote(how.snapshot)}`;
    if (
      how.context !== undefined &&
      (live || how.snapshot === undefined) &&
      !c.includes('--context')
    )
      c += ` --context ${quote(how.context)}`;
    return c + end;
  });
}
