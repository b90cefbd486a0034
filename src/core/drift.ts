// Expected vs actual, per node and per Service port, semantic first: what matters is where each
// Service port's traffic goes (entry rules, endpoints and their shares, masquerading, local
// policy, rejects), not how the rules are spelled. A dump written by an older kube-proxy that
// routes correctly shows only `rule-text-differs` (info); an exact dump shows nothing.
import { computed, judged, seen } from './evidence.js';
import { kubectl, onNode, type NextCommand } from './next-command.js';
import type { DriftContext, MasqueradeDiff } from './drift/context.js';
import { externalPath, firewall } from './drift/external.js';
import { internalPath } from './drift/service.js';
import { danglingJumps } from './drift/jumps.js';
import { nodeLevelChecks, orphanChains } from './drift/node.js';
import { textDifferences } from './drift/text.js';
import type { ExpectedRules, ExpectedServicePort } from './expected.js';
import type { Ruleset } from './iptables.js';
import { DEFAULT_KUBE_PROXY_CONFIG, type ClusterView, type Pod } from './kube.js';
import type { Evidence, Finding, ServicePortName, Severity } from './model.js';
import { buildServiceTrees, type ServiceTree, type ServiceTrees } from './service-tree.js';
import type { Release } from './releases.js';
import type { IPFamily } from './ipv6.js';

export type DriftId =
  | 'service-rules-missing'
  | 'service-chain-missing'
  | 'endpoint-missing'
  | 'endpoint-stale'
  | 'weights-uneven'
  | 'affinity-wrong'
  | 'masquerade-missing'
  | 'masquerade-differs'
  | 'nodeport-missing'
  | 'local-policy-wrong'
  | 'no-endpoints-reject-missing'
  | 'firewall-missing'
  | 'entry-jump-missing'
  | 'orphan-chain'
  | 'no-local-endpoint'
  | 'rule-text-differs'
  | 'rule-behaviour-differs'
  | 'jump-target-missing'
  | 'table-not-captured'
  | 'element-chain-missing'
  | 'endpoint-not-in-numgen'
  | 'vip-not-on-kube-ipvs0'
  | 'ipset-entry-missing'
  | 'real-server-weight-zero'
  | 'cilium-frontend-missing'
  | 'cilium-frontend-stale'
  | 'cilium-backend-missing'
  | 'cilium-backend-stale'
  | 'cilium-backend-state-differs'
  | 'cilium-frontend-not-reconciled'
  | 'cilium-bpf-map-differs'
  | 'cilium-affinity-differs'
  | 'cilium-source-range-missing';

/** Adds a finding of `id` (its severity from SEVERITY) about the node being compared. */
export type AddFinding = (
  id: DriftId,
  f: Omit<DriftFinding, 'id' | 'severity' | 'node' | 'expected' | 'actual'> &
    Partial<Pick<DriftFinding, 'expected' | 'actual'>>,
) => void;

export const SEVERITY: Record<DriftId, Severity> = {
  'service-rules-missing': 'error',
  'service-chain-missing': 'error',
  'endpoint-stale': 'error',
  'local-policy-wrong': 'error',
  'nodeport-missing': 'error',
  'entry-jump-missing': 'error',
  'endpoint-missing': 'warning',
  'weights-uneven': 'warning',
  'affinity-wrong': 'warning',
  'masquerade-missing': 'warning',
  'masquerade-differs': 'warning',
  'no-endpoints-reject-missing': 'warning',
  'firewall-missing': 'warning',
  'orphan-chain': 'warning',
  'no-local-endpoint': 'info',
  'rule-text-differs': 'info',
  'rule-behaviour-differs': 'warning',
  'jump-target-missing': 'error',
  'table-not-captured': 'info',
  'element-chain-missing': 'error',
  'endpoint-not-in-numgen': 'warning',
  'vip-not-on-kube-ipvs0': 'error',
  'ipset-entry-missing': 'warning',
  'real-server-weight-zero': 'warning',
  'cilium-frontend-missing': 'error',
  'cilium-frontend-stale': 'warning',
  'cilium-backend-missing': 'warning',
  'cilium-backend-stale': 'error',
  'cilium-backend-state-differs': 'warning',
  'cilium-frontend-not-reconciled': 'error',
  'cilium-bpf-map-differs': 'error',
  'cilium-affinity-differs': 'warning',
  'cilium-source-range-missing': 'error',
};

