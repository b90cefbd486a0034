// A node without a local endpoint under externalTrafficPolicy Local, in iptables mode: kube-proxy's
// filter DROP rules for the port's external traffic.
import type { StateLine } from '../dataplane.js';
import type { Ruleset } from './read/parse.js';
import type { ServiceTree } from '../trees.js';

/** The filter DROP rules "... has no local endpoints" kube-proxy writes for the port. */
export function iptablesLocalDrops(
  rs: Ruleset,
  source: string,
  tree: ServiceTree | undefined,
): StateLine[] {
  return (tree?.verdicts ?? [])
    .filter((v) => v.kind === 'drop' && v.comment?.includes('no local endpoints'))
    .map((v) => {
      const t = rs.table(v.table);
      const id = t ? t.ruleAtLine(v.line) : -1;
      const file = t?.file ?? source;
      return t && id >= 0
        ? { text: `${file}:${v.line}: ${t.text(id)}`, source: file, line: v.line }
        : { text: `${v.table} ${v.chain} line ${v.line}` };
    });
}
