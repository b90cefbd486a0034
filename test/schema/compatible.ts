// Whether a schema only adds to an older one: every document the new one allows, the old one
// allowed too, but for properties the old one did not know. Scripts written against the old
// schema read the new output unchanged, and the documents an older kdebug printed still pass the
// new schema; anything else needs a new schemaVersion.
type Schema = Record<string, unknown>;

const types = (s: Schema): string[] | undefined =>
  s['type'] === undefined ? undefined : ([] as string[]).concat(s['type'] as string | string[]);

/** Why `now` is not a compatible addition to `was`, one line per difference ([] when it is). */
export function incompatibilities(was: Schema, now: Schema, at = '$'): string[] {
  const out: string[] = [];
  const t0 = types(was);
  const t1 = types(now);
  if (t0 && (!t1 || t1.some((t) => !t0.includes(t))))
    out.push(`${at}: type ${JSON.stringify(t0)} became ${JSON.stringify(t1 ?? 'anything')}`);
  for (const k of ['const', '$ref', 'minItems', 'maxItems', 'additionalProperties'])
    if (k in was && JSON.stringify(was[k]) !== JSON.stringify(now[k]))
      out.push(`${at}: ${k} ${JSON.stringify(was[k])} became ${JSON.stringify(now[k])}`);
  if (Array.isArray(was['enum'])) {
    const added = ((now['enum'] as unknown[] | undefined) ?? ['anything']).filter(
      (v) => !(was['enum'] as unknown[]).includes(v),
    );
    if (added.length > 0) out.push(`${at}: enum gained ${JSON.stringify(added)}`);
  }
  if (Array.isArray(was['anyOf'])) {
    const a0 = was['anyOf'] as Schema[];
    const a1 = (now['anyOf'] as Schema[] | undefined) ?? [];
    if (a1.length !== a0.length)
      out.push(`${at}: anyOf has ${a1.length} choices, was ${a0.length}`);
    else a0.forEach((s, i) => out.push(...incompatibilities(s, a1[i]!, `${at}|${i}`)));
  }
  const p0 = (was['properties'] ?? {}) as Record<string, Schema>;
  const p1 = (now['properties'] ?? {}) as Record<string, Schema>;
  for (const [k, s] of Object.entries(p0))
    if (!(k in p1)) out.push(`${at}.${k}: removed`);
    else out.push(...incompatibilities(s, p1[k]!, `${at}.${k}`));
  const required = new Set((now['required'] as string[] | undefined) ?? []);
  for (const k of (was['required'] as string[] | undefined) ?? [])
    if (!required.has(k)) out.push(`${at}.${k}: no longer always present`);
  // a property the old schema did not know, required, fails the documents an older kdebug printed
  const known = new Set((was['required'] as string[] | undefined) ?? []);
  for (const k of required)
    if (!known.has(k) && !(k in p0)) out.push(`${at}.${k}: new and required`);
  if (was['items']) {
    if (!now['items']) out.push(`${at}[]: items no longer described`);
    else out.push(...incompatibilities(was['items'] as Schema, now['items'] as Schema, `${at}[]`));
  }
  const d0 = (was['$defs'] ?? {}) as Record<string, Schema>;
  const d1 = (now['$defs'] ?? {}) as Record<string, Schema>;
  for (const [k, s] of Object.entries(d0))
    if (!(k in d1)) out.push(`#/$defs/${k}: removed`);
    else out.push(...incompatibilities(s, d1[k]!, `#/$defs/${k}`));
  return out;
}
