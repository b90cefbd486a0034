// `?`: every key and command, generated from the keymap table.
import { Box } from 'ink';
import { Pane, innerLines } from '../components/pane.js';
import { S, T } from '../components/text.js';
import { helpSections } from '../keymap.js';
import { MARK, MARK_MEANING } from '../../output/marks.js';
import type { View } from '../state.js';

export interface HelpLine {
  title?: string;
  keys?: string;
  description?: string;
}

/** What the screens' marks mean, after the keys: each mark as the screens draw it. */
const MARKS: { title: string; rows: { keys: string; description: string }[] }[] = [
  {
    title: 'Marks (Diagnosis)',
    rows: [
      ...(['pass', 'partial', 'warn', 'fail', 'unobserved', 'skip', 'pending'] as const).map(
        (s) => ({ keys: MARK[s], description: MARK_MEANING[s] }),
      ),
      { keys: 'i', description: 'information: no verdict' },
    ],
  },
  {
    title: 'Marks (Rules)',
    rows: [
      { keys: 'hairpin✓', description: 'a Pod reaching itself through the Service is masqueraded' },
      { keys: 'hairpin✗', description: 'it is not: its hairpin connection fails' },
      { keys: 'hairpin?', description: 'no hairpin rule read for it' },
      { keys: 'no endpoints', description: 'the Service port has no endpoint rule here' },
      { keys: 'local only', description: 'endpoints on this node only (traffic policy Local)' },
      { keys: 'not in paste', description: 'the chain is referred to but not in the paste' },
      { keys: 'not in dump', description: "the chain is referred to but not in the node's dump" },
      { keys: '! orphan', description: 'a chain no entry point reaches: left over' },
      { keys: '! stale', description: 'an endpoint rule kube-proxy no longer writes (drift)' },
      {
        keys: '! mis-weighted',
        description: "the Service's endpoints get uneven shares of new connections (drift)",
      },
    ],
  },
  {
    title: 'Marks (Drift)',
    rows: [
      { keys: '-', description: 'expected, missing on the node' },
      { keys: '+', description: 'on the node, not expected' },
    ],
  },
];

export function helpLines(): HelpLine[] {
  return [...helpSections(), ...MARKS].flatMap((s, i) => [
    ...(i > 0 ? [{}] : []),
    { title: s.title },
    ...s.rows.map((r) => ({ keys: r.keys, description: r.description })),
  ]);
}

export function helpView(lines: number, height: number): View {
  const page = innerLines(height);
  return { lists: [Math.max(1, lines - page + 1)], page };
}

export function Help({ top, width, height }: { top: number; width: number; height: number }) {
  const lines = helpLines();
  const page = innerLines(height);
  const keysWidth = Math.max(...lines.map((l) => l.keys?.length ?? 0)) + 2;
  return (
    <Box flexDirection="column" width={width}>
      <Pane
        title="Keys"
        info="j/k scroll, esc closes"
        scroll={{ top, shown: page, total: lines.length }}
        focused
        height={height}
        width={width}
      >
        {lines.slice(top, top + page).map((l, i) =>
          l.title ? (
            <T key={i} tone="title">
              {l.title}
            </T>
          ) : (
            <T key={i}>
              {'  '}
              <S tone="key">{(l.keys ?? '').padEnd(keysWidth)}</S>
              {l.description ?? ''}
            </T>
          ),
        )}
      </Pane>
    </Box>
  );
}
