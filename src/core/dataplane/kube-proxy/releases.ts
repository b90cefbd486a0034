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

export const isModelled = (r: Release) => r.minor >= OLDEST_MODELLED && r.minor <= NEWEST_MODELLED;

/** Something a node's rules hold that tells which release wrote them: what `change`'s release
 * and later write (`since`), or what only the releases before it write. Only what is there is a
 * sign: a rule, chain or set missing may be a fault, and tells no release. */
export interface Sign {
  what: string;
  change: Change;
  since: boolean;
}

/** The modelled releases a node's rules read as written by: the signs they hold, and the oldest
 * and newest minor all of them allow (oldest > newest: no one release writes all of them). */
export interface Shown {
  signs: Sign[];
  oldest: number;
  newest: number;
}

export function shownBy(signs: Sign[]): Shown {
  let oldest = OLDEST_MODELLED;
  let newest = NEWEST_MODELLED;
  for (const s of signs)
    if (s.since) oldest = Math.max(oldest, CHANGES[s.change]);
    else newest = Math.min(newest, CHANGES[s.change] - 1);
  return { signs, oldest, newest };
}

/** The release read for a node is newer than any its rules' signs allow ("v1.37", "v1.32"): the
 * rules were not written by it. `comparedAs`: the release they were compared with instead (a
 * table, by the signs it holds); absent where they are compared by behaviour (iptables). */
export interface ReleaseDisagrees {
  read: string;
  upTo: string;
  comparedAs?: string;
}

/**
 * The release to model for `asked` (undefined: not read), and a note when it is not what was
 * read. Where the node's rules were read (`shown`), a read release newer than any their signs
 * allow disagrees with them: the newest they allow is modelled, and both are said. Else a
 * modelled release read is modelled; an unmodelled or unread one takes the release the rules
 * read as written by (the nearest to `asked` in that range, the newest where none was read), with
 * who wrote them in drift's words (`writtenBy`); no rules: the nearest modelled one (undefined:
 * the newest).
 */
export function modelledRelease(
  asked: Release | undefined,
  shown?: Shown,
): {
  release: Release;
  note?: string;
  writtenBy?: string;
  releaseDisagrees?: ReleaseDisagrees;
} {
  const agree = shown !== undefined && shown.signs.length > 0 && shown.oldest <= shown.newest;
  if (asked && isModelled(asked) && !(agree && asked.minor > shown.newest))
    return { release: asked };
  const clamp = (minor: number, oldest: number, newest: number) =>
    Math.min(newest, Math.max(oldest, minor));
  const unmodelled =
    asked &&
    !isModelled(asked) &&
    `kube-proxy v1.${asked.minor} is not a modelled release (kdebug models ${releaseRange()})`;
  if (!shown) {
    if (!asked) return { release: NEWEST };
    const minor = clamp(asked.minor, OLDEST_MODELLED, NEWEST_MODELLED);
    return { release: { minor }, note: `${unmodelled}: written as v1.${minor} writes it` };
  }
  const [oldest, newest] = agree
    ? [shown.oldest, shown.newest]
    : [OLDEST_MODELLED, NEWEST_MODELLED];
  const minor = asked ? clamp(asked.minor, oldest, newest) : newest;
  // the signs that bound the range say it; where they disagree, all of them
  const bounding = shown.signs.filter(
    (s) => !agree || CHANGES[s.change] - (s.since ? 0 : 1) === (s.since ? oldest : newest),
  );
  const signs = bounding.map(signText).join('; ');
  const span = oldest === newest ? `v1.${oldest}` : `1.${oldest}-1.${newest}`;
  // "kube-proxy 1.34-1.35 (a rule jumping to mark-for-masquerade: 1.35 or earlier; ...)"
  const by =
    shown.signs.length === 0
      ? 'a release not known from the table (it holds nothing only some releases write)'
      : agree
        ? `kube-proxy ${span} (${signs})`
        : `a release not known from the table (its signs disagree: ${signs})`;
  if (asked && isModelled(asked)) {
    const read = `kube-proxy v1.${asked.minor} was read for this node`;
    return {
      release: { minor },
      note: `${read}, yet its table reads as written by ${by}: written as v1.${minor} writes it`,
      writtenBy: `${by}, by its table, not the v1.${asked.minor} read for this node (a kube-proxy that is not the one running, or a fork): compared as v1.${minor}`,
      releaseDisagrees: {
        read: `v1.${asked.minor}`,
        upTo: `v1.${newest}`,
        comparedAs: `v1.${minor}`,
      },
    };
  }
  const why = unmodelled || "kube-proxy's version was not read";
  return {
    release: { minor },
    note: `${why}; its table reads as written by ${by}: written as v1.${minor} writes it`,
    writtenBy: `${by}, by its table; ${why}: compared as v1.${minor}`,
  };
}

/** "a hairpin-connections set: 1.36 or later" */
const signText = (s: Sign) =>
  `${s.what}: ${s.since ? `1.${CHANGES[s.change]} or later` : `1.${CHANGES[s.change] - 1} or earlier`}`;

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
