// What drift is in every mode: a node's findings, and how a finding's expected and actual lines
// become a diagnosis Finding whose lines show the difference. Its finding ids and their severity
// are in drift-ids.ts, re-exported here: import drift's names from this module.
import { computed, judged, seen } from '../findings/evidence.js';
import { type NextCommand } from '../findings/next-command.js';
import type { Evidence, Finding, ServicePortName, Severity } from '../model.js';
import type { Release, ReleaseDisagrees } from './kube-proxy/releases.js';
import type { VersionRead } from '../nodes/state.js';
import type { IPFamily } from '../ipv6.js';
import type { DriftId } from './drift-ids.js';
import type { SettingStated } from './cilium/agent/provenance.js';
import type { Dataplane } from './dataplane.js';
import { SEVERITY } from './drift-ids.js';

export type { DriftId } from './drift-ids.js';
export { SEVERITY, NOT_FORWARDED } from './drift-ids.js';

/** What a drift check says of a finding: its words and the lines it compared; driftFinding makes
 * it a Finding about the node. */
export interface DriftSaid {
  /** The ServicePortName, when the finding is about one Service port. */
  service?: ServicePortName;
  /** One line: what is wrong. */
  title: string;
  /** The sentence a person needs: what the node does, and why it matters. */
  message: string;
  /** Rule lines kube-proxy would have written ("-t nat -A ..."). */
  expected?: string[];
  /** Rule lines the node has: as drift writes them, said in words, or quoted from its state
   * (`quote`: "FILE:LINE: TEXT", with whether it is the difference or kube-proxy's as written). */
  actual?: (string | Quote)[];
  endpoint?: string;
  actualAt?: DriftLines['actualAt'];
  /** The command that shows or fixes it. */
  next?: NextCommand;
  /** What to do about it, in words. */
  advice?: string;
  notSynced?: true;
  /** What it rests on besides the node's lines: objects as read from the API. */
  evidence?: Evidence[];
}

/** A line of the node's state a finding quotes: "FILE:LINE: TEXT" (lineAt), and whether it is a
 * line the finding is about (`differs`) or one kube-proxy writes as it is, shown beside it. */
export interface Quote {
  readonly text: string;
  readonly differs: boolean;
}

/** The node's line `text` at `source`'s `line`, quoted by a finding: a difference unless
 * `asWritten` (kube-proxy writes it so: context beside the difference). */
export const quote = (
  source: string,
  line: number | undefined,
  text: string,
  asWritten = false,
): Quote => ({ text: lineAt(source, line, text), differs: !asWritten });

/** Adds a finding of `id` (its severity from SEVERITY) about the node being compared. */
export type AddFinding = (id: DriftId, f: DriftSaid) => void;

/** What a drift finding compared: the lines that differ, as the check found them. */
export interface DriftLines {
  /** Rule lines kube-proxy would have written ("-t nat -A ..."). */
  expected: string[];
  /** Rule lines the node has. */
  actual: string[];
  /** The endpoint it is about (its address as the trees show it): the Rules tree marks it. */
  endpoint?: string;
  /** Where `actual` was read when not in the drift's own source (the node's ipsets): the
   * evidence's source and line. */
  actualAt?: { source: string; line?: number };
  /** Its advice blames kube-proxy for not having synced: only true where it has not. */
  notSynced?: true;
  /** Index for index with `actual`, where a line is a quote of the node's state (`quote`): whether
   * it is the difference (else kube-proxy's line as written); null where it is not a quote. */
  quoted?: (boolean | null)[];
  /** The family of the rule set it was found in (the IPv4 iptables or the IPv6 ip6tables one). */
  family?: IPFamily;
  /** Where kube-proxy and a Cilium agent both program the node's Services: whose state it is of
   * (cilium/beside-kube-proxy.ts); absent where one of them does. */
  component?: 'kube-proxy' | 'cilium';
  /** Lines of `expected` the node holds acting alike (spelled otherwise, or in the chain an older
   * release puts them), each with the node's line: neither is a difference. */
  alike?: { expected: string; actual: string }[];
  /** What the node's rules say of these lines, decided by the node that computed the drift. */
  onNode?: LinesOnNode;
}

