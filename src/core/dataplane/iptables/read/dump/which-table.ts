// Which table a listing without its *table line is, by what it holds: the built-in chains each
// table has, the targets only nat or raw takes, and the table each kube-proxy chain is written in;
// and the filter table's REJECT rules that a grep of a whole save keeps beside nat's.
import type { Table } from '../table.js';
import { BUILTINS } from '../chain.js';

const NAT_TARGETS = new Set(['DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT', 'NETMAP', 'KUBE-MARK-MASQ']);
const FILTER_TARGETS = new Set([
  'REJECT',
  'ACCEPT',
  'DROP',
  'KUBE-FIREWALL',
  'KUBE-FORWARD',
  'KUBE-EXTERNAL-SERVICES',
]);
const NAT_CHAINS =
  /^KUBE-(SVC|SEP|SVL|EXT|FW|XLB|MARK-MASQ|MARK-DROP|POSTROUTING|NODEPORTS|SERVICES)/;
/** IPVS mode's chains (pkg/proxy/ipvs iptablesChains): KUBE-LOAD-BALANCER is nat's alone, and
 * KUBE-NODE-PORT is filter's only as INPUT's health-check jump (iptablesJumpChain). */
const IPVS_NAT_TARGETS = new Set(['KUBE-LOAD-BALANCER', 'KUBE-NODE-PORT']);

/** The one table a kube-proxy chain can be in, by its name (KUBE-SERVICES and KUBE-NODEPORTS are
 * in both nat and filter). */
export function tableOfChain(name: string): 'nat' | 'filter' | undefined {
  if (/^KUBE-(?:SVC|SEP|SVL|EXT|FW|XLB|MARK-MASQ|MARK-DROP|POSTROUTING)-?/.test(name)) return 'nat';
  if (/^KUBE-(?:FORWARD|FIREWALL|EXTERNAL-SERVICES|PROXY-FIREWALL)$/.test(name)) return 'filter';
  return undefined;
}

/** The built-in chains a listing holds. */
const builtInsOf = (t: Table) => BUILTINS.mangle!.filter((name) => t.indexOf(name) >= 0);

/** Whether a table has every built-in chain the listing holds. */
export const holdsBuiltIns = (table: string, t: Table) =>
  builtInsOf(t).every((name) => BUILTINS[table]?.includes(name));

/** The table a listing's built-in chains settle, undefined where they do not. nat has PREROUTING
 * or POSTROUTING and no FORWARD, filter FORWARD and neither. Both: mangle only where the listing
 * is mangle's whole (a policy line for each of its five chains, no rule only nat may hold); a
 * grep across tables mixes them too. raw shares PREROUTING and OUTPUT with nat: only a target
 * raw alone takes (CT, NOTRACK, TRACE) tells it. */
export function builtInTable(t: Table): 'nat' | 'filter' | 'raw' | 'mangle' | undefined {
  const has = (name: string) => t.indexOf(name) >= 0;
  const natOnly = has('PREROUTING') || has('POSTROUTING');
  if (natOnly && has('FORWARD')) {
    const whole = BUILTINS.mangle!.every((name) => t.chain(name)?.policy !== undefined);
    return whole && !natRules(t) ? 'mangle' : undefined;
  }
  if (!natOnly) return has('FORWARD') ? 'filter' : undefined;
  return rawRules(t) ? 'raw' : 'nat';
}

/** Targets only the raw table takes. */
const RAW_TARGETS = new Set(['CT', 'NOTRACK', 'TRACE']);

/** Whether a listing holds a rule only the raw table may. */
const rawRules = (t: Table) => anyTarget(t, (target) => RAW_TARGETS.has(target));

/** Whether a listing holds a rule only the nat table may: a NAT target, or a jump to a kube-proxy
 * chain of nat's (its built-in chains jump to KUBE-SERVICES there). */
const natRules = (t: Table) =>
  anyTarget(t, (target) => NAT_TARGETS.has(target) || NAT_CHAINS.test(target));

