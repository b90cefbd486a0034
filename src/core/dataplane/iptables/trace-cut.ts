// Where a packet walk's read of an iptables dump stopped: a dump cut short holds its rules up to
// the cut, and the chains it holds in part may do more past it than the walk could see.
import type { ReadStop } from '../trace/answer.js';
import type { TraceOutcome } from '../trace/trace.js';
import type { Ruleset } from './read/parse.js';

/** The cut of `rs` (read from `file`), with the chains each outcome entered that the dump holds in
 * part (a matched rule's chain, or the chain it jumped to); undefined for a whole dump. */
export function readStop(
  rs: Ruleset,
  file: string,
  outcomes: TraceOutcome[],
): ReadStop | undefined {
  const cut = rs.warnings.find((w) => w.kind === 'truncated');
  if (!cut) return undefined;
  const partly = outcomes.map((o) => {
    const chains = new Set<string>();
    for (const m of o.rules) {
      const table = rs.table(m.table);
      if (!table) continue;
      if (table.partial.has(m.chain)) chains.add(m.chain);
      const at = rs.ruleAt(m.line);
      const target = at && at.table === table ? table.target(at.id) : undefined;
      if (target !== undefined && table.partial.has(target)) chains.add(target);
    }
    return [...chains];
  });
  return { file, line: cut.line, why: cut.message, partly };
}
