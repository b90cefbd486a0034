// Each BPF map entry's behaviour against the entry kdebug expects the agent to write (expected.ts):
// the flags that change where packets go or who may send them (traffic policies and their
// scopes, DSR, the source-range check and its policy), the source ranges, session affinity, the
// backend selection and reverse NAT; each where the listing shows it and the agent's release and
// settings as read make it known.
import type { Service } from '../../../kube/objects.js';
import { canonicalCidrOf } from '../../../ipv6.js';
import type { ServicePortName } from '../../../model.js';
import { lineAt, type AddFinding } from '../../drift.js';
import type { KnownMapFlags } from '../agent/comparable.js';
import type { CiliumAgent } from '../agent/agent.js';
import {
  sourceText,
  wasRead,
  type SettingSources,
  type SourcedSetting,
} from '../agent/provenance.js';
import type { ExpectedBackend, ExpectedFrontend } from '../expected/expected.js';
import { maglevEntries } from '../expected/maglev.js';
import { WEIGHT_SOURCE } from '../drift/words.js';
import {
  formatAddress,
  frontendKey,
  isDropEntry,
  isWildcard,
  parseAddress,
  type CiliumBackend,
  type CiliumFrontend,
  type CiliumMapKind,
  type CiliumTable,
} from '../read/listing.js';
import { releaseBehaviour } from '../agent/release-behaviour.js';
import { expectedMaps, type CiliumMapOptions, type ExpectedMapEntry } from './expected.js';

/** What the expected map entries are made from, and what of them the agent makes known. */
export interface MapExpectations {
  services: readonly Service[];
  /** The agent's NodePort addresses, where read (the map's own are compared besides). */
  nodePortAddresses: readonly string[];
  /** The node's other addresses, where known (a VIP on one has no wildcard entry). */
  nodeAddresses?: readonly string[];
  options: CiliumMapOptions;
  known: KnownMapFlags;
  /** Where the agent's settings were read (agent/provenance.ts): a finding says the source of
   * each setting it rests on, and one resting on a default taken is a note, not drift. */
  sources?: {
    agent: Pick<CiliumAgent, 'pod' | 'node' | 'configMap' | 'release'>;
    of: SettingSources;
  };
}

interface Entry {
  node: string;
  bpf: CiliumTable;
  m: CiliumFrontend;
  e: ExpectedMapEntry;
  known: KnownMapFlags;
  /** The agent's forwarding mode (bpf-lb-mode). */
  mode: string;
  /** The agent's settings the entries were expected with (its session affinity). */
  options: CiliumMapOptions;
  add: AddFinding;
  /** Adds a finding as a note: what it rests on was not read. */
  note: AddFinding;
  sources: MapExpectations['sources'];
}

/** Where `setting` was read, said after its value (", from ConfigMap ... bpf-lb-mode"; ": kube-proxy
 * replacement turns it on" where its release or another setting fixes it), and
 * whether it was (a default taken is an assumption, which passes and fails nothing). */
function settingFrom(c: Entry, setting: SourcedSetting): { from: string; read: boolean } {
  const s = c.sources;
  if (!s) return { from: '', read: true };
  const src = s.of[setting];
  const text = sourceText(s.agent, src);
  // the release's reason is a sentence of its own ("kube-proxy replacement turns it on")
  if (src.from === 'release') return { from: `: ${text}`, read: true };
  return wasRead(src) ? { from: `, from ${text}`, read: true } : { from: `, ${text}`, read: false };
}

/** Said of a finding that rests on settings not read: why it is a note. */
const ASSUMED =
  " That setting was not read: what is expected rests on its default, so this is an assumption, not drift; read cilium-config (or the agent's status) to compare it.";

