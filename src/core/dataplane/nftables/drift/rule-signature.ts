// The signature nftables drift compares two rules by, whatever the form each was read in.
import type { NftExpr, NftRule } from '../read/listing.js';

/**
 * What a rule matches and does, the same whether it was read from nft's JSON, its listing or a
 * script: the sets it looks up, the addresses and CIDRs it names, its statements and verdicts.
 */
export function signature(r: NftRule): string {
  const out: string[] = [];
  const walk = (v: unknown, key?: string): void => {
    if (typeof v === 'string') {
      if (key === 'text') out.push(...words(v));
      else if (v.startsWith('@') || isAddress(v)) out.push(v);
      else if (key === 'target') out.push(`> ${v}`);
    } else if (Array.isArray(v)) v.forEach((x) => walk(x));
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (o['prefix'] && typeof o['prefix'] === 'object') {
        const p = o['prefix'] as { addr: string; len: number };
        out.push(`${p.addr}/${p.len}`);
        return;
      }
      for (const [k, x] of Object.entries(o)) {
        if (STATEMENTS.has(k)) out.push(k);
        walk(x, k);
      }
    }
  };
  r.expr.forEach((e: NftExpr) => walk(e));
  return out.sort().join(' ');
}

const STATEMENTS = new Set([
  'masquerade',
  'reject',
  'drop',
  'accept',
  'mangle',
  'dnat',
  'vmap',
  'fib',
]);

/** The signature words of a rule kept as text: sets, addresses, statements. */
function words(text: string): string[] {
  const out: string[] = [];
  const all = text.replace(/[{},]/g, ' ').split(/\s+/);
  all.forEach((w, i) => {
    if (w.startsWith('@') || isAddress(w)) out.push(w);
    // "ct status dnat" matches a connection's state: not the dnat statement
    else if (STATEMENTS.has(w) && all[i - 1] !== 'status') out.push(w);
    else if (w === 'set' && all[i - 1] === 'mark') out.push('mangle');
  });
  return out;
}

export const isAddress = (w: string) =>
  /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(w) ||
  (/^[0-9a-f:]+(\/\d+)?$/i.test(w) && w.includes(':') && /[0-9a-f]/i.test(w));
