// The Drift screen: per node, what kube-proxy should have written against what the node has,
// grouped by Service port, each finding with its id; missing lines in one colour, unexpected in
// another (and a - / + prefix, so the difference reads without colour too).
import { Box } from 'ink';
import {
  diffLines,
  severityOf,
  type DriftFinding,
  type NodeDrift,
} from '../../core/dataplane/drift.js';
import type { Severity } from '../../core/model.js';
import { resolveNext, shellWords, type Invocation } from '../../core/findings/next-command.js';
import { wrapCommand } from '../../output/wrap.js';
import { Pane, innerLines } from '../components/pane.js';
import { S, T } from '../components/text.js';
import type { NodeData } from '../data.js';
import { cursorOf, type State, type View } from '../state.js';
import type { Tone } from '../../output/tones.js';
import { wrap } from '../wrap.js';

export interface DriftLine {
  text: string;
  tone: Tone;
  /** Index of the finding this line belongs to; -1 for headings. */
  finding: number;
  /** The finding's first line. */
  head?: boolean;
}

export interface DriftModel {
  node: NodeData | undefined;
  nodeIndex: number;
  nodeCount: number;
  drift: NodeDrift | { error: string } | undefined;
  findings: DriftFinding[];
  lines: DriftLine[];
  /** Line of each finding's head: where the cursor stops. */
  stops: number[];
  cursor: number;
  width: number;
  height: number;
}

const SEVERITY_TONE: Record<Severity, Tone> = { error: 'bad', warning: 'warn', info: 'muted' };
const SEVERITY_MARK: Record<Severity, string> = { error: '✗', warning: '!', info: 'i' };

