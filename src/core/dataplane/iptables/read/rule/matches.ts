// A rule's -m modules typed from their options as written: ports, multiport, statistic, mark,
// addrtype, conntrack, recent, set, physdev; any other module kept as it is.
import type { Match, MatchBase, Option, Ports, Types } from './rule.js';
import { PORT_MODULES } from '../token-walk.js';

/** The option of this name, of a module or a target. */
export const opt = (m: MatchBase | Option[], name: string) =>
  (Array.isArray(m) ? m : m.options).find((o) => o.name === name);

function ports(o: Option | undefined): Ports | undefined {
  if (!o || o.values.length === 0) return undefined;
  const ranges = o.values[0]!.split(',').map((p) => {
    const [a, b] = p.split(':');
    const from = Number(a);
    return { from, to: b === undefined ? from : Number(b) };
  });
  return { ranges, negated: o.negated };
}

function types(o: Option | undefined): Types | undefined {
  return o && o.values.length > 0
    ? { types: o.values[0]!.split(','), negated: o.negated }
    : undefined;
}

function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const v = Number(s);
  return Number.isNaN(v) ? undefined : v;
}

/** "0x4000/0x4000" -> value and mask (mask defaults to all ones). */
export function parseMark(s: string): { value: number; mask: number } {
  const [v, m] = s.split('/');
  return { value: Number(v) >>> 0, mask: m === undefined ? 0xffffffff : Number(m) >>> 0 };
}

/** The module typed by its name, its options kept as written. */
export function typeMatch(m: MatchBase): Match {
  const o = (name: string) => opt(m, name);
  if (PORT_MODULES.includes(m.module))
    return {
      ...m,
      kind: 'ports',
      dport: ports(o('dport') ?? o('destination-port')),
      sport: ports(o('sport') ?? o('source-port')),
    };
  switch (m.module) {
    case 'comment':
      return { ...m, kind: 'comment', comment: o('comment')?.values[0] ?? '' };
    case 'multiport':
      return {
        ...m,
        kind: 'multiport',
        dports: ports(o('dports') ?? o('destination-ports')),
        sports: ports(o('sports') ?? o('source-ports')),
        ports: ports(o('ports')),
      };
    case 'statistic': {
      const mode = o('mode')?.values[0];
      const p = o('probability');
      return {
        ...m,
        kind: 'statistic',
        mode: mode === 'random' || mode === 'nth' ? mode : undefined,
        probability: num(p?.values[0]),
        probabilityText: p?.values[0],
        every: num(o('every')?.values[0]),
        packet: num(o('packet')?.values[0]),
        negated: (p ?? o('every'))?.negated ?? false,
      };
    }
    case 'mark': {
      const mk = o('mark');
      return {
        ...m,
        kind: 'mark',
        ...parseMark(mk?.values[0] ?? '0'),
        negated: mk?.negated ?? false,
      };
    }
    case 'addrtype':
      return {
        ...m,
        kind: 'addrtype',
        srcType: types(o('src-type')),
        dstType: types(o('dst-type')),
        limitIfaceIn: o('limit-iface-in') !== undefined,
        limitIfaceOut: o('limit-iface-out') !== undefined,
      };
    case 'conntrack':
    case 'state':
      return { ...m, kind: 'conntrack', ctstate: types(o('ctstate') ?? o('state')) };
    case 'recent': {
      const action = (['set', 'rcheck', 'update', 'remove'] as const).find(
        (a) => o(a) !== undefined,
      );
      return {
        ...m,
        kind: 'recent',
        action,
        negated: action ? o(action)!.negated : false,
        name: o('name')?.values[0] ?? 'DEFAULT',
        seconds: num(o('seconds')?.values[0]),
        hitcount: num(o('hitcount')?.values[0]),
        reap: o('reap') !== undefined,
        mask: o('mask')?.values[0],
        side: o('rdest') !== undefined ? 'dest' : 'source',
      };
    }
    case 'set': {
      const s = o('match-set') ?? o('set');
      return {
        ...m,
        kind: 'set',
        name: s?.values[0] ?? '',
        flags: (s?.values[1] ?? '').split(',').filter(Boolean),
        negated: s?.negated ?? false,
      };
    }
    case 'physdev': {
      const named = (x: Option | undefined) =>
        x ? { name: x.values[0] ?? '', negated: x.negated } : undefined;
      const flag = (x: Option | undefined) => (x ? { negated: x.negated } : undefined);
      return {
        ...m,
        kind: 'physdev',
        in: named(o('physdev-in')),
        out: named(o('physdev-out')),
        isIn: flag(o('physdev-is-in')),
        isOut: flag(o('physdev-is-out')),
        isBridged: flag(o('physdev-is-bridged')),
      };
    }
    default:
      return { ...m, kind: 'other' };
  }
}
