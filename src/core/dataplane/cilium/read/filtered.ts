// A listing's command piped through a filter (`cilium bpf lb list | grep 10.96.0.10`): its rows are
// only those the filter kept, said by what each stage does (paste/filter-stage.ts), as for
// kube-proxy's pastes: the frontends shown need not be all, nor all their backends.
import { grepFilter } from '../../paste/grep-context.js';
import type { CiliumFiltered } from './listing.js';

/** A command that prints one of the agent's listings. */
export const LIST_COMMAND = /\b(?:service|bpf\s+lb)\s+(?:list|ls)\b|\bdb\/show\b/;

/** A row of a listing: it holds an address and port ("10.96.0.10:53", "[fd00::10]:53"). */
const ROW = /(?:\d|\]):\d+\b/;

/** Each listing command of `lines` piped through a filter: the command, what its stages keep,
 * and the first and last row it printed (before the next command; a listing joined with another
 * may have read its rows into frontends the other listed first, so its own lines say them). */
export function filteredRuns(lines: readonly string[]): CiliumFiltered[] {
  const commands = lines.flatMap((l, i) => (LIST_COMMAND.test(l) ? [i + 1] : []));
  return commands.flatMap((at, k) => {
    const filter = grepFilter(lines[at - 1]!);
    if (!filter) return [];
    const next = commands[k + 1] ?? lines.length + 1;
    const shown: number[] = [];
    for (let no = at + 1; no < next; no++) if (ROW.test(lines[no - 1]!)) shown.push(no);
    if (shown.length === 0) return [];
    return [
      {
        command: filter.command,
        line: at,
        keeps: filter.keeps,
        from: shown[0]!,
        to: shown.at(-1)!,
      },
    ];
  });
}
