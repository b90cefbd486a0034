// The Diagnosis screen: the Report's steps with their marks on the left, the selected step's
// findings (explanation, evidence, next action) on the right. It renders the Report as it is.
import { Box } from 'ink';
import {
  shownStatus,
  shownStepStatus,
  type Finding,
  type Report,
  type Shown,
  type Step,
} from '../../core/model.js';
import { Mark } from '../components/mark.js';
import { Pane, innerLines } from '../components/pane.js';
import { T } from '../components/text.js';
import { useWindow } from '../components/window.js';
import { cursorKey, cursorOf, type State, type View } from '../state.js';
import type { NotRead } from '../../core/facts/not-read.js';
import { evidenceText, moreText, shownEvidence } from '../../core/findings/evidence.js';
import { shellWords } from '../../core/findings/next-command.js';
import { MARK_MEANING } from '../../output/marks.js';
import { wrapCommand } from '../../output/wrap.js';
import type { Tone } from '../../output/tones.js';
import { wrap } from '../wrap.js';

export interface FindingLine {
  text: string;
  tone: Tone;
  /** The finding this line belongs to (-1: the step's own lines). */
  finding: number;
  /** The finding's first line: carries its mark. */
  status?: Shown;
  /** Information, no verdict: marked "i" as text output marks it. */
  info?: boolean;
}

export interface DiagModel {
  steps: Step[];
  step: number;
  /** Where the findings cursor is until it is moved: the step's first problem. */
  start: number;
  lines: FindingLine[];
  /** Lines the cursor of the right pane stops at: each finding's start, then every page. */
  stops: number[];
  stop: number;
  /** The finding under the cursor of the right pane. */
  finding: Finding | undefined;
  leftWidth: number;
  rightWidth: number;
  height: number;
  /** What the run lost: the Steps pane says the report is partial. */
  notRead: NotRead[];
  /** The selected finding's next command, whole at the screen's width below the panes (no
   * border in its lines: a terminal copy gives it back as one command, " \\" and all). */
  next: string[];
  /** Rows kept below the panes for it: the most any finding of the step needs. */
  nextRows: number;
}

/** What the Diagnosis screen says where no Service is diagnosed (`kdebug rules`). */
const NO_REPORT =
  'These rules were read without a Service to diagnose. The steps need one: kdebug svc NAME (live, or with --snapshot DIR). Here the Rules screen (:rules) shows the Service trees, :trace walks a packet, and / searches.';

/** The index of the step to show first: the report's first problem, else none (-1). */
export function firstProblem(report: Report | undefined): number {
  return report?.firstProblem?.step ?? -1;
}

/** The right pane's text for one step, wrapped to `width`. */
export function stepLines(step: Step | undefined, width: number): FindingLine[] {
  if (!step) return [];
  const out: FindingLine[] = [];
  const add = (text: string, tone: Tone, finding: number, lead = '', indent = lead) =>
    wrap(text, width - lead.length, indent.slice(lead.length)).forEach((t) =>
      out.push({ text: lead + t, tone, finding }),
    );
  add(`${step.title}: ${MARK_MEANING[shownStepStatus(step)]}`, 'title', -1);
  if (step.findings.length === 0)
    add(
      step.status === 'pending' ? 'waiting for the facts this step reads' : 'nothing to report',
      'muted',
      -1,
    );
  step.findings.forEach((f, i) => {
    out.push({ text: '', tone: 'text', finding: i });
    const first = out.length;
    // the first line carries the mark: two columns less
    wrap(f.title, width - 2).forEach((t, k) =>
      out.push({
        text: k === 0 ? t : `  ${t}`,
        tone: f.status === 'fail' ? 'bad' : 'text',
        finding: i,
      }),
    );
    out[first]!.status = shownStatus(f);
    if (f.info) out[first]!.info = true;
    const where = [f.id, f.node ? `node ${f.node}` : '', f.service ?? ''].filter(Boolean);
    add(where.join('  '), 'muted', i, '  ');
    const explanation = [f.explanation, f.advice].filter(Boolean).join(' ');
    if (explanation) add(explanation, 'text', i, '  ');
    if (f.evidence.length > 0) {
      add('Evidence:', 'accent', i, '  ');
      const { shown, more } = shownEvidence(f.evidence);
      for (const e of shown)
        for (const l of evidenceText(e).split('\n')) add(l, 'muted', i, '    ', '      ');
      if (more > 0) add(moreText(more), 'muted', i, '    ');
    }
    // the command itself goes below the panes, where a copy of its lines runs as printed
    if (f.next) add('Next: shown below the panes when selected', 'muted', i, '  ');
  });
  return out;
}

/** A command's lines at the screen's width: cut only where a trailing " \\" continues it. */
const commandLines = (f: Finding | undefined, width: number): string[] =>
  f?.next ? wrapCommand(shellWords(f.next), width, '') : [];

/** Cursor stops: a finding's first line, and further pages of a finding taller than a page. */
function stopsOf(lines: FindingLine[], page: number): number[] {
  const stops: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.status !== undefined) stops.push(i);
    else if (i > 0 && stops.length > 0 && i - stops[stops.length - 1]! >= page) stops.push(i);
  }
  return stops.length > 0 ? stops : [0];
}

