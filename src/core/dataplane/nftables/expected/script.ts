// The `nft -f` script kube-proxy writes, as typed commands: each says what it adds to the table
// and is printed as the line kube-proxy writes. `kdebug expect` prints the lines; drift builds the
// table from the commands themselves, never by reading the printed script back.
import type {
  NftChain,
  NftElement,
  NftExpr,
  NftFamily,
  NftRule,
  NftSet,
  NftTable,
} from '../read/listing.js';
import * as expr from '../read/expr.js';

/** A rule's statement, in the words kube-proxy writes it and as nft's expression. */
export interface Statement {
  text: string;
  expr: NftExpr;
}

export const jump = (kind: 'jump' | 'goto', chain: string): Statement => ({
  text: `${kind} ${chain}`,
  expr: expr.verdictExpr(kind, chain),
});

export const markOr = (mark: number): Statement => ({
  text: `mark set mark or 0x${mark.toString(16)}`,
  expr: expr.markOrExpr(mark),
});

/** Each endpoint chain picked alike: `numgen random mod N vmap { 0 : goto X , ... }`. */
export const numgenGoto = (chains: string[]): Statement => ({
  text: `numgen random mod ${chains.length} vmap { ${chains.map((c, i) => `${i} : goto ${c}`).join(' , ')} }`,
  expr: expr.numgenVmapExpr(
    chains.length,
    chains.map((c, i) => [i, expr.verdictExpr('goto', c)]),
  ),
});

/** Each endpoint picked alike, DNAT in place: `dnat ip addr . port to numgen random mod N map`. */
export const numgenDnat = (ipX: string, eps: { ip: string; port: number }[]): Statement => ({
  text: `dnat ${ipX} addr . port to numgen random mod ${eps.length} map { ${eps.map((e, i) => `${i} : ${e.ip} . ${e.port}`).join(' , ')} }`,
  expr: expr.numgenDnatExpr(
    ipX,
    eps.length,
    eps.map((e, i) => [i, [e.ip, e.port]]),
  ),
});

/** `dnat to ADDRESS` ("10.0.0.5:80", "[fd00::5]:80"). */
export const dnatTo = (ip: string, port: number, address: string): Statement => ({
  text: `dnat to ${address}`,
  expr: expr.dnatExpr(ip, port),
});

export const updateSaddr = (ipX: string, set: string): Statement => ({
  text: `update @${set} { ${ipX} saddr }`,
  expr: expr.updateSaddrExpr(ipX, `@${set}`),
});

/** A base chain's hook, as kube-proxy declares it. */
export interface BaseChain {
  type: string;
  hook: string;
  prio: number;
}

/** One command of the script. */
export type NftCommand =
  | { add: 'table'; comment: string }
  | { add: 'chain'; name: string; base?: BaseChain; comment?: string }
  | { add: 'set'; set: Omit<NftSet, 'elements'> }
  | { add: 'element'; set: string; element: NftElement }
  /** A named counter a rule counts into (no routing fact: the table built leaves it out). */
  | { add: 'counter'; name: string }
  | { add: 'rule'; chain: string; matches: string; statement?: Statement; comment?: string };

/** The line kube-proxy writes for a command of its table of this family. */
export function scriptLine(c: NftCommand, family: NftFamily): string {
  const t = `${family} kube-proxy`;
  switch (c.add) {
    case 'table':
      return `add table ${t} { comment "${c.comment}" ; }`;
    case 'chain': {
      const body = c.base
        ? `type ${c.base.type} hook ${c.base.hook} priority ${c.base.prio}`
        : c.comment !== undefined
          ? `comment "${c.comment}"`
          : undefined;
      return `add chain ${t} ${c.name}${body ? ` { ${body} ; }` : ''}`;
    }
    case 'set': {
      const s = c.set;
      const parts = [
        `type ${s.type.join(' . ')}${s.map ? ` : ${s.map}` : ''}`,
        ...(s.flags.length > 0 ? [`flags ${s.flags.join(',')}`] : []),
        ...(s.timeout !== undefined ? [`timeout ${s.timeout}s`] : []),
        ...(s.comment !== undefined ? [`comment "${s.comment}"`] : []),
      ];
      return `add ${s.kind} ${t} ${s.name} { ${parts.map((p) => `${p} ; `).join('')}}`;
    }
    case 'element': {
      const e = c.element;
      const comment = e.comment !== undefined ? ` comment "${e.comment}"` : '';
      const value = e.verdict
        ? ` : ${e.verdict.target ? `${e.verdict.kind} ${e.verdict.target}` : e.verdict.kind}`
        : '';
      return `add element ${t} ${c.set} { ${e.key.join(' . ')}${comment}${value} }`;
    }
    case 'counter':
      return `add counter ${t} ${c.name}`;
    case 'rule': {
      const text = [c.matches, c.statement?.text].filter(Boolean).join(' ');
      return `add rule ${t} ${c.chain} ${text}${c.comment !== undefined ? ` comment "${c.comment}"` : ''}`;
    }
  }
}

/** The table the commands build, applied in order as the script reader (../read/read-script.ts)
 * applies the printed lines: an element added again (a second port's cluster IP) is kept once, at
 * the end. */
export function scriptTable(commands: NftCommand[], family: NftFamily): NftTable {
  const chains = new Map<string, NftChain>();
  const sets = new Map<string, NftSet>();
  const keys = new Map<NftSet, Map<string, NftElement>>();
  let comment: string | undefined;
  const chain = (name: string) => {
    let ch = chains.get(name);
    if (!ch) chains.set(name, (ch = { name, rules: [] }));
    return ch;
  };
  for (const c of commands)
    if (c.add === 'table') comment = c.comment;
    else if (c.add === 'chain') {
      const ch = chain(c.name);
      if (c.base) [ch.type, ch.hook, ch.prio] = [c.base.type, c.base.hook, c.base.prio];
    } else if (c.add === 'set') {
      if (!sets.has(c.set.name)) sets.set(c.set.name, { ...c.set, elements: [] });
    } else if (c.add === 'element') {
      const s = sets.get(c.set);
      if (!s) throw new Error(`kdebug's script adds to ${c.set} before declaring it`);
      let held = keys.get(s);
      if (!held) keys.set(s, (held = new Map()));
      const key = c.element.key.join(' . '); // as nft prints a concatenated key
      held.delete(key);
      held.set(key, c.element);
    } else if (c.add === 'counter') continue;
    else {
      const exprs = expr.matchExprs(c.matches);
      if (c.statement) exprs.push(c.statement.expr);
      const rule: NftRule =
        c.comment !== undefined
          ? { chain: c.chain, comment: c.comment, expr: exprs }
          : { chain: c.chain, expr: exprs };
      chain(c.chain).rules.push(rule);
    }
  for (const [s, held] of keys) s.elements = [...held.values()];
  return {
    family,
    name: 'kube-proxy',
    ...(comment !== undefined ? { comment } : {}),
    chains: [...chains.values()],
    sets: [...sets.values()],
    chain: (n) => chains.get(n),
    set: (n) => sets.get(n),
  };
}
