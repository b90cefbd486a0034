// `e`: every node command that failed, whole: the node, the command as a person types it there,
// and its error as it came, wrapped rather than cut; nodes that failed the same way said once.
import { Box } from 'ink';
import { Pane, innerLines } from '../components/pane.js';
import { T } from '../components/text.js';
import type { Tone } from '../../output/tones.js';
import { wrap } from '../wrap.js';
import { namedFew } from '../../core/nodes/access.js';
import {
  ofEach,
  onNode,
  type NodeErrors as Failed,
  type NodeFailure,
} from '../../core/nodes/errors.js';
import { quote } from '../../core/findings/next-command.js';
import { wrapCommand } from '../../output/wrap.js';
import { cursorOf, type State, type View } from '../state.js';

export interface ErrorsModel {
  lines: { text: string; tone: Tone }[];
  /** The first line shown. */
  top: number;
  page: number;
  count: number;
  height: number;
}

export function errorsModel(
  s: State,
  errors: Failed,
  reading: boolean,
  width: number,
  height: number,
): ErrorsModel {
  const inner = Math.max(10, width - 4);
  const none = reading
    ? 'none so far: the nodes are still being read'
    : 'no node command failed in this run';
  /** One failure: where (the node, or nothing under a group's line), what, and why. */
  const entry = (where: string[], e: NodeFailure) => [
    // whole, on lines a copy gives back as one command; older snapshots name its file only
    ...wrapCommand([...where, ...(e.typed ?? [e.command]).map(quote)], inner, '').map((text) => ({
      text,
      tone: 'title' as Tone,
    })),
    ...wrap(e.error, inner - 2, '').map((text) => ({ text: `  ${text}`, tone: 'text' as Tone })),
    ...(e.lost
      ? [{ text: '  it began and did not finish: the run is partial', tone: 'muted' as Tone }]
      : []),
  ];
  const gap = { text: ' ', tone: 'text' as Tone };
  const lines =
    errors.count === 0
      ? [{ text: none, tone: 'muted' as Tone }]
      : errors.groups.flatMap(({ nodes, errors: failed }, i) => [
          ...(i > 0 ? [gap] : []),
          // nodes that failed the same way: named once, then what failed on each
          ...(nodes.length === 1
            ? failed.flatMap((e, k) => [
                ...(k > 0 ? [gap] : []),
                ...entry([`${nodes[0]}:`], onNode(e, nodes[0]!)),
              ])
            : [
                ...wrap(`${nodes.length} nodes, each the same: ${namedFew(nodes)}`, inner, '').map(
                  (text) => ({ text, tone: 'title' as Tone }),
                ),
                ...failed.flatMap((e) => [gap, ...entry([], { ...e, error: ofEach(e.error) })]),
              ]),
        ]);
  const page = innerLines(height);
  const top = Math.min(cursorOf(s, 'errors', 0), Math.max(0, lines.length - page));
  return { lines, top, page, count: errors.count, height };
}

/** The pane scrolls by line, as the help does. */
export const errorsView = (m: ErrorsModel): View => ({
  lists: [Math.max(1, m.lines.length - m.page + 1)],
  page: m.page,
});

export function NodeErrors({ model, width }: { model: ErrorsModel; width: number }) {
  const { lines, top, page, count, height } = model;
  return (
    <Box flexDirection="column" width={width}>
      <Pane
        title="Node errors"
        info={`${count} failed`}
        scroll={{ top, shown: page, total: lines.length }}
        focused
        height={height}
        width={width}
      >
        {lines.slice(top, top + page).map((l, i) => (
          <T key={i} tone={l.tone}>
            {l.text}
          </T>
        ))}
      </Pane>
    </Box>
  );
}
