// `?`: every key and command, generated from the keymap table.
import { Box } from 'ink';
import { Pane, innerLines } from '../components/pane.js';
import { S, T } from '../components/text.js';
import { helpSections } from '../keymap.js';
import type { View } from '../state.js';

export interface HelpLine {
  title?: string;
  keys?: string;
  description?: string;
}

export function helpLines(): HelpLine[] {
  return helpSections().flatMap((s, i) => [
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
