// The tones of output/tones.ts as the TUI draws them: Ink colours and attributes for its Text.
import { HUE, TONES, type Tone, type ToneStyle } from '../output/tones.js';

export interface Style {
  color?: string;
  bold?: boolean;
  underline?: boolean;
}

// without colour the attributes stay: they survive NO_COLOR and carry emphasis without hue
const inkStyle = ({ hue, bold, underline }: ToneStyle, color: boolean): Style => ({
  ...(color && hue && { color: HUE[hue].ink }),
  ...((bold === true || (color && bold)) && { bold: true }),
  ...(underline && { underline }),
});

const styles = (color: boolean) =>
  Object.fromEntries(
    Object.entries(TONES).map(([tone, s]) => [tone, inkStyle(s, color)]),
  ) as Record<Tone, Style>;

const COLOURED = styles(true);
const PLAIN = styles(false);

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

/** Spinner frames for pending steps. */
export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
