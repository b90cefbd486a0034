// The table `iptables -L` rows without their Chain line are in, where their targets show it: a
// target only one table allows (DNAT in nat, REJECT in filter) or a chain only it holds.

/** Targets and chain prefixes of one table only; ACCEPT, DROP, RETURN and MARK show none. */
const ONLY: [string, RegExp][] = [
  [
    'nat',
    /^(?:DNAT|SNAT|MASQUERADE|REDIRECT|NETMAP|KUBE-(?:MARK-MASQ|SVC|SEP|SVL|EXT|FW|XLB|POSTROUTING)\b)/,
  ],
  [
    'filter',
    /^(?:REJECT|KUBE-(?:POD-FW|NWPLCY|ROUTER|FORWARD|PROXY-FIREWALL|EXTERNAL-SERVICES)\b)/,
  ],
  ['mangle', /^TPROXY$/],
];

/** The target of a row: its first column after the number and counters -L prints before it. */
function targetOf(row: string): string | undefined {
  return row
    .trim()
    .split(/\s+/)
    .find((t) => !/^\d+[KMGTP]?$/.test(t));
}

/** The one table the rows' targets show, or undefined where none shows one or they disagree. */
export function rowsTable(lines: readonly string[], rows: readonly number[]): string | undefined {
  const tables = new Set<string>();
  for (const n of rows) {
    const target = targetOf(lines[n - 1] ?? '');
    const only = target && ONLY.find(([, re]) => re.test(target));
    if (only) tables.add(only[0]);
  }
  return tables.size === 1 ? [...tables][0] : undefined;
}
