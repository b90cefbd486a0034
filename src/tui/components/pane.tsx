// A bordered pane with a title line; the focused pane's border is drawn in the focus colour.
import { Box } from 'ink';
import type { ReactNode } from 'react';
import { T, useTheme } from './text.js';

interface Props {
  title: string;
  /** Right-aligned part of the title line (counts, node name). */
  info?: string;
  focused: boolean;
  width?: number | string;
  height: number;
  children?: ReactNode;
}

export function Pane({ title, info, focused, width, height, children }: Props) {
  const t = useTheme();
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
        {info ? <T tone="muted">{info}</T> : null}
      </Box>
      {children}
    </Box>
  );
}

/** Lines inside a pane of `height`: the borders and the title line take three. */
export const innerLines = (height: number) => Math.max(1, height - 3);