export function mapEntryDrift(
  node: string,
  expected: readonly ExpectedFrontend[],
  bpf: CiliumTable,
  x: MapExpectations,
  add: AddFinding,
  note: AddFinding,
): ExpectedMapEntry[] {
  // a NodePort address the agent wrote is compared even where its addresses were not read
  const written = bpf.frontends.filter((f) => f.type === 'NodePort' && !isWildcard(f.ip));
  const entries = expectedMaps(expected, {
    services: x.services,
    nodePortAddresses: [...new Set([...x.nodePortAddresses, ...written.map((f) => f.ip)])],
    ...(x.nodeAddresses ? { nodeAddresses: x.nodeAddresses } : {}),
    options: x.options,
  });
  const protocols = bpf.frontends.some((f) => f.protocol !== undefined);
  const key = (f: Pick<CiliumFrontend, 'ip' | 'port' | 'protocol' | 'internal'>) =>
    frontendKey({ ...f, protocol: protocols ? f.protocol : undefined });
  const byKey = new Map<string, ExpectedMapEntry[]>();
  for (const e of entries) {
    const k = key({ ...e.frontend, ip: e.ip });
    byKey.set(k, [...(byKey.get(k) ?? []), e]);
  }
  for (const m of bpf.frontends) {
    const want = byKey.get(key(m));
    // none: not the objects' (said as stale or unmodelled); two: a listing without protocols
    if (want?.length !== 1) continue;
    const c: Entry = {
      node,
      bpf,
      m,
      e: want[0]!,
      known: x.known,
      mode: x.options.forwarding,
      options: x.options,
      add,
      note,
      sources: x.sources,
    };
    // a listing without the flag column (before 1.8) shows none: nothing is said of them
    if (m.type !== undefined && x.known.flags) {
      trafficPolicy(c);
      forwarding(c);
      sourceRanges(c);
      affinity(c);
    }
    algorithm(c);
    reverseNat(c);
  }
  return entries;
}

const nameOf = (e: ExpectedMapEntry) =>
  `${e.frontend.service}${e.frontend.portName ? `:${e.frontend.portName}` : ''}` as ServicePortName;
const keyOf = (c: Entry) => frontendKey(c.m);
/** The map line of the Service entry, as evidence. */
const at = (c: Entry, extra = '') =>
  lineAt(
    c.bpf.source,
    c.m.line,
    `${frontendKey(c.m)} ${[c.m.type ?? '', ...c.m.flags].join('+')}${extra}`,
  );
const expectedLine = (c: Entry, extra = '') =>
  `${frontendKey({ ...c.e.frontend, ip: c.e.ip })} ${[c.e.frontend.type, ...c.e.flags].join('+')}${extra}`;
/** Flags one side has and the other lacks. */
const differ = (c: Entry, words: readonly string[]) => {
  const has = (l: string[]) => words.filter((w) => l.includes(w));
  const got = has(c.m.flags);
  const want = has(c.e.flags);
  return {
    lacks: want.filter((w) => !got.includes(w)),
    extra: got.filter((w) => !want.includes(w)),
  };
};
const list = (words: string[]) => words.join(', ');
/** The listing shows the map: a maps dump that holds it (one it lacks is not read, not empty). */
const shows = (c: Entry, kind: CiliumMapKind) =>
  c.bpf.form === 'maps-dump' && !c.bpf.unreadMaps?.includes(kind);

const POLICY: Record<string, string> = {
  Local: 'externalTrafficPolicy Local (outside clients only to backends on this node)',
  InternalLocal: 'internalTrafficPolicy Local (in-cluster clients only to backends on this node)',
  'two-scopes':
    'two scopes (in-cluster clients looked up in the /i entry, with their own policy and backends)',
};

/** Local, InternalLocal, two-scopes: which backends a client may reach, and where none is left
 * on this node whether it is dropped (1.20). */
