// The guided diagnosis: every step in order over the same Facts, into one Report. Pure and total:
// partial facts (a live run still collecting) give pending steps, never an exception.
import { portText, targetNotCaptured } from './checks/service.js';
import { unrecordedNodes } from './checks/reachability/probes.js';
import { finding, isPending, pending, serviceKind, type Check } from './checks/check.js';
import {
  CheckContext,
  type AnalysisGiven,
  type DiagnoseOptions,
  type DiagnosedService,
} from './checks/context.js';
import { dnsCheck } from './checks/dns/dns.js';
import { plannedLookups } from './checks/dns/records.js';
import { endpointsCheck } from './checks/endpoints/endpoints.js';
import { kubeProxyCheck } from './checks/kube-proxy/kube-proxy.js';
import { clusterMode } from './checks/kube-proxy/modes.js';
import { hairpinCheck } from './checks/hairpin.js';
import { portsCheck } from './checks/ports.js';
import { connectProbe, PROBED_ENDPOINTS, type NodeProbe } from './checks/reachability/probes.js';
import type { NodeCommand } from './nodes/commands.js';
import { reachabilityCheck } from './checks/reachability/reachability.js';
import { rulesCheck } from './checks/rules/rules.js';
import { ciliumNodesStated } from './checks/rules/cilium.js';
import { selectorCheck } from './checks/selector.js';
import { serviceCheck } from './checks/service.js';
import { trafficPolicyCheck } from './checks/traffic-policy/traffic-policy.js';
import {
  isUnobserved,
  type Facts,
  type Finding,
  type FirstProblem,
  type Report,
  type Status,
  type Step,
} from './model.js';
import { resolveNext, type Invocation } from './findings/next-command.js';
import { nodesNotRecordedRead, notRead, type NotRead } from './facts/not-read.js';

export type { DiagnoseOptions, DiagnosedService } from './checks/context.js';
export type { NodeProbe } from './checks/reachability/probes.js';

/** 2: evidence items are objects that say where they came from ({kind, text, ...}). */
export const REPORT_SCHEMA_VERSION = 2;

/** The steps, in the order a person debugging a Service would take them. */
export const STEPS: Check[] = [
  serviceCheck,
  portsCheck,
  selectorCheck,
  endpointsCheck,
  dnsCheck,
  kubeProxyCheck,
  rulesCheck,
  reachabilityCheck,
  trafficPolicyCheck,
  hairpinCheck,
];

const RANK: Record<Status, number> = { fail: 4, warn: 3, pending: 2, pass: 1, skip: 0 };

/** The worst status; informational findings count only when there is nothing else. */
export function worst(statuses: Status[]): Status {
  return statuses.reduce<Status>((w, s) => (RANK[s] > RANK[w] ? s : w), 'skip');
}

function stepStatus(findings: Finding[]): Status {
  const judged = findings.filter((f) => !f.info);
  if (judged.length > 0) return worst(judged.map((f) => f.status));
  // explanations alone: a pass only where one rests on something observed
  return findings.some((f) => f.status === 'pass') ? 'pass' : 'skip';
}

/** What the step says without running it: pending or skipped for want of the Service, or the
 * skip for a kind of Service it does not apply to. */
function precondition(check: Check, ctx: CheckContext): ReturnType<Check['run']> | undefined {
  const svc = ctx.service;
  if (check.needs?.includes('service') && !svc)
    return ctx.waiting('objects') ? pending('reading the Service') : [];
  const kind = svc && serviceKind(svc);
  const skip = check.skipFor;
  if (!svc || !kind || !skip?.kinds.includes(kind)) return undefined;
  const title = typeof skip.title === 'string' ? skip.title : skip.title(kind);
  const explanation =
    typeof skip.explanation === 'string' ? skip.explanation : skip.explanation(svc);
  return [finding(skip.id, 'skip', title, { explanation })];
}

