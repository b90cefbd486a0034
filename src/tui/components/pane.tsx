// A bordered pane with a title line; the focused pane's border is drawn in the focus colour.
import { Box } from 'ink';
import type { ReactNode } from 'react';
import { T, useTheme } from './text.js';

interface Props {
  title: string;
  /** Right-aligned part of the title line (counts, node name). */
  info?: string;
  focused: boolean;
  /** A list longer than the pane: which lines show ("12-30/85" joins the info). */
  scroll?: { top: number; shown: number; total: number };
  width?: number | string;
  height: number;
  children?: ReactNode;
}

/** "12-30/85" when not every line fits, else nothing. */
export function position(scroll: Props['scroll']): string {
  if (!scroll || scroll.total <= scroll.shown) return '';
  return `${scroll.top + 1}-${Math.min(scroll.top + scroll.shown, scroll.total)}/${scroll.total}`;
}

export function Pane({ title, info, focused, scroll, width, height, children }: Props) {
  const t = useTheme();
  const right = [info, position(scroll)].filter(Boolean).join('  ');
  const border = t.style(focused ? 'focus' : 'border').color;
  return (
    <Box
      flexDirection="column"
      borderStyle={focused ? 'bold' : 'single'}
      borderColor={border}
      width={width}
      height={height}
      flexShrink={0}
      overflow="hidden"
    >
      <Box justifyContent="space-between" flexShrink={0}>
        <T tone="title">{title}</T>
        {right ? <T tone="muted">{right}</T> : null}
      </Box>
      {children}
    </Box>
  );
}

/** Lines inside a pane of `height`: the borders and the title line take three. */
export const innerLines = (height: number) => Math.max(1, height - 3);
