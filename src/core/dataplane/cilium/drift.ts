// Drift on a Cilium node: the frontends and backends Cilium's agent should hold
// (expected/expected.ts) against what it lists, compared by behaviour (which addresses answer,
// which backends take new connections), never by spelling; and its own table against its BPF maps
// where both were read.
import { kubectl, valid, type NextCommand } from '../../next-command.js';
import {
  driftFinding,
  isDrift,
  lineAt,
  sortFindings,
  type AddFinding,
  type DriftFinding,
  type DriftId,
  type DriftSaid,
  type NodeDrift,
} from '../drift.js';
import type { ServicePortName } from '../../model.js';
import { inRotation, type ExpectedFrontend } from './expected/expected.js';
import { healthServerOf } from './expected/health-server.js';
import {
  formatAddress,
  frontendKey,
  isDropEntry,
  isWildcard,
  type CiliumBackend,
  type CiliumFrontend,
  type CiliumTable,
} from './read/listing.js';
import { mapEntryDrift, type MapExpectations } from './maps/drift.js';
import { unwrittenMaps } from './maps/expected.js';
import { unreadMapText } from './maps/read-dump.js';
import { SETTING_NOT_KNOWN, type Refusal } from './agent/refused.js';
import { comparedOnEvidence, sourceRangeCheckOf } from './agent/comparable.js';
import { ignoredRangesOf, rangesRead } from './expected/source-ranges.js';

/** The listings that are the BPF maps themselves. */
const BPF_FORMS: readonly CiliumTable['form'][] = ['bpf-lb-list', 'maps-dump'];

export interface CiliumDriftInput {
  node: string;
  expected: ExpectedFrontend[];
  /** The agent's own table (service list or the load-balancer tables). */
  table: CiliumTable;
  /** The BPF maps as `bpf lb list` shows them, where read. */
  maps?: CiliumTable;
  /** What the expected BPF map entries are made from (maps/expected.ts), where the agent is known. */
  mapExpectations?: MapExpectations;
  /** Only the Services expected (one Service's answer): no leftover frontends looked for. */
  scoped: boolean;
  /** The agent's Pod and container, for the next command (its log). */
  agent?: { namespace: string; pod: string; container?: string };
  /** Why the health server's frontends are not compared (healthServerUnknown), and the Services
   * in scope that have a health check node port; undefined where they are compared. */
  healthServers?: { why: string; services: string[] };
  /** Why the agent would not start again with cilium-config as read (agent/refused.ts), what that
   * rests on, and the log of its last start: its table was read, so it is compared as usual and
   * this said beside. */
  refused?: Refusal;
}

const nameOf = (f: Pick<ExpectedFrontend, 'service' | 'portName'>) =>
  `${f.service}${f.portName ? `:${f.portName}` : ''}` as ServicePortName;
const backendLine = (b: Pick<CiliumBackend, 'ip' | 'port' | 'protocol' | 'state'>) =>
  `${formatAddress(b)}${b.state ? ` (${b.state})` : ''}`;
const frontendLine = (f: {
  ip: string;
  port: number;
  protocol?: CiliumFrontend['protocol'];
  type?: string;
}) => `${frontendKey(f)}${f.type ? ` ${f.type}` : ''}`;

/** Every frontend and backend of the agent's table as drift writes them (the TUI's Drift view
 * marks the expected lines the node holds). */
export function ciliumLineSet(table: CiliumTable): Set<string> {
  const out = new Set<string>();
  for (const f of table.frontends) {
    out.add(frontendLine(f));
    for (const b of f.backends) out.add(backendLine({ ...b, protocol: b.protocol ?? f.protocol }));
  }
  return out;
}

/** Where the actual frontends are, by key; NodePorts also by port alone, for listings that
 * hold one frontend per node address (service list before 1.17, bpf lb list). */
class Frontends {
  private readonly byKey = new Map<string, CiliumFrontend>();
  private readonly byNodePort = new Map<string, CiliumFrontend[]>();
  readonly protocols: boolean;

