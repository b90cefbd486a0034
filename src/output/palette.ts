// The tones of output/tones.ts as plain-text output writes them: SGR codes. Off when the caller
// says so (--no-color, NO_COLOR, not a terminal): then every token is the identity and the text is
// plain.
import type { Status } from '../core/model.js';
import { HUE, STATUS_TONE, TONES, type Tone } from './tones.js';

export interface Palette {
  status(s: Status, text: string): string;
  heading(text: string): string;
  /** Secondary text: finding ids, labels. */
  muted(text: string): string;
  /** A command to run. */
  command(text: string): string;
  /** A drift's line, in the tone the TUI draws it in. */
  diff(kind: 'missing' | 'unexpected' | 'same', text: string): string;
}

/** Each tone's SGR parameters, attributes before the hue ("1;31"); "" for plain text. */
const SGR = Object.fromEntries(
  Object.entries(TONES).map(([tone, { hue, bold, underline }]) => [
    tone,
    [bold && '1', underline && '4', hue && HUE[hue].sgr].filter(Boolean).join(';'),
  ]),
) as Record<Tone, string>;

const paint = (tone: Tone, text: string) =>
  SGR[tone] === '' ? text : `\x1b[${SGR[tone]}m${text}\x1b[0m`;

const DIFF_TONE = { missing: 'missing', unexpected: 'unexpected', same: 'text' } as const;

export function palette(color: boolean): Palette {
  if (!color) {
    const id = (t: string) => t;
    return { status: (_s, t) => t, heading: id, muted: id, command: id, diff: (_k, t) => t };
  }
  return {
    status: (s, t) => paint(STATUS_TONE[s], t),
    heading: (t) => paint('heading', t),
    muted: (t) => paint('muted', t),
    command: (t) => paint('accent', t),
    diff: (k, t) => paint(DIFF_TONE[k], t),
  };
}