/** Line by line (index for index with `expected` and `actual`), what the node's rules say of a
 * finding's lines: decided once where the drift is computed, so no reader looks a line up again. */
export interface LinesOnNode {
  /** The node's rules hold this expected line: a finding's actual shows only the lines that
   * differ, so an expected line absent from it may still be on the node. */
  expected: boolean[];
  /** This actual line is one of the node's rules, not a place or a count said in words. */
  actual: boolean[];
  /** kube-proxy writes this actual line: an actual may show a whole chain, whose other lines are
   * as expected. */
  written: boolean[];
}

/** A finding of `kdebug drift`: a Finding about one node, with the lines it compared. Its status
 * says its severity (error: fail, warning: warn, information: an info pass). */
export type DriftFinding = Finding & { id: DriftId; node: string; drift: DriftLines };

const STATUS: Record<Severity, Finding['status']> = {
  error: 'fail',
  warning: 'warn',
  info: 'pass',
};

/** The node holds none of the lines expected, said of the output they would be in. */
function noneOf(
  at: { node: string; source: string },
  actualAt: DriftLines['actualAt'],
  prefix = '',
): Evidence {
  const where = actualAt ? { node: at.node, ...actualAt } : at;
  return seen(`${prefix}${where.source}: none of these`, where);
}

/** A drift finding of `id` about the node whose `source` was compared; `severity` overrides the
 * id's where a check says it as information (a note). Its evidence is what the check read on the
 * node: its lines as seen in `source`, or that it holds none of those expected. */
export function driftFinding(
  id: DriftId,
  said: DriftSaid,
  at: { node: string; source: string },
  severity: Severity = SEVERITY[id],
): DriftFinding {
  const {
    service,
    title,
    message,
    expected = [],
    actual = [],
    next,
    advice,
    evidence = [],
    ...lines
  } = said;
  const quoted = said.actual?.some((a) => typeof a !== 'string')
    ? { quoted: actual.map((a) => (typeof a === 'string' ? null : a.differs)) }
    : {};
  const drift: DriftLines = {
    expected,
    actual: actual.map((a) => (typeof a === 'string' ? a : a.text)),
    ...lines,
    ...quoted,
  };
  return {
    id,
    status: STATUS[severity],
    title,
    explanation: message,
    // what the check read on the node (what it expected is in `drift`): judgedOnNode tells its
    // lines apart on the node's whole rules; then what it read from the API
    evidence: [
      ...(actual.length > 0 || expected.length === 0
        ? drift.actual.map((l) => seen(l, at))
        : [noneOf(at, lines.actualAt)]),
      ...evidence,
    ],
    ...(next ? { next } : {}),
    ...(advice ? { advice } : {}),
    node: at.node,
    ...(service ? { service } : {}),
    ...(severity === 'info' ? { info: true } : {}),
    drift,
  };
}

/** error, warning or info: what a drift finding's status says. */
export const severityOf = (f: Pick<Finding, 'status' | 'info'>): Severity =>
  f.info ? 'info' : f.status === 'fail' ? 'error' : 'warning';

/** What of Cilium's agent a node's drift compared: its own table (db/show frontends, service
 * list), its BPF maps alone (bpf lb list, a maps dump), or its table and its BPF maps. */
export type CiliumCompared = 'table' | 'maps' | 'both';

