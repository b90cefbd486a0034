// Drift of kube-proxy's iptables rules in IPVS mode (../expected/iptables-rules.ts) against the
// node's dump of the same family: each rule kube-proxy writes must be in its chain, one finding
// per chain that lacks any. Rules others added to kube-proxy's chains are not findings.
import type { DriftId, AddFinding } from '../../drift.js';
import type { RuleLine } from '../../kube-proxy/expected.js';
import type { Ruleset, Table } from '../../iptables/read/parse.js';

/** The chains whose rules keep IPVS's traffic from being dropped or reaching host ports. */
const FIREWALL = new Set([
  'KUBE-PROXY-FIREWALL',
  'KUBE-SOURCE-RANGES-FIREWALL',
  'KUBE-IPVS-FILTER',
  'KUBE-IPVS-OUT-FILTER',
]);
const MASQUERADE = new Set(['KUBE-POSTROUTING', 'KUBE-MARK-MASQ', 'KUBE-LOAD-BALANCER']);

/** Which finding a missing rule is: by its table, chain and target. */
function idOf(table: 'nat' | 'filter', rule: RuleLine): DriftId {
  const target = rule.target ?? '';
  if (table === 'nat' && (MASQUERADE.has(rule.chain) || MASQUERADE.has(target)))
    return 'masquerade-missing';
  if (table === 'nat' && rule.chain === 'KUBE-NODE-PORT') return 'masquerade-missing';
  if (
    table === 'filter' &&
    (FIREWALL.has(rule.chain) || FIREWALL.has(target) || rule.chain === 'KUBE-NODE-PORT')
  )
    return 'firewall-missing';
  return 'entry-jump-missing';
}

/** What a chain's rules do for IPVS, so a missing one says what breaks. */
const WHAT: Record<string, string> = {
  'nat PREROUTING': 'Service traffic is not sent through KUBE-SERVICES',
  'nat OUTPUT': 'Service traffic is not sent through KUBE-SERVICES',
  'nat POSTROUTING': 'marked traffic is not masqueraded',
  'nat KUBE-SERVICES':
    "Service traffic is not marked for masquerading, accepted or sent to node ports as kube-proxy's ipsets say",
  'nat KUBE-POSTROUTING': 'marked traffic and hairpin connections are not masqueraded',
  'nat KUBE-MARK-MASQ': 'nothing is marked for masquerading',
  'nat KUBE-NODE-PORT': 'node-port traffic is not marked for masquerading (or kept local)',
  'nat KUBE-LOAD-BALANCER': 'load-balancer traffic is not marked for masquerading',
  'filter KUBE-FORWARD': 'forwarded Service traffic may be dropped by the FORWARD policy',
  'filter FORWARD': 'forwarded Service traffic skips kube-proxy',
  'filter INPUT': "traffic to the node skips kube-proxy's filters",
  'filter OUTPUT': "the node's own traffic skips kube-proxy's filters",
  'filter KUBE-NODE-PORT': 'health-check node ports may be dropped',
  'filter KUBE-PROXY-FIREWALL': 'loadBalancerSourceRanges are not enforced',
  'filter KUBE-SOURCE-RANGES-FIREWALL': 'loadBalancerSourceRanges are not enforced',
  'filter KUBE-IPVS-FILTER': "host ports are reachable through Services' addresses",
  'filter KUBE-IPVS-OUT-FILTER': 'the node reaches load balancers its source ranges leave out',
};

/** The tables compared ("nat", "filter": those the dump holds); findings added through `add`. */
export function ipvsIptablesDrift(
  expected: { nat: RuleLine[]; filter: RuleLine[]; uncompared?: RuleLine[] },
  dump: { ruleset: Ruleset; source: string },
  node: string,
  add: AddFinding,
): ('nat' | 'filter')[] {
  const compared: ('nat' | 'filter')[] = [];
  for (const name of ['nat', 'filter'] as const) {
    const table = dump.ruleset.table(name);
    if (!table) continue;
    compared.push(name);
    // one finding per id and chain, in the order their first rule is found
    const missing = new Map<string, { id: DriftId; chain: string; rules: RuleLine[] }>();
    for (const rule of expected[name]) {
      // a rule whose form nothing read tells is not compared (drift.ts says so)
      if (expected.uncompared?.includes(rule) || has(table, rule)) continue;
      const id = idOf(name, rule);
      const k = `${id} ${rule.chain}`;
      const group = missing.get(k) ?? { id, chain: rule.chain, rules: [] };
      missing.set(k, group);
      group.rules.push(rule);
    }
    for (const { id, chain, rules } of missing.values()) {
      const c = table.chain(chain);
      add(id, {
        title: `${name} ${chain}: ${rules.length === 1 ? 'a rule' : `${rules.length} rules`} of kube-proxy's missing`,
        message: `kube-proxy writes ${rules.length === 1 ? 'this rule' : 'these rules'} in IPVS mode ${c ? `in the ${name} chain ${chain}` : `in the ${name} chain ${chain}, which ${node} does not have`}; without ${rules.length === 1 ? 'it' : 'them'} ${WHAT[`${name} ${chain}`] ?? 'its ipsets do not apply'}. kube-proxy writes ${rules.length === 1 ? 'it' : 'them'} again on its next sync, unless something (a firewall reload, iptables -F) keeps removing ${rules.length === 1 ? 'it' : 'them'}.`,
        expected: rules.map((r) => `-t ${name} ${r.text}`),
        actual: c
          ? c.ruleIds.map((id) => `${dump.source}:${table.line(id)}: ${table.text(id)}`)
          : [],
      });
    }
  }
  return compared;
}

/** Whether the node's chain holds the rule: one of the same target, then of the same text (its
 * counters aside). */
function has(table: Table, rule: RuleLine): boolean {
  const c = table.chain(rule.chain);
  if (!c) return false;
  return c.ruleIds.some(
    (id) => table.target(id) === rule.target && table.ruleText(id) === rule.text,
  );
}