  constructor(readonly table: CiliumTable) {
    this.protocols = table.frontends.some((f) => f.protocol !== undefined);
    for (const f of table.frontends) {
      this.byKey.set(this.key(f), f);
      if (f.type === 'NodePort' || f.type === 'HostPort') {
        const k = `${f.ip.includes(':')} ${f.port}/${f.protocol ?? ''} ${f.internal ?? false}`;
        this.byNodePort.set(k, [...(this.byNodePort.get(k) ?? []), f]);
      }
    }
  }

  private key(f: Pick<CiliumFrontend, 'ip' | 'port' | 'protocol' | 'internal'>) {
    return frontendKey({ ...f, protocol: this.protocols ? f.protocol : undefined });
  }

  /** The entries that hold `want`: its own, and for a wildcard every NodePort address's too
   * (the BPF maps and service list before 1.17 hold one per node address). */
  find(want: ExpectedFrontend): CiliumFrontend[] {
    const exact = this.byKey.get(this.key(want));
    if (!isWildcard(want.ip)) return exact ? [exact] : [];
    const protocol = this.protocols ? want.protocol : '';
    const ports =
      this.byNodePort.get(
        `${want.ip.includes(':')} ${want.port}/${protocol} ${want.internal ?? false}`,
      ) ?? [];
    // a listing without scopes holds the internal frontend's backends nowhere: no claim
    return [...new Set([...(exact ? [exact] : []), ...ports])];
  }
}

