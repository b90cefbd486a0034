// The kube-proxy releases kdebug models, and the one table of which release changed what in the
// rules it writes. Each row is a fact read from that release's pkg/proxy/<mode>/proxier.go and
// the expected tables of its proxier_test.go (test/fixtures/releases/<minor>/ hold them); adding
// a release is its row here and the code that reads the row.

/** A kube-proxy release, by minor version (1.<minor>): patches of a minor write the same rules. */
export interface Release {
  minor: number;
}

export const OLDEST_MODELLED = 30;
export const NEWEST_MODELLED = 37;

/** Every modelled release, oldest first. */
export const MODELLED: readonly Release[] = Array.from(
  { length: NEWEST_MODELLED - OLDEST_MODELLED + 1 },
  (_, i) => ({ minor: OLDEST_MODELLED + i }),
);

/** What changed, the first minor that writes it, and where it shows. */
export const CHANGES = {
  /** iptables: MASQUERADE always `--random-fully` (before: only where iptables supports it). */
  iptablesAlwaysRandomFully: 37,
  /** nftables: firewall-ips elements no longer carry the Service port's name as a comment. */
  nftFirewallElementUncommented: 31,
  /** nftables: filter base chains at priority 0 plus filter-prerouting/output-pre-dnat at -110
   * (before: filter-prerouting/input/forward/output at -110, filter-output-post-dnat at -90). */
  nftPreDnatFilterChains: 33,
  /** nftables: the Service chain's masquerade rule no longer matches `tcp dport PORT`. */
  nftMasqueradeWithoutPort: 34,
  /** nftables: no mark-for-masquerade chain (the mark is set inline), a two-rule masquerading
   * chain with a hairpin-connections set, the cluster-IP masquerade rule in `services`, DNAT in
   * the Service chain through a numgen map; endpoint chains only for session affinity. */
  nftInlineMasquerade: 36,
  /** nftables: a Service port with one endpoint (no affinity) is one `dnat to IP:PORT`. */
  nftSingleEndpointDnat: 37,
  /** nftables: with the KubeProxyNFTablesLocalhostNodePorts gate (alpha, off by default)
   * connections to a node port on the loopback address are rejected and counted, per protocol
   * (localhost-nodeport-reject-ports; TCP's left to a userspace proxy where nodePortAddresses
   * names loopback). */
  nftLocalhostNodePortRejects: 37,
  /** kube-proxy watches the ServiceCIDRs (MultiCIDRServiceAllocator on by default, GA in 1.33;
   * before, the gate is off and cmd/kube-proxy starts no ServiceCIDR informer), so nftables
   * mode drops traffic to unallocated cluster IPs (`cluster-ips-check`). Seen in the lab: the
   * real v1.31.14 writes no such rule. */
  watchesServiceCIDRs: 33,
} as const;

export type Change = keyof typeof CHANGES;

/** Does `release` write what `change` introduced? */
export const writes = (release: Release, change: Change) => release.minor >= CHANGES[change];

export const NEWEST: Release = { minor: NEWEST_MODELLED };

/** The release to model for `asked` (undefined: the newest), and a note when it is not one of
 * the modelled releases (the nearest modelled one is used). */
export function modelledRelease(asked: Release | undefined): { release: Release; note?: string } {
  if (!asked) return { release: NEWEST };
  if (asked.minor >= OLDEST_MODELLED && asked.minor <= NEWEST_MODELLED) return { release: asked };
  const minor = Math.min(NEWEST_MODELLED, Math.max(OLDEST_MODELLED, asked.minor));
  return {
    release: { minor },
    note: `kube-proxy v1.${asked.minor} is not a modelled release (kdebug models ${releaseRange()}): written as v1.${minor} writes it`,
  };
}

/** "1.30-1.37" */
export const releaseRange = () => `1.${OLDEST_MODELLED}-1.${NEWEST_MODELLED}`;

/** "v1.33" from "v1.33.4", "1.33", "v1.33.4-eks-1-33-20250101" (undefined: not a version). */
export function parseRelease(text: string): Release | undefined {
  const m = /^v?1\.(\d+)(?:[.+-]|$)/.exec(text.trim());
  return m ? { minor: Number(m[1]) } : undefined;
}

/** The Service CIDRs kube-proxy of `release` knows (releases before `watchesServiceCIDRs` start
 * no ServiceCIDR informer with their default feature gates: none). */
export const watchedServiceCIDRs = (release: Release, cidrs: string[]): string[] =>
  writes(release, 'watchesServiceCIDRs') ? cidrs : [];
