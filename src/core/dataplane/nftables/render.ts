// A rule in nft's own words, whichever form it was read from: nft's JSON expressions are written
// back as `nft list` prints them, a rule read from text keeps its text. The packet walk reads
// rules in these words, and every screen shows them.
import type { NftExpr, NftRule } from './read/listing.js';

type J = Record<string, unknown>;
const isObject = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

export function ruleText(r: NftRule): string {
  return r.expr.map(statement).filter(Boolean).join(' ');
}

function statement(e: NftExpr): string {
  const [kind, body] = Object.entries(e)[0] ?? ['', null];
  switch (kind) {
    case 'match': {
      const m = body as J;
      if (typeof m['text'] === 'string') return m['text'];
      const op = m['op'] === '==' || m['op'] === 'in' ? '' : `${String(m['op'])} `;
      // flags ("ct state new,established") come as a list
      const right = Array.isArray(m['right'])
        ? m['right'].map(String).join(',')
        : value(m['right']);
      return `${value(m['left'])} ${op}${right}`;
    }
    case 'vmap': {
      const v = body as J;
      return `${value(v['key'])} vmap ${value(v['data'])}`;
    }
    case 'goto':
    case 'jump':
      return `${kind} ${String((body as J)['target'])}`;
    case 'masquerade':
    case 'reject':
    case 'drop':
    case 'accept':
    case 'return':
    case 'continue': {
      const flags = isObject(body) && Array.isArray(body['flags']) ? body['flags'] : [];
      return [kind, ...flags.map(String)].join(' ');
    }
    case 'mangle': {
      const m = body as J;
      return `${value(m['key'])} set ${value(m['value'])}`;
    }
    case 'dnat': {
      const d = body as J;
      const family = typeof d['family'] === 'string' ? `${d['family']} ` : '';
      const port = d['port'] !== undefined ? `:${value(d['port'])}` : '';
      const addr = value(d['addr']);
      return `dnat ${family}to ${String(d['addr']).includes(':') && port ? `[${addr}]` : addr}${port}`;
    }
    case 'set': {
      const s = body as J;
      return `${String(s['op'])} ${String(s['set'])} { ${value(s['elem'])} }`;
    }
    case 'counter':
      return 'counter';
    default:
      return `${kind} ${JSON.stringify(body)}`;
  }
}

/** An expression as nft prints it: "ip daddr", "meta l4proto . th dport", "{ 0 : goto x }". */
export function value(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `${value(v[0])} : ${value(v[1])}`;
  if (!isObject(v)) return JSON.stringify(v);
  const [kind, body] = Object.entries(v)[0] ?? ['', null];
  const b = body as J;
  switch (kind) {
    case 'payload':
      return `${String(b['protocol'])} ${String(b['field'])}`;
    case 'meta':
    case 'ct':
      return `${kind} ${String(b['key'])}`;
    case 'fib':
      return `fib ${((b['flags'] as unknown[]) ?? []).map(String).join(' ')} ${String(b['result'])}`;
    case 'concat':
      return (body as unknown[]).map(value).join(' . ');
    case 'prefix':
      return `${String(b['addr'])}/${String(b['len'])}`;
    case 'range':
      return (body as unknown[]).map(value).join('-');
    case 'set':
      return `{ ${(body as unknown[]).map(value).join(', ')} }`;
    case 'elem':
      return value(b['val']);
    case 'numgen':
      return `numgen ${String(b['mode'])} mod ${String(b['mod'])}`;
    case 'map':
      return `${value(b['key'])} map ${value(b['data'])}`;
    case '&':
    case '|':
    case '^': {
      const [left, right] = body as unknown[];
      return `${value(left)} ${kind} 0x${Number(right).toString(16)}`;
    }
    case 'goto':
    case 'jump':
      return `${kind} ${String(b['target'])}`;
    case 'drop':
    case 'accept':
    case 'reject':
    case 'return':
      return kind;
    default:
      return JSON.stringify(v);
  }
}