export function ciliumDrift(given: CiliumDriftInput): NodeDrift {
  // the health server's frontends, where not compared, are not expected either
  const input = given.healthServers
    ? { ...given, expected: given.expected.filter((f) => !healthServerOf(f.service)) }
    : given;
  const { node, table } = input;
  const findings: DriftFinding[] = [];
  const notes: DriftFinding[] = [];
  const add: AddFinding = (id, f) =>
    findings.push(driftFinding(id, f, { node, source: table.source }));
  // what the agent holds is written from the API objects: one that disagrees with them has not
  // applied their last change, and its log says why
  const next = agentLogs(input);
  const actual = new Frontends(table);
  const scopes = table.frontends.some((f) => f.internal);
  const matched = new Set<CiliumFrontend>();
  // a Service whose frontend is one of several: any one of them held is the one expected
  const held = new Set(
    input.expected.filter((f) => f.oneOf && actual.find(f).length > 0).map((f) => f.service),
  );
  // made only with kube-proxy replacement, not known: unlisted, they are not compared
  const unlisted: ExpectedFrontend[] = [];
  for (const want of input.expected) {
    if (want.internal && !scopes) continue;
    const entries = actual.find(want);
    const service = nameOf(want);
    if (entries.length === 0 && want.kprNotKnown) {
      unlisted.push(want);
      continue;
    }
    if (entries.length === 0 && want.oneOf) {
      if (held.has(want.service)) continue;
      held.add(want.service);
      if (!want.orNone) oneOfMissing(want, input, add, next);
      continue;
    }
    if (entries.length === 0 && healthServerOf(want.service)) {
      healthServerMissing(want, input, add, next);
      continue;
    }
    if (entries.length === 0) {
      add('cilium-frontend-missing', {
        service,
        title: `no frontend ${frontendLine(want)}`,
        message: `Cilium's agent on ${node} holds no ${want.type} frontend ${frontendKey(want)} for ${service}: connections to it are not load-balanced by Cilium on this node. ${NOT_APPLIED}`,
        expected: [
          `${frontendLine(want)} -> ${want.backends.map(backendLine).join(', ') || 'no backends'}`,
        ],
        next,
      });
      continue;
    }
    for (const got of entries) {
      matched.add(got);
      backends(want, got, input, add, notes, next);
      status(want, got, input, add, next);
    }
  }
  const notRead: DriftFinding[] = [];
  if (input.refused)
    notes.push(
      infoNote(input, 'cilium-config-refused', {
        title: "cilium-config as read would stop the agent's next start",
        message: input.refused.why,
        evidence: input.refused.evidence,
        ...(input.refused.next ? { next: input.refused.next } : {}),
      }),
    );
  // the agent's source-range check, on by default (as maps/expected.ts takes it), or not known
  const checked = input.mapExpectations ? sourceRangeCheckOf(input.mapExpectations.options) : true;
  for (const { service, title, text } of ignoredRangesOf(input.expected, checked)) {
    // a note of the whole Service, none of its ports; its spec as read, where given
    const svc = input.mapExpectations?.services.find((s) => `${s.namespace}/${s.name}` === service);
    notes.push(
      infoNote(input, 'cilium-source-range-ignored', {
        title,
        message: `${text}.`,
        ...(svc ? { evidence: [rangesRead(svc)] } : {}),
      }),
    );
  }
  if (unlisted.length > 0)
    notRead.push(
      infoNote(input, 'table-not-captured', {
        title: `${unlisted.length} frontend${unlisted.length === 1 ? '' : 's'} of kube-proxy replacement not compared`,
        message: `Cilium's agent on ${node} lists none of ${unlisted.map(frontendKey).join(', ')}: it makes them only with kube-proxy replacement, which is ${SETTING_NOT_KNOWN}, so their absence says nothing; those it lists are what it holds, and their backends were compared.`,
        expected: unlisted.map(
          (f) => `${frontendLine(f)} -> ${f.backends.map(backendLine).join(', ') || 'no backends'}`,
        ),
      }),
    );
  if (input.healthServers) healthServersNotCompared(input, input.healthServers, notRead);
  if (!input.scoped) stale(input, matched, add, next, notRead);
  if (input.maps) maps(input, input.maps, add, notes);
  // the BPF maps, read besides the table or as the only one, against the entries expected
  const bpf = input.maps ?? (BPF_FORMS.includes(table.form) ? table : undefined);
  if (bpf && input.mapExpectations) {
    mapEntryDrift(node, input.expected, bpf, input.mapExpectations, add);
    // knownMapFlags leaves them out where the agent refuses cilium-config as read
    if (input.refused)
      notRead.push(
        infoNote(input, 'table-not-captured', {
          title: 'forwarding mode and backend selection not compared',
          message: `The BPF map entries of ${node} are compared without their forwarding mode (dsr) and backend selection (LBALG, Maglev): the agent would not start with cilium-config as read, so it runs on an earlier configuration, whose bpf-lb-mode and bpf-lb-algorithm were not read${comparedOnEvidence(input.mapExpectations.options)}.`,
        }),
      );
  }
  if (statesUnread(table))
    notRead.push(
      infoNote(input, 'table-not-captured', {
        title: 'backend states not compared',
        message: `The backends table (db/show backends) of ${node} was not read with its frontends table: the load-balancer table names each backend without its state (active, terminating, quarantined), so no state is compared.`,
        actual: [`${table.source}: no backends table read with it`],
      }),
    );
  const unwritten = input.mapExpectations ? unwrittenMaps(input.mapExpectations.options) : [];
  for (const kind of (bpf?.unreadMaps ?? []).filter((k) => !unwritten.includes(k)))
    notRead.push(
      infoNote(input, 'table-not-captured', {
        title: `BPF maps dump: no ${kind} line, not compared`,
        message: `The BPF maps dump of ${node} holds ${unreadMapText(kind)}: nothing is said to be missing from that map.`,
        actual: [`${bpf!.source}: no ${kind} line`],
      }),
    );
  return {
    node,
    source: table.source,
    // the health server's frontends are no Service port
    servicePorts: new Set(input.expected.filter((f) => !healthServerOf(f.service)).map(nameOf))
      .size,
    findings: sortFindings(findings),
    ...(notes.length ? { notes } : {}),
    ...(notRead.length ? { notRead } : {}),
    cilium: {
      read: input.maps ? 'both' : BPF_FORMS.includes(table.form) ? 'maps' : 'table',
      states: !statesUnread(table),
    },
    // what was compared: the agent's table, and its BPF maps where read
    tables: ['cilium', ...(input.maps ? ['bpf'] : [])],
    drifted: findings.some(isDrift),
  };
}

/** What the agent does as designed, or what was not read of it: information, not drift. */
const infoNote = (input: CiliumDriftInput, id: DriftId, said: DriftSaid) =>
  driftFinding(id, said, { node: input.node, source: input.table.source }, 'info');

/** The load-balancer table read without the backends table: its backends' states are not read. */
const statesUnread = (t: CiliumTable) => t.form === 'db-frontends' && !t.backendStates;

