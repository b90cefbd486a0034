// The only way text reaches the screen: every string is sanitized and coloured by meaning.
import { Text } from 'ink';
import { createContext, useContext, type ReactNode } from 'react';
import { sanitize } from '../../core/sanitize.js';
import type { Tone } from '../../output/tones.js';
import { theme, type Theme } from '../theme.js';

export const ThemeContext = createContext<Theme>(theme(true));
export const useTheme = () => useContext(ThemeContext);

interface Props {
  tone?: Tone;
  /** The selected row: shown inverted. */
  selected?: boolean;
  bold?: boolean;
  wrap?: 'wrap' | 'truncate-end';
  children?: ReactNode;
}

/** Sanitizes string children, recursively through arrays (JSX like `{a} x {b}`). */
function clean(children: ReactNode): ReactNode {
  if (typeof children === 'string') return sanitize(children);
  if (Array.isArray(children)) return children.map(clean);
  return children;
}

/** Text with a semantic tone; strings are stripped of control characters first. */
export function T({ tone = 'text', selected, bold, wrap = 'truncate-end', children }: Props) {
  const style = useTheme().style(tone);
  return (
    <Text
      color={style.color}
      bold={bold ?? style.bold}
      underline={style.underline}
      inverse={selected}
      wrap={wrap}
    >
      {clean(children)}
    </Text>
  );
}

/** A span inside a T: no wrapping of its own. */
export function S({ tone = 'text', bold, children }: Omit<Props, 'wrap' | 'selected'>) {
  const style = useTheme().style(tone);
  return (
    <Text color={style.color} bold={bold ?? style.bold} underline={style.underline}>
      {clean(children)}
    </Text>
  );
}
