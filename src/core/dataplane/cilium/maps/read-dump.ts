// The maps dump of Cilium's own load-balancer tests (`lb/maps-dump`), read whole: a line per BPF
// map entry, each of six kinds, every one into the model (a line of no kind is an error with its
// line). IDs are the rev-NAT IDs of Services (SVC, REV, AFF, SRCRANGE, MAGLEV) and backend IDs
// (BE, BEID). An empty map prints no line: a map the dump's entries refer to and holds no line
// of is not in the dump (a grep, a paste in part), said as not read, never as empty.
import {
  CiliumParseError,
  backendState,
  frontendKey,
  frontendType,
  parseAddress,
  withoutL7Flag,
  type BackendState,
  type CiliumBackend,
  type CiliumFrontend,
  type CiliumMapKind,
  type CiliumTable,
} from '../read/listing.js';
import { PROMPT } from '../../iptables/read/paste/other-lines/prompts.js';

const KINDS: Record<CiliumMapKind, RegExp> = {
  BE: /^BE: ID=(\d+) ADDR=(\S+) STATE=(\S+)$/,
  REV: /^REV: ID=(\d+) ADDR=(\S+)$/,
  // slot 0 is the Service's own entry: BEID=0 (1.17), LBALG and AFFTimeout, or L7Proxy
  SVC: /^SVC: ID=(\d+) ADDR=(\S+) SLOT=(\d+) (?:BEID=(\d+)|LBALG=(\S+) AFFTimeout=(\d+)|L7Proxy=(\d+)) COUNT=(\d+) QCOUNT=\d+ FLAGS=(.+)$/,
  AFF: /^AFF: ID=(\d+) BEID=(\d+)$/,
  SRCRANGE: /^SRCRANGE: ID=(\d+) CIDR=(\S+)$/,
  MAGLEV: /^MAGLEV: ID=(\d+) INNER=\[((?:\d+\(\d+\)(?:, )?)*)\]$/,
};

/** Each map: its name, how the dump's other entries refer to it, what it holds. */
const MAPS: Record<CiliumMapKind, { name: string; referredBy: string; holds: string }> = {
  SVC: {
    name: 'Service map',
    referredBy: 'the dump holds entries of the other maps',
    holds: 'its frontends',
  },
  BE: {
    name: 'backend map',
    referredBy: 'its Service entries name backend IDs',
    holds: "the Service entries' backends",
  },
  REV: {
    name: 'reverse-NAT map',
    referredBy: 'every Service entry has one',
    holds: 'the addresses replies get back',
  },
  AFF: {
    name: 'affinity map',
    referredBy: 'entries with sessionAffinity have backends',
    holds: 'the backends session affinity keeps clients on',
  },
  SRCRANGE: {
    name: 'source-range map',
    referredBy: 'entries check source ranges',
    holds: 'the CIDRs the entries check',
  },
  MAGLEV: {
    name: 'Maglev map',
    referredBy: 'entries with backends carry LBALG=maglev',
    holds: 'the Maglev tables',
  },
};

/** A map not in the dump, in words: "no REV line, though every Service entry has one: ...". */
export const unreadMapText = (kind: CiliumMapKind): string =>
  `no ${kind} line, though ${MAPS[kind].referredBy}: the ${MAPS[kind].name} is not in the dump, so ${MAPS[kind].holds} are not read`;

/** 1.17 prints an unspecified address as <zero>, without its port (or family). */
const ZERO = '<zero>';

