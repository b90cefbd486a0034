// A chain of a parsed table, a view of its per-chain records; and each table's built-in chains.
import type { Rule } from './rule/rule.js';
import type { ChainKind } from './chain-names.js';
import type { Table } from './table.js';

/** Each table's built-in chains, in the order iptables lists them. */
export const BUILTINS: Record<string, readonly string[]> = {
  raw: ['PREROUTING', 'OUTPUT'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

// A big dump has 100,000 chains: a Chain is a view of its table's per-chain records, made only
// when asked for (bulk readers use chain indexes and build none).
export class Chain {
  constructor(
    readonly table: Table,
    /** Position in the table. */
    readonly index: number,
  ) {}

  /** kube-proxy's per-Service chains by name shape, read from the bytes. */
  get kind(): ChainKind {
    return this.table.kindOf(this.index);
  }

  /** Decoded on first use: most of a big dump's chain names are never read. */
  get name(): string {
    return this.table.nameOf(this.index);
  }

  /** The policy of a builtin chain (ACCEPT, DROP); undefined for user chains. */
  get policy(): string | undefined {
    return this.table.chainIndex.policyOf(this.index);
  }

  /** The line that declared it (`:CHAIN`, `-N` or `-P`). */
  get line(): number | undefined {
    return this.table.chainLine(this.index);
  }

  /** Declared by `:CHAIN`, `-N` or `-P`; false when only rules name it (grep removed the line). */
  get declared(): boolean {
    return this.line !== undefined;
  }

  get builtin(): boolean {
    return (BUILTINS[this.table.name] ?? []).includes(this.name);
  }

  get ruleCount(): number {
    return this.table.ruleCountOf(this.index);
  }

  /** The table-wide id of this chain's k-th rule. */
  ruleId(k: number): number {
    return this.table.ruleIdOf(this.index, k);
  }

  get ruleIds(): number[] {
    return this.table.ruleIdsOf(this.index);
  }

  /** Typed rules, parsed on first use. */
  get rules(): Rule[] {
    return this.table.typedRules(this.index);
  }
}
