// Jumps to kube-proxy chains the dump does not hold. iptables-restore refuses such a rule set,
// so the chain was lost from a paste or deleted by hand (iptables -X after -F of its rules):
// whatever jumps there falls through as if the rule were not there.
import { syncNext, type DriftContext } from './context.js';
import type { Table } from '../read/parse.js';

/** Is `name` neither declared nor holding a rule in `table` (only jumped to)? */
export function chainAbsent(table: Table, name: string): boolean {
  // by index: every Service port asks, and a Chain view is made for none
  const i = table.indexOf(name);
  return i < 0 || (table.chainLine(i) === undefined && table.ruleCountOf(i) === 0);
}

/** One `jump-target-missing` per missing target a finding does not already name. */
export function danglingJumps(c: DriftContext): void {
  for (const table of [c.nat, c.filter]) {
    if (!table) continue;
    const from = new Map<string, string[]>();
    for (let i = 0; i < table.chainCount; i++) {
      // an endpoint chain only marks and DNATs (its mark chain missing is masquerade drift):
      // two thirds of a big dump's rules are not read
      if (table.kindOf(i) === 'KUBE-SEP') continue;
      // by index: a big dump's 100,000 jumps make no Chain view nor id list
      const count = table.ruleCountOf(i);
      for (let k = 0; k < count; k++) {
        const id = table.ruleIdOf(i, k);
        const at = table.targetIndex(id);
        // a target that is a chain of the table resolves; one that is not is a target extension
        // (DNAT, MARK ...) or a chain that is missing
        const target =
          at >= 0
            ? table.chainLine(at) !== undefined || table.ruleCountOf(at) > 0
              ? undefined
              : table.nameOf(at)
            : table.target(id);
        if (!target?.startsWith('KUBE-') || c.reported.has(target)) continue;
        // a chain not read (one Service's chains were read by name) is not known to be missing
        if (table.chainsRead && !table.chainsRead.has(target)) continue;
        const lines = from.get(target) ?? [];
        lines.push(`-t ${table.name} ${table.text(id)}`);
        from.set(target, lines);
      }
    }
    for (const [target, lines] of from)
      c.add({
        id: 'jump-target-missing',
        title: `${lines.length} rule${lines.length === 1 ? '' : 's'} jump to ${target}, which is missing`,
        message: `node ${c.node}'s ${table.name} table jumps to ${target}, a chain it does not hold: iptables-restore refuses such a rule set, so the chain was lost from the dump or deleted by hand, and the jump does nothing.`,
        expected: [],
        actual: lines,
        ...syncNext(c),
      });
  }
}