export interface DriftFinding {
  id: DriftId;
  severity: Severity;
  node: string;
  /** The ServicePortName, when the finding is about one Service port. */
  service?: ServicePortName;
  /** One line: what is wrong. */
  title: string;
  /** The sentence a person needs: what the node does, and why it matters. */
  message: string;
  /** Rule lines kube-proxy would have written ("-t nat -A ..."). */
  expected: string[];
  /** Rule lines the node has. */
  actual: string[];
  /** The endpoint it is about (its address as the trees show it): the Rules tree marks it. */
  endpoint?: string;
  /** Where `actual` was read when not in the drift's own source (the node's ipsets): the
   * evidence's source and line. */
  actualAt?: { source: string; line?: number };
  /** The command that shows or fixes it. */
  next?: NextCommand;
  /** What to do about it, in words. */
  advice?: string;
  /** Its advice blames kube-proxy for not having synced: only true where it has not. */
  notSynced?: true;
  /** The family of the rule set it was found in (the IPv4 iptables or the IPv6 ip6tables one). */
  family?: IPFamily;
}

export interface NodeDrift {
  node: string;
  /** The proxier compared: IPv4 (iptables-save) or IPv6 (ip6tables-save). */
  family?: IPFamily;
  /** Where the rules came from ("nodes/vm-12-7-centos/iptables-save.txt"). */
  source: string;
  /** Service ports compared. */
  servicePorts: number;
  /** Signs of an older kube-proxy, when the dump shows them. */
  writtenBy?: string;
  /** Compared with what Cilium's agent should hold (its frontends), not kube-proxy's rules. */
  cilium?: { maps: boolean };
  /** The kube-proxy release whose rules the node was compared with (releases.ts). */
  release?: Release;
  findings: DriftFinding[];
  /** What the node does as designed that a person may not expect (not drift): e.g. a node
   * without a local endpoint dropping externalTrafficPolicy Local traffic. */
  notes?: DriftFinding[];
  /** The tables compared: nat, and filter when the dump has it. */
  tables?: string[];
  /** Some finding is an error or a warning (information alone is no drift). */
  drifted: boolean;
}

/** `kdebug drift`'s answer: each node's drift, and whether there is any (exit 1). */
export interface DriftAnswer {
  /** Where the facts came from ("snapshot DIR", "context NAME"). */
  label: string;
  nodes: NodeDrift[];
  drifted: boolean;
}

export function driftAnswer(label: string, nodes: NodeDrift[]): DriftAnswer {
  return { label, nodes, drifted: nodes.some((n) => n.drifted) };
}

/** The dump cannot be checked (no nat table, or kube-proxy is not in iptables mode). */
export class DriftInputError extends Error {}

/** More lines than this in one evidence list are summarised. */
const EVIDENCE_LINES = 24;

export interface DriftInput {
  node: string;
  source: string;
  expected: ExpectedRules;
  actual: Ruleset;
  view: ClusterView;
  /** The trees of `actual`, when the caller has built them already. */
  trees?: ServiceTrees;
  /** Only what one Service's answer uses: its ports and the node-wide checks, not the chains
   * no Service reaches nor how every rule is spelled (`kdebug svc` drops those). */
  servicePortsOnly?: boolean;
}

