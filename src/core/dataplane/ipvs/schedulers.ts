// IPVS's schedulers (the kernel's ip_vs_*.ko modules, named as ipvsadm prints them) and how each
// picks a real server: what a listing's weights say of the shares, and what decides them where
// the weights alone do not.

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

/** rr and wrr go round the real servers by weight: a share is its weight over the sum. */
export const picksByWeight = (scheduler: string | undefined): boolean =>
  scheduler === 'rr' || scheduler === 'wrr';

const PICKED_BY: Record<string, string> = {
  sh: 'a hash of the source address (each client keeps to one real server)',
  dh: 'a hash of the destination address',
  mh: 'Maglev hashing of the source address (each client keeps to one real server)',
  lc: 'the fewest connections',
  wlc: 'the fewest connections for its weight',
  sed: 'the shortest expected delay (connections for its weight)',
  nq: 'an idle real server first, else the shortest expected delay',
  lblc: 'the destination address, then the fewest connections',
  lblcr: 'the destination address, then the fewest connections',
  fo: 'the highest weight available (failover)',
  ovf: 'the highest weight until its connections reach its weight (overflow)',
  twos: 'the less loaded of two drawn by weight',
};

/** What picks the real server where the weights alone do not say the shares. */
export const pickedBy = (scheduler: string | undefined): string =>
  scheduler === undefined
    ? 'the scheduler, which this view does not show'
    : (PICKED_BY[scheduler] ?? `scheduler ${scheduler}, which kdebug does not model`);