function trafficPolicy(c: Entry) {
  const { lacks, extra } = differ(c, Object.keys(POLICY));
  if (!lacks.length && !extra.length) return;
  const say = (l: string[]) => l.map((w) => POLICY[w]).join('; ');
  c.add('cilium-traffic-policy-differs', {
    service: nameOf(c.e),
    title: `${keyOf(c)}: BPF map ${[...lacks.map((w) => `lacks ${w}`), ...extra.map((w) => `has ${w}`)].join(', ')}`,
    message: `The BPF map entry of ${c.m.type ?? ''} frontend ${keyOf(c)} (${nameOf(c.e)}) on ${c.node} ${lacks.length ? `lacks ${list(lacks)}` : ''}${lacks.length && extra.length ? ' and ' : ''}${extra.length ? `has ${list(extra)}, which the Service does not ask for` : ''}: the datapath reads the Service's traffic policies from these flags, so ${lacks.length ? `it does not apply ${say(lacks)}` : ''}${lacks.length && extra.length ? ', and ' : ''}${extra.length ? `it applies ${say(extra)}` : ''}.`,
    expected: [expectedLine(c)],
    actual: [at(c)],
  });
}

/** dsr: the backend answers the client itself (the frontend carried to it in the packet), or
 * this node translates both ways (SNAT). */
function forwarding(c: Entry) {
  if (!c.known.forwarding) return;
  const want = c.e.flags.includes('dsr');
  if (c.m.flags.includes('dsr') === want) return;
  const mode = settingFrom(c, 'forwarding');
  const honoured = settingFrom(c, 'forwardingAnnotation');
  const read = mode.read && honoured.read;
  (read ? c.add : c.note)('cilium-forwarding-differs', {
    service: nameOf(c.e),
    title: `${keyOf(c)}: ${want ? 'SNAT' : 'DSR'} in the BPF map, expected ${want ? 'DSR' : 'SNAT'}${read ? '' : ' (assumed)'}`,
    message: `The BPF map entry of ${keyOf(c)} (${nameOf(c.e)}) on ${c.node} forwards by ${want ? 'SNAT' : 'DSR'}, but the agent's bpf-lb-mode (${c.mode}${mode.from}) and the Service's service.cilium.io/forwarding-mode (where honoured: bpf-lb-mode-annotation${honoured.from}) make it ${want ? 'DSR' : 'SNAT'}: ${want ? "replies go back through this node, and backends see this node's address instead of the client's" : "backends on other nodes answer the client directly, from the frontend's address, which needs the network to let those replies through"}.${read ? '' : ASSUMED}`,
    expected: [expectedLine(c)],
    actual: [at(c)],
  });
}

/** The source-range check, its policy (allow or deny) and its CIDRs (where the listing shows
 * the source-range map). */
