// Where dataplanes are chosen: the code of each mode beyond iptables (its listing's reader, trees,
// expected state, drift, trace) loads only when a run has a node in that mode or its listing, so
// `svc` on an iptables cluster never loads Cilium's, nftables' or IPVS's. A run awaits
// loadModes once, before anything reads its nodes; after that every read is synchronous.

/** The modes whose code loads when first needed (iptables, the default, is always loaded). */
const IMPORTS = {
  nftables: () => import('./nftables/dataplane.js'),
  ipvs: () => import('./ipvs/dataplane.js'),
  cilium: () => import('./cilium/dataplane.js'),
};

export type LoadedMode = keyof typeof IMPORTS;
type Code = { [M in LoadedMode]: Awaited<ReturnType<(typeof IMPORTS)[M]>> };

// code, not data: the same for every run and every caller, as Node's own module cache is
const loaded: Partial<Code> = {};

const isLoadedMode = (mode: string): mode is LoadedMode => Object.hasOwn(IMPORTS, mode);

/** Every mode whose code loads when needed: a live read, whose nodes' modes are not known yet. */
export const EVERY_MODE = Object.keys(IMPORTS) as readonly LoadedMode[];

/** Loads the code of each of `modes` kdebug models (others, iptables among them, are ignored). */
export async function loadModes(modes: Iterable<string>): Promise<void> {
  const wanted = [...new Set(modes)].filter(isLoadedMode).filter((m) => !loaded[m]);
  await Promise.all(wanted.map(async (m) => Object.assign(loaded, { [m]: await IMPORTS[m]() })));
}

/** A mode's code, loaded before (loadModes): asked for without, it is a bug in kdebug. */
export function modeCode<M extends LoadedMode>(mode: M): Code[M] {
  const code = loaded[mode];
  if (!code) throw new Error(`kdebug: the ${mode} dataplane was not loaded before it was read`);
  return code;
}
