// The vocabulary every layer shares: Facts in, Report out. Names follow kube-proxy's words.
import type { CiliumNodeStated } from './checks/rules/cilium.js';
import type { FindingId } from './findings/finding-ids.js';
import type { NextCommand } from './findings/next-command.js';
import type { IPFamily } from './ipv6.js';
import type { NotRead } from './facts/not-read.js';

/** "ns/name:port", or "ns/name" for an unnamed port: kube-proxy's ServicePortName.String(). */
export type ServicePortName = string;

/** Finding ids renamed, with the old ids JSON still carries as `aliases` for one release. */
export const RENAMED_IDS: Record<string, string[]> = {
  // drift's note shared no-local-endpoint with the Traffic policy step's failure before 0.2
  'local-policy-drop': ['no-local-endpoint', 'no-local-endpoints'],
  'service-chain-missing': ['svc-chain-missing'], // drift ids say "service-" from 0.2 on
};

/** A share as a person reads it: "50%", "33.3%", "100%" (one decimal, none when whole). */
export const percent = (p: number): string => `${Math.round(p * 1000) / 10}%`;

/** "4,996": counts of nodes and Services as a person reads them. */
export const thousands = (n: number): string => n.toLocaleString('en-US');

/** The Service a ServicePortName is of ("ns/name:port": neither part can hold ':' or '/'). */
export function serviceRefOf(name: ServicePortName): { namespace: string; name: string } {
  const [namespace = '', service = ''] = name.split(':')[0]!.split('/');
  return { namespace, name: service };
}

/** "ns/name": the Service a ServicePortName is of, as a person reads it. */
export function serviceNameOf(name: ServicePortName): string {
  const { namespace, name: service } = serviceRefOf(name);
  return `${namespace}/${service}`;
}

/** A ServicePortName's port name: '' for an unnamed port ("ns/name", or "ns/name:" as old
 * kube-proxy wrote it). */
export const portNameOf = (name: ServicePortName): string => name.split(':')[1] ?? '';

/** Whether a ServicePortName is one of the Service "ns/name"'s ports. */
export const isPortOf = (name: ServicePortName | undefined, service: string): boolean =>
  name !== undefined && serviceNameOf(name) === service;

/** A ServicePortName as a person reads it: old kube-proxy wrote an unnamed port as "ns/name:". */
export function portNameText(name: ServicePortName): string {
  return name.endsWith(':') ? `${name.slice(0, -1)} (port unnamed)` : name;
}

/** One Kubernetes object exactly as the API returned it (raw JSON, unknown fields kept). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** What a capture records about itself (snapshot meta.json). */
export interface SnapshotMeta {
  context?: string;
  server?: string;
  namespace?: string;
  service?: string;
  capturedAt?: string;
  kdebugVersion?: string;
  [key: string]: unknown;
}

/** The raw stdout of one node command, keyed by its file stem (e.g. "iptables-save"). */
export type NodeOutputs = Record<string, string>;

/**
 * Everything kdebug observed, uninterpreted: API objects, and the raw output of each node
 * command per node. A snapshot directory is Facts on disk.
 */
export interface Facts {
  objects: KubeObject[];
  nodes: Record<string, NodeOutputs>;
  meta: SnapshotMeta;
}

export type Status = 'pass' | 'warn' | 'fail' | 'skip' | 'pending';
export type Severity = 'error' | 'warning' | 'info';

/** Where a piece of evidence came from (core/findings/evidence.ts builds them). */
export type EvidenceKind = 'observed' | 'read' | 'computed' | 'not-observed';

export interface Evidence {
  kind: EvidenceKind;
  /** The line a person reads: a rule, a probe's answer, an object's field. */
  text: string;
  /** observed or not observed: on which node. */
  node?: string;
  /** observed: the output it is in ("nodes/node-a/iptables-save.txt"), and the line. */
  source?: string;
  line?: number;
  /** read: the object ("Service default/web"). */
  object?: string;
  /** computed: what kind of computation ("expected" rules or records, a "walked" packet). */
  label?: 'expected' | 'walked';
  /** A rule line of a drift: expected and missing on the node, there but unexpected, or both. */
  diff?: 'missing' | 'unexpected' | 'same';
}