export function diagModel(
  s: State,
  report: Report | undefined,
  width: number,
  height: number,
): DiagModel {
  const steps = report?.steps ?? [];
  const leftWidth = Math.min(34, Math.max(24, Math.floor(width * 0.36)));
  const rightWidth = width - leftWidth;
  const step = Math.min(cursorOf(s, 'diag', 0), Math.max(0, steps.length - 1));
  // the rows below the panes stay put while the cursor moves within a step: its tallest command
  const tallest = Math.max(
    0,
    ...(steps[step]?.findings ?? []).map((f) => commandLines(f, width).length),
  );
  const nextRows = tallest > 0 ? Math.min(tallest + 1, Math.floor(height / 2)) : 0;
  height -= nextRows;
  // borders take two columns, the selection gutter one
  const lines = stepLines(steps[step], rightWidth - 3);
  const stops = stopsOf(lines, innerLines(height));
  // until moved, the findings pane starts at the step's first failing, else warning, finding
  const findings = steps[step]?.findings ?? [];
  const worst = ['fail', 'warn'].map((st) => findings.findIndex((f) => f.status === st));
  const problem = worst.find((i) => i >= 0) ?? -1;
  const start = Math.max(
    0,
    stops.findIndex((at) => lines[at]?.finding === problem),
  );
  const moved = s.cursor[cursorKey('diag', 1)];
  const stop = Math.min(moved ?? start, stops.length - 1);
  const at = lines[stops[stop]!];
  const finding = at && at.finding >= 0 ? steps[step]?.findings[at.finding] : undefined;
  const notRead = report?.notRead ?? [];
  return {
    steps,
    step,
    start,
    lines,
    stops,
    stop,
    finding,
    leftWidth,
    rightWidth,
    height,
    notRead,
    next: commandLines(finding, width),
    nextRows,
  };
}

/** The command's lines that fit below the panes; where it does not fit whole, none of it is
 * shown cut (a copy would run a part): what to do instead. */
function shownNext(m: DiagModel): { text: string; cut?: boolean }[] {
  if (m.next.length <= m.nextRows - 1) return m.next.map((text) => ({ text }));
  return [
    {
      text: `(${m.next.length} lines: a taller or wider terminal shows the whole command)`,
      cut: true,
    },
  ];
}

export function diagView(m: DiagModel): View {
  return {
    lists: [m.steps.length, m.stops.length],
    page: innerLines(m.height),
    starts: [0, m.start],
  };
}

export function Diagnosis({
  model: m,
  state,
  tick,
}: {
  model: DiagModel;
  state: State;
  tick: number;
}) {
  const page = innerLines(m.height);
  const stepStart = useWindow(m.step, m.steps.length, page);
  const focus = state.pane.diag;
  // the first stop shows the step's own title line too
  const top = m.stop === 0 ? 0 : Math.min(m.stops[m.stop]!, Math.max(0, m.lines.length - page));
  const selectedFinding = focus === 1 ? (m.lines[m.stops[m.stop]!]?.finding ?? -1) : -1;
  const problems = m.steps.filter((s) => s.status === 'fail').length;
  const notRead = m.notRead.length;
  return (
    <Box flexDirection="column" width={m.leftWidth + m.rightWidth}>
      <Box width={m.leftWidth + m.rightWidth}>
        <Pane
          title="Steps"
          info={[
            problems > 0 ? `${problems} failed` : '',
            notRead > 0 ? `partial: ${notRead} not read` : '',
          ]
            .filter(Boolean)
            .join(', ')}
          scroll={{ top: stepStart, shown: page, total: m.steps.length }}
          focused={focus === 0}
          width={m.leftWidth}
          height={m.height}
        >
          {m.steps.length === 0 ? <T tone="muted">no Service diagnosed</T> : null}
          {m.steps.slice(stepStart, stepStart + page).map((st, i) => {
            const index = stepStart + i;
            const selected = index === m.step;
            return (
              <T key={st.id} selected={selected && focus === 0}>
                {selected ? '›' : ' '}
                <Mark status={shownStepStatus(st)} tick={tick} /> {String(index + 1).padStart(2)}{' '}
                {st.title}
              </T>
            );
          })}
        </Pane>
        <Pane
          title="Findings"
          info={focus === 0 ? 'enter: open' : 'enter: its rules'}
          scroll={{ top, shown: page, total: m.lines.length }}
          focused={focus === 1}
          width={m.rightWidth}
          height={m.height}
        >
          {m.steps.length === 0
            ? wrap(NO_REPORT, m.rightWidth - 3).map((l, i) => (
                <T key={i} tone="muted">
                  {l}
                </T>
              ))
            : null}
          {m.lines.slice(top, top + page).map((l, i) => (
            <T
              key={top + i}
              tone={l.tone}
              selected={l.status !== undefined && l.finding === selectedFinding}
            >
              {l.status !== undefined && l.finding === selectedFinding ? '›' : ' '}
              {l.status !== undefined ? (
                <>{l.info ? <T tone="muted">i</T> : <Mark status={l.status} tick={tick} />} </>
              ) : null}
              {l.status !== undefined ? l.text : l.text || ' '}
            </T>
          ))}
        </Pane>
      </Box>
      {m.nextRows > 0 ? (
        <Box flexDirection="column" height={m.nextRows}>
          <T tone="muted">{m.next.length > 0 ? 'Next:' : ' '}</T>
          {shownNext(m).map((l, i) => (
            <T key={i} tone={l.cut ? 'muted' : 'key'}>
              {l.text}
            </T>
          ))}
        </Box>
      ) : null}
    </Box>
  );
}
