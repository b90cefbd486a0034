// `kdebug svc` as text: one line per step with its mark, the failing and warning steps expanded
// with their explanation, evidence and next action, then one line saying what to do first.
// Fits 80 columns; commands are wrapped with shell continuations so they still paste.
import {
  isUnobserved,
  MIXED_PROXY_MODES,
  shownStatus,
  shownStepStatus,
  type Finding,
  type Report,
  type Step,
} from '../core/model.js';
import { evidenceText, moreText, shownEvidence } from '../core/findings/evidence.js';
import { shellWords } from '../core/findings/next-command.js';
import { sanitize } from '../core/sanitize.js';
import { MARK } from './marks.js';
import { palette, type Palette } from './palette.js';
import { wrap, wrapCommand } from './wrap.js';

export { wrap, wrapCommand } from './wrap.js';

export interface TextOptions {
  color?: boolean;
  width?: number;
  /** Cut a step's summary to one line (a terminal); else wrap it (a file keeps every word). */
  truncate?: boolean;
  /** Expand every finding, not only the failing ones. */
  verbose?: boolean;
  /** Where the facts came from, for the header ("snapshot snapshots/nginx-svc"). */
  source?: string;
}

function expanded(f: Finding, p: Palette, width: number): string[] {
  const mark = f.info ? 'i' : MARK[shownStatus(f)];
  const out = wrap(`${mark} ${f.title}`, width, '     ', '       ');
  out[0] = `     ${f.info ? p.muted(mark) : p.status(f.status, mark)}${out[0]!.slice(6)}`;
  out.push(`       ${p.muted(`[${f.id}]`)}`);
  const explanation = [f.explanation, f.advice].filter(Boolean).join(' ');
  if (explanation) out.push(...wrap(explanation, width, '       '));
  if (f.evidence.length > 0) {
    out.push(`       ${p.muted('evidence:')}`);
    const { shown, more } = shownEvidence(f.evidence);
    for (const e of shown) {
      // a drift's unchanged line lines up with the - and + lines' text
      const lines =
        e.diff === 'same'
          ? wrap(e.text, width, '           ', '           ')
          : wrap(evidenceText(e), width, '         ', '           ');
      out.push(...(e.diff ? lines.map((l) => p.diff(e.diff!, l)) : lines));
    }
    if (more > 0) out.push(`         ${p.muted(moreText(more))}`);
  }
  if (f.next) {
    out.push(`       ${p.muted('next:')}`);
    out.push(...wrapCommand(shellWords(f.next), width, '         ').map((l) => p.command(l)));
  }
  return out;
}

/** Below this width the summary column (at 23) leaves too little room: it goes under its step. */
const NARROW = 60;

function stepLines(
  step: Step,
  n: number,
  p: Palette,
  o: Required<Pick<TextOptions, 'width' | 'verbose' | 'truncate'>>,
): string[] {
  const head = step.headline;
  const label = `${String(n).padStart(2)} ${step.title.padEnd(15)}`;
  const more = step.findings.filter(
    (f) => f !== head && (f.status === 'fail' || f.status === 'warn'),
  ).length;
  let summary = head ? sanitize(head.title) : '';
  if (more > 0) summary += ` (+${more} more)`;
  const narrow = o.width < NARROW;
  const room = narrow ? o.width - 4 : o.width - 4 - label.length;
  // a pass where it looked says where it could not look, on the same line; a terminal's line
  // cut to its width would lose it: there it goes under the step, a line of its own
  const candidate = blindInSummary(step);
  const tail = candidate ? `; ${unobservedLine(candidate, o.verbose)}` : '';
  const blind = o.truncate && (summary + tail).length > room ? undefined : candidate;
  if (blind) summary += tail;
  const findings = findingLines(step, p, o, blind);
  const mark = ` ${p.status(step.status, MARK[shownStepStatus(step)])} `;
  // too narrow for the summary column: the summary goes under its step, indented as one
  if (narrow) {
    const under = wrap(summary, o.width, '    ');
    const lines = o.truncate ? under.slice(0, 1) : under;
    if (o.truncate && under.length > 1) lines[0] = `${lines[0]!.slice(0, o.width - 1)}…`;
    return [`${mark}${p.heading(label.trimEnd())}`, ...lines, ...findings];
  }
  if (o.truncate && summary.length > room) summary = `${summary.slice(0, room - 1)}…`;
  const [first = '', ...rest] = wrap(summary, o.width, ' '.repeat(4 + label.length));
  return [`${mark}${p.heading(label)} ${first.trimStart()}`, ...rest, ...findings];
}