export function nodeDrift(input: DriftInput): NodeDrift {
  const { expected: exp, actual } = input;
  const nat = actual.table('nat');
  if (!nat)
    throw new DriftInputError(
      `${input.source}: the dump has no nat table, where kube-proxy's Service rules live`,
    );
  const trees = input.trees ?? buildServiceTrees(actual, { servicePorts: exp.servicePorts });
  const byHash = new Map<string, ServiceTree>();
  for (const t of trees.services) if (t.hash) byHash.set(t.hash, t);
  const findings: DriftFinding[] = [];
  const notes: DriftFinding[] = [];
  const masq: MasqueradeDiff[] = [];
  const filter = actual.table('filter');
  const uncompared: string[] = []; // checks of the filter table, in a dump that has none
  const ctx: DriftContext = {
    node: input.node,
    exp,
    actual,
    nat,
    filter,
    trees: byHash,
    pods: podsByIP(input.view.pods),
    kubeProxy: kubeProxyPodOn(input.view.pods, input.node),
    masquerade: masq,
    reported: new Set(),
    add: (f) => {
      // rules expected in a table that was not captured are not missing: they were not seen
      if (!filter && f.expected.length > 0 && f.expected.every((l) => l.startsWith('-t filter '))) {
        if (SEVERITY[f.id] !== 'info') uncompared.push(f.title);
        return;
      }
      findings.push({
        ...f,
        severity: SEVERITY[f.id],
        node: input.node,
        expected: capped(f.expected),
        actual: capped(f.actual),
      });
    },
    note: (f) => notes.push({ ...f, severity: 'info', node: input.node }),
  };
  const flagged = new Set<string>();
  for (const sp of exp.servicePorts) {
    const before = findings.length;
    checkServicePort(sp, ctx);
    if (findings.slice(before).some((f) => f.severity !== 'info')) flagged.add(sp.name);
  }
  reportMasquerade(masq, ctx);
  for (const m of masq) flagged.add(m.service);
  nodeLevelChecks(ctx);
  danglingJumps(ctx);
  if (!input.servicePortsOnly) orphanChains(ctx, trees.orphans);
  const text = input.servicePortsOnly ? {} : textDifferences(ctx, flagged);
  if (!filter)
    notes.push({
      id: 'table-not-captured',
      severity: 'info',
      node: input.node,
      title: 'filter table not captured: only nat was compared',
      message: `The dump of ${input.node} has no filter table (a nat-only dump, such as iptables -t nat -S), so kube-proxy's REJECT and DROP rules and the jumps to them were not compared${uncompared.length > 0 ? `; not checked: ${uncompared.join('; ')}` : ''}.`,
      expected: [],
      actual: [],
      advice: 'Read every table: iptables-save without -t.',
      next: onNode(input.node, ['iptables-save'], { hostBinaries: true }),
    });
  return {
    tables: filter ? ['nat', 'filter'] : ['nat'],
    node: input.node,
    source: input.source,
    servicePorts: exp.servicePorts.length,
    ...(text.writtenBy ? { writtenBy: text.writtenBy } : {}),
    findings: sortFindings(findings),
    notes,
    drifted: findings.some(isDrift),
  };
}

/** The semantic checks of one Service port: cluster IP traffic, external traffic, firewall. */
function checkServicePort(sp: ExpectedServicePort, c: DriftContext): void {
  const t = c.trees.get(sp.hash);
  const internalCompared = internalPath(sp, t, c);
  externalPath(sp, t, c, internalCompared);
  firewall(sp, t, c);
}

/** Why drift cannot be computed for this kube-proxy, if it cannot. */
export function unsupportedMode(mode: string): string | undefined {
  if (mode === 'iptables' || mode === 'ipvs' || mode === 'nftables') return undefined;
  return `kube-proxy runs in ${mode} mode; the expected rules and the drift check model the iptables, nftables and IPVS modes only`;
}

function capped(lines: string[]): string[] {
  if (lines.length <= EVIDENCE_LINES) return lines;
  return [...lines.slice(0, EVIDENCE_LINES - 1), capLine(lines.length - EVIDENCE_LINES + 1)];
}

/** The line that stands for the rules a capped list leaves out: no rule, so never a difference. */
const capLine = (n: number) => `... ${n} more rules`;
const isCapLine = (line: string) => /^\.\.\. \d+ more rules$/.test(line);

const ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Worst first, then by Service, else in the order found. */
export function sortFindings(f: DriftFinding[]): DriftFinding[] {
  return f
    .map((x, i) => ({ x, i }))
    .sort(
      (a, b) =>
        ORDER[a.x.severity] - ORDER[b.x.severity] ||
        (a.x.service ?? '').localeCompare(b.x.service ?? '') ||
        a.i - b.i,
    )
    .map((e) => e.x);
}