/** Whether some rule of the listing has a target `of` accepts. */
function anyTarget(t: Table, of: (target: string) => boolean): boolean {
  for (const c of t.chains)
    for (let k = 0; k < c.ruleCount; k++) {
      const target = t.target(c.ruleId(k));
      if (target !== undefined && of(target)) return true;
    }
  return false;
}

export function guessTable(t: Table): string | undefined {
  const builtIn = builtInTable(t);
  if (builtIn) return builtIn;
  let nat = 0;
  let filter = 0;
  for (const c of t.chains) {
    if (c.name === 'PREROUTING' || c.name === 'POSTROUTING') nat += 2;
    if (c.name === 'FORWARD' || c.name === 'INPUT') filter += 2;
    if (/^KUBE-(SVC|SEP|SVL|EXT|XLB|MARK-MASQ|POSTROUTING)/.test(c.name)) nat += 3;
    if (/^KUBE-(FORWARD|FIREWALL|EXTERNAL-SERVICES|PROXY-FIREWALL)$/.test(c.name)) filter += 3;
    for (let k = 0; k < c.ruleCount; k++) {
      const id = c.ruleId(k);
      const target = t.target(id);
      if (target === undefined) continue;
      if (
        NAT_TARGETS.has(target) ||
        (NAT_CHAINS.test(target) && target !== 'KUBE-SERVICES' && target !== 'KUBE-NODEPORTS') ||
        (IPVS_NAT_TARGETS.has(target) && c.name !== 'INPUT')
      )
        nat++;
      else if (FILTER_TARGETS.has(target)) filter++;
    }
  }
  if (nat === filter) return undefined;
  return nat > filter ? 'nat' : 'filter';
}

// kube-proxy's REJECT rules for Services without endpoints ("ns/svc:port has no endpoints") are
// filter-table rules (its KUBE-SERVICES, KUBE-EXTERNAL-SERVICES and KUBE-NODEPORTS chains there):
// iptables refuses REJECT in nat, and DROP too ("the nat table is not intended for filtering"), so
// the DROPs of the kubelet's and kube-proxy's filter chains (KUBE-FIREWALL, KUBE-FORWARD,
// KUBE-PROXY-FIREWALL) are filter's as well. A grep of a whole save keeps them beside nat's rules
// without either table's *table line; read in the filter table, not in nat's.

/** A headerless rule only kube-proxy's (or the kubelet's) filter chains hold: a REJECT or DROP. */
const FILTER_REJECT =
  /^(?:KUBE-SERVICES|KUBE-EXTERNAL-SERVICES|KUBE-NODEPORTS|KUBE-FIREWALL|KUBE-FORWARD|KUBE-PROXY-FIREWALL) (?:.* )?-j (?:REJECT|DROP)(?: |$)/;

/** Rules only nat holds: its NAT targets, or a rule of one of kube-proxy's nat-only chains; after
 * what a paste puts before a line (a diff's "+", a quote's "> ", grep -n's "12:"). */
const NAT_ONLY =
  /^(?:[+>] ?|(?:[^\s:]+:)?\d+[:-]|[^\s:]+:)?[ \t]*(?:\[\d+:\d+\] )?-A (?:KUBE-(?:SVC|SEP|SVL|EXT|FW|XLB|MARK-MASQ|POSTROUTING)-?\S* |.* -j (?:DNAT|SNAT|MASQUERADE|KUBE-MARK-MASQ)(?: |$))/m;

/** Whether the rule after "-A " (its chain's name first) is one of filter's REJECTs or DROPs. */
export const isFilterReject = (spec: string): boolean => FILTER_REJECT.test(spec);

/** A save's own table lines: where a paste holds them, they say which table each rule is in. */
const TABLE_LINES = /^[ \t]*(?:\*(?:nat|filter|mangle|raw|security)|COMMIT)[ \t]*$/m;

/** Whether the text holds a rule only the nat table holds, and no *table or COMMIT line. */
export const holdsNatRules = (text: string): boolean =>
  NAT_ONLY.test(text) && !TABLE_LINES.test(text);