function sourceRanges(c: Entry) {
  const service = nameOf(c.e);
  const ranges = c.e.sourceRanges ?? [];
  const checks = c.m.flags.includes('check source-range');
  const want = c.e.flags.includes('check source-range');
  if (want && !checks) {
    const guarded = guardedBy(c);
    (guarded.read ? c.add : c.note)('cilium-source-range-missing', {
      service,
      title: `${keyOf(c)}: no source-range check${guarded.read ? '' : ' (assumed)'}`,
      message: `The BPF map entry of ${c.m.type ?? ''} frontend ${keyOf(c)} (${service}) on ${c.node} does not check the source, though the Service's loadBalancerSourceRanges guard this frontend (${guarded.why}): ${c.e.flags.includes('deny') ? 'clients in' : 'clients outside'} its loadBalancerSourceRanges (${list(ranges) || 'none of this family'}) are let through.${guarded.read ? '' : ASSUMED}`,
      expected: [expectedLine(c, ` ${list(ranges)}`)],
      actual: [at(c)],
    });
    return;
  }
  if (!checks) return;
  const mapped = shows(c, 'SRCRANGE') ? (c.m.sourceRanges ?? []) : undefined;
  // which types are guarded turns on a setting: not read, a check where none is expected is no drift
  if (!want && !c.known.sourceRangeTypes) return;
  if (!want) {
    const types = settingFrom(c, 'sourceRangeTypes');
    (types.read ? c.add : c.note)('cilium-source-range-differs', {
      service,
      title: `${keyOf(c)}: checks the source, expected no check${types.read ? '' : ' (assumed)'}`,
      message: `The BPF map entry of ${keyOf(c)} (${service}) on ${c.node} checks each client's source${mapped ? ` against ${list(mapped) || 'no CIDR'}` : ''}, but no loadBalancerSourceRanges of the Service guard this frontend (bpf-lb-source-range-all-types${types.from}): ${mapped?.length === 0 && !c.m.flags.includes('deny') ? 'every client is' : `clients ${mapped?.length ? (c.m.flags.includes('deny') ? 'in those ' : 'outside those ') : ''}are`} dropped that the Service lets in.${types.read ? '' : ASSUMED}`,
      expected: [expectedLine(c)],
      actual: [at(c)],
    });
    return;
  }
  const deny = c.e.flags.includes('deny');
  if (c.known.sourceRangeDeny && c.m.flags.includes('deny') !== deny)
    c.add('cilium-source-range-differs', {
      service,
      title: `${keyOf(c)}: source ranges ${deny ? 'allowed' : 'denied'} in the BPF map, expected ${deny ? 'denied' : 'allowed'}`,
      message: `The BPF map entry of ${keyOf(c)} (${service}) on ${c.node} ${deny ? 'lets in only' : 'keeps out'} the clients in its source ranges, but the Service's service.cilium.io/src-ranges-policy is ${deny ? 'deny' : 'allow (the default)'}: ${deny ? 'the ranges meant to be kept out are the only ones let in' : 'the ranges meant to be let in are the ones kept out'}.`,
      expected: [expectedLine(c, ` ${list(ranges)}`)],
      actual: [at(c)],
    });
  // no source-range map where the agent's check is off: none to compare (where that is not
  // known, a dump holding the map says it is on: off, the agent writes none)
  if (!mapped || !c.e.sourceRanges) return;
  const norm = (l: readonly string[]) => new Set(l.map((r) => canonicalCidrOf(r) ?? r));
  const have = norm(mapped);
  const expected = norm(ranges);
  const lacks = [...expected].filter((r) => !have.has(r));
  const extra = [...have].filter((r) => !expected.has(r));
  if (!lacks.length && !extra.length) return;
  // in an allow list a CIDR missing keeps its sources out; in a deny list it lets them in
  const effect = (l: string[], inMap: boolean) =>
    `${list(l)} ${inMap ? 'in the map' : 'missing from the map'}: ${inMap !== deny ? 'lets their clients in' : 'keeps their clients out'}`;
  c.add('cilium-source-range-differs', {
    service,
    title: `${keyOf(c)}: source ranges ${[...lacks.map((r) => `lack ${r}`), ...extra.map((r) => `have ${r}`)].join(', ')}`,
    message: `The BPF source-range map of ${keyOf(c)} (${service}) on ${c.node} holds ${list(mapped) || 'no CIDR'}, but the Service's loadBalancerSourceRanges of this family are ${list(ranges) || 'none'} (${deny ? 'denied' : 'allowed'}): ${[lacks.length ? effect(lacks, false) : '', extra.length ? effect(extra, true) : ''].filter(Boolean).join('; ')}.`,
    expected: [expectedLine(c, ` ${list(ranges)}`)],
    actual: [
      at(c),
      ...(c.m.mapLines?.sourceRanges ?? []).map((l, i) =>
        lineAt(c.bpf.source, l, `SRCRANGE ${mapped[i] ?? ''}`),
      ),
    ],
  });
}

/** Why source ranges guard the entry's frontend: its type is one the release guards whatever its
 * settings say, or bpf-lb-source-range-all-types guards every type (its source said, and `read`
 * false where it was not read: a default taken). */
