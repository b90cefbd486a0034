// `kdebug svc -o json`: the Report as a stable document. Every finding carries every field
// (`next` is null when there is none) so scripts need no guards. Documented in the README.
import {
  RENAMED_IDS,
  isUnobserved,
  shownReportStatus,
  shownStepStatus,
  type Finding,
  type Report,
} from '../core/model.js';
import { shellLine } from '../core/findings/next-command.js';
import { jsonText } from '../core/sanitize.js';
import { schemaId } from './schema-id.js';

function findingJson(f: Finding) {
  return {
    id: f.id,
    ...(RENAMED_IDS[f.id] ? { aliases: RENAMED_IDS[f.id] } : {}),
    status: f.status,
    title: f.title,
    explanation: f.explanation,
    evidence: f.evidence,
    next: f.next ? shellLine(f.next) : null,
    advice: f.advice ?? null,
    ...(f.node ? { node: f.node } : {}),
    ...(f.nodes ? { nodes: f.nodes } : {}),
    ...(f.service ? { service: f.service } : {}),
    ...(f.info ? { info: true } : {}),
    ...(isUnobserved(f) ? { observed: false } : {}),
  };
}

/** The document `svc -o json` prints (schema/report.vN.json). */
export function reportDoc(report: Report) {
  return {
    $schema: schemaId('report', report.schemaVersion),
    schemaVersion: report.schemaVersion,
    target: report.target,
    context: report.context ?? null,
    status: report.status ?? null,
    // the whole answer's mark: pass only where every step looked everywhere it speaks for
    verdict: shownReportStatus(report) ?? null,
    unobserved: report.unobserved ?? [],
    partial: report.notRead.length > 0,
    notRead: report.notRead,
    service: report.service ?? null,
    steps: report.steps.map((s) => ({
      id: s.id,
      title: s.title,
      status: s.status,
      // passed where it looked, and could not look everywhere it speaks for
      ...(shownStepStatus(s) === 'partial' ? { partial: true } : {}),
      findings: s.findings.map(findingJson),
    })),
    // where Cilium replaces kube-proxy: each node's agent settings, with where each was read
    ...(report.nodes && report.nodes.length > 0 ? { nodes: report.nodes } : {}),
  };
}

export const reportJson = (report: Report): string => jsonText(reportDoc(report));