export function mapsDump(lines: string[], source: string): CiliumTable {
  const rows = new Map<CiliumMapKind, { m: RegExpExecArray; at: number }[]>(
    Object.keys(KINDS).map((k) => [k as CiliumMapKind, []]),
  );
  let started = false;
  lines.forEach((line, i) => {
    const t = line.trim();
    if (t === '') return;
    const kind = /^([A-Z]+): /.exec(t)?.[1] as CiliumMapKind | undefined;
    const m = kind && KINDS[kind] ? KINDS[kind].exec(t) : null;
    // the prompt the dump was run at, above it: skipped and said, as the other forms do
    if (!m && !started && PROMPT.test(t)) return;
    started = true;
    if (!m) fail(source, i + 1, `not a line of the maps dump: "${t.slice(0, 80)}"`);
    rows.get(kind!)!.push({ m: m!, at: i + 1 });
  });
  const unread = unreadMaps(rows);
  if (unread.includes('SVC')) fail(source, undefined, unreadMapText('SVC'));
  const address = (text: string, at: number) =>
    parseAddress(text) ?? fail(source, at, `not an address: "${text}"`);

  const backends = new Map<string, { addr: ReturnType<typeof address>; state: BackendState }>();
  for (const { m, at } of rows.get('BE')!)
    backends.set(m[1]!, {
      addr: address(m[2]!, at),
      state: backendState(m[3]) ?? fail(source, at, `not a backend state: "${m[3]}"`),
    });
  const reverse = new Map(rows.get('REV')!.map(({ m, at }) => [m[1]!, { to: m[2]!, at }]));

  // a frontend per address (per rev-NAT ID where the address is <zero>), its slots by number
  const byKey = new Map<string, CiliumFrontend>();
  const byId = new Map<string, CiliumFrontend[]>();
  const slots = new Map<CiliumFrontend, { slot: number; id: string; at: number }[]>();
  const counts = new Map<CiliumFrontend, number>();
  for (const { m, at } of rows.get('SVC')!) {
    const [, id, written, slot, , algorithm, affinity, proxy, count, flagText] = m;
    const zero = written!.startsWith(ZERO);
    const addr = address(zero ? `0.0.0.0:0${written!.slice(ZERO.length)}` : written!, at);
    const key = zero ? `${ZERO} ${id}` : frontendKey(addr);
    let fe = byKey.get(key);
    if (!fe) {
      const flags = flagText!.split('+');
      fe = { ...addr, type: frontendType(flags[0]), flags: [], backends: [], line: at };
      fe.flags = withoutL7Flag(fe, flags.slice(1), undefined); // its port on slot 0's row
      byKey.set(key, fe);
      byId.set(id!, [...(byId.get(id!) ?? []), fe]);
      slots.set(fe, []);
      const rev = reverse.get(id!);
      if (rev) {
        fe.reverseNat = rev.to === ZERO ? `0.0.0.0:0` : rev.to;
        fe.mapLines = { reverseNat: rev.at };
      } else if (!unread.includes('REV')) fe.reverseNat = '';
    }
    if (slot === '0') {
      counts.set(fe, Number(count));
      if (Number(affinity ?? 0) > 0) fe.affinitySeconds = Number(affinity);
      if (algorithm === 'random' || algorithm === 'maglev') fe.algorithm = algorithm;
      if (proxy !== undefined) fe.l7Proxy = { port: Number(proxy) }; // printed for an L7 one
    } else slots.get(fe)!.push({ slot: Number(slot), id: m[4]!, at });
  }
  for (const [fe, list] of slots)
    for (const { slot, id, at } of list.sort((a, b) => a.slot - b.slot)) {
      const be = backends.get(id);
      // no BE line read: the slot names a backend the dump does not show
      if (!be && unread.includes('BE')) fe.backendsNotShown = (fe.backendsNotShown ?? 0) + 1;
      else if (!be) fe.flags.push(`backend ${id} not found`);
      if (!be) continue;
      const b: CiliumBackend = { ip: be.addr.ip, port: be.addr.port, state: be.state, line: at };
      if (be.addr.protocol) b.protocol = be.addr.protocol;
      // slots past COUNT keep a backend for its own connections: no new one goes there
      b.inRotation = slot <= (counts.get(fe) ?? Infinity);
      fe.backends.push(b);
    }

  // what the other maps hold for a Service's rev-NAT ID: its frontends' backends by backend ID
  const each = (
    kind: CiliumMapKind,
    fn: (fe: CiliumFrontend, m: RegExpExecArray, at: number) => void,
  ) => {
    for (const { m, at } of rows.get(kind)!) for (const fe of byId.get(m[1]!) ?? []) fn(fe, m, at);
  };
  const slotted = (fe: CiliumFrontend, id: string) => {
    const be = backends.get(id);
    const b = be && fe.backends.find((x) => x.ip === be.addr.ip && x.port === be.addr.port);
    const why = `backend ${id} ${be ? 'not in its slots' : 'not found'}`;
    if (!b && !unread.includes('BE') && !fe.flags.includes(why)) fe.flags.push(why);
    return b;
  };
  each('AFF', (fe, m) => {
    const b = slotted(fe, m[2]!);
    if (b) b.affinity = true;
  });
  each('SRCRANGE', (fe, m, at) => {
    (fe.sourceRanges ??= []).push(m[2]!);
    ((fe.mapLines ??= {}).sourceRanges ??= []).push(at);
  });
  each('MAGLEV', (fe, m, at) => {
    (fe.mapLines ??= {}).maglev = at;
    for (const e of m[2]!.matchAll(/(\d+)\((\d+)\)/g)) {
      const b = slotted(fe, e[1]!);
      if (b) b.maglev = Number(e[2]);
    }
  });
  // the other maps' lines are read as well, wherever the dump puts them
  const rowsRead = (['BE', 'REV', 'AFF', 'SRCRANGE', 'MAGLEV'] as const).flatMap((k) =>
    rows.get(k)!.map((r) => r.at),
  );
  return {
    form: 'maps-dump',
    source,
    frontends: [...byKey.values()],
    ...(rowsRead.length > 0 ? { rowsRead } : {}),
    ...(unread.length > 0 ? { unreadMaps: unread } : {}),
  };
}

/** The maps the dump's entries refer to and it holds no line of. */
function unreadMaps(
  rows: Map<CiliumMapKind, { m: RegExpExecArray; at: number }[]>,
): CiliumMapKind[] {
  const svc = rows.get('SVC')!;
  // a Service entry (slot 0) whose backends take new connections (COUNT), by its flags
  const serving = svc.filter(({ m }) => m[3] === '0' && Number(m[8]) > 0);
  const flagged = (word: string) => serving.some(({ m }) => m[9]!.split('+').includes(word));
  const refers: Record<CiliumMapKind, boolean> = {
    SVC: [...rows.values()].some((r) => r.length > 0),
    BE: svc.some(({ m }) => m[4] !== undefined && m[4] !== '0'),
    REV: svc.length > 0,
    AFF: flagged('sessionAffinity'),
    SRCRANGE: svc.some(({ m }) => m[9]!.split('+').includes('check source-range')),
    // never the wildcard's (0.0.0.0, <zero>): its entry has no Maglev table
    MAGLEV: serving.some(
      ({ m }) => m[5] === 'maglev' && !/^(?:0\.0\.0\.0|\[::\]|<zero>)/.test(m[2]!),
    ),
  };
  return (Object.keys(KINDS) as CiliumMapKind[]).filter(
    (k) => refers[k] && rows.get(k)!.length === 0,
  );
}

const fail = (source: string, line: number | undefined, why: string): never => {
  throw new CiliumParseError(source, line, why);
};
