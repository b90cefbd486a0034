// The same listing printed twice in one paste (the command run again, a `service update` or
// `service delete` between): the later run is the agent's later state. Where it is whole, a
// frontend only the earlier run lists was deleted between them; where it is not (cut, elided, a
// grep), such a frontend is kept as the earlier run lists it, and said so. What changed between
// the runs is kept with the table, for the warnings to say.
import { formatAddress, frontendKey, type CiliumFrontend, type CiliumTable } from './listing.js';

/** What changed between a listing's run and the one before it, by frontend ("10.96.0.10:53/UDP"). */
export interface RunChange {
  /** The line of the later run's command (or its first row). */
  at: number;
  /** Listed before, not in the later run, which is whole: deleted between them. */
  deleted: string[];
  /** Listed only by the later run, the run before being whole: added between them. */
  added: string[];
  /** Listed only by the later run, the run before not being whole (a grep for another pattern,
   * a cut): whether they are new is not known. */
  onlyLater: string[];
  /** Listed by both, with other backends, backend states, type or flags. */
  changed: string[];
  /** Listed before and not in the later run, which is not whole: kept as listed before. */
  kept: string[];
  /** The frontends `deleted` names, as the run before listed them (not shown). */
  gone: CiliumFrontend[];
}

/** Whether a run lists every frontend and backend the agent held: nothing cut, elided or
 * grepped, its command not piped (`| grep`, `| head`). */
export const whole = (t: CiliumTable, command: string | undefined) =>
  !t.cut?.length &&
  !command?.includes('|') &&
  !t.frontends.some(
    (f) =>
      f.backendsElided !== undefined ||
      f.serviceRowUnseen ||
      f.grepped !== undefined ||
      f.backendsNotShown !== undefined,
  );

/** What a frontend is, as two runs are compared: its type, flags, and backends with their states. */
const shape = (f: CiliumFrontend) =>
  JSON.stringify([
    f.type ?? '',
    [...f.flags].sort(),
    f.backends
      .map((b) => `${formatAddress({ ...b, protocol: b.protocol ?? f.protocol })} ${b.state ?? ''}`)
      .sort(),
  ]);

/** The frontends of two runs of one listing, read as the later lists them, and what changed. */
export function laterRun(
  a: readonly CiliumFrontend[],
  b: CiliumTable,
  at: number,
  command: string | undefined,
  beforeWhole: boolean,
): { frontends: CiliumFrontend[]; change: RunChange } {
  const before = new Map(a.map((f) => [frontendKey(f), f]));
  const after = new Map(b.frontends.map((f) => [frontendKey(f), f]));
  const gone = [...before.keys()].filter((k) => !after.has(k));
  const isWhole = whole(b, command);
  const change: RunChange = {
    at,
    deleted: isWhole ? gone : [],
    added: beforeWhole ? [...after.keys()].filter((k) => !before.has(k)) : [],
    onlyLater: beforeWhole ? [] : [...after.keys()].filter((k) => !before.has(k)),
    changed: [...after]
      .filter(([k, f]) => before.has(k) && shape(before.get(k)!) !== shape(f))
      .map(([k]) => k),
    kept: isWhole ? [] : gone,
    gone: isWhole ? gone.map((k) => before.get(k)!) : [],
  };
  const kept = change.kept.map((k) => before.get(k)!);
  return { frontends: [...kept, ...b.frontends], change };
}