/** One step run over the context, its preconditions first (what diagnose does for each). */
export function runStep(check: Check, ctx: CheckContext): Step {
  let result: ReturnType<Check['run']>;
  try {
    result = precondition(check, ctx) ?? check.run(ctx);
  } catch (e) {
    // a bug in one step must not hide the others: say so in that step
    result = [
      {
        id: 'check-crashed',
        status: 'warn',
        title: `kdebug could not finish this step: ${(e as Error).message}`,
        explanation:
          'This is a bug in kdebug; the other steps are unaffected. Please report it with the snapshot (kdebug snapshot save).',
        evidence: [],
      },
    ];
  }
  if (isPending(result))
    return {
      id: check.id,
      title: check.title,
      status: 'pending',
      findings: [
        { id: 'pending', status: 'pending', title: result.pending, explanation: '', evidence: [] },
      ],
    };
  if (result.length === 0 && !ctx.service)
    result = [
      {
        id: 'needs-service',
        status: 'skip',
        title: 'needs the Service',
        explanation: 'This step looks at the Service, which does not exist.',
        evidence: [],
      },
    ];
  for (const finding of result)
    if (finding.status === 'fail' || finding.status === 'warn')
      ctx.earlier.push({ finding, step: check.title });
  return { id: check.id, title: check.title, status: stepStatus(result), findings: result };
}

/** A Report's conclusions, from its steps: each step's headline, the first problem, whether
 * some step is pending, the exit status. Renderers read these; none decides them. */
export function concluded(
  report: Omit<Report, 'firstProblem' | 'pending' | 'exitCode' | 'notRead'>,
  lost: NotRead[] = [],
): Report {
  const steps = report.steps.map((s) => ({ ...s, headline: headline(s.findings) }));
  const problem = firstProblem(steps);
  return {
    ...report,
    steps,
    ...(problem ? { firstProblem: problem } : {}),
    pending: steps.some((s) => s.status === 'pending'),
    notRead: lost,
    exitCode: steps.some((s) => s.status === 'fail' || s.status === 'warn')
      ? 1
      : lost.length > 0
        ? 2
        : 0,
  };
}

/** The finding a step's summary line shows: its worst judgement, else its first finding. */
function headline(findings: Finding[]): Finding | undefined {
  const judged = findings.filter((f) => !f.info);
  for (const s of ['fail', 'warn', 'pending', 'pass', 'skip'] as const) {
    const f = judged.find((x) => x.status === s);
    if (f) return f;
  }
  return findings[0];
}

/** The first failing step, else the first warning one, with the finding that says why. */
function firstProblem(steps: Step[]): FirstProblem | undefined {
  for (const status of ['fail', 'warn'] as const) {
    const step = steps.findIndex((s) => s.status === status);
    const finding = steps[step]?.findings.find((f) => f.status === status);
    if (finding) return { step, status, finding };
  }
  return undefined;
}

const optional = <T>(x: T | undefined): T[] => (x === undefined ? [] : [x]);

const nodesOf = (nodes: NonNullable<Report['nodes']>) => (nodes.length > 0 ? { nodes } : {});

export function diagnose(facts: Facts, target: DiagnosedService, options: DiagnoseOptions): Report {
  const ctx = new CheckContext(facts, target, options);
  const steps = STEPS.map((check) => runStep(check, ctx));
  // every next command as it runs from the person's terminal, for this run
  const how = withCapturedContext(options.invocation, facts.meta);
  for (const f of steps.flatMap((s) => s.findings)) if (f.next) f.next = resolveNext(f.next, how);
  const svc = ctx.service;
  return concluded(
    {
      schemaVersion: REPORT_SCHEMA_VERSION,
      target,
      ...(facts.meta.context ? { context: facts.meta.context } : {}),
      status:
        worst(steps.map((s) => s.status)) === 'skip' ? 'pass' : worst(steps.map((s) => s.status)),
      ...(svc
        ? {
            service: {
              type: svc.type,
              ...(svc.type !== 'ExternalName' ? { clusterIP: svc.clusterIP ?? 'None' } : {}),
              ...(svc.clusterIPs.length > 1 ? { clusterIPs: svc.clusterIPs } : {}),
              ports: svc.ports.map(portText),
              ...(svc.externalName ? { externalName: svc.externalName } : {}),
              ...(svc.type !== 'ExternalName' && !svc.headless
                ? { proxyMode: clusterMode(ctx) }
                : {}),
            },
          }
        : {}),
      steps,
      unobserved: steps.flatMap((st) =>
        st.findings.filter(isUnobserved).map((f) => `${st.title}: ${f.title}`),
      ),
      // a Cilium node's agent settings, with where each was read (as drift and expect say them)
      ...nodesOf(ciliumNodesStated(ctx)),
    },
    // a Service the snapshot does not hold was not read: the run could not check it (exit 2)
    [
      ...notRead(facts, ctx.analysis.nodeErrors),
      ...optional(targetNotCaptured(ctx)),
      ...nodesNotRecordedRead(unrecordedNodes(ctx)),
    ],
  );
}

