// The trees a rules dump is read into, found by their chains' hash and by their cluster IP as
// each rule is read, and what they share: the masquerade conditions, the kinds of a tree's own chains.
import { hash16 } from '../../kube-proxy/chain-names.js';
import type { Rule, Ruleset, Table } from '../read/parse.js';
import { unreadText } from '../read/paste/list-view/unread.js';
import type { ServicePortName } from '../../../model.js';
import { emptyTree, type MasqueradeRule, type ServiceTree } from '../../trees.js';
import type { TreeOptions } from '../trees.js';

/** The trees built so far, by chain hash and by cluster IP, and the Service ports asked for. */
export class TreeIndex {
  readonly nat: Table | undefined;
  readonly filter: Table | undefined;
  readonly trees: ServiceTree[] = [];
  readonly positions = new Map<string, number>(); // chain hash -> position in trees
  readonly byVip = new Map<string, ServiceTree>(); // "10.1.0.1:443/tcp"
  readonly names = new Map<string, { name: ServicePortName; protocol: string }>(); // by hash
  readonly only: Set<string> | undefined; // chain hashes of the trees asked for
  readonly onlyNames: Set<string> | undefined;

  constructor(rs: Ruleset, options: TreeOptions) {
    this.nat = rs.table('nat');
    this.filter = rs.table('filter');
    for (const sp of options.servicePorts ?? []) {
      const protocol = sp.protocol.toLowerCase();
      this.names.set(sp.hash ?? hash16(sp.name + protocol), { name: sp.name, protocol });
    }
    if (options.only) {
      this.only = new Set();
      this.onlyNames = new Set();
      for (const sp of options.only) {
        const protocol = sp.protocol.toLowerCase();
        const hash = sp.hash ?? hash16(sp.name + protocol);
        this.names.set(hash, { name: sp.name, protocol });
        this.only.add(hash);
        this.onlyNames.add(sp.name);
      }
    }
  }

  /** The tree of a chain hash (or of a Service port name), created on first sight. */
  tree(hash: string | undefined, name: string | undefined, protocol: string): ServiceTree {
    name ??= hash ? this.names.get(hash)?.name : undefined;
    if (!hash && name) hash = hash16(name + protocol);
    let tree = this.byHash(hash);
    if (!tree) {
      tree = emptyTree({ name, id: '', hash, protocol });
      if (hash) this.positions.set(hash, this.trees.length);
      this.trees.push(tree);
    }
    tree.name ??= name;
    return tree;
  }

  /** The tree of a chain hash, if there is one yet. */
  byHash(hash: string | undefined): ServiceTree | undefined {
    const at = hash === undefined ? undefined : this.positions.get(hash);
    return at === undefined ? undefined : this.trees[at];
  }

  // thousands of rules share a few conditions ("! -s 10.244.0.0/16"): one string for each
  private readonly conditions = new Map<string, string>();

  /** A KUBE-MARK-MASQ rule's condition and why, the rule typed at most once for both. */
  masquerade(nat: Table, id: number): { condition: string; why?: MasqueradeRule['why'] } {
    let typed: Rule | undefined;
    const rule = () => (typed ??= nat.rule(id));
    const c = masqueradeCondition(nat, id, rule);
    let condition = this.conditions.get(c);
    if (condition === undefined) this.conditions.set(c, (condition = c));
    const why = masqueradeWhy(nat, id, rule);
    return why ? { condition, why } : { condition };
  }
}

/** Where ownChains keeps each kind of a tree's own chains. */
export const OWN_SLOT: Record<string, number> = {
  'KUBE-SVC': 0,
  'KUBE-SVL': 1,
  'KUBE-EXT': 2,
  'KUBE-FW': 3,
  'KUBE-XLB': 4,
};

/** The indexes of the SVC / SVL / EXT / FW / XLB chains of these hashes that are in the table. */
export function ownIndexes(nat: Table, hashes: Set<string>): Set<number> {
  const out = new Set<number>();
  for (const hash of hashes)
    for (const kind of Object.keys(OWN_SLOT)) {
      const c = nat.indexOf(`${kind}-${hash}`);
      if (c >= 0) out.add(c);
    }
  return out;
}

/** Adds an item to a tree's list: short lists are copied at their exact size (a push onto []
 * reserves 17 slots, and most trees' lists hold one or two items). */
export function append<T>(list: T[], item: T): T[] {
  if (list.length < 4) return list.concat([item]);
  list.push(item);
  return list;
}

/** What kube-proxy marks with a KUBE-MARK-MASQ rule, where it is one of its own cases (trees.ts
 * MasqueradeRule.why): read from its matches, not its words. */
export function masqueradeWhy(
  t: Table,
  id: number,
  typed = () => t.rule(id),
): MasqueradeRule['why'] {
  const src = t.addressMatch(id, 'source');
  if (src)
    return !src.negated && (src.cidr === '127.0.0.0/8' || src.cidr === '::1/128')
      ? 'localhost-clients'
      : undefined;
  // --src-type is addrtype's, one of the other matches: without them the rule is not typed
  if (!t.hasOtherMatches(id)) return undefined;
  const rule = typed();
  const types = rule.matches.flatMap((m) =>
    m.kind === 'addrtype' && m.srcType ? [m.srcType] : [],
  );
  return types.some((s) => !s.negated && s.types.length === 1 && s.types[0] === 'LOCAL') &&
    !types.some((s) => s.negated && s.types.includes('LOCAL'))
    ? 'node-local'
    : undefined;
}

/** What a KUBE-MARK-MASQ rule selects, in iptables words. */
export function masqueradeCondition(t: Table, id: number, typed = () => t.rule(id)): string {
  const src = t.addressMatch(id, 'source');
  if (src) return (src.negated ? '! -s ' : '-s ') + src.cidr;
  if (!t.hasOtherMatches(id)) return 'all';
  const rule = typed();
  const parts: string[] = [];
  if (rule.inInterface)
    parts.push(`${rule.inInterface.negated ? '! ' : ''}-i ${rule.inInterface.name}`);
  for (const m of rule.matches) {
    if (m.kind === 'addrtype' && m.srcType)
      parts.push(`${m.srcType.negated ? '! ' : ''}--src-type ${m.srcType.types.join(',')}`);
    if (m.kind === 'physdev') parts.push('physdev');
    // what an `iptables -L` paste printed and kdebug did not read: shown as printed
    const unread = unreadText(m);
    if (unread !== undefined) parts.push(`"${unread}" (not read)`);
  }
  return parts.length > 0 ? parts.join(' ') : 'all';
}
