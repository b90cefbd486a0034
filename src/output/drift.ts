// The `kdebug drift` presentations: what each node does differently from what kube-proxy would
// have written, worst first, in sentences with the rule lines as evidence; or JSON.
import {
  resolveNext,
  shellLine,
  shellWords,
  type Invocation,
} from '../core/findings/next-command.js';
import {
  severityOf,
  type DriftAnswer,
  type DriftFinding,
  type NodeDrift,
} from '../core/dataplane/drift.js';
import { RENAMED_IDS, type Severity } from '../core/model.js';
import { jsonText } from '../core/sanitize.js';
import { byReason, namedFew } from '../core/nodes/access.js';
import { versionReadText } from '../core/nodes/state.js';
import { wrapCommand, wrapIndented } from './wrap.js';
import { schemaId } from './schema-id.js';

export const DRIFT_SCHEMA_VERSION = 1;

const LABEL: Record<Severity, string> = { error: 'ERROR', warning: 'WARNING', info: 'info' };

function counts(findings: DriftFinding[]) {
  const c = { error: 0, warning: 0, info: 0 };
  for (const f of findings) c[severityOf(f)]++;
  return c;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function countsLine(findings: DriftFinding[]): string {
  return countsVerdict(counts(findings));
}

/** The counts and the verdict, counts of zero unsaid: "1 warning: drift found", "2 info: no
 * drift", "no drift" (the text's head and the MCP summary). */
export function countsVerdict(c: { error: number; warning: number; info: number }): string {
  const parts = [
    c.error > 0 ? plural(c.error, 'error') : '',
    c.warning > 0 ? plural(c.warning, 'warning') : '',
    c.info > 0 ? `${c.info} info` : '',
  ].filter(Boolean);
  const verdict = c.error + c.warning > 0 ? 'drift found' : 'no drift';
  return parts.length > 0 ? `${parts.join(', ')}: ${verdict}` : verdict;
}

/** A line of the text: prose and rules (wrapped under their own indent), or a command (wrapped
 * with continuations, so that it still pastes). */
type Line = string | { by: string; command: string[] };

function indent(lines: Line[], by = '    '): Line[] {
  return lines.map((l) => (typeof l === 'string' ? by + l : { ...l, by: by + l.by }));
}

/** The lines at `width` columns. */
function rendered(lines: Line[], width: number): string[] {
  return lines.flatMap((l) => {
    if (typeof l !== 'string') return wrapCommand(['next:', ...l.command], width, l.by);
    return wrapIndented([l], width, '  ');
  });
}

/** The advice and the command, as this run resolves it. */
function nextLines(f: DriftFinding, how: Invocation, by: string): Line[] {
  return [
    ...(f.advice ? [`${by}${f.advice}`] : []),
    ...(f.next ? [{ by, command: shellWords(resolveNext(f.next, how)) }] : []),
  ];
}

/** Whose state a finding is of, where kube-proxy and a Cilium agent both program the node. */
const COMPONENT = { 'kube-proxy': "kube-proxy's rules", cilium: "Cilium's agent" } as const;

function findingText(f: DriftFinding, how: Invocation, ciliumNode: boolean): Line[] {
  const by = f.drift.component;
  const cilium = by ? by === 'cilium' : ciliumNode;
  const out: Line[] = [
    `${LABEL[severityOf(f)]} ${f.id}${f.service ? `  ${f.service}` : ''}${by ? `  (${COMPONENT[by]})` : ''}`,
    `  ${f.explanation}`,
  ];
  if (f.drift.actual.length > 0) out.push('  on the node:', ...indent(f.drift.actual));
  else if (f.drift.expected.length > 0) out.push('  on the node: no such rules');
  if (f.drift.expected.length > 0)
    out.push(
      cilium ? "  Cilium's agent should hold:" : '  kube-proxy would write:',
      ...indent(f.drift.expected),
    );
  out.push(...nextLines(f, how, '  '));
  return out;
}

/** Informational findings: one line each; rule-text-differs of Service ports folded into one. */
function infoText(findings: DriftFinding[], how: Invocation): Line[] {
  const out: Line[] = [];
  const spelled = findings.filter((f) => f.id === 'rule-text-differs' && f.service);
  if (spelled.length > 0)
    out.push(
      `info rule-text-differs  ${plural(spelled.length, 'Service port')} route as kube-proxy would, with rules spelled differently: ${spelled.map((f) => f.service).join(', ')} (the lines: -o json)`,
    );
  for (const f of findings) {
    if (f.id === 'rule-text-differs' && f.service) continue;
    if (f.id === 'rule-text-differs') {
      out.push(`info rule-text-differs  ${f.explanation} (the lines: -o json)`);
      continue;
    }
    out.push(`info ${f.id}${f.service ? `  ${f.service}` : ''}`, `  ${f.explanation}`);
    out.push(...nextLines(f, how, '  '));
  }
  return out;
}

/** "2 nodes", and where some hold a rule set of each family, how many of each family: a
 * dual-stack node's IPv4 and IPv6 rules are two drifts of one node. */
function nodesCompared(nodes: NodeDrift[]): string {
  const count = plural(new Set(nodes.map((n) => n.node)).size, 'node');
  const v6 = nodes.filter((n) => n.family === 'IPv6').length;
  if (v6 === 0) return count;
  return `${count} (${plural(nodes.length - v6, 'IPv4 rule set')}, ${plural(v6, 'IPv6 rule set')})`;
}

/** The drift of each node as text at `width` columns (none: unwrapped). */
export function driftText(
  { label, nodes, notCompared }: DriftAnswer,
  how: Invocation = {},
  width = Infinity,
): string {
  const out: Line[] = [];
  for (const n of nodes) {
    out.push(
      `node ${n.node}${n.family === 'IPv6' ? ' IPv6' : ''} (${label}, ${n.source}): ${plural(n.servicePorts, 'Service port')} compared with what ${n.cilium ? `Cilium's agent should hold ${ciliumCompared(n.cilium)}` : `kube-proxy ${comparedWith(n)}`}`,
    );
    const beside = n.ciliumBeside;
    if (beside)
      out.push(
        `  and (${beside.source}) ${plural(beside.servicePorts, 'Service port')} with what Cilium's agent beside it should hold for the kinds it serves ${ciliumCompared(beside)}: ${beside.replacement}`,
      );
    if (n.kubeProxy !== undefined) out.push(`  ${versionReadText(n.node, n.kubeProxy)}`);
    if (n.writtenBy) out.push(`  written by ${n.writtenBy}`);
    const serious = n.findings.filter((f) => severityOf(f) !== 'info');
    const info = n.findings.filter((f) => severityOf(f) === 'info');
    // where part of the node's state was not read, no drift is said of what was read only
    const blind = (n.notRead?.length ?? 0) > 0;
    out.push(
      n.drifted
        ? `  ${countsLine(n.findings)}`
        : blind
          ? '  no drift in what was read: the notes below say what was not'
          : `  no drift: ${n.cilium ? `${n.cilium.read === 'maps' ? 'its BPF maps hold' : 'the agent holds'} every frontend and backend the objects say` : `every Service port routes as kube-proxy would${n.ciliumBeside ? ", and Cilium's agent holds every frontend and backend the objects say of the kinds it serves" : ''}`}`,
    );
    out.push('');
    for (const f of serious)
      out.push(...indent(findingText(f, how, n.cilium !== undefined), '  '), '');
    if (info.length > 0) out.push(...indent(infoText(info, how), '  '), '');
    for (const f of [...(n.notes ?? []), ...(n.notRead ?? [])]) {
      const by = f.drift.component;
      out.push(
        `  note ${f.id}${f.service ? `  ${f.service}` : ''}${by ? `  (${COMPONENT[by]})` : ''}`,
        `    ${f.explanation}`,
      );
      out.push(...nextLines(f, how, '    '), '');
    }
  }
  // each node asked for and not compared, with why: its drift is not known, never "no drift"
  const left = byReason(notCompared.map((n) => ({ node: n.node, reason: n.why })));
  for (const g of left)
    out.push(
      `${plural(g.nodes.length, 'node')} not compared: ${namedFew(g.nodes)}`,
      `  ${g.reason}`,
      '',
    );
  const all = nodes.flatMap((n) => n.findings);
  const unread = new Set(notCompared.map((n) => n.node)).size;
  // a node read in part was compared on what was read: its "no drift" is that much only
  const partly = nodes.filter((n) => (n.notRead?.length ?? 0) > 0).length;
  // a Cilium listing cut short or eliding rows: no drift is known of what it lacks, which exits 2
  // as a dump cut short does, so the line says no drift of what was read only
  const cut = nodes.some((n) => (n.readInPart?.length ?? 0) > 0);
  const verdict = countsLine(all).replace(/no drift$/, cut ? 'no drift in what was read' : '$&');
  out.push(
    `${nodesCompared(nodes)}: ${verdict}${partly > 0 ? ` (${partly === nodes.length ? '' : `${partly} of them `}read in part: see the notes)` : ''}${unread > 0 ? `; ${plural(unread, 'node')} not compared` : ''}`,
  );
  return rendered(out, width).join('\n') + '\n'; // wrap sanitises what came from the node
}

const findingJson = (f: DriftFinding, how: Invocation) => ({
  id: f.id,
  ...(RENAMED_IDS[f.id] ? { aliases: RENAMED_IDS[f.id] } : {}),
  severity: severityOf(f),
  node: f.node,
  service: f.service ?? null,
  title: f.title,
  message: f.explanation,
  expected: f.drift.expected,
  actual: f.drift.actual,
  next: f.next ? shellLine(resolveNext(f.next, how)) : null,
  advice: f.advice ?? null,
  family: f.drift.family ?? 'IPv4',
  ...(f.drift.component ? { component: f.drift.component } : {}),
});

/** The document `drift -o json` prints (schema/drift.vN.json). */
export function driftDoc(
  { label, nodes, drifted, notCompared }: DriftAnswer,
  how: Invocation = {},
) {
  const all = nodes.flatMap((n) => n.findings);
  const c = counts(all);
  return {
    $schema: schemaId('drift', DRIFT_SCHEMA_VERSION),
    schemaVersion: DRIFT_SCHEMA_VERSION,
    source: label,
    nodes: nodes.map((n) => ({
      node: n.node,
      family: n.family ?? 'IPv4',
      source: n.source,
      servicePorts: n.servicePorts,
      ...(n.kubeProxy !== undefined ? { kubeProxy: n.kubeProxy } : {}),
      writtenBy: n.writtenBy ?? null,
      ...(n.releaseDisagrees !== undefined ? { releaseDisagrees: n.releaseDisagrees } : {}),
      tables: n.tables ?? ['nat', 'filter'],
      drift: n.drifted,
      // what of the node was not compared, as the exit code 2 and the text's notes say it
      ...(n.readInPart?.length ? { readInPart: n.readInPart } : {}),
      counts: counts(n.findings),
      // a Cilium node: what of its agent was read, and its settings with where each was read
      ...(n.cilium
        ? {
            cilium: {
              read: n.cilium.read,
              states: n.cilium.states,
              settings: n.cilium.settings ?? [],
            },
          }
        : {}),
      // kube-proxy's rules compared, and beside them the agent serving some kinds ahead of them
      ...(n.ciliumBeside
        ? {
            ciliumBeside: {
              source: n.ciliumBeside.source,
              replacement: n.ciliumBeside.replacement,
              servicePorts: n.ciliumBeside.servicePorts,
              read: n.ciliumBeside.read,
              states: n.ciliumBeside.states,
              settings: n.ciliumBeside.settings ?? [],
            },
          }
        : {}),
    })),
    findings: all.map((f) => findingJson(f, how)),
    notes: nodes
      .flatMap((n) => [...(n.notes ?? []), ...(n.notRead ?? [])])
      .map((f) => findingJson(f, how)),
    summary: { ...c, drift: drifted },
    notCompared: notCompared.map((n) => ({ node: n.node, family: n.family ?? null, why: n.why })),
  };
}

export const driftJson = (answer: DriftAnswer, how: Invocation = {}): string =>
  jsonText(driftDoc(answer, how));

/** What of Cilium's agent a node's drift compared, in a person's words. */
function ciliumCompared({ read, states }: NonNullable<NodeDrift['cilium']>): string {
  if (read === 'maps')
    return "(frontends and backends, as its BPF maps hold them; the agent's own table was not read)";
  return `(frontends, backends${states ? ' and their states' : ' without their states (not read)'}${read === 'both' ? ', and its BPF maps against its table' : '; its BPF maps were not read'})`;
}

/** What a node's drift compared, in a person's words. */
function comparedWith({ mode, tables = [], release }: NodeDrift): string {
  const who = release ? `v1.${release.minor} ` : '';
  if (mode === 'nftables')
    return `${who}would write in nftables mode (entries, endpoints, no-endpoint rejects)`;
  if (mode === 'ipvs') {
    const rules = ['nat', 'filter'].filter((t) => tables.includes(t));
    return `${who}would program in IPVS mode (virtual servers, real servers${tables.includes('kube-ipvs0') ? ', kube-ipvs0' : ''}${tables.includes('ipset') ? ", the ipsets' entries" : '; its ipsets were not read'}${rules.length === 2 ? ', its iptables rules' : rules.length === 1 ? `, its iptables ${rules[0]} rules` : '; its iptables rules were not read'}${tables.includes('kube-ipvs0') ? '' : "; kube-ipvs0's addresses were not read"})`;
  }
  return `${who}would write${tables.length > 0 && !tables.includes('filter') ? ' (nat table only: the dump has no filter table)' : ''}`;
}
