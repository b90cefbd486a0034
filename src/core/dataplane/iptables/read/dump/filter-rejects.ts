// kube-proxy's REJECT rules for Services without endpoints ("ns/svc:port has no endpoints") are
// filter-table rules (its KUBE-SERVICES, KUBE-EXTERNAL-SERVICES and KUBE-NODEPORTS chains there):
// iptables refuses REJECT in nat. A grep of a whole save keeps them beside nat's rules without
// either table's *table line; read in the filter table, not in nat's.

/** A headerless rule only kube-proxy's filter chains hold: a REJECT in one of them. */
const FILTER_REJECT =
  /^(?:KUBE-SERVICES|KUBE-EXTERNAL-SERVICES|KUBE-NODEPORTS) (?:.* )?-j REJECT(?: |$)/;

/** Rules only nat holds: its NAT targets, or a rule of one of kube-proxy's nat-only chains; after
 * what a paste puts before a line (a diff's "+", a quote's "> ", grep -n's "12:"). */
const NAT_ONLY =
  /^(?:[+>] ?|(?:[^\s:]+:)?\d+[:-]|[^\s:]+:)?[ \t]*(?:\[\d+:\d+\] )?-A (?:KUBE-(?:SVC|SEP|SVL|EXT|FW|XLB|MARK-MASQ|POSTROUTING)-?\S* |.* -j (?:DNAT|SNAT|MASQUERADE|KUBE-MARK-MASQ)(?: |$))/m;

/** Whether the rule after "-A " (its chain's name first) is one of filter's REJECTs. */
export const isFilterReject = (spec: string): boolean => FILTER_REJECT.test(spec);

/** A save's own table lines: where a paste holds them, they say which table each rule is in. */
const TABLE_LINES = /^[ \t]*(?:\*(?:nat|filter|mangle|raw|security)|COMMIT)[ \t]*$/m;

/** Whether the text holds a rule only the nat table holds, and no *table or COMMIT line. */
export const holdsNatRules = (text: string): boolean =>
  NAT_ONLY.test(text) && !TABLE_LINES.test(text);