function guardedBy(c: Entry): { why: string; read: boolean } {
  // the types its release guards without the option (1.18.0 to 1.18.5 guard every type, their
  // own being LoadBalancer's as before and after)
  const guards = releaseBehaviour(c.sources?.agent.release).sourceRangeTypes;
  const own = guards === 'all' ? ['LoadBalancer'] : guards;
  if (own.includes(c.e.frontend.type))
    return {
      why: `${c.sources?.agent.release ? `Cilium ${c.sources.agent.release.text.replace(/^v/, '')}` : 'Cilium'} guards ${own.join(' and ')} frontends whatever its settings say`,
      read: true,
    };
  const types = settingFrom(c, 'sourceRangeTypes');
  return { why: `bpf-lb-source-range-all-types${types.from}`, read: types.read };
}

/** The agent's session affinity as the entries were expected with it, and where that was read
 * (" (enable-session-affinity on, from ...)"): whether it keeps a client on its backend. */
function affinitySaid(c: Entry): string {
  const on = c.options.sessionAffinity;
  const setting = settingFrom(c, 'sessionAffinity');
  return `enable-session-affinity${on === undefined ? '' : on ? ' on' : ' off'}${setting.from}`;
}

/** Session affinity: the flag, its timeout and the backends it may keep a client on, where the
 * listing shows them. */
function affinity(c: Entry) {
  const service = nameOf(c.e);
  const seconds = c.e.frontend.affinitySeconds;
  const sticky = c.m.flags.includes('sessionAffinity');
  const timeout = c.m.affinitySeconds;
  const extra = timeout ? ` AFFTimeout=${timeout}` : '';
  // the timeout is compared where the agent writes one (its session affinity on; where that is
  // not known, the timeout listed says it is)
  const written = c.e.affinitySeconds;
  if (
    sticky !== (seconds !== undefined) ||
    (sticky && timeout !== undefined && written !== undefined && timeout !== written)
  ) {
    c.add('cilium-affinity-differs', {
      service,
      title: `${keyOf(c)}: session affinity ${sticky ? `on${timeout ? ` (${timeout} s)` : ''}` : 'off'}, expected ${seconds === undefined ? 'off' : `${seconds} s`}`,
      message: `The BPF map entry of ${keyOf(c)} (${service}) on ${c.node} ${sticky ? `keeps each client on its backend${timeout ? ` for ${timeout} s` : ''}` : 'does not keep clients on a backend'}, but the Service's sessionAffinity says ${seconds === undefined ? 'None' : `ClientIP for ${seconds} s`} (the agent's session affinity: ${affinitySaid(c)}).`,
      expected: [
        `${frontendKey(c.e.frontend)} ${seconds === undefined ? 'no sessionAffinity' : `sessionAffinity ${seconds} s`}`,
      ],
      actual: [at(c, extra)],
    });
    return;
  }
  // the affinity map (the maps dump): a client is kept only on a backend it names (a dump holding
  // that map says session affinity is on, where that is not known)
  if (!sticky || written === undefined || !shows(c, 'AFF')) return;
  const missing = c.m.backends.filter((b) => b.state === 'active' && !b.affinity);
  if (!missing.length) return;
  const names = missing.map((b) => formatAddress(b));
  c.add('cilium-affinity-differs', {
    service,
    title: `${keyOf(c)}: affinity map lacks ${list(names)}`,
    message: `The BPF affinity map of ${keyOf(c)} (${service}) on ${c.node} does not name ${list(names)}: a client that session affinity keeps on it is given another backend on its next connection, though the Service's sessionAffinity keeps it for ${seconds} s (the agent's session affinity: ${affinitySaid(c)}).`,
    expected: missing.map((b) => `${formatAddress(b)} in the affinity map`),
    actual: missing.map((b) => lineAt(c.bpf.source, b.line, formatAddress(b))),
  });
}

/** Maglev or random (the maps dump): the algorithm the Service's annotation picks (LBALG), and
 * the Maglev table, which holds exactly the backends that take new connections. */
