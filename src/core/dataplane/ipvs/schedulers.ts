// IPVS's schedulers (the kernel's ip_vs_*.ko modules, named as ipvsadm prints them) and how each
// picks a real server: the shares a listing's weights fix, and what decides them where they fix
// none.

/** The schedulers ipvsadm names on a virtual server's line. */
export const SCHEDULERS: ReadonlySet<string> = new Set([
  'rr',
  'wrr',
  'lc',
  'wlc',
  'lblc',
  'lblcr',
  'dh',
  'sh',
  'sed',
  'nq',
  'fo',
  'ovf',
  'mh',
  'twos',
]);

/**
 * Each real server's share of new connections from its weight, as the kernel's scheduler gives it,
 * or why none is fixed. A weight of 0 is quiesced under every scheduler (ipvsadm(8) -w: "will
 * receive no new jobs"), so with one real server above 0 it takes all. rr (ip_vs_rr.c) goes round
 * those above 0, one each: the weight beyond 0 changes nothing; wrr (ip_vs_wrr.c) picks each as
 * often as its weight. Both skip a server over its upper threshold (-x), which kube-proxy never
 * sets. The other schedulers pick by connections or a hash: no share is fixed.
 */
export function sharesOf(
  scheduler: string | undefined,
  weights: readonly number[],
): { shares: number[] } | { unknown: string } {
  const live = weights.filter((w) => w > 0);
  const total = live.reduce((n, w) => n + w, 0);
  if (live.length < 2) return { shares: weights.map((w) => (w > 0 ? 1 : 0)) };
  if (scheduler === 'rr') return { shares: weights.map((w) => (w > 0 ? 1 / live.length : 0)) };
  if (scheduler === 'wrr') return { shares: weights.map((w) => (w > 0 ? w / total : 0)) };
  return { unknown: noFixedShare(scheduler) };
}

/** What each scheduler that fixes no share picks the real server by. */
const PICKED_BY: Record<string, string> = {
  sh: 'a hash of the source address (each client keeps to one real server)',
  dh: 'a hash of the destination address',
  mh: 'Maglev hashing of the source address (each client keeps to one real server)',
  lc: 'the fewest connections',
  wlc: 'the fewest connections for its weight',
  sed: 'the shortest expected delay (connections for its weight)',
  nq: 'an idle one first, else the shortest expected delay',
  lblc: 'the destination address, then the fewest connections',
  lblcr: 'the destination address, then the fewest connections',
  fo: 'the highest weight available (failover)',
  ovf: 'the highest weight until its connections reach its weight (overflow)',
  twos: 'the less loaded of two drawn by weight',
};

/** Why a scheduler's shares are not known from the weights. */
const noFixedShare = (scheduler: string | undefined): string =>
  scheduler === undefined
    ? 'this view does not show the scheduler, which decides the shares'
    : PICKED_BY[scheduler]
      ? `scheduler ${scheduler} picks the real server by ${PICKED_BY[scheduler]}: no fixed share`
      : `scheduler ${scheduler}, which kdebug does not model: its shares are unknown`;
