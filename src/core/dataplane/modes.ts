// Where dataplanes are chosen: the code of each mode beyond iptables (its listing's reader, trees,
// expected state, drift, trace) loads only when a run has a node in that mode or its listing, so
// `svc` on an iptables cluster never loads Cilium's, nftables' or IPVS's. A run awaits
// loadModes once, before anything reads its nodes, and hands the DataplaneCode it returns to
// its Analysis: after that every read is synchronous.

/** The modes whose code loads when first needed (iptables, the default, is always loaded). */
const IMPORTS = {
  nftables: () => import('./nftables/dataplane.js'),
  ipvs: () => import('./ipvs/dataplane.js'),
  cilium: () => import('./cilium/dataplane.js'),
};

export type LoadedMode = keyof typeof IMPORTS;
type Code = { [M in LoadedMode]: Awaited<ReturnType<(typeof IMPORTS)[M]>> };
/** One mode's code: its dataplane module. */
export type ModeCode<M extends LoadedMode> = Code[M];

const isLoadedMode = (mode: string): mode is LoadedMode => Object.hasOwn(IMPORTS, mode);

/** Every mode whose code loads when needed: a live read, whose nodes' modes are not known yet. */
export const EVERY_MODE = Object.keys(IMPORTS) as readonly LoadedMode[];

/** A mode's code asked for where the run did not load it: a bug in kdebug, not in its input. */
export class ModeNotLoaded extends Error {
  constructor(readonly mode: LoadedMode) {
    super(`kdebug: the ${mode} dataplane was not loaded before it was read`);
  }
}

/** The code of the modes one run loaded (loadModes), handed to whatever reads its nodes. */
export class DataplaneCode {
  constructor(private readonly loaded: Readonly<Partial<Code>>) {}

  /** `mode`'s code: asked for where it was not loaded, it is a bug in kdebug (ModeNotLoaded). */
  of<M extends LoadedMode>(mode: M): ModeCode<M> {
    const code = this.loaded[mode];
    if (!code) throw new ModeNotLoaded(mode);
    return code;
  }
}

/** The code of facts that hold no listing of a mode beyond iptables (nothing read yet). */
export const NO_MODE = new DataplaneCode({});

/** Loads the code of each of `modes` kdebug models (others, iptables among them, are ignored). */
export async function loadModes(modes: Iterable<string>): Promise<DataplaneCode> {
  const wanted = [...new Set(modes)].filter(isLoadedMode);
  const code = await Promise.all(wanted.map(async (m) => ({ [m]: await IMPORTS[m]() })));
  return new DataplaneCode(Object.assign({}, ...code) as Partial<Code>);
}