export interface NodeDrift {
  node: string;
  /** The proxier compared: IPv4 (iptables-save) or IPv6 (ip6tables-save). */
  family?: IPFamily;
  /** Where the rules came from ("nodes/vm-12-7-centos/iptables-save.txt"). */
  source: string;
  /** Service ports compared. */
  servicePorts: number;
  /** Who wrote the rules by their signs: an older kube-proxy where an iptables dump shows one;
   * in nftables mode, the releases the table reads as written by where the release was taken
   * from them (kube-proxy/releases.ts modelledRelease). */
  writtenBy?: string;
  /** The release read for the node is newer than any its rules' signs allow ("v1.28", "v1.19"):
   * they were not written by it; null where they agree; absent where no release was read for the
   * node or its rules are not kube-proxy's iptables or nftables ones. */
  releaseDisagrees?: ReleaseDisagrees | null;
  /** Compared with what Cilium's agent should hold (its frontends), not kube-proxy's rules: what
   * was read of it (its own table, its BPF maps alone, or both: the table against the maps), and
   * whether its backends' states were. */
  cilium?: {
    read: CiliumCompared;
    states: boolean;
    /** The agent's settings the comparison took, each with its source (agent/provenance.ts). */
    settings?: SettingStated[];
  };
  /** A node whose kube-proxy rules were compared (`mode`), where a Cilium agent with a partial
   * kube-proxy replacement serves some kinds ahead of them: what of the agent was compared
   * beside, the replacement in words, and the agent's source and Service ports. */
  ciliumBeside?: NonNullable<NodeDrift['cilium']> & {
    source: string;
    servicePorts: number;
    replacement: string;
  };
  /** The kube-proxy release whose rules the node was compared with (kube-proxy/releases.ts). */
  release?: Release;
  /** kube-proxy's version as read for the node, with its source; null: not read; absent on a
   * node whose Services Cilium's agent programs. */
  kubeProxy?: VersionRead | null;
  findings: DriftFinding[];
  /** What the node does as designed that a person may not expect (not drift): e.g. a node
   * without a local endpoint dropping externalTrafficPolicy Local traffic. */
  notes?: DriftFinding[];
  /** What of the node's state was not read (lines of a listing, a table, the ipsets), each a
   * table-not-captured note: no drift is said of it, so "no drift" covers what was read only. */
  notRead?: DriftFinding[];
  /** The listings compared that were read in part (cut short, rows elided: a Cilium agent's
   * table): what they lack was not compared, so the node's drift is not known whole, as for a
   * dump cut short (exit 2 where no drift is found). */
  readInPart?: string[];
  /** The dataplane compared, as the drift was computed in it. */
  mode: Dataplane['mode'];
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
  /** The nodes (and rule sets) asked for whose drift could not be computed, each with why. */
  notCompared: NotCompared[];
}

/** A node asked for whose rules were not compared: not read, cut, or of a mode not modelled. */
export interface NotCompared {
  node: string;
  family?: 'IPv4' | 'IPv6';
  why: string;
}

export function driftAnswer(
  label: string,
  nodes: NodeDrift[],
  notCompared: NotCompared[] = [],
): DriftAnswer {
  return { label, nodes, drifted: nodes.some((n) => n.drifted), notCompared };
}

/** `kdebug drift`'s exit status: 1 where drift was found; else 2 where a node asked for was not
 * compared, or was compared on a listing read in part (its drift not known whole); else 0. */
export const driftExit = (a: DriftAnswer): 'problem' | 'failed' | 'ok' =>
  a.drifted
    ? 'problem'
    : a.notCompared.length > 0 || a.nodes.some((n) => (n.readInPart?.length ?? 0) > 0)
      ? 'failed'
      : 'ok';

/** The dump cannot be checked (no nat table, or kube-proxy is not in iptables mode); `why`: the
 * reason in one short clause, for a line that names the node and says it was not compared. */
export class DriftInputError extends Error {
  constructor(
    message: string,
    readonly why?: string,
  ) {
    super(message);
  }
}

/** Why drift cannot be computed for this kube-proxy, if it cannot. */
export function unsupportedMode(mode: string): string | undefined {
  if (mode === 'iptables' || mode === 'ipvs' || mode === 'nftables') return undefined;
  return `kube-proxy runs in ${mode} mode; the expected rules and the drift check model the iptables, nftables and IPVS modes only`;
}

/** The line that stands for the rules a capped list leaves out: no rule, so never a difference. */
export const capLine = (n: number) => `... ${n} more rules`;
const isCapLine = (line: string) => /^\.\.\. \d+ more rules$/.test(line);

const ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Worst first, then by Service, else in the order found. */
export function sortFindings(f: DriftFinding[]): DriftFinding[] {
  return f
    .map((x, i) => ({ x, i }))
    .sort(
      (a, b) =>
        ORDER[severityOf(a.x)] - ORDER[severityOf(b.x)] ||
        (a.x.service ?? '').localeCompare(b.x.service ?? '') ||
        a.i - b.i,
    )
    .map((e) => e.x);
}