function podsByIP(pods: Pod[]): Map<string, Pod[]> {
  const map = new Map<string, Pod[]>();
  for (const p of pods) {
    if (p.hostNetwork) continue;
    for (const ip of p.podIPs) {
      const list = map.get(ip);
      if (list) list.push(p);
      else map.set(ip, [p]);
    }
  }
  return map;
}

/** The kube-proxy Pod of a node, and what is wrong with it when it is not running and ready. */
function kubeProxyPodOn(pods: Pod[], node: string): DriftContext['kubeProxy'] {
  const p = pods.find(
    (x) =>
      x.nodeName === node &&
      x.namespace === 'kube-system' &&
      (x.labels['k8s-app'] === 'kube-proxy' || x.name.startsWith('kube-proxy-')),
  );
  if (!p) return undefined;
  const c = p.containerStatuses[0];
  const ready = p.conditions.find((x) => x.type === 'Ready')?.status === 'True';
  const state = c?.state.reason ?? (c?.state.kind === 'running' ? undefined : c?.state.kind);
  const problem =
    p.deleting || !ready || (c && c.state.kind !== 'running')
      ? `${p.deleting ? 'being deleted' : (state ?? p.phase)}${c?.restartCount ? `, ${c.restartCount} restarts` : ''}`
      : undefined;
  return { pod: p.name, ...(problem ? { problem } : {}), restarts: c?.restartCount ?? 0 };
}

/** Masquerade rules that differ the same way on every Service port are one finding. */
function reportMasquerade(diffs: MasqueradeDiff[], ctx: DriftContext): void {
  if (diffs.length === 0) return;
  const same = diffs.every((d) => d.want === diffs[0]!.want && d.got === diffs[0]!.got);
  if (ctx.exp.config === DEFAULT_KUBE_PROXY_CONFIG) {
    // the configuration was not read: nothing to compare with but the node's own consistency
    const ways = [...new Set(diffs.map((d) => d.got))];
    const f = {
      id: 'masquerade-differs' as const,
      title:
        ways.length === 1
          ? 'kube-proxy configuration not read: masquerade condition taken from the rules'
          : `Service ports masquerade cluster IP traffic in ${ways.length} different ways`,
      message: `kdebug read no kube-proxy configuration (no ConfigMap; kube-proxy may run with flags, or with EKS's kube-proxy-config), so the masquerade condition is not checked against it. On ${ctx.node} ${ways.length === 1 ? `every Service port masquerades on "${ways[0]}"` : `Service ports masquerade in ${ways.length} different ways (${ways.map((w) => `"${w}"`).join(', ')}): one kube-proxy writes one condition for all, so some of these rules are stale or were written by someone else`}.`,
      expected: [],
      actual: diffs.slice(0, 3).flatMap((x) => x.actual),
      advice: 'Find the configuration kube-proxy mounts among the ConfigMaps of kube-system.',
      next: kubectl('kube-system', 'get', 'configmaps', '-o', 'name'),
    };
    // consistent: information; inconsistent among themselves: observed bad, a warning
    if (ways.length === 1) ctx.note(f);
    else ctx.add(f);
    return;
  }
  if (diffs.length > 1 && same) {
    const d = diffs[0]!;
    ctx.add({
      id: 'masquerade-differs',
      title: `cluster IP traffic is masqueraded on "${d.got}", not "${d.want}"`,
      message: `node ${ctx.node} masquerades cluster IP traffic of all ${diffs.length} Service ports when it matches "${d.got}", but the kube-proxy configuration (${ctx.exp.config.source}) says "${d.want}": kube-proxy on this node runs with other settings than the ConfigMap (command-line flags, or not restarted since the ConfigMap changed).`,
      expected: diffs.slice(0, 3).flatMap((x) => x.expected),
      actual: diffs.slice(0, 3).flatMap((x) => x.actual),
      advice: `Compare kube-proxy's flags and its ConfigMap; restart kube-proxy on ${ctx.node} after changing it.`,
      next: kubectl('kube-system', 'get', 'configmap', 'kube-proxy', '-o', 'yaml'),
    });
    return;
  }
  for (const d of diffs)
    ctx.add({
      id: 'masquerade-differs',
      service: d.service,
      title: `cluster IP traffic masqueraded on "${d.got}", expected "${d.want}"`,
      message: `node ${ctx.node} masquerades traffic to ${d.service}'s cluster IP when it matches "${d.got}", but kube-proxy's configuration says "${d.want}".`,
      expected: d.expected,
      actual: d.actual,
    });
}

