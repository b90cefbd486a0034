// Commands typed between an agent's listings that change its table (`cilium(-dbg) service update`,
// `service delete`, as service_update.go and service_delete.go print their result): what each did
// is said at its line, and a frontend deleted after the listing that shows it is not shown.
import { frontendKey, parseAddress, type CiliumCut, type CiliumTable } from './listing.js';
import { excerpt } from '../../../sanitize.js';

const TYPED = /(?:^|\s)(?:cilium|cilium-dbg)\s+service\s+(update|delete)\b(.*)$/;
/** The CLI's word that it was done: "Added service with 2 backends", "Updated service with ...",
 * "Service 12 deleted successfully" (a build that takes the frontend quotes it). */
const DONE = /^(?:(?:Added|Updated) service with \d+ backends|Service \S+ deleted successfully)$/;

interface Typed {
  line: number;
  verb: 'update' | 'delete';
  target: string;
  args: string;
  /** Its last line: the command's, or of what it printed. */
  end: number;
  done?: { line: number; text: string };
}

/** Each such command of the paste, with the CLI's word that it was done where the lines under it
 * (up to the next prompt or command) hold it. */
function typed(lines: readonly string[]): Typed[] {
  const out: Typed[] = [];
  lines.forEach((l, i) => {
    const m = TYPED.exec(l.trim());
    if (!m) return;
    // a line ending in a backslash goes on on the next
    let args = m[2]!;
    for (let k = i + 1; /\\$/.test(args) && k < lines.length; k++)
      args = `${args.slice(0, -1).trimEnd()} ${lines[k]!.trim()}`;
    const target =
      m[1] === 'update'
        ? (/--frontend[ =](\S+)/.exec(args)?.[1] ?? '')
        : /--all\b/.test(args)
          ? 'all'
          : (/^\s*(\S+)/.exec(args)?.[1] ?? '');
    const c: Typed = { line: i + 1, verb: m[1] as Typed['verb'], target, args, end: i + 1 };
    for (let k = i + 1; k < lines.length && !TYPED.test(lines[k]!.trim()); k++) {
      const t = lines[k]!.trim();
      if (/[#$] \S/.test(t)) break; // the next prompt
      if (t !== '') c.end = k + 1;
      if (DONE.test(t)) c.done = { line: k + 1, text: t };
    }
    out.push(c);
  });
  return out;
}

/** The table with what the commands between its listings did: said at each command's line; a
 * frontend deleted (the CLI said so) after every line that lists it is taken out. */
export function withAgentCommands(table: CiliumTable, lines: readonly string[]): CiliumTable {
  const said: CiliumCut[] = [];
  let frontends = table.frontends;
  const commands = typed(lines);
  // the reading stopped at a command said here: what is not read starts after what it printed
  let unreadFrom = table.unreadFrom;
  for (const c of commands)
    if (unreadFrom === c.line)
      unreadFrom = lines.findIndex((l, i) => i >= c.end && l.trim() !== '') + 1 || undefined;
  for (const c of commands) {
    const a = parseAddress(c.target);
    const f = a && frontends.find((x) => frontendKey(x) === frontendKey(a));
    const result = c.done
      ? `Cilium said "${excerpt(c.done.text)}" (line ${c.done.line})`
      : 'its result is not in the paste';
    const command = `\`cilium service ${c.verb} ${excerpt(c.args.trim(), 100)}\``;
    if (!f) {
      const after = frontends.some((x) => x.line > c.line);
      said.push({
        line: c.line,
        reason: `${command} changed the agent's table (${result}): ${after ? 'each frontend is read as the listing after it shows it' : 'no listing after it is read, so what it changed is not shown'}`,
      });
      continue;
    }
    const listedBefore = f.line < c.line && f.backends.every((b) => b.line < c.line);
    if (c.verb === 'delete' && listedBefore && c.done) {
      frontends = frontends.filter((x) => x !== f);
      said.push({
        line: c.line,
        reason: `${command} deleted ${c.target} after the listing shows it at line ${f.line} (${result}): it is not shown`,
      });
    } else if (listedBefore)
      said.push({
        line: c.line,
        reason: `${command} changed ${c.target} after the listing shows it at line ${f.line} (${result}): it is shown as listed before the command`,
      });
    else
      said.push({
        line: c.line,
        reason: `${command} changed the agent's table before the listing that shows ${c.target} at line ${f.line} (${result}): read as that listing shows it`,
      });
  }
  if (said.length === 0) return table;
  const { unreadFrom: _, ...rest } = table;
  return {
    ...rest,
    frontends,
    notRead: [...(table.notRead ?? []), ...said],
    ...(unreadFrom !== undefined ? { unreadFrom } : {}),
  };
}
