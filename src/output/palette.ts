// The few colours plain-text output uses, by meaning. Off when the caller says so (--no-color,
// NO_COLOR, not a terminal): then every token is the identity and the text is plain.
import type { Status } from '../core/model.js';

export interface Palette {
  status(s: Status, text: string): string;
  heading(text: string): string;
  /** Secondary text: finding ids, labels. */
  muted(text: string): string;
  /** A command to run. */
  command(text: string): string;
  /** A drift's line: missing in red, unexpected in green, as the TUI draws them. */
  diff(kind: 'missing' | 'unexpected' | 'same', text: string): string;
}

/** Faint text: the grey with 4.5:1 contrast on black and on white alike (WCAG AA), where the
 * terminal's own "dim" or "gray" may vanish on one of them; xterm's 256-colour 243 is that grey. */
export const FAINT = { hex: '#767676', ansi256: 243 } as const;

const sgr = (code: string) => (text: string) => `\x1b[${code}m${text}\x1b[0m`;
const faint = sgr(`38;5;${FAINT.ansi256}`);
const STATUS: Record<Status, (t: string) => string> = {
  pass: sgr('32'),
  fail: sgr('1;31'),
  warn: sgr('33'),
  skip: faint,
  pending: sgr('36'),
};

const DIFF = { missing: sgr('31'), unexpected: sgr('32'), same: (t: string) => t } as const;

export function palette(color: boolean): Palette {
  if (!color) {
    const id = (t: string) => t;
    return { status: (_s, t) => t, heading: id, muted: id, command: id, diff: (_k, t) => t };
  }
  return {
    status: (s, t) => STATUS[s](t),
    heading: sgr('1'),
    muted: faint,
    command: sgr('36'),
    diff: (k, t) => DIFF[k](t),
  };
}
