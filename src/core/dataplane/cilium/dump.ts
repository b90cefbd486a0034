// The maps dump of Cilium's own load-balancer tests (`lb/maps-dump`), read whole: a line per BPF
// map entry, each of six kinds, every one into the model (a line of no kind is an error with its
// line). IDs are the rev-NAT IDs of Services (SVC, REV, AFF, SRCRANGE, MAGLEV) and backend IDs
// (BE, BEID).
import {
  CiliumParseError,
  backendState,
  frontendKey,
  frontendType,
  parseAddress,
  type BackendState,
  type CiliumBackend,
  type CiliumFrontend,
  type CiliumTable,
} from './listing.js';

const KINDS = {
  BE: /^BE: ID=(\d+) ADDR=(\S+) STATE=(\S+)$/,
  REV: /^REV: ID=(\d+) ADDR=(\S+)$/,
  // slot 0 is the Service's own entry: BEID=0 (1.17), LBALG and AFFTimeout, or L7Proxy
  SVC: /^SVC: ID=(\d+) ADDR=(\S+) SLOT=(\d+) (?:BEID=(\d+)|LBALG=(\S+) AFFTimeout=(\d+)|L7Proxy=\d+) COUNT=(\d+) QCOUNT=\d+ FLAGS=(.+)$/,
  AFF: /^AFF: ID=(\d+) BEID=(\d+)$/,
  SRCRANGE: /^SRCRANGE: ID=(\d+) CIDR=(\S+)$/,
  MAGLEV: /^MAGLEV: ID=(\d+) INNER=\[((?:\d+\(\d+\)(?:, )?)*)\]$/,
};
type Kind = keyof typeof KINDS;

/** 1.17 prints an unspecified address as <zero>, without its port (or family). */
const ZERO = '<zero>';

export function mapsDump(lines: string[], source: string): CiliumTable {
  const rows = new Map<Kind, { m: RegExpExecArray; at: number }[]>(
    Object.keys(KINDS).map((k) => [k as Kind, []]),
  );
  lines.forEach((line, i) => {
    const t = line.trim();
    if (t === '') return;
    const kind = /^([A-Z]+): /.exec(t)?.[1] as Kind | undefined;
    const m = kind && KINDS[kind] ? KINDS[kind].exec(t) : null;
    if (!m) fail(source, i + 1, `not a line of the maps dump: "${t.slice(0, 80)}"`);
    rows.get(kind!)!.push({ m: m!, at: i + 1 });
  });
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
    const [, id, written, slot, , algorithm, affinity, count, flagText] = m;
    const zero = written!.startsWith(ZERO);
    const addr = address(zero ? `0.0.0.0:0${written!.slice(ZERO.length)}` : written!, at);
    const key = zero ? `${ZERO} ${id}` : frontendKey(addr);
    let fe = byKey.get(key);
    if (!fe) {
      const flags = flagText!.split('+');
      fe = { ...addr, type: frontendType(flags[0]), flags: flags.slice(1), backends: [], line: at };
      byKey.set(key, fe);
      byId.set(id!, [...(byId.get(id!) ?? []), fe]);
      slots.set(fe, []);
      const rev = reverse.get(id!);
      fe.reverseNat = rev === undefined ? '' : rev.to === ZERO ? `0.0.0.0:0` : rev.to;
      if (rev) fe.mapLines = { reverseNat: rev.at };
    }
    if (slot === '0') {
      counts.set(fe, Number(count));
      if (Number(affinity ?? 0) > 0) fe.affinitySeconds = Number(affinity);
      if (algorithm === 'random' || algorithm === 'maglev') fe.algorithm = algorithm;
    } else slots.get(fe)!.push({ slot: Number(slot), id: m[4]!, at });
  }
  for (const [fe, list] of slots)
    for (const { slot, id, at } of list.sort((a, b) => a.slot - b.slot)) {
      const be = backends.get(id);
      if (!be) {
        fe.flags.push(`backend ${id} not found`);
        continue;
      }
      const b: CiliumBackend = { ip: be.addr.ip, port: be.addr.port, state: be.state, line: at };
      if (be.addr.protocol) b.protocol = be.addr.protocol;
      // slots past COUNT keep a backend for its own connections: no new one goes there
      b.inRotation = slot <= (counts.get(fe) ?? Infinity);
      fe.backends.push(b);
    }

  // what the other maps hold for a Service's rev-NAT ID: its frontends' backends by backend ID
  const each = (kind: Kind, fn: (fe: CiliumFrontend, m: RegExpExecArray, at: number) => void) => {
    for (const { m, at } of rows.get(kind)!) for (const fe of byId.get(m[1]!) ?? []) fn(fe, m, at);
  };
  const slotted = (fe: CiliumFrontend, id: string) => {
    const be = backends.get(id);
    const b = be && fe.backends.find((x) => x.ip === be.addr.ip && x.port === be.addr.port);
    const why = `backend ${id} ${be ? 'not in its slots' : 'not found'}`;
    if (!b && !fe.flags.includes(why)) fe.flags.push(why);
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
  return { form: 'maps-dump', source, frontends: [...byKey.values()] };
}

const fail = (source: string, line: number, why: string): never => {
  throw new CiliumParseError(source, line, why);
};