/** One judgement with its evidence. `id` is a stable slug: a contract for scripts. */
export interface Finding {
  id: FindingId;
  status: Status;
  title: string;
  explanation: string;
  evidence: Evidence[];
  /** The command that shows or fixes it: words, shell-quoted only when shown. */
  next?: NextCommand;
  /** What to do, in words, where no one command does it. */
  advice?: string;
  node?: string;
  /** Several nodes in the same condition, one finding for all (node is then unset). */
  nodes?: string[];
  /** The IP family of the rules it is about, where it is about one family's (a node's ip6tables). */
  family?: IPFamily;
  service?: ServicePortName;
  /** An explanation rather than a judgement (e.g. why ping to a ClusterIP gets no answer). */
  info?: boolean;
  /** An explanation nothing here calls for: its title only, unless asked (--verbose). */
  folded?: boolean;
}

/** A skip that says what was not seen, and why (its evidence): neither a pass nor a fail. */
export const isUnobserved = (f: Pick<Finding, 'status' | 'evidence'>) =>
  f.status === 'skip' && f.evidence.some((e) => e.kind === 'not-observed');

/** What a mark shows: the status; "unobserved" (?) for what was not seen; "partial" for a step
 * that passed where it looked and could not look everywhere. */
export type Shown = Status | 'unobserved' | 'partial';
export const shownStatus = (f: Finding): Shown => (isUnobserved(f) ? 'unobserved' : f.status);
export function shownStepStatus(s: Step): Shown {
  const blind = s.findings.some(isUnobserved);
  if (s.status === 'skip' && blind) return 'unobserved';
  return s.status === 'pass' && blind ? 'partial' : s.status;
}

/** What a whole Report shows (the `:svc` list's mark): its first problem, else partial where a
 * step could not look everywhere, else pass; none while steps are pending. */
export function shownReportStatus(r: Report): Shown | undefined {
  if (r.steps.some((s) => s.status === 'pending')) return undefined;
  if (r.firstProblem) return r.firstProblem.status;
  const shown = r.steps.map(shownStepStatus);
  return shown.includes('partial') || shown.includes('unobserved') ? 'partial' : 'pass';
}

export interface Step {
  id: string;
  title: string;
  status: Status;
  findings: Finding[];
  /** The finding its one-line summary shows: the worst judgement, else the first finding. */
  headline?: Finding;
}

/** What to look at first: the first failing step (else the first warning one) and its finding. */
export interface FirstProblem {
  /** The step's index in `steps`. */
  step: number;
  status: 'fail' | 'warn';
  finding: Finding;
}

/** What the header of a diagnosis shows about the Service. */
export interface ServiceSummary {
  type: string;
  /** "10.1.190.219", "None" (headless), or absent (ExternalName). */
  clusterIP?: string;
  /** A dual-stack Service's cluster IPs, both families (absent for one). */
  clusterIPs?: string[];
  /** "http 8080/TCP -> 80" per Service port. */
  ports: string[];
  externalName?: string;
  /** kube-proxy's mode, when known ("iptables", "ipvs", "nftables"), or MIXED_PROXY_MODES where
   * the nodes run different ones. */
  proxyMode?: string;
}

/** The proxy mode of a cluster whose nodes run different ones (the kube-proxy step says which). */
export const MIXED_PROXY_MODES = 'mixed';

export interface Report {
  schemaVersion: number;
  target: { namespace: string; service: string; port?: string };
  context?: string;
  /** The worst step status: fail, warn, pending, else pass. */
  status?: Status;
  service?: ServiceSummary;
  steps: Step[];
  /** What a step could not observe ("Reachability: ClusterIP ...: not observed on node-a"): a
   * run with nothing failed but these is green only as far as it could see. */
  unobserved?: string[];
  firstProblem?: FirstProblem;
  /** Some step is still collecting (a live run). */
  pending: boolean;
  /** What the run began to read and lost (facts/not-read.ts); the report is partial when any. */
  notRead: NotRead[];
  /** 1 when a step failed or warned, else 2 when the report is partial, else 0 (kdebug's exit
   * status for this answer). */
  exitCode: 0 | 1 | 2;
  /** The nodes where Cilium's agent replaces kube-proxy: its settings with their sources
   * (checks/rules/cilium.ts ciliumNodesStated); absent where there is none. */
  nodes?: CiliumNodeStated[];
}
