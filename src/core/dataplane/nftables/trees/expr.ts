// Reading the nft JSON expressions of kube-proxy's rules: where a rule goes, what it matches.
import { scalar, verdictOf, type NftExpr, type NftRule } from '../read/listing.js';

type J = Record<string, unknown>;
export const isObject = (v: unknown): v is J =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The chain a rule's goto / jump leads to. */
export function goesTo(r: NftRule): string | undefined {
  for (const e of r.expr) {
    const v = verdictOf(e);
    if (v?.target) return v.target;
  }
  return undefined;
}

/** A match expression as nft prints it, near enough to read: "ip saddr != 10.244.0.0/16". */
export function matchText(e: NftExpr): string {
  const m = e['match'];
  if (!isObject(m)) return JSON.stringify(e);
  if (typeof m['text'] === 'string') return m['text']; // read from the text listing as it was
  const side = (v: unknown): string => {
    if (isObject(v) && isObject(v['payload']))
      return `${String(v['payload']['protocol'])} ${String(v['payload']['field'])}`;
    if (isObject(v) && isObject(v['meta'])) return `meta ${String(v['meta']['key'])}`;
    if (isObject(v) && isObject(v['fib']))
      return `fib ${((v['fib']['flags'] as unknown[]) ?? []).join(' ')} ${String(v['fib']['result'])}`;
    if (isObject(v) && Array.isArray(v['set']))
      return `{ ${(v['set'] as unknown[]).map((x) => String(scalar(x))).join(', ')} }`;
    return String(scalar(v));
  };
  const op = m['op'] === '==' ? '' : ` ${String(m['op'])}`;
  return `${side(m['left'])}${op} ${side(m['right'])}`;
}