/** Findings grouped by Service port (node-wide ones last), as wrapped lines. */
export function driftLines(findings: DriftFinding[], width: number, how?: Invocation): DriftLine[] {
  const out: DriftLine[] = [];
  const add = (text: string, tone: Tone, finding: number, lead = '', indent = lead) =>
    wrap(text, width - lead.length, indent.slice(lead.length)).forEach((t) =>
      out.push({ text: lead + t, tone, finding }),
    );
  const groups = new Map<string, number[]>();
  findings.forEach((f, i) => {
    const key = f.service ?? '';
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  const keys = [...groups.keys()].sort((a, b) =>
    a === '' ? 1 : b === '' ? -1 : a.localeCompare(b),
  );
  for (const key of keys) {
    if (out.length > 0) out.push({ text: '', tone: 'text', finding: -1 });
    add(key || 'node-wide', 'title', -1);
    for (const i of groups.get(key)!) {
      const f = findings[i]!;
      const head = out.length;
      add(
        `${SEVERITY_MARK[severityOf(f)]} ${f.id}  ${f.title}`,
        SEVERITY_TONE[severityOf(f)],
        i,
        '',
        '    ',
      );
      out[head]!.head = true;
      if (f.explanation) add(f.explanation, 'text', i, '    ');
      for (const d of diffLines(f.drift)) {
        const [mark, tone]: [string, Tone] =
          d.kind === 'missing'
            ? ['- ', 'missing']
            : d.kind === 'unexpected'
              ? ['+ ', 'unexpected']
              : ['  ', 'muted'];
        add(mark + d.line, tone, i, '    ', '        ');
      }
      if (f.advice) add(f.advice, 'text', i, '    ');
      if (f.next)
        for (const l of wrapCommand(
          ['Next:', ...shellWords(resolveNext(f.next, how))],
          width - 4,
          '',
        ))
          out.push({ text: `    ${l}`, tone: 'key', finding: i });
    }
  }
  return out;
}

export function driftModel(
  s: State,
  nodes: NodeData[],
  width: number,
  height: number,
  how?: Invocation,
): DriftModel {
  const nodeIndex = Math.min(s.node.drift, Math.max(0, nodes.length - 1));
  const node = nodes[nodeIndex];
  const drift = node?.drift();
  const findings = drift && 'findings' in drift ? drift.findings : [];
  // borders take two columns, the selection gutter one
  const found = driftLines(findings, width - 3, how);
  // beside findings, what was not read of the node's state is said first: nothing is said of it
  const unread = found.length > 0 && drift && 'findings' in drift ? (drift.notRead ?? []) : [];
  const said = (lead: string, tone: Tone) => (f: DriftFinding) =>
    wrap(`${lead}: ${f.explanation}`, width - 3, '  ').map((text) => ({ text, tone, finding: -1 }));
  // what the node does as designed, or its agent's configuration, is said last, as drift says it
  const notes = drift && 'findings' in drift ? (drift.notes ?? []) : [];
  const lines: DriftLine[] = [
    ...unread.flatMap(said('not read', 'warn')),
    ...(unread.length > 0 ? [{ text: '', tone: 'text' as Tone, finding: -1 }] : []),
    ...found,
    ...(found.length > 0 && notes.length > 0
      ? [{ text: '', tone: 'text' as Tone, finding: -1 }]
      : []),
    ...notes.flatMap(said('note', 'muted')),
  ];
  const stops = lines.flatMap((l, i) => (l.head ? [i] : []));
  const cursor = Math.min(cursorOf(s, 'drift', 0), Math.max(0, stops.length - 1));
  return {
    node,
    nodeIndex,
    nodeCount: nodes.length,
    drift,
    findings,
    lines,
    stops,
    cursor,
    width,
    height,
  };
}

export function driftView(m: DriftModel): View {
  return { lists: [m.stops.length], page: innerLines(m.height) - 1, nodes: m.nodeCount };
}

/** The finding under the cursor. */
export const driftFinding = (m: DriftModel) =>
  m.findings[m.lines[m.stops[m.cursor] ?? -1]?.finding ?? -1];

export function Drift({ model: m, reading }: { model: DriftModel; reading?: boolean }) {
  const page = innerLines(m.height) - 1; // the legend takes a line
  const at = m.stops[m.cursor] ?? 0;
  // the finding's group heading stays in view when there is room
  const top = Math.max(0, Math.min(m.cursor === 0 ? 0 : at - 1, m.lines.length - page));
  const selected = m.lines[at]?.finding ?? -1;
  const errors = m.findings.filter((f) => severityOf(f) !== 'info').length;
  const info = [
    m.node && m.nodeCount > 1
      ? `${m.node.label} (${m.nodeIndex + 1}/${m.nodeCount}, n/p)`
      : m.node?.label,
  ]
    .filter(Boolean)
    .join('  ');
  const unread = m.drift && 'findings' in m.drift ? (m.drift.notRead ?? []) : [];
  const shown = m.lines.slice(top, top + page).map((l, i) => (
    <T key={top + i} tone={l.tone} selected={l.head && l.finding === selected}>
      {l.head && l.finding === selected ? '›' : ' '}
      {l.text || ' '}
    </T>
  ));
  let body;
  if (!m.drift) body = <T tone="muted">{reading ? 'reading the rules…' : 'no rules recorded'}</T>;
  else if ('error' in m.drift)
    body = (
      <T tone="warn" wrap="wrap">
        {m.drift.error}
      </T>
    );
  else if (m.findings.length === 0 && unread.length > 0)
    // part of the node's state not read: no drift is said of what was read only; then the notes
    body = [
      <T key="none" tone="warn" wrap="wrap">
        no drift in what was read on {m.drift.node}: {unread.map((f) => f.explanation).join(' ')}
      </T>,
      ...shown,
    ];
  else if (m.findings.length === 0)
    body = [
      <T key="none" tone="ok">
        no drift: the rules on {m.drift.node} are what kube-proxy writes for the{' '}
        {m.drift.servicePorts} Service ports
      </T>,
      ...shown,
    ];
  else body = shown;
  return (
    <Box flexDirection="column" width={m.width}>
      <Pane
        title="Drift"
        info={info}
        scroll={{ top, shown: page, total: m.lines.length }}
        focused
        height={m.height}
        width={m.width}
      >
        <T>
          <S tone="muted">{`${errors} to fix  `}</S>
          <S tone="missing">- missing (expected, not on the node)</S>
          {'  '}
          <S tone="unexpected">+ unexpected</S>
        </T>
        {body}
      </Pane>
    </Box>
  );
}