function algorithm(c: Entry) {
  if (!c.known.algorithm || c.bpf.form !== 'maps-dump') return;
  const service = nameOf(c.e);
  const rotation = c.m.backends.filter((b) => b.inRotation);
  const table = c.m.backends.filter((b) => b.maglev !== undefined);
  const want = c.e.maglev && rotation.length > 0;
  const says = (maglev: boolean) => (maglev ? 'Maglev' : 'random');
  const maglev = table.length > 0;
  const annotated = c.m.algorithm !== c.e.algorithm;
  // no MAGLEV line read: the entry's LBALG is compared, its table is not
  const tables = shows(c, 'MAGLEV');
  const byTable = (m: boolean) => (tables ? ` ${says(m)}` : '');
  if (annotated || (tables && maglev !== want)) {
    const lbalg = (a: string | undefined) => ` LBALG=${a ?? 'undef'}`;
    const honoured = settingFrom(c, 'algorithmAnnotation');
    const algorithm = settingFrom(c, 'algorithm');
    // the annotation's value is the Service's own; whether it is honoured, and the agent's
    // algorithm, are settings with a source
    const [why, read] = c.e.algorithm
      ? [
          `the Service's service.cilium.io/lb-algorithm says ${c.e.algorithm} (honoured: bpf-lb-algorithm-annotation${honoured.from})`,
          honoured.read,
        ]
      : annotated
        ? [
            `no service.cilium.io/lb-algorithm of the Service is honoured (bpf-lb-algorithm-annotation${honoured.from})`,
            honoured.read,
          ]
        : [
            `the agent's bpf-lb-algorithm (${c.e.maglev ? 'maglev' : 'random, or maglev not on this frontend type'}${algorithm.from}) says ${says(c.e.maglev)}`,
            algorithm.read,
          ];
    (read ? c.add : c.note)('cilium-algorithm-differs', {
      service,
      title: `${keyOf(c)}: ${annotated ? `LBALG ${c.m.algorithm ?? 'undef'}` : says(maglev)} in the BPF map, expected ${annotated ? (c.e.algorithm ?? 'undef') : says(want)}${read ? '' : ' (assumed)'}`,
      message: `The BPF map entry of ${keyOf(c)} (${service}) on ${c.node} ${annotated ? `carries${lbalg(c.m.algorithm)}` : `picks backends ${maglev ? 'by Maglev' : 'at random'}`}, but ${why}: ${c.e.maglev ? "without Maglev the nodes do not agree on a connection's backend, so one an outside load balancer moves to another node reaches another backend" : 'its backends are picked from a Maglev table its settings do not give it'}.${read ? '' : ASSUMED}`,
      expected: [`${expectedLine(c, annotated ? lbalg(c.e.algorithm) : '')}${byTable(want)}`],
      actual: [`${at(c, annotated ? lbalg(c.m.algorithm) : '')}${byTable(maglev)}`],
    });
    return;
  }
  if (!want || !tables) return;
  // the backends expected to take new connections that the slots hold, but the health check's
  // quarantined (a backend missing from the slots is said already)
  const k = (b: { ip: string; port: number }) => `${b.ip} ${b.port}`;
  const slots = new Map(c.m.backends.map((b) => [k(b), b]));
  const expected = c.e.backends
    .slice(0, c.e.count)
    .filter((b) => slots.has(k(b)) && slots.get(k(b))!.state !== 'quarantined');
  const inTable = new Set(table.map(k));
  const inRotation = new Set(expected.map(k));
  const lacks = expected.filter((b) => !inTable.has(k(b)));
  const extra = table.filter((b) => !inRotation.has(k(b)));
  if (!lacks.length && !extra.length) return maglevShares(c, expected, table);
  c.add('cilium-algorithm-differs', {
    service,
    title: `${keyOf(c)}: Maglev table ${[...lacks.map((b) => `lacks ${formatAddress(b)}`), ...extra.map((b) => `has ${formatAddress(b)}`)].join(', ')}`,
    message: `The Maglev table of ${keyOf(c)} (${service}) on ${c.node} is not the backends the EndpointSlices give new connections: ${[lacks.length ? `${list(lacks.map((b) => formatAddress(b)))} get none` : '', extra.length ? `${list(extra.map((b) => formatAddress(b)))} get some` : ''].filter(Boolean).join('; ')}.`,
    expected: expected.map((b) => formatAddress(b)),
    actual:
      c.m.mapLines?.maglev !== undefined
        ? [
            lineAt(
              c.bpf.source,
              c.m.mapLines.maglev,
              `MAGLEV ${table.map((b) => `${formatAddress(b)} (${b.maglev})`).join(', ')}`,
            ),
          ]
        : table.map((b) => lineAt(c.bpf.source, b.line, formatAddress(b))),
  });
}