/** The node's agent's log: why its tables lag the API (a lost watch, a failing reconcile). */
function agentLogs(input: CiliumDriftInput): NextCommand | undefined {
  const a = input.agent;
  if (!a) return kubectl('kube-system', 'logs', 'ds/cilium', '--tail=200');
  return kubectl(
    a.namespace,
    'logs',
    valid.name(a.pod),
    ...(a.container ? ['-c', valid.name(a.container)] : []),
    '--tail=200',
  );
}

/** Why an agent's table disagrees with the API objects, and what to do about it. */
const NOT_APPLIED =
  "The agent writes its tables from the Service and its EndpointSlices: it has not applied their last change. Its log says why (a lost watch of the API server, a failing reconcile); deleting the agent's Pod makes it rebuild them.";

/** Where the health server's frontend on a LoadBalancer IP is, and what a missing one does. */
const healthServerText = (f: ExpectedFrontend) =>
  `the health server's frontend ${frontendLine(f)}, which answers load balancers' health checks of ${healthServerOf(f.service)} (its healthCheckNodePort ${f.port}) on its LoadBalancer IP`;
const HEALTH_CHECKS_FAIL =
  'a load balancer that checks health at that address gets no answer from this node and sends it no traffic, whether or not it runs a Pod of the Service';

function healthServerMissing(
  want: ExpectedFrontend,
  input: CiliumDriftInput,
  add: AddFinding,
  next: NextCommand | undefined,
) {
  add('cilium-frontend-missing', {
    service: nameOf(want),
    title: `no frontend ${frontendLine(want)}`,
    message: `Cilium's agent on ${input.node} holds no ${healthServerText(want)} (enable-health-check-loadbalancer-ip): ${HEALTH_CHECKS_FAIL}. ${NOT_APPLIED}`,
    expected: [`${frontendLine(want)} -> ${want.backends.map(backendLine).join(', ')}`],
    next,
  });
}

/** None of a Service's frontends at several addresses, of which the agent holds one. */
function oneOfMissing(
  want: ExpectedFrontend,
  input: CiliumDriftInput,
  add: AddFinding,
  next: NextCommand | undefined,
) {
  const all = input.expected.filter((f) => f.oneOf && f.service === want.service);
  add('cilium-frontend-missing', {
    service: nameOf(want),
    title: `no frontend ${all.map(frontendKey).join(' or ')} ${want.type}`,
    message: `Cilium's agent on ${input.node} holds none of ${all.map(frontendKey).join(', ')} for ${want.service}: it keeps the health server's frontend on one of the Service's LoadBalancer IPs (the last it saw), and here on none, so ${HEALTH_CHECKS_FAIL}. ${NOT_APPLIED}`,
    expected: all.map((f) => `${frontendLine(f)} -> ${f.backends.map(backendLine).join(', ')}`),
    next,
  });
}

/** The health server's frontends not compared: why, and what of the listing and the objects it
 * leaves aside, so that no absence is read as agreement. */
function healthServersNotCompared(
  input: CiliumDriftInput,
  h: { why: string; services: string[] },
  notRead: DriftFinding[],
) {
  const listed = input.table.frontends.filter((f) => healthServerOf(f.service));
  if (listed.length === 0 && h.services.length === 0) return;
  notRead.push(
    infoNote(input, 'table-not-captured', {
      title: "the health server's frontends not compared",
      message: `The frontends Cilium's agent on ${input.node} makes for its health server on LoadBalancer IPs are not compared: ${h.why}.${h.services.length ? ` Services with a health check node port: ${h.services.join(', ')}.` : ''}`,
      actual: listed.map((f) => lineAt(input.table.source, f.line, frontendLine(f))),
    }),
  );
}

