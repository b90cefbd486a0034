// The short text each tool returns beside its JSON: what an assistant says first, in a line or
// a few; the JSON holds the evidence.
import { countsVerdict, type driftDoc } from '../output/drift.js';
import { count } from '../core/checks/check.js';
import type { reportDoc } from '../output/json.js';
import type { rulesDoc, searchDoc } from '../output/rules.js';
import { percent } from '../core/model.js';
import { namedFew } from '../core/nodes/access.js';
import type { traceDoc } from '../output/trace.js';

type Report = ReturnType<typeof reportDoc>;

export function svcSummary(r: Report): string {
  const name = `${r.target.namespace}/${r.target.service}`;
  const steps = r.steps;
  const worst = steps.find((s) => s.status === 'fail') ?? steps.find((s) => s.status === 'warn');
  if (!worst)
    return r.verdict === 'partial'
      ? `${name}: partial; ${steps.length} steps, none failing as far as they looked${unseen(r)}`
      : `${name}: ${r.status ?? 'no status'}; ${steps.length} steps, none failing${unseen(r)}`;
  const f = worst.findings.find((x) => x.status === worst.status) ?? worst.findings[0];
  const next = f?.next ? `\nnext: ${f.next}` : '';
  return `${name}: ${worst.status} at step ${worst.id}${f ? `: ${f.id}: ${f.title}` : ''}${next}${unseen(r)}`;
}

/** What the answer could not see, said beside its mark: a pass is one only as far as it looked. */
function unseen(r: Report): string {
  if (r.verdict !== 'partial') return '';
  const parts = [
    ...(r.unobserved.length > 0 ? [`${r.unobserved.length} checks not observed`] : []),
    ...(r.notRead.length > 0 ? [`${r.notRead.length} reads lost`] : []),
  ];
  const first = [...r.unobserved, ...r.notRead.map((n) => `${n.what}: ${n.why}`)].slice(0, 3);
  const more = r.unobserved.length + r.notRead.length - first.length;
  return `\npartial: ${parts.join(', ') || 'some steps could not look everywhere'}${first.map((x) => `\n  ${x}`).join('')}${more > 0 ? `\n  and ${more} more` : ''}`;
}

export function rulesSummary(r: ReturnType<typeof rulesDoc>): string {
  const warnings = r.warnings.length ? `, ${r.warnings.length} warnings` : '';
  return `${r.source} (${r.mode}): ${r.services.length} Service ports, ${r.orphans.length} orphan chains${warnings}`;
}

export function searchSummary(s: ReturnType<typeof searchDoc>): string {
  const best = s.hits.slice(0, 5).map((h) => `  ${h.kind} ${h.text}`);
  return [`${s.hits.length} matches for "${s.query}", best first:`, ...best].join('\n');
}

export function driftSummary(d: ReturnType<typeof driftDoc>): string {
  const c = d.summary;
  const inPart = d.nodes.filter((n) => n.readInPart !== undefined).map((n) => n.node);
  const left = [
    ...(d.notCompared.length > 0
      ? [
          `${d.notCompared.length} not compared (${namedFew(d.notCompared.map((n) => `${n.node}: ${n.why}`))})`,
        ]
      : []),
    ...(inPart.length > 0 ? [`compared in part on ${namedFew(inPart)}`] : []),
  ];
  return `${count(d.nodes.length, 'node')} compared: ${countsVerdict(c)}${left.length > 0 ? `; ${left.join('; ')}` : ''}`;
}

export function traceSummary(t: ReturnType<typeof traceDoc>): string {
  const p = t.packet;
  const head = `${p.protocol} ${p.src} -> ${p.dst}${p.dport !== null ? `:${p.dport}` : ''} on node ${t.node}`;
  const outcomes = t.outcomes.map(
    (o) =>
      `  ${o.probability === null ? '?' : percent(o.probability)} ${'fateKnown' in o ? 'not known past the cut' : `${o.verdict}${o.destination && o.destination !== o.verdict ? ` to ${o.destination}` : ''}`}`,
  );
  return [`${head}: ${t.outcomes.length} outcome(s)`, ...outcomes].join('\n');
}
