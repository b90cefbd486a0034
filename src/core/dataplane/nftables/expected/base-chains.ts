// The base chains of kube-proxy's nftables table and the jumps from them (proxier.go setupNFTables),
// as each release writes them.

/** The base chains: name, then type, hook and priority as kube-proxy gives them (1.33+). */
export const BASE_CHAINS: [string, string, string, number][] = [
  ['filter-prerouting-pre-dnat', 'filter', 'prerouting', -110],
  ['filter-output-pre-dnat', 'filter', 'output', -110],
  ['filter-input', 'filter', 'input', 0],
  ['filter-forward', 'filter', 'forward', 0],
  ['filter-output', 'filter', 'output', 0],
  ['nat-prerouting', 'nat', 'prerouting', -100],
  ['nat-output', 'nat', 'output', -100],
  ['nat-postrouting', 'nat', 'postrouting', 100],
];

/** The jumps from the base chains: to, from, and the match before the jump (1.33+). */
export const JUMPS: [string, string, string][] = [
  ['nodeport-endpoints-check', 'filter-input', 'ct state new'],
  ['service-endpoints-check', 'filter-input', 'ct state new'],
  ['service-endpoints-check', 'filter-forward', 'ct state new'],
  ['service-endpoints-check', 'filter-output', 'ct state new'],
  ['firewall-check', 'filter-prerouting-pre-dnat', 'ct state new'],
  ['firewall-check', 'filter-output-pre-dnat', 'ct state new'],
  ['services', 'nat-output', ''],
  ['services', 'nat-prerouting', ''],
  ['masquerading', 'nat-postrouting', ''],
  ['cluster-ips-check', 'filter-forward', 'ct state new'],
  ['cluster-ips-check', 'filter-output', 'ct state new'],
];

/** Before 1.33: the filter chains all at -110, and the cluster-IP check after DNAT (-90). */
export const BASE_CHAINS_BEFORE_33: [string, string, string, number][] = [
  ['filter-prerouting', 'filter', 'prerouting', -110],
  ['filter-forward', 'filter', 'forward', -110],
  ['filter-input', 'filter', 'input', -110],
  ['filter-output', 'filter', 'output', -110],
  ['filter-output-post-dnat', 'filter', 'output', -90],
  ['nat-output', 'nat', 'output', -100],
  ['nat-postrouting', 'nat', 'postrouting', 100],
  ['nat-prerouting', 'nat', 'prerouting', -100],
];

export const JUMPS_BEFORE_33: [string, string, string][] = [
  ['firewall-check', 'filter-prerouting', 'ct state new'],
  ['service-endpoints-check', 'filter-forward', 'ct state new'],
  ['cluster-ips-check', 'filter-forward', 'ct state new'],
  ['nodeport-endpoints-check', 'filter-input', 'ct state new'],
  ['service-endpoints-check', 'filter-input', 'ct state new'],
  ['service-endpoints-check', 'filter-output', 'ct state new'],
  ['firewall-check', 'filter-output', 'ct state new'],
  ['cluster-ips-check', 'filter-output-post-dnat', 'ct state new'],
  ['services', 'nat-output', ''],
  ['masquerading', 'nat-postrouting', ''],
  ['services', 'nat-prerouting', ''],
];
