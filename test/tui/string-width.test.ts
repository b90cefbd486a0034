// The build measures Ink's text with src/tui/string-width.ts: it must answer what string-width
// answers, on the fast path and off it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import stringWidth from 'string-width';
import width, { NARROW } from '../../src/tui/string-width.js';

describe('the string-width fast path', () => {
  it('takes each narrow mark as string-width does: one column', () => {
    for (const c of NARROW)
      assert.equal(stringWidth(String.fromCharCode(c)), 1, `U+${c.toString(16)}`);
  });

  it('answers what string-width answers, with and without colour codes', () => {
    const samples = [
      '',
      'nginx-svc',
      '✓ 1 Service   default/nginx-svc ClusterIP 10.1.190.219',
      '\u001b[32m✓\u001b[39m \u001b[1mService\u001b[22m → 8080/TCP',
      '╭──────╮\n│ a│b │',
      '┏━┓┃┗┛ ⠋⠙ × · — …',
      // off the fast path: wide, combining, emoji, other escapes, control characters
      '漢字 Service',
      'e\u0301',
      '✔️ done',
      '👍🏽',
      '\u001b]8;;https://k8s.io\u0007link\u001b]8;;\u0007',
      '\u001b[38;5;196mred\u001b[0m',
      'tab\there',
      '\u001b[?25l',
    ];
    for (const s of samples) assert.equal(width(s), stringWidth(s), JSON.stringify(s));
    for (const options of [{ countAnsiEscapeCodes: true }, { ambiguousIsNarrow: false }])
      for (const s of samples)
        assert.equal(width(s, options), stringWidth(s, options), JSON.stringify([s, options]));
  });

  it('agrees on random mixes of ASCII, the marks and a few wide characters', () => {
    const alphabet = [
      'a',
      ' ',
      '-',
      '\u001b[31m',
      '\u001b[0m',
      ...Array.from(NARROW, (c) => String.fromCharCode(c)),
      '漢',
      '\u0301',
      '\ufe0f',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % alphabet.length;
    for (let n = 0; n < 500; n++) {
      const s = Array.from({ length: 1 + (n % 17) }, () => alphabet[next()]).join('');
      assert.equal(width(s), stringWidth(s), JSON.stringify(s));
    }
  });
});
