// `e`: every node command that failed, whole: the node, the command as a person types it there,
// and its error as it came, wrapped rather than cut.
import { Box } from 'ink';
import { Pane, innerLines } from '../components/pane.js';
import { T } from '../components/text.js';
import type { Tone } from '../../output/tones.js';
import { wrap } from '../wrap.js';
import type { NodeError } from '../../core/nodes/access.js';
import { quote } from '../../core/next-command.js';
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
  errors: NodeError[],
  reading: boolean,
  width: number,
  height: number,
): ErrorsModel {
  const inner = Math.max(10, width - 4);
  const none = reading
    ? 'none so far: the nodes are still being read'
    : 'no node command failed in this run';
  const lines =
    errors.length === 0
      ? [{ text: none, tone: 'muted' as Tone }]
      : errors.flatMap((e, i) => [
          ...(i > 0 ? [{ text: ' ', tone: 'text' as Tone }] : []),
          // whole, on lines a copy gives back as one command; older snapshots name its file only
          ...wrapCommand([`${e.node}:`, ...(e.typed ?? [e.command]).map(quote)], inner, '').map(
            (text) => ({ text, tone: 'title' as Tone }),
          ),
          ...wrap(e.error, inner - 2, '').map((text) => ({
            text: `  ${text}`,
            tone: 'text' as Tone,
          })),
          ...(e.lost
            ? [{ text: '  it began and did not finish: the run is partial', tone: 'muted' as Tone }]
            : []),
        ]);
  const page = innerLines(height);
  const top = Math.min(cursorOf(s, 'errors', 0), Math.max(0, lines.length - page));
  return { lines, top, page, count: errors.length, height };
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
