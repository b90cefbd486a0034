// The lenient readers of raw API JSON that every kind's reader shares: a field of the type
// expected, else an empty one, never an exception (objects come from hand-made snapshots too).
import type { KubeObject } from '../../model.js';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export type J = Record<string, unknown>;
export const obj = (v: unknown): J =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as J) : {};
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;
/** The non-empty strings of a JSON array (a copy of exactly their size when all are). */
export function strings(v: unknown): string[] {
  const a = arr(v);
  return a.every((x) => typeof x === 'string' && x !== '')
    ? (a.slice() as string[])
    : (a.filter((x) => typeof x === 'string' && x !== '') as string[]);
}
export const strMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(obj(v)).filter(([, x]) => typeof x === 'string')) as Record<
    string,
    string
  >;
export const protocol = (v: unknown): Protocol => {
  const p = str(v)?.toUpperCase();
  return p === 'UDP' || p === 'SCTP' ? p : 'TCP';
};

export const kindOf = (o: KubeObject) => o.kind ?? '';
export const nameOf = (o: KubeObject) => o.metadata?.name ?? '';
export const namespaceOf = (o: KubeObject) => o.metadata?.namespace ?? '';