/** The table holds the backends expected: each one's entries, which Maglev gives by the weights
 * the agent holds (expected/maglev.ts), against those the EndpointSlices give. */
function maglevShares(c: Entry, expected: ExpectedBackend[], table: CiliumBackend[]) {
  const size = table.reduce((n, b) => n + b.maglev!, 0);
  const want = maglevEntries(expected, size);
  const got = new Map(table.map((b) => [`${b.ip} ${b.port}`, b.maglev!]));
  const off = expected.filter((b, i) => got.get(`${b.ip} ${b.port}`) !== want[i]);
  if (!off.length) return;
  const service = nameOf(c.e);
  const entries = (b: ExpectedBackend) => got.get(`${b.ip} ${b.port}`);
  c.add('cilium-backend-weight-differs', {
    service,
    title: `${keyOf(c)}: Maglev entries ${off.map((b) => `${formatAddress(b)} ${entries(b)}, expected ${want[expected.indexOf(b)]}`).join('; ')}`,
    message: `The Maglev table of ${keyOf(c)} (${service}) on ${c.node} does not share its ${size} entries by the weights the EndpointSlices give (${WEIGHT_SOURCE}): the agent holds other weights for ${list(off.map((b) => formatAddress(b)))}, so they take another share of new connections.`,
    expected: expected.map(
      (b, i) => `${formatAddress(b)} weight ${b.weight}: ${want[i]} of ${size} entries`,
    ),
    actual: [
      c.m.mapLines?.maglev !== undefined
        ? lineAt(
            c.bpf.source,
            c.m.mapLines.maglev,
            `MAGLEV ${table.map((b) => `${formatAddress(b)} (${b.maglev})`).join(', ')}`,
          )
        : `${c.bpf.source}: MAGLEV ${table.map((b) => `${formatAddress(b)} (${b.maglev})`).join(', ')}`,
    ],
  });
}

/** The reverse-NAT entry (the maps dump): replies get the frontend's address back from it. */
function reverseNat(c: Entry) {
  const rev = c.m.reverseNat;
  // a VIP's wildcard drop entry (1.19 on, ID 0) answers nothing: it has no reverse NAT
  if (rev === undefined || !shows(c, 'REV') || isDropEntry(c.m)) return;
  const a = rev === '' ? undefined : parseAddress(rev);
  if (a && a.ip === c.m.ip && a.port === c.m.port) return;
  const own = formatAddress({ ip: c.m.ip, port: c.m.port });
  c.add('cilium-reverse-nat-differs', {
    service: nameOf(c.e),
    title: `${keyOf(c)}: reverse NAT ${rev === '' ? 'missing' : rev}`,
    message: `The BPF reverse-NAT map on ${c.node} ${rev === '' ? `has no entry for ${keyOf(c)} (${nameOf(c.e)})` : `turns replies of ${keyOf(c)} (${nameOf(c.e)}) back into ${rev}`}: replies ${rev === '' ? "keep the backend's address" : 'come from another address'}, not ${own}, and the client drops them.`,
    expected: [`${own} (its reverse NAT)`],
    actual: [
      c.m.mapLines?.reverseNat !== undefined
        ? lineAt(c.bpf.source, c.m.mapLines.reverseNat, `REV ${rev}`)
        : at(c, ' (no reverse-NAT entry)'),
    ],
  });
}