/** What a step could not observe, in one line: its title, and where the default view does not
 * expand it, that --verbose says why (its reason is in the finding, as JSON and the TUI show). */
function unobservedLine(f: Finding, verbose: boolean): string {
  const why = !verbose && (f.explanation || f.evidence.length > 0);
  return `${sanitize(f.title)}${why ? ' (--verbose explains)' : ''}`;
}

/** What a partial step could not observe that its summary line may say (the first of them). */
function blindInSummary(step: Step): Finding | undefined {
  if (shownStepStatus(step) !== 'partial') return undefined;
  const blind = step.findings.find(isUnobserved);
  return blind === step.headline ? undefined : blind;
}

/** The findings shown under a step: what a partial step could not observe (but `inSummary`, the
 * one its summary line says), the folded explanations, and every failing or warning one expanded. */
function findingLines(
  step: Step,
  p: Palette,
  o: Required<Pick<TextOptions, 'width' | 'verbose' | 'truncate'>>,
  inSummary: Finding | undefined,
): string[] {
  const out: string[] = [];
  const partial = shownStepStatus(step) === 'partial';
  // a step that found a problem says too what it could not observe: the problem is not all
  const judged = step.status === 'fail' || step.status === 'warn';
  for (const f of step.findings) {
    // a partial step says, in a line each, what it could not observe (--verbose: why)
    if ((partial || judged) && isUnobserved(f) && !o.verbose) {
      // the one the summary line says already is not said twice
      if (f !== inSummary)
        out.push(...wrap(`? ${unobservedLine(f, o.verbose)}`, o.width, '     ', '       '));
      continue;
    }
    if (f.info && f.folded && !o.verbose) {
      const at = out.length;
      out.push(...wrap(`i ${f.title} (--verbose explains)`, o.width, '     ', '       '));
      out[at] = out[at]!.replace(/^( {5})i/, `$1${p.muted('i')}`);
      continue;
    }
    const show = o.verbose || f.info || f.status === 'fail' || f.status === 'warn';
    if (show && f.status !== 'pending') out.push(...expanded(f, p, o.width), '');
  }
  return out;
}

/** Steps 2..N of a missing Service all say "needs the Service": one line says it for them. */
function needsService(steps: Step[], from: number): number {
  let k = from;
  while (k < steps.length && steps[k]!.findings.every((f) => f.id === 'needs-service')) k++;
  return k;
}

function conclusion(report: Report, p: Palette, width: number): string[] {
  // the verdict already says what was not read, and why
  if (nothingChecked(report)?.next) return verdict(report, p, width);
  return [...verdict(report, p, width), ...unobserved(report, width)];
}

function verdict(report: Report, p: Palette, width: number): string[] {
  const problem = report.firstProblem;
  if (problem) {
    const { status, finding: f } = problem;
    const step = report.steps[problem.step]!;
    const word = status === 'fail' ? 'Problem' : 'Warning';
    return [
      ...wrap(
        `${word} at step ${problem.step + 1} (${step.title}): ${f.title} [${f.id}]`,
        width,
        '',
        '  ',
      ).map((l) => p.status(status, l)),
      ...(f.next
        ? wrapCommand(['Next:', ...shellWords(f.next)], width, '').map((l) => p.command(l))
        : []),
    ];
  }
  if (report.pending) return wrap('Still collecting: some steps are pending.', width, '', '  ');
  const unread = nothingChecked(report);
  if (unread?.next)
    return [
      ...wrap(`Nothing checked: ${unread.title}. ${unread.explanation ?? ''}`, width, '', '  '),
      ...wrapCommand(['Next:', ...shellWords(unread.next)], width, '').map((l) => p.command(l)),
    ];
  return wrap('No problem found in the steps kdebug could check.', width, '', '  ').map((l) =>
    p.status('pass', l),
  );
}

