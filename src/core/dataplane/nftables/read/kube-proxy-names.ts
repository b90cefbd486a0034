// kube-proxy's nftables table told from any other by the names only it uses: its sets and maps,
// its own chains and its Service ports' chains.
import type { NftTable } from './listing.js';
import { portChain } from '../trees/port-chain.js';
import { mapAbove } from './map-above.js';

/** The sets and maps of kube-proxy's nftables table (pkg/proxy/nftables): no other table has them. */
const KUBE_PROXY_SETS = [
  'cluster-ips',
  'nodeport-ips',
  'service-ips',
  'service-nodeports',
  'no-endpoint-services',
  'no-endpoint-nodeports',
  'firewall-ips',
  'hairpin-connections',
];
/** The chains of kube-proxy's table that are not a Service port's: its base chains (by hook),
 * and the chains they jump to (pkg/proxy/nftables, 1.29 on). */
const KUBE_PROXY_CHAINS = new Set([
  'filter-prerouting',
  'filter-prerouting-pre-dnat',
  'filter-input',
  'filter-forward',
  'filter-output',
  'filter-output-pre-dnat',
  'filter-output-post-dnat',
  'nat-prerouting',
  'nat-output',
  'nat-postrouting',
  'services',
  'masquerading',
  'mark-for-masquerade',
  'firewall-check',
  'cluster-ips-check',
  'service-endpoints-check',
  'nodeport-endpoints-check',
  'endpoints-check',
  'reject-chain',
]);

/** One of kube-proxy's own chains, or a Service port's ("service-<hash>-ns/name/proto/port"). */
const isKubeProxyChain = (name: string) =>
  KUBE_PROXY_CHAINS.has(name) || portChain(name) !== undefined;

/** A paste that starts inside kube-proxy's table: no table line, one of its sets, maps or chains;
 * or inside one of its maps, that map's lines first. */
export const isKubeProxyFragment = (text: string) =>
  [...text.slice(0, 4096).matchAll(/^[^\S\r\n\u2028\u2029]*(set|map|chain) (\S+) \{$/gm)].some(
    ([, kind, name]) =>
      kind === 'chain' ? isKubeProxyChain(name!) : KUBE_PROXY_SETS.includes(name!),
  ) || mapAbove(text) !== undefined;

/** A table (or a paste of part of one) that is kube-proxy's, by the names only it uses. */
export const isKubeProxyTable = (t: NftTable) =>
  t.sets.some((s) => KUBE_PROXY_SETS.includes(s.name)) ||
  t.chains.some((c) => isKubeProxyChain(c.name));