/** Backends compared by address; states where the listing shows them. */
function backends(
  want: ExpectedFrontend,
  got: CiliumFrontend,
  input: CiliumDriftInput,
  add: AddFinding,
  notes: DriftFinding[],
  next: NextCommand | undefined,
) {
  const service = nameOf(want);
  const source = input.table.source;
  const protocols = got.protocol !== undefined;
  const key = (b: { ip: string; port: number; protocol?: CiliumFrontend['protocol'] }) =>
    formatAddress({ ...b, protocol: protocols ? (b.protocol ?? want.protocol) : undefined });
  const have = new Map(got.backends.map((b) => [key(b), b]));
  const expected = new Map(want.backends.map((b) => [key(b), b]));
  const rotation = new Set(inRotation(want.backends).map(key));
  const where = lineAt(source, got.line, frontendKey(got));
  // a listing that leaves backends out ("+ 4 more") can only show what it shows
  const slots = input.table.form === 'maps-dump' || input.table.form === 'bpf-lb-list';
  if (!got.backendsNotShown && !got.backendsUnread && !got.serviceRowUnseen)
    for (const [k, b] of expected) {
      if (have.has(k)) continue;
      // the BPF maps give a backend in maintenance no slot: it is the agent's table's only
      if (slots && b.state === 'maintenance') continue;
      const used = inRotation(want.backends).includes(b);
      add('cilium-backend-missing', {
        service,
        title: `${frontendKey(got)}: backend ${k} missing`,
        message: `The ${want.type} frontend ${frontendKey(got)} of ${service} on ${node(input)} does not list backend ${k}${b.target ? ` (${b.target})` : ''}, which its EndpointSlice says is ${b.state}${used ? ': Cilium sends it no new connections, so the others carry its share' : ''}. ${NOT_APPLIED}`,
        expected: [backendLine(b)],
        actual: [where],
        next,
      });
    }
  for (const [k, b] of have) {
    const w = expected.get(k);
    if (!w) {
      add('cilium-backend-stale', {
        service,
        title: `${frontendKey(got)}: stale backend ${k}`,
        message: `The ${want.type} frontend ${frontendKey(got)} of ${service} on ${node(input)} still lists backend ${k}${b.state ? ` (${b.state})` : ''}, which no EndpointSlice of the Service names${want.localOnly ? ' for this node (a Local traffic policy keeps only its own)' : ''}: connections sent there reach a Pod that is gone or another workload. ${NOT_APPLIED}`,
        expected: want.backends.map(backendLine),
        actual: [lineAt(source, b.line, backendLine(b))],
        next,
      });
      continue;
    }
    // the maps dump shows which backends take new connections: the ones the states give
    if (
      b.inRotation !== undefined &&
      b.inRotation !== rotation.has(k) &&
      b.state !== 'quarantined'
    ) {
      if (!b.inRotation) {
        notes.push(
          infoNote(input, 'cilium-backend-state-differs', {
            service,
            title: `${frontendKey(got)}: backend ${k} quarantined in the BPF map`,
            message: `The BPF map keeps backend ${k} of ${service} on ${node(input)} past the backends that take new connections: Cilium's health checking quarantined it (its EndpointSlice says ${w.state}), so new connections go to the others until it answers again.`,
            expected: [backendLine(w)],
            actual: [lineAt(source, b.line, backendLine(b))],
          }),
        );
        continue;
      }
      add('cilium-backend-state-differs', {
        service,
        title: `${frontendKey(got)}: backend ${k} takes new connections, expected none`,
        message: `Cilium's BPF map on ${node(input)} gives backend ${k} of ${service} new connections, but its EndpointSlice makes it ${w.state}${rotation.size ? ` while ${[...rotation].join(', ')} ${rotation.size === 1 ? 'is' : 'are'} ready` : ''}: new connections go to an endpoint that is not ready.`,
        expected: inRotation(want.backends).map(backendLine),
        actual: [lineAt(source, b.line, backendLine(b))],
        next,
      });
      continue;
    }
    if (!b.state || b.state === w.state) continue;
    if (b.state === 'quarantined') {
      notes.push(
        infoNote(input, 'cilium-backend-state-differs', {
          service,
          title: `${frontendKey(got)}: backend ${k} quarantined`,
          message: `Cilium's health checking quarantined backend ${k} of ${service} on ${node(input)}: it takes no new connections until it answers again (its EndpointSlice says ${w.state}).`,
          expected: [backendLine(w)],
          actual: [lineAt(source, b.line, backendLine(b))],
        }),
      );
      continue;
    }
    add('cilium-backend-state-differs', {
      service,
      title: `${frontendKey(got)}: backend ${k} ${b.state}, expected ${w.state}`,
      message: `Backend ${k} of ${service} is ${b.state} in Cilium's table on ${node(input)}, but its EndpointSlice makes it ${w.state}: ${w.state === 'active' ? 'it takes no new connections though it is ready' : 'new connections still go to an endpoint that is not ready'}.`,
      expected: [backendLine(w)],
      actual: [lineAt(source, b.line, backendLine(b))],
      next,
    });
  }
}

