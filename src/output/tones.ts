// The one table of tones by meaning, for text output and the TUI alike: a line says "bad" or
// "missing", and this table decides what that looks like. output/palette.ts writes it as SGR
// codes, tui/theme.ts as Ink colours. Without colour every tone still reads through its glyph or
// prefix, so nothing is conveyed by colour alone.
import type { Shown } from '../core/model.js';

/** Faint text: the grey with 4.5:1 contrast on black and on white alike (WCAG AA), where the
 * terminal's own "dim" or "gray" may vanish on one of them; xterm's 256-colour 243 is that grey. */
export const FAINT = { hex: '#767676', ansi256: 243 } as const;

/** Each hue as text output writes it (an SGR foreground) and as the TUI names it (Ink's color). */
export const HUE = {
  red: { sgr: '31', ink: 'red' },
  green: { sgr: '32', ink: 'green' },
  yellow: { sgr: '33', ink: 'yellow' },
  magenta: { sgr: '35', ink: 'magenta' },
  cyan: { sgr: '36', ink: 'cyan' },
  faint: { sgr: `38;5;${FAINT.ansi256}`, ink: FAINT.hex },
} as const;

/** A tone's look; without colour (NO_COLOR, --no-color) the TUI keeps its attributes alone. */
export interface ToneStyle {
  hue?: keyof typeof HUE;
  /** 'with-hue': bold only beside the hue; without colour the tone's underline alone marks it. */
  bold?: true | 'with-hue';
  underline?: true;
}

export type Tone =
  | 'text'
  | 'heading'
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

export const TONES: Record<Tone, ToneStyle> = {
  text: {},
  /** Text output's report and step labels. */
  heading: { bold: true },
  /** Secondary text: finding ids, labels, info findings. */
  muted: { hue: 'faint' },
  ok: { hue: 'green' },
  warn: { hue: 'yellow' },
  bad: { hue: 'red', bold: true },
  /** Pending and not observed; a command to run. */
  accent: { hue: 'cyan' },
  title: { hue: 'cyan', bold: true },
  key: { hue: 'magenta', bold: true },
  match: { hue: 'yellow', bold: 'with-hue', underline: true },
  /** A drift's lines: a rule expected and absent, a rule present and unexpected. */
  missing: { hue: 'red' },
  unexpected: { hue: 'green' },
  border: { hue: 'faint' },
  focus: { hue: 'cyan' },
};

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
