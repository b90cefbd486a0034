// Where a packet walk's read of an iptables dump stopped: a dump cut short holds its rules up to
// the cut, and the chains it holds in part may do more past it than the walk could see. A chain
// the walk left by a rule it matched (a verdict, DNAT, RETURN, a goto, or a verdict of a chain
// it jumped to) was left before the cut: rules past the cut there cannot come first. Only a chain
// the walk fell off the end of (every rule read passed) may hold, past the cut, a rule that would.
import type { ReadStop } from '../../trace/answer.js';
import type { MatchedRule, TraceOutcome } from '../../trace/trace.js';
import type { Ruleset } from '../read/parse.js';

/** The cut of `rs` (read from `file`), with the chains each outcome passed through to their end
 * that the dump holds in part; undefined for a whole dump. */
export function readStop(
  rs: Ruleset,
  file: string,
  outcomes: TraceOutcome[],
): ReadStop | undefined {
  const cut = rs.cut;
  if (!cut) return undefined;
  const cutOff = outcomes.map((o) =>
    fellThrough(rs, o.rules).filter(({ table, chain }) => rs.table(table)?.partial.has(chain)),
  );
  const partly = cutOff.map((fell) =>
    fell.map(({ chain }) => chain).filter((c, k, all) => all.indexOf(c) === k),
  );
  // the rules matched after the walk fell off a cut chain hold only if the rules past the cut
  // let the packet on unchanged
  const known = cutOff.map((fell, i) =>
    Math.min(outcomes[i]!.rules.length, ...fell.map((f) => f.at)),
  );
  return { file, line: cut.line, why: cut.message, partly, known };
}

/** What a matched rule does to the walk through its table's chains. */
type Step =
  | { kind: 'enter'; chain: string; goto: boolean } // a jump (goto) to a chain of the table
  | { kind: 'leave' } // RETURN: its chain left by it
  | { kind: 'end' } // a verdict, a NAT: the table's walk ends there
  | { kind: 'policy' } // the built-in chain's policy: its rules all passed
  | { kind: 'on' }; // a mark, a log, a jump to a chain not read: the walk goes on in the chain

function step(rs: Ruleset, m: MatchedRule): Step {
  const at = m.line > 0 ? rs.ruleAt(m.line) : undefined;
  if (!at) return m.effect.startsWith('policy ') ? { kind: 'policy' } : { kind: 'on' };
  const t = at.table.rule(at.id).target;
  if (!t) return { kind: 'on' };
  switch (t.kind) {
    case 'chain': {
      const next = at.table.targetChain(at.id);
      return next ? { kind: 'enter', chain: next.name, goto: t.goto } : { kind: 'on' };
    }
    case 'verdict':
      return t.name === 'RETURN' ? { kind: 'leave' } : { kind: 'end' };
    case 'reject':
    case 'dnat':
    case 'snat':
    case 'masquerade':
      return { kind: 'end' };
    default:
      return t.name === 'REDIRECT' ? { kind: 'end' } : { kind: 'on' };
  }
}

/** The chains (by table) the walk of these matched rules passed through to their end, each with
 * `at`: the index of the first rule matched after it fell off it (rules.length: none). */
function fellThrough(
  rs: Ruleset,
  rules: MatchedRule[],
): { table: string; chain: string; at: number }[] {
  const out: { table: string; chain: string; at: number }[] = [];
  let table: string | undefined;
  let stack: string[] = []; // the chains the walk is in, the one it runs last
  let at = 0;
  const fellOff = (chains: string[]) =>
    out.push(...chains.map((chain) => ({ table: table!, chain, at })));
  for (const [i, m] of rules.entries()) {
    at = i;
    if (m.table !== table) {
      // a table's walk that ended with no verdict fell off every chain it was in
      fellOff(stack);
      [table, stack] = [m.table, [m.chain]];
    }
    // a matched rule in a chain below the last one: the chains after it were passed to their end
    const k = stack.lastIndexOf(m.chain);
    if (k < 0) {
      fellOff(stack);
      stack = [m.chain];
    } else fellOff(stack.splice(k + 1));
    const s = step(rs, m);
    if (s.kind === 'enter') {
      if (s.goto) stack.pop();
      stack.push(s.chain);
    } else if (s.kind === 'leave') stack.pop();
    else if (s.kind === 'end') stack = [];
    else if (s.kind === 'policy') fellOff(stack.splice(0)); // the policy, too, comes past them
  }
  at = rules.length;
  fellOff(stack);
  return out;
}
