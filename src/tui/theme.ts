// Colours by meaning, never by name at the point of use: a screen says "bad" or "missing", and
// this table decides what that looks like. Without colour every token still reads through its
// glyph or prefix, so nothing is conveyed by colour alone.
import type { Shown } from '../core/model.js';
import { FAINT } from '../output/palette.js';

export type Tone =
  | 'text'
  | 'muted'
  | 'ok'
  | 'warn'
  | 'bad'
  | 'accent'
  | 'title'
  | 'key'
  | 'match'
  | 'missing'
  | 'unexpected'
  | 'border'
  | 'focus';

export interface Style {
  color?: string;
  bold?: boolean;
  dim?: boolean;
  underline?: boolean;
}

export const COLOURED: Record<Tone, Style> = {
  text: {},
  muted: { color: FAINT.hex },
  ok: { color: 'green' },
  warn: { color: 'yellow' },
  bad: { color: 'red', bold: true },
  accent: { color: 'cyan' },
  title: { color: 'cyan', bold: true },
  key: { color: 'magenta', bold: true },
  match: { color: 'yellow', bold: true, underline: true },
  missing: { color: 'red' },
  unexpected: { color: 'green' },
  border: { color: FAINT.hex },
  focus: { color: 'cyan' },
};

// attributes only: they survive NO_COLOR and carry emphasis without hue
const PLAIN: Record<Tone, Style> = {
  ...Object.fromEntries(Object.keys(COLOURED).map((t) => [t, {}])),
  bad: { bold: true },
  title: { bold: true },
  key: { bold: true },
  match: { underline: true },
} as Record<Tone, Style>;

export interface Theme {
  color: boolean;
  style(tone: Tone): Style;
}

export function theme(color: boolean): Theme {
  const table = color ? COLOURED : PLAIN;
  return { color, style: (tone) => table[tone] };
}

/** Colour unless --no-color was given or NO_COLOR is set to anything but "" (no-color.org). */
export function colorEnabled(flag: boolean, env: Record<string, string | undefined>): boolean {
  return flag && !(env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '');
}

/** The tone of each status's mark (the marks themselves: output/marks.ts). */
export const STATUS_TONE = {
  pass: 'ok',
  warn: 'warn',
  fail: 'bad',
  skip: 'muted',
  pending: 'accent',
  unobserved: 'accent',
  partial: 'accent',
} as const satisfies Record<Shown, Tone>;

/** Spinner frames for pending steps. */
export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
