// Faint text must stay readable on a dark and on a light terminal: WCAG's 4.5:1 (AA) on both.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { palette } from '../../src/output/palette.js';
import { FAINT, HUE, TONES, type Tone } from '../../src/output/tones.js';
import { theme } from '../../src/tui/theme.js';

/** WCAG 2's relative luminance of an sRGB colour "#rrggbb". */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

const contrast = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
};

/** xterm's 256-colour grey ramp: 232 + n is rgb(8 + 10n) for each channel. */
function xtermGrey(index: number): string {
  const v = (8 + 10 * (index - 232)).toString(16).padStart(2, '0');
  return `#${v}${v}${v}`;
}

describe('the faint tone', () => {
  it('has 4.5:1 contrast on a dark and on a light background', () => {
    for (const background of ['#000000', '#ffffff'])
      assert.ok(
        contrast(FAINT.hex, background) >= 4.5,
        `${FAINT.hex} on ${background}: ${contrast(FAINT.hex, background).toFixed(2)}:1`,
      );
    // the measure itself: black on white is 21:1, a grey as light as #999 fails on white
    assert.equal(contrast('#000000', '#ffffff').toFixed(1), '21.0');
    assert.ok(contrast('#999999', '#ffffff') < 4.5);
  });

  it('every faint tone of the one table is that grey, in text output and in the TUI', () => {
    assert.equal(xtermGrey(FAINT.ansi256), FAINT.hex);
    assert.deepEqual(HUE.faint, { sgr: `38;5;${FAINT.ansi256}`, ink: FAINT.hex });
    const faint = (Object.keys(TONES) as Tone[]).filter((t) => TONES[t].hue === 'faint');
    assert.deepEqual(faint, ['muted', 'border']);
    for (const tone of faint) assert.equal(theme(true).style(tone).color, FAINT.hex);
    const p = palette(true);
    assert.equal(p.muted('x'), `\x1b[38;5;${FAINT.ansi256}mx\x1b[0m`);
    assert.equal(p.status('skip', 'x'), `\x1b[38;5;${FAINT.ansi256}mx\x1b[0m`);
    // no hue is the terminal's own faint: SGR 2 (dim), 90 or Ink's "gray"
    assert.deepEqual(
      Object.entries(HUE).filter(([, h]) => /^(2|90)$/.test(h.sgr) || /gr[ae]y/.test(h.ink)),
      [],
    );
  });
});
