// Drift on a Cilium node: the frontends and backends Cilium's agent should hold
// (expected/expected.ts) against what it lists, compared by behaviour (which addresses answer,
// which backends take new connections), never by spelling; and its own table against its BPF maps
// where both were read. Each comparison has its file under drift/.
import { kubectl, valid, type NextCommand } from '../../findings/next-command.js';
import {
  driftFinding,
  isDrift,
  quote,
  sortFindings,
  type AddFinding,
  type DriftFinding,
  type NodeDrift,
} from '../drift.js';
import type { ServiceListScope } from '../../facts/service-list-scope.js';
import type { ExpectedFrontend } from './expected/expected.js';
import { healthServerOf } from './expected/health-server.js';
import { frontendKey, type CiliumFrontend, type CiliumTable } from './read/listing.js';
import { mapEntryDrift, type MapExpectations } from './maps/drift.js';
import { unwrittenMaps } from './maps/expected.js';
import { unreadMapText } from './maps/read-dump.js';
import { SETTING_NOT_KNOWN, type Refusal } from './agent/refused.js';
import { comparedOnEvidence, sourceRangeCheckOf } from './agent/comparable.js';
import { ignoredRangesOf, rangesRead } from './expected/source-ranges.js';
import { backends, status } from './drift/backends.js';
import { Frontends } from './drift/frontends.js';
import {
  healthServerMissing,
  healthServersNotCompared,
  oneOfMissing,
} from './drift/health-server.js';
import { stale } from './drift/stale.js';
import { missingBeside, type KubeProxyBeside } from './drift/beside-missing.js';
import { cutNotes, notWhole } from './drift/cut.js';
import { heldByMaps, maps } from './drift/table-maps.js';
import { wildcards } from './drift/wildcards.js';
import { familiesNotCompared, topologyNotCompared } from './drift/not-known.js';
import {
  NOT_APPLIED,
  backendLine,
  frontendLine,
  infoNote,
  nameOf,
  redirected,
} from './drift/words.js';

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
  /** The Services read ("ns/name"), and which namespaces' lists were read whole: a frontend of
   * another Service is stale only in such a namespace. */
  services: string[];
  listed: ServiceListScope;
  /** Only the Services expected (one Service's answer): no leftover frontends looked for. */
  scoped: boolean;
  /** The agent's Pod and container, for the next command (its log). */
  agent?: { namespace: string; pod: string; container?: string };
  /** The API holds no Pod of the agent: its listings are compared as recorded, and that said. */
  podAbsent?: boolean;
  /** Why the health server's frontends are not compared (healthServerUnknown), and the Services
   * in scope that have a health check node port; undefined where they are compared. */
  healthServers?: { why: string; services: string[] };
  /** Why the agent would not start again with cilium-config as read (agent/refused.ts), what that
   * rests on, and the log of its last start: its table was read, so it is compared as usual and
   * this said beside. */
  refused?: Refusal;
  /** kube-proxy runs beside the agent's partial replacement: what its rules hold. */
  kubeProxyBeside?: KubeProxyBeside;
}

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
  // of a family, or a Service, whether the agent handles is not known and it does not list
  // (agent/listed.ts): not compared
  const notKnownUnlisted: ExpectedFrontend[] = [];
  // not in a table read in part: not known to be missing (drift/cut.ts)
  const cutUnlisted: ExpectedFrontend[] = [];
  for (const want of input.expected) {
    if (want.internal && !scopes) continue;
    // an entry naming another Service is that one's: its address passed between Services
    // (reuse.txtar) and the agent holds the earlier owner's
    const found = actual.find(want);
    const entries = found.filter((e) => !ownedByAnother(e, want));
    const owners = found.filter((e) => !entries.includes(e));
    const service = nameOf(want);
    if (entries.length === 0 && want.kprNotKnown) {
      unlisted.push(want);
      continue;
    }
    if (entries.length === 0 && (want.familyNotKnown || want.proxyNameNotKnown)) {
      notKnownUnlisted.push(want);
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
    if (entries.length === 0 && notWhole(table)) {
      cutUnlisted.push(want);
      continue;
    }
    if (entries.length === 0) {
      // its BPF map may still hold it: the datapath follows the map
      const inMaps = heldByMaps(input, want);
      // said here as the address's earlier owner, not again as a stale frontend
      for (const e of owners) matched.add(e);
      add('cilium-frontend-missing', {
        service,
        title: `no frontend ${frontendLine(want)}`,
        message: `${
          owners.length
            ? `Cilium's agent on ${node} holds ${frontendKey(want)} for ${[...new Set(owners.map((e) => e.service))].join(', ')}, not for ${want.service}, which the objects give it: the address passed from one Service to the other and the agent did not apply the change, so connections to it go to the earlier Service's backends.`
            : inMaps.length
              ? `Cilium's agent on ${node} holds no ${want.type} frontend ${frontendKey(want)} for ${service} in its table, but its BPF map still does (its entry is the evidence): the datapath looks up the map, so it still translates connections to it as the map holds them, until the agent removes the entry.`
              : input.kubeProxyBeside
                ? missingBeside(want, node, input.kubeProxyBeside)
                : `Cilium's agent on ${node} holds no ${want.type} frontend ${frontendKey(want)} for ${service}: connections to it are not load-balanced by Cilium on this node.`
        } ${NOT_APPLIED}`,
        expected: [
          `${frontendLine(want)} -> ${want.backends.map(backendLine).join(', ') || 'no backends'}`,
        ],
        ...(owners.length
          ? { actual: owners.map((e) => quote(table.source, e.line, frontendLine(e))) }
          : inMaps.length
            ? { actual: inMaps }
            : {}),
        next,
      });
      continue;
    }
    for (const got of entries) {
      matched.add(got);
      // redirected by a local redirect policy: its backends are the policy's (drift/words.ts)
      if (got.redirectTo || got.type === 'LocalRedirect') notes.push(redirected(input, want, got));
      else backends(want, got, input, add, notes, next);
      status(want, got, input, add, next);
    }
  }
  const notRead: DriftFinding[] = [];
  const cut = [table, ...(input.maps ? [input.maps] : [])].filter(notWhole);
  if (input.refused)
    notes.push(
      infoNote(input, 'cilium-config-refused', {
        title: "cilium-config as read would stop the agent's next start",
        message: input.refused.why,
        evidence: input.refused.evidence,
        ...(input.refused.next ? { next: input.refused.next } : {}),
      }),
    );
  if (input.podAbsent)
    notes.push(
      infoNote(input, 'cilium-agent-pod-absent', {
        title: `no Cilium agent Pod on ${node} in the API: its recorded listings compared`,
        message: `The API holds no Cilium agent Pod on ${node}, yet its agent's status and listings were recorded there: they are compared as the agent held them when recorded. Whether an agent still runs there now, and keeps them current, is not known from the API.`,
        actual: [`${table.source}: recorded on ${node}`],
        next: kubectl('kube-system', 'get', 'pods', '-l', 'k8s-app=cilium', '-o', 'wide'),
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
  notRead.push(...familiesNotCompared(input, notKnownUnlisted));
  notRead.push(...topologyNotCompared(input));
  cutNotes(input, cutUnlisted, notRead);
  if (input.healthServers) healthServersNotCompared(input, input.healthServers, notRead);
  if (!input.scoped) stale(input, matched, add, next, notRead);
  if (input.maps) maps(input, input.maps, add, notes);
  // the BPF maps, read besides the table or as the only one, against the entries expected
  const bpf = input.maps ?? (BPF_FORMS.includes(table.form) ? table : undefined);
  if (bpf && input.mapExpectations) {
    // a finding that rests on a setting not read is a note
    const note: AddFinding = (id, f) => notes.push(infoNote(input, id, f));
    const entries = mapEntryDrift(node, input.expected, bpf, input.mapExpectations, add, note);
    wildcards(input, bpf, entries, add, notRead);
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
    // a listing cut short or eliding rows: what it lacks was not compared (drift/cut.ts)
    ...(cut.length ? { readInPart: cut.map((t) => t.source) } : {}),
    cilium: {
      read: input.maps ? 'both' : BPF_FORMS.includes(table.form) ? 'maps' : 'table',
      states: !statesUnread(table),
    },
    // what was compared: the agent's table, and its BPF maps where read
    mode: 'cilium',
    tables: ['cilium', ...(input.maps ? ['bpf'] : [])],
    drifted: findings.some(isDrift),
  };
}

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

/** Whether `e`, found at `want`'s address, names a Service other than `want`'s (the health
 * server's frontends and a Local Redirect Policy's are their Service's). */
function ownedByAnother(e: CiliumFrontend, want: ExpectedFrontend): boolean {
  if (e.service === undefined || e.redirectTo || e.type === 'LocalRedirect') return false;
  const owner = healthServerOf(e.service) ?? e.service;
  return owner !== (healthServerOf(want.service) ?? want.service);
}