const node = (input: CiliumDriftInput) => input.node;

/** The load-balancer table's reconcile status: anything but Done is not (yet) in the maps. */
function status(
  want: ExpectedFrontend,
  got: CiliumFrontend,
  input: CiliumDriftInput,
  add: AddFinding,
  next: NextCommand | undefined,
) {
  if (!got.status || got.status === 'Done') return;
  const error = /^Error/i.test(got.status);
  add('cilium-frontend-not-reconciled', {
    service: nameOf(want),
    title: `${frontendKey(got)}: ${got.status}`,
    message: `Cilium's agent on ${input.node} has not written frontend ${frontendKey(got)} of ${nameOf(want)} to its BPF maps (status ${got.status})${error ? ': the maps hold an older state or none, and the agent retries; its log says why' : ''}.`,
    actual: [`${input.table.source}:${got.line}`],
    next,
  });
}

/** Frontends the objects do not account for (a whole-node comparison only). */
function stale(
  input: CiliumDriftInput,
  matched: Set<CiliumFrontend>,
  add: AddFinding,
  next: NextCommand | undefined,
  /** What of the listing is not compared (1.17's portless wildcard entries). */
  notRead: DriftFinding[],
) {
  const wanted = new Set(input.expected.map((f) => `${f.port}`));
  // 1.17 prints a NodePort's wildcard entry as <zero>, without its port: whose it is, is not said
  const portless = input.table.frontends.filter((f) => isWildcard(f.ip) && f.port === 0);
  if (portless.length > 0)
    notRead.push(
      infoNote(input, 'table-not-captured', {
        title: `${portless.length} wildcard BPF map ${portless.length === 1 ? 'entry' : 'entries'} not compared`,
        message: `The BPF map on ${input.node} lists ${portless.length === 1 ? 'a wildcard entry' : 'wildcard entries'} as <zero> without a port (Cilium 1.17's bpf lb list): which Service's NodePort each is cannot be read, so ${portless.length === 1 ? 'it is' : 'they are'} not compared.`,
        actual: portless.map((f) => lineAt(input.table.source, f.line, frontendLine(f))),
      }),
    );
  for (const f of input.table.frontends) {
    if (matched.has(f) || f.type === 'HostPort' || f.type === 'LocalRedirect') continue;
    if (portless.includes(f)) continue;
    if (f.l7Proxy) continue;
    if (input.healthServers && healthServerOf(f.service)) continue; // said as not compared
    if (isDropEntry(f)) continue; // 1.19's drop entry of a VIP: no Service's own
    // a NodePort on a node address is the wildcard's expansion, matched by port
    if ((f.type === 'NodePort' || isWildcard(f.ip)) && wanted.has(`${f.port}`)) continue;
    if (input.expected.some((w) => w.ip === f.ip && w.port === f.port && f.protocol === undefined))
      continue;
    add('cilium-frontend-stale', {
      ...(f.service
        ? { service: `${f.service}${f.portName ? `:${f.portName}` : ''}` as ServicePortName }
        : {}),
      title: `frontend ${frontendLine(f)} not in the objects`,
      message: healthServerOf(f.service)
        ? `Cilium's agent on ${input.node} holds the health server's frontend ${frontendKey(f)} for ${healthServerOf(f.service)}, which neither the Service (a LoadBalancer IP, externalTrafficPolicy Local, a healthCheckNodePort of ${f.port}) nor the agent's settings as read (enable-health-check-loadbalancer-ip) make here: left from an earlier state of either.`
        : `Cilium's agent on ${input.node} holds frontend ${frontendKey(f)}${f.service ? ` for ${f.service}` : ''}, which no Service in the objects makes: a deleted Service's address still load-balanced, or one from another source (a local redirect policy, clustermesh).`,
      actual: [lineAt(input.table.source, f.line, frontendLine(f))],
      next,
    });
  }
}