const STATUS: Record<Severity, Finding['status']> = {
  error: 'fail',
  warning: 'warn',
  info: 'pass',
};

/** "-t nat -A X ..." and "-A X ..." are the same line for telling missing from unexpected. */
const bare = (line: string) => line.replace(/^-t \S+ /, '').trim();

/** Expected lines the node lacks, lines the node has that were not expected, and the rest.
 * `onNode` says whether the node's dump holds a line: a finding's `actual` shows only the lines
 * that differ, so an expected line absent from it may still be on the node. `expects` says
 * whether kube-proxy writes a line at all: a finding's actual may show a whole chain, whose
 * other lines are as expected. */
export function diffLines(
  f: Pick<DriftFinding, 'expected' | 'actual'>,
  onNode: (line: string) => boolean = () => false,
  expects: (line: string) => boolean = () => false,
) {
  const actual = new Set(f.actual.map(bare));
  const expected = new Set(f.expected.map(bare));
  return [
    ...f.expected.map(
      (l) => ({ line: l, kind: actual.has(bare(l)) || onNode(l) ? 'same' : 'missing' }) as const,
    ),
    ...f.actual
      .filter((l) => !expected.has(bare(l)))
      .map((l) => ({ line: l, kind: expects(l) ? 'same' : 'unexpected' }) as const),
  ];
}

/** A drift finding as a diagnosis Finding, its lines as a difference where they are lines the
 * node's rules hold (`holds`): each expected line the node lacks is missing, each line it has
 * unexpectedly is so; an actual that names a place or a count rather than a line stays as said. */
export function driftToFinding(
  d: DriftFinding,
  source: string,
  node: { holds(line: string): boolean; expects(line: string): boolean },
): Finding {
  const at = { node: d.node, source };
  const holds = (l: string) => node.holds(l);
  const lines = d.actual.filter(holds);
  const said = d.actual.filter((l) => !holds(l));
  const diff = diffLines(
    { expected: d.expected.filter((l) => !isCapLine(l)), actual: lines },
    holds,
    (l) => node.expects(l),
  );
  // what the node has is what was observed: its lines, or that it has none of them
  const evidence: Evidence[] = [
    ...diff.map(({ line, kind }) => ({
      // a line the node holds was observed there; one it lacks is only expected
      ...(kind === 'missing' ? computed(line) : seen(line, at)),
      diff: kind,
    })),
    ...d.expected.filter(isCapLine).map((l) => computed(l)),
    ...said.map((l) => seen(`actual:   ${l}`, d.actualAt ? { node: d.node, ...d.actualAt } : at)),
    ...(d.actual.length === 0 && diff.length > 0 && diff.every((x) => x.kind === 'missing')
      ? [seen(`actual:   ${source}: none of these`, at)]
      : []),
  ];
  return {
    id: d.id,
    status: judged(STATUS[d.severity], evidence),
    title: d.title,
    explanation: d.message,
    evidence,
    ...(d.next ? { next: d.next } : {}),
    ...(d.advice ? { advice: d.advice } : {}),
    node: d.node,
    ...(d.service ? { service: d.service } : {}),
    ...(d.severity === 'info' ? { info: true } : {}),
  };
}

/** A line the node has, as evidence names it everywhere: "FILE:LINE: TEXT". */
export const lineAt = (source: string, line: number | undefined, text: string) =>
  `${source}${line !== undefined ? `:${line}` : ''}: ${text}`;

/** Findings that make `kdebug drift` exit 1 (information alone does not). */
export const isDrift = (f: DriftFinding) => f.severity !== 'info';
