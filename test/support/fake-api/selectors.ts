// labelSelector (set-based: a=b, a==b, a!=b, a in (x,y), a notin (x), a, !a) and fieldSelector
// (a=b, a==b, a!=b over the fields a kind registers), as the apiserver parses them.
import type { KubeObject } from '../../../src/core/model.js';

/** A selector the server cannot parse or does not support; the server answers 400 with it. */
export class SelectorError extends Error {}

type Requirement = (labels: Record<string, string>) => boolean;

/** Splits on commas outside parentheses ("a in (x,y),b" -> ["a in (x,y)", "b"]). */
function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

const KEY =
  /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?)?$/;

function checkKey(key: string, whole: string): string {
  if (!KEY.test(key))
    throw new SelectorError(
      `unable to parse requirement: invalid label key "${key}" in "${whole}"`,
    );
  return key;
}

function checkValues(values: string[], whole: string): string[] {
  for (const v of values) {
    if (!VALUE.test(v))
      throw new SelectorError(
        `unable to parse requirement: invalid label value "${v}" in "${whole}"`,
      );
  }
  return values;
}

function requirement(text: string): Requirement {
  let m: RegExpExecArray | null;
  if ((m = /^!\s*(\S+)$/.exec(text))) {
    const key = checkKey(m[1]!, text);
    return (l) => !(key in l);
  }
  if ((m = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(text))) {
    const key = checkKey(m[1]!, text);
    const values = checkValues(
      m[3]!.split(',').map((v) => v.trim()),
      text,
    );
    return m[2] === 'in'
      ? (l) => key in l && values.includes(l[key]!)
      : (l) => !(key in l) || !values.includes(l[key]!);
  }
  if ((m = /^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(\S*)$/.exec(text))) {
    const key = checkKey(m[1]!, text);
    const [value] = checkValues([m[3]!], text);
    switch (m[2]) {
      case '!=':
        return (l) => l[key] !== value;
      case '<':
      case '>': {
        const n = Number(value);
        if (!Number.isInteger(n))
          throw new SelectorError(
            `unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`,
          );
        return m[2] === '<'
          ? (l) => key in l && Number(l[key]) < n
          : (l) => key in l && Number(l[key]) > n;
      }
      default:
        return (l) => l[key] === value;
    }
  }
  if (/^\S+$/.test(text)) {
    const key = checkKey(text, text);
    return (l) => key in l;
  }
  throw new SelectorError(
    `unable to parse requirement: found '${text}', expected: in, notin, =, ==, !=, gt, lt`,
  );
}

/** Compiles a labelSelector; an empty selector matches everything. Throws SelectorError. */
export function labelSelector(selector: string | null): (o: KubeObject) => boolean {
  if (!selector) return () => true;
  const reqs = splitTopLevel(selector).map(requirement);
  return (o) => {
    const labels = o.metadata?.labels ?? {};
    return reqs.every((r) => r(labels));
  };
}

/** The string value of a field label on an object, as the apiserver's field set renders it. */
function fieldValue(o: KubeObject, field: string): string[] {
  // accepted as a label, but absent from the Pod's selectable fields (pod/strategy.go): empty
  if (field === 'status.podIPs') return [''];
  // the first of status.podIPs, as ToSelectableFields sets it
  if (field === 'status.podIP') {
    const ips = (o['status'] as { podIPs?: { ip: string }[] } | undefined)?.podIPs ?? [];
    return [ips[0]?.ip ?? ''];
  }
  let v: unknown = o;
  for (const part of (field === 'spec.host' ? 'spec.nodeName' : field).split('.')) {
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  }
  // booleans render as "true"/"false" and absent ones as false (spec.hostNetwork, spec.unschedulable)
  if (v === undefined && /hostNetwork|unschedulable/.test(field)) return ['false'];
  return [v === undefined || v === null ? '' : String(v)];
}

/** Compiles a fieldSelector for one kind; unsupported fields give SelectorError with the API's words. */
export function fieldSelector(
  selector: string | null,
  supported: string[],
): (o: KubeObject) => boolean {
  if (!selector) return () => true;
  const reqs = splitTopLevel(selector).map((text) => {
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(text);
    if (!m) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${text}'`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    if (!supported.includes(field)) throw new SelectorError(`field label not supported: ${field}`);
    return (o: KubeObject) => {
      const values = fieldValue(o, field);
      return op === '!=' ? !values.includes(value) : values.includes(value);
    };
  });
  return (o) => reqs.every((r) => r(o));
}