/** The agent's table against its BPF maps: the datapath uses the maps. */
function maps(input: CiliumDriftInput, bpf: CiliumTable, add: AddFinding, notes: DriftFinding[]) {
  const inMaps = new Frontends(bpf);
  for (const f of input.table.frontends) {
    if (f.status && f.status !== 'Done') continue; // said already: not written yet
    if (f.internal && !bpf.frontends.some((m) => m.internal)) continue;
    const probe = {
      ...f,
      protocol: f.protocol ?? 'tcp',
      type: f.type ?? 'ClusterIP',
      service: f.service ?? '',
      portName: f.portName ?? '',
      servicePort: f.port,
      localOnly: false,
      backends: [],
    } as ExpectedFrontend;
    const entries = inMaps.find(probe);
    const service = f.service
      ? (`${f.service}${f.portName ? `:${f.portName}` : ''}` as ServicePortName)
      : undefined;
    if (entries.length === 0) {
      add('cilium-bpf-map-differs', {
        ...(service ? { service } : {}),
        title: `${frontendKey(f)} not in the BPF maps`,
        message: `Cilium's table on ${input.node} holds frontend ${frontendKey(f)}, but its BPF service map has no entry for it: the datapath does not load-balance it, whatever the table says.`,
        expected: [frontendLine(f)],
        actual: [`${bpf.source}: no entry`],
      });
      continue;
    }
    for (const m of entries) entry(input, f, m, service, add, notes);
  }
}

/** One BPF map entry of the table's frontend `f` (its own, or a NodePort address's): the
 * backends that take new connections there are the ones the table's states give. */
function entry(
  input: CiliumDriftInput,
  f: CiliumFrontend,
  m: CiliumFrontend,
  service: ServicePortName | undefined,
  add: AddFinding,
  notes: DriftFinding[],
) {
  const bpf = input.maps!;
  // a table without its backends column says nothing the maps could differ from
  if (f.backendsUnread) return;
  const k = (b: CiliumBackend) => `${b.ip}:${b.port}`;
  const used = new Set(
    (m.backends.some((b) => b.inRotation !== undefined)
      ? m.backends.filter((b) => b.inRotation)
      : m.backends
    ).map(k),
  );
  const want = new Set(inRotation(f.backends).map(k));
  const inMap = new Set(m.backends.map(k));
  // in the map past its count: kept for its connections, as Cilium's health checker (or a
  // terminating endpoint) puts it; the table of 1.20 does not show that state
  const held = [...want].filter((b) => !used.has(b) && inMap.has(b));
  if (held.length)
    notes.push(
      infoNote(input, 'cilium-backend-state-differs', {
        ...(service ? { service } : {}),
        title: `${frontendKey(m)}: ${held.join(', ')} quarantined in the BPF map`,
        message: `For frontend ${frontendKey(m)} on ${input.node}, the BPF map keeps ${held.join(', ')} past the backends that take new connections: Cilium's health checking quarantined ${held.length === 1 ? 'it' : 'them'} (or ${held.length === 1 ? 'it is' : 'they are'} terminating), so new connections go to the others until ${held.length === 1 ? 'it answers' : 'they answer'} again.`,
        expected: inRotation(f.backends).map(backendLine),
        actual: m.backends.map((b) => lineAt(bpf.source, b.line, backendLine(b))),
      }),
    );
  // a map entry whose backends the listing leaves out can only show what it shows
  const missing =
    m.backendsNotShown || m.serviceRowUnseen ? [] : [...want].filter((b) => !inMap.has(b));
  // new connections where the table's states send none (a terminating backend while an active
  // one is left), or to a backend the table does not list
  const extra = [...used].filter((b) => !want.has(b));
  if (missing.length || extra.length)
    add('cilium-bpf-map-differs', {
      ...(service ? { service } : {}),
      title: `${frontendKey(m)}: BPF map backends differ from the agent's table`,
      message: `For frontend ${frontendKey(m)} on ${input.node}, the BPF map ${missing.length ? `lacks ${missing.join(', ')}` : ''}${missing.length && extra.length ? ' and ' : ''}${extra.length ? `gives new connections to ${extra.join(', ')}, which the table does not` : ''}: the datapath follows the map.`,
      expected: inRotation(f.backends).map(backendLine),
      actual: m.backends.map((b) => lineAt(bpf.source, b.line, backendLine(b))),
    });
}
