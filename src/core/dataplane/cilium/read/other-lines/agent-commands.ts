// Commands typed between an agent's listings that change its table (`cilium(-dbg) service update`,
// `service delete`, as service_update.go and service_delete.go print their result): what each did
// is said at its line, and a frontend deleted after the listing that shows it is not shown.
import {
  frontendKey,
  parseAddress,
  type CiliumCut,
  type CiliumFrontend,
  type CiliumTable,
} from '../listing.js';
import { excerpt } from '../../../../sanitize.js';

const TYPED = /(?:^|\s)(?:cilium|cilium-dbg)\s+service\s+(update|delete)\b(.*)$/;
/** The CLI's word that it was done: "Added service with 2 backends", "Updated service with ...",
 * "Service 12 deleted successfully" (a build that takes the frontend quotes it). */
const DONE = /^(?:(?:Added|Updated) service with \d+ backends|Service \S+ deleted successfully)$/;

interface Typed {
  line: number;
  verb: 'update' | 'delete';
  target: string;
  /** The service ID it names: delete's argument, update's --id. */
  id?: number;
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
    // most lines of a big listing name no service: not trimmed and matched for nothing
    if (!l.includes('service')) return;
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
    const id = m[1] === 'update' ? /--id[ =](\d+)\b/.exec(args)?.[1] : /^\d+$/.exec(target)?.[0];
    const c: Typed = { line: i + 1, verb: m[1] as Typed['verb'], target, args, end: i + 1 };
    if (id !== undefined) c.id = Number(id);
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
  // those a whole run after them no longer lists (runs.ts): not shown, but a command may name one
  const gone = (table.runChanges ?? []).flatMap((r) => r.gone);
  const commands = typed(lines);
  // the reading stopped at a command said here: what is not read starts after what it printed
  let unreadFrom = table.unreadFrom;
  for (const c of commands)
    if (unreadFrom === c.line)
      unreadFrom = lines.findIndex((l, i) => i >= c.end && l.trim() !== '') + 1 || undefined;
  for (const c of commands) {
    const f = named([...frontends, ...gone], c);
    const result = c.done
      ? `Cilium said "${excerpt(c.done.text)}" (line ${c.done.line})`
      : 'its result is not in the paste';
    const command = `\`cilium service ${c.verb} ${excerpt(c.args.trim(), 100)}\``;
    if (!f) {
      said.push({
        line: c.line,
        reason: `${command} changed the agent's table (${result}): ${unmatched(frontends, gone, c)}`,
      });
      continue;
    }
    // by ID: its address too, as the listing shows it
    const what =
      f.id === c.id && c.id !== undefined ? `service ${c.id} (${f.ip}:${f.port})` : c.target;
    const listedBefore = f.line < c.line && f.backends.every((b) => b.line < c.line);
    if (c.verb === 'delete' && listedBefore && c.done) {
      frontends = frontends.filter((x) => x !== f);
      said.push({
        line: c.line,
        reason: `${command} deleted ${what} after the listing shows it at line ${f.line} (${result}): it is not shown`,
      });
    } else if (gone.includes(f))
      said.push({
        line: c.line,
        reason: `${command} changed ${what}, listed at line ${f.line} (${result}); the listing run again after it no longer lists it, so it is not shown`,
      });
    else if (listedBefore)
      said.push({
        line: c.line,
        reason: `${command} changed ${what} after the listing shows it at line ${f.line} (${result}): it is shown as listed before the command`,
      });
    else
      said.push({
        line: c.line,
        reason: `${command} changed the agent's table before the listing that shows ${what} at line ${f.line} (${result}): read as that listing shows it`,
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

/** The frontend a command names: by the service ID where it names one and a listing prints it
 * (the one listed before it first), else by its address. */
function named(frontends: readonly CiliumFrontend[], c: Typed): CiliumFrontend | undefined {
  const byId = frontends.filter((x) => c.id !== undefined && x.id === c.id);
  if (byId.length > 0) return byId.find((x) => x.line < c.line) ?? byId[0];
  const a = parseAddress(c.target);
  return a && frontends.find((x) => frontendKey(x) === frontendKey(a));
}

/** What is shown of a command whose frontend no listing names: frontends listed only before it
 * (none listed after it, or no IDs to tell which it named) are shown as listed, not as current. */
function unmatched(
  frontends: readonly CiliumFrontend[],
  gone: readonly CiliumFrontend[],
  c: Typed,
): string {
  if (!frontends.some((x) => x.line > c.line))
    return 'no listing after it is read, so what it changed is not shown';
  const before = frontends.filter((x) => x.line < c.line);
  const left = gone.filter((x) => x.line < c.line);
  if (before.length === 0 && left.length === 0)
    return 'each frontend is read as the listing after it shows it';
  const which =
    c.id !== undefined && ![...frontends, ...gone].some((x) => x.id !== undefined)
      ? `its listings print no service IDs, so which frontend is ID ${c.id} is not known`
      : 'which frontend it named is not known';
  const at = (xs: readonly CiliumFrontend[]) =>
    xs.map((x) => `${x.ip}:${x.port} (line ${x.line})`).join(', ');
  const shown = [
    ...(before.length > 0
      ? [
          `${at(before)}, listed before it and not after, ${before.length === 1 ? 'is' : 'are'} shown as listed then`,
        ]
      : []),
    ...(left.length > 0
      ? [
          `${at(left)}, which the listing run again after it no longer lists, ${left.length === 1 ? 'is' : 'are'} not shown`,
        ]
      : []),
  ];
  return `${which}: ${shown.join('; ')}`;
}