/** "-t nat -A X ..." and "-A X ..." are the same line for telling missing from unexpected. */
const bare = (line: string) => line.replace(/^-t \S+ /, '').trim();

/** Expected lines the node lacks, lines the node has that were not expected, and the rest, by
 * what the node's rules say of each line (`onNode`; without it, none is on the node). */
export function diffLines(f: Pick<DriftLines, 'expected' | 'actual' | 'alike' | 'onNode'>) {
  const actual = new Set(f.actual.map(bare));
  const expected = new Set([...f.expected, ...(f.alike ?? []).map((a) => a.actual)].map(bare));
  // a line the node holds acting alike is shown as the node spells it
  const held = new Map((f.alike ?? []).map((a) => [bare(a.expected), a.actual]));
  return [
    ...f.expected.map((l, i) => {
      const alike = held.get(bare(l));
      if (alike !== undefined) return { line: alike, kind: 'same' } as const;
      const same = actual.has(bare(l)) || (f.onNode?.expected[i] ?? false);
      return { line: l, kind: same ? 'same' : 'missing' } as const;
    }),
    ...f.actual.flatMap((l, i) =>
      expected.has(bare(l))
        ? []
        : [{ line: l, kind: f.onNode?.written[i] ? 'same' : 'unexpected' } as const],
    ),
  ];
}

/** The items of `xs` whose index `keep` picks. */
const pick = <T>(xs: readonly T[], keep: readonly boolean[]) => xs.filter((_, i) => keep[i]);

const NONE: LinesOnNode = { expected: [], actual: [], written: [] };

/** A drift finding's lines as evidence, a difference where they are lines the node's rules hold
 * (`onNode`): each expected line the node lacks is missing, each line it has unexpectedly is so;
 * an actual that names a place or a count rather than a line stays as said. */
function driftEvidence(d: DriftLines, at: { node: string; source: string }): Evidence[] {
  const on = d.onNode ?? NONE;
  const rules = d.actual.map((_, i) => on.actual[i] ?? false);
  const said = d.actual.filter((_, i) => !rules[i]);
  const kept = d.expected.map((l) => !isCapLine(l));
  const diff = diffLines({
    expected: pick(d.expected, kept),
    actual: pick(d.actual, rules),
    ...(d.alike ? { alike: d.alike } : {}),
    onNode: {
      expected: pick(on.expected, kept),
      actual: pick(on.actual, rules),
      written: pick(on.written, rules),
    },
  });
  // what the node has is what was observed: its lines, or that it has none of them
  return [
    ...diff.map(({ line, kind }) => ({
      // a line the node holds was observed there; one it lacks is only expected
      ...(kind === 'missing' ? computed(line) : seen(line, at)),
      diff: kind,
    })),
    ...d.expected.filter(isCapLine).map((l) => computed(l)),
    ...said.map((l) => seen(`actual:   ${l}`, d.actualAt ? { node: at.node, ...d.actualAt } : at)),
    ...(d.actual.length === 0 && diff.length > 0 && diff.every((x) => x.kind === 'missing')
      ? [noneOf(at, d.actualAt, 'actual:   ')]
      : []),
  ];
}

/** A drift finding judged against the node's whole rules (what its `onNode` says of its lines):
 * its lines as a difference where the node holds them or kube-proxy writes them, and no verdict
 * without a line observed there. */
export function judgedOnNode(d: DriftFinding, source: string): DriftFinding {
  const evidence = [
    ...driftEvidence(d.drift, { node: d.node, source }),
    // what it rests on besides the node's lines, as read from the API: kept as said
    ...d.evidence.filter((e) => e.kind === 'read'),
  ];
  return { ...d, evidence, status: judged(d.status, evidence) };
}

/** A line the node has, as evidence names it everywhere: "FILE:LINE: TEXT". */
export const lineAt = (source: string, line: number | undefined, text: string) =>
  `${source}${line !== undefined ? `:${line}` : ''}: ${text}`;

/** Findings that make `kdebug drift` exit 1 (information alone does not). */
export const isDrift = (f: DriftFinding) => !f.info;