/**
 * The probes the Reachability and DNS steps read, for a live run to execute on each node:
 * each ClusterIP (connect; ping the first), each endpoint directly, and a lookup of the Service's
 * name against the kube-dns ClusterIP. Empty until the Service has been read.
 */
export function probePlan(
  facts: Facts,
  target: DiagnosedService,
  given: AnalysisGiven,
  maxEndpoints = PROBED_ENDPOINTS,
): NodeProbe[] {
  const ctx = new CheckContext(facts, target, given);
  const svc = ctx.service;
  if (!svc) return [];
  const out: NodeProbe[] = [...plannedLookups(ctx)];
  if (svc.type === 'ExternalName') return out;
  for (const port of svc.ports) {
    // both families of a dual-stack Service
    for (const ip of svc.headless ? [] : svc.clusterIPs) {
      const p = connectProbe(ip, port.port, port.protocol);
      if (p) out.push(p);
    }
    for (const e of ctx.endpoints(port).slice(0, maxEndpoints)) {
      const p = connectProbe(e.ip, e.port, port.protocol);
      if (p) out.push(p);
    }
  }
  if (!svc.headless && svc.clusterIP) out.push({ kind: 'icmp-echo', ip: svc.clusterIP });
  return out;
}

/**
 * What Reachability reads of each node's connection tracking: the entries to each of the
 * Service's cluster IPs, per protocol of its ports, and the counters again (the first read goes
 * before the probes: see conntrackFirst). Read only, never changed.
 */
export function conntrackPlan(
  facts: Facts,
  target: DiagnosedService,
  given: AnalysisGiven,
): NodeCommand[] {
  const svc = new CheckContext(facts, target, given).service;
  if (!svc || svc.headless || svc.type === 'ExternalName') return [];
  const protocols = [
    ...new Set(
      svc.ports
        .map((p) => p.protocol.toLowerCase())
        .filter((p): p is 'udp' | 'tcp' => p === 'udp' || p === 'tcp'),
    ),
  ];
  return [
    ...svc.clusterIPs.flatMap((dst) =>
      protocols.map((protocol): NodeCommand => ({ kind: 'conntrack-list', protocol, dst })),
    ),
    { kind: 'conntrack-stats', again: true },
  ];
}

/** conntrack's counters before the probes: with the read after them, whether insert_failed
 * grows while kdebug's probes (DNS lookups among them) run. */
export const conntrackFirst = (plan: NodeCommand[]): NodeCommand[] =>
  plan.length > 0 ? [{ kind: 'conntrack-stats' }] : [];

/** The run's invocation with the context a snapshot was captured from: a string meta.json gives,
 * not a redacted snapshot's hash (no context of the person's has that name). */
function withCapturedContext(
  how: Invocation | undefined,
  meta: Facts['meta'],
): Invocation | undefined {
  const context = meta.context;
  if (how?.snapshot === undefined || typeof context !== 'string' || context === '') return how;
  if (meta['redaction'] !== undefined) return how;
  return { ...how, capturedContext: context };
}
