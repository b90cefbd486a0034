import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Tone } from '../../src/output/tones.js';
import { colorEnabled, theme } from '../../src/tui/theme.js';

describe('colour', () => {
  const cases: [boolean, Record<string, string | undefined>, boolean][] = [
    // --color flag (false with --no-color), environment, colour on
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: '1' }, false],
    [true, { NO_COLOR: 'true' }, false],
    [true, { NO_COLOR: '' }, true], // no-color.org: an empty NO_COLOR does not count
    [false, { NO_COLOR: '' }, false],
  ];
  for (const [flag, env, on] of cases) {
    it(`flag ${flag}, env ${JSON.stringify(env)}: colour ${on ? 'on' : 'off'}`, () =>
      assert.equal(colorEnabled(flag, env), on));
  }

  const tones: Tone[] = ['ok', 'warn', 'bad', 'missing', 'unexpected', 'match', 'accent', 'muted'];
  it('gives every tone a colour when colour is on', () => {
    for (const t of tones) assert.ok(theme(true).style(t).color, t);
  });
  it('gives no tone a colour when colour is off', () => {
    for (const t of tones) assert.equal(theme(false).style(t).color, undefined, t);
  });
  it('tells missing from unexpected by colour', () => {
    assert.notEqual(theme(true).style('missing').color, theme(true).style('unexpected').color);
  });
});
