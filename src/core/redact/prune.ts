// The pruning rules a redacted object is cut by: a scalar, each element of an array, a map of
// strings, a rewrite, or an object of named fields; what is not named is dropped.
/** A string, number or boolean as it is; an object or array in its place is dropped. */
export const S = 'scalar' as const;

/** Each element of an array, kept by one rule, in order. */
export class Each {
  constructor(readonly of: Keep) {}
}

/** A map of strings (labels, a selector): every key, or only the keys named. */
export class Strings {
  constructor(readonly keys?: readonly string[]) {}
}

/** Keeps a value through `keep` (the same pruning, under this path) after looking at it. */
type Prune = (v: unknown, keep: Keep) => unknown;

/** A value the checks read only in part: `apply` returns what is kept, or undefined for none. */
export class Rewrite {
  constructor(
    readonly what: string,
    readonly apply: (v: unknown, keep: Prune) => unknown,
  ) {}
}

/** An object: only the fields named, each kept by its own rule. */
export interface Fields {
  readonly [field: string]: Keep;
}

export type Keep = typeof S | Each | Strings | Rewrite | Fields;

export const each = (of: Keep) => new Each(of);
export const strings = (...keys: string[]) => new Strings(keys.length > 0 ? keys : undefined);

export type J = Record<string, unknown>;
export const isObj = (v: unknown): v is J =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v: unknown) =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const join = (path: string, field: string) => (path ? `${path}.${field}` : field);

/**
 * What `keep` keeps of `v` (undefined: nothing); `dropped` hears the path of each field taken
 * out. Paths name schema fields only: map keys (labels, data) never reach it, so no value does.
 */
export function prune(
  v: unknown,
  keep: Keep,
  path = '',
  dropped: (path: string) => void = () => undefined,
): unknown {
  if (v === undefined || v === null) return undefined;
  const out = pruneValue(v, keep, path, dropped);
  if (out === undefined) dropped(path);
  return out;
}

function pruneValue(
  v: unknown,
  keep: Keep,
  path: string,
  dropped: (path: string) => void,
): unknown {
  if (keep === S) return isScalar(v) ? v : undefined;
  if (keep instanceof Each)
    return Array.isArray(v)
      ? v.map((x) => prune(x, keep.of, `${path}[]`, dropped)).filter((x) => x !== undefined)
      : undefined;
  if (keep instanceof Strings) {
    if (!isObj(v)) return undefined;
    const kept = Object.entries(v).filter(
      ([k, x]) => typeof x === 'string' && (!keep.keys || keep.keys.includes(k)),
    );
    if (kept.length < Object.keys(v).length) dropped(`${path} (keys not read)`);
    return Object.fromEntries(kept);
  }
  // what the rewrite keeps through `keep` is pruned here; a drop is heard once, by the caller
  if (keep instanceof Rewrite)
    return keep.apply(v, (x, k) => (x == null ? undefined : pruneValue(x, k, path, dropped)));
  if (!isObj(v)) return undefined;
  // an object stays an object, even emptied: its place in an array is read ([0], "is there one")
  const out: J = {};
  for (const [k, x] of Object.entries(v)) {
    if (!Object.hasOwn(keep, k)) {
      dropped(join(path, k));
      continue;
    }
    const kept = prune(x, keep[k]!, join(path, k), dropped);
    if (kept !== undefined) out[k] = kept;
  }
  return out;
}

/** The paths a rule keeps, as meta.json lists them: "spec.ports[].port", "metadata.labels.*". */
export function keptPaths(keep: Keep, path = ''): string[] {
  if (keep === S) return [path];
  if (keep instanceof Each) return keptPaths(keep.of, `${path}[]`);
  if (keep instanceof Strings)
    return keep.keys ? keep.keys.map((k) => `${path}["${k}"]`) : [`${path}.*`];
  if (keep instanceof Rewrite) return [`${path} (${keep.what})`];
  const fields = Object.entries(keep);
  // an object kept empty: whether it is there is what is read (a container state "running")
  if (fields.length === 0) return [path];
  return fields.flatMap(([k, x]) => keptPaths(x, join(path, k)));
}