/** The Service step's finding when no Service was read (a snapshot taken for another one) and it
 * says what to run instead: nothing was checked, so there is no "no problem" to say. */
const nothingChecked = (report: Report) =>
  report.service || report.firstProblem ? undefined : report.steps[0]?.headline;

/** What this run did not observe, whatever it concluded (JSON's `unobserved`). */
function unobserved(report: Report, width: number): string[] {
  const blind = report.unobserved ?? [];
  if (blind.length === 0) return [];
  const what = `${blind.length} ${blind.length === 1 ? 'check' : 'checks'} not observed`;
  return wrap(`${what}: ${fewOf(blind)}`, width, '', '  ');
}

/** The first few items of a summary line, then "and N more (--json lists them all)": a summary
 * that stays a few lines on a cluster of thousands of nodes. */
const FEW = 5;
const fewOf = (items: string[]) =>
  items.length <= FEW
    ? items.join('; ')
    : `${items.slice(0, FEW).join('; ')}; and ${items.length - FEW} more (--json lists them all)`;

export function reportText(report: Report, o: TextOptions = {}): string {
  const p = palette(o.color ?? false);
  const width = o.width ?? 80;
  const opts = { width, verbose: o.verbose ?? false, truncate: o.truncate ?? false };
  const { namespace, service, port } = report.target;
  const out = [
    // the names come from the command line, a snapshot's meta.json or its objects
    p.heading(
      sanitize(`kdebug svc ${namespace}/${service}${port !== undefined ? `:${port}` : ''}`),
    ),
  ];
  const from = [report.context ? `context ${report.context}` : '', o.source ?? ''].filter(Boolean);
  if (from.length > 0) out.push(...wrap(from.join(', '), width, '', '  '));
  const s = report.service;
  if (s) {
    const parts = [
      s.type,
      ...(s.externalName
        ? [`-> ${s.externalName}`]
        : s.clusterIP
          ? [s.clusterIP === 'None' ? 'headless' : (s.clusterIPs ?? [s.clusterIP]).join(', ')]
          : []),
      ...s.ports,
      ...(s.proxyMode
        ? [`kube-proxy ${s.proxyMode === MIXED_PROXY_MODES ? 'modes mixed' : s.proxyMode}`]
        : []),
    ];
    out.push(...wrap(parts.join('  '), width, '', '  '));
  }
  out.push('');
  for (let i = 0; i < report.steps.length; i++) {
    const end = needsService(report.steps, i);
    if (end - i > 1) {
      const span = `${i + 1}-${end}`.padStart(2);
      out.push(` ${p.status('skip', MARK.skip)} ${p.heading(span.padEnd(18))} need the Service`);
      i = end - 1;
    } else out.push(...stepLines(report.steps[i]!, i + 1, p, opts));
  }
  if (out[out.length - 1] !== '') out.push('');
  out.push(...conclusion(report, p, width));
  if (report.notRead.length > 0 && !nothingChecked(report)?.next)
    out.push(
      ...wrap(
        `Partial: the run lost ${report.notRead.length === 1 ? 'one read' : `${report.notRead.length} reads`}, so the steps hold for what was read only: ${fewOf(report.notRead.map((n) => `${n.what} (${n.why})`))}`,
        width,
        '',
        '  ',
      ).map((l) => p.status('warn', l)),
    );
  return out.join('\n') + '\n';
}
