// Colours reach the terminal only when asked: the tones are ANSI colours with colour on, and none
// with colour off (NO_COLOR, --no-color). Ink's chalk decides colour support when it is first
// imported, so it is told to colour before the imports below.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allModes } from '../support/modes.js';

process.env['FORCE_COLOR'] = '1';
const { render } = await import('ink-testing-library');
const { App } = await import('../../src/tui/App.js');
const { readSnapshot } = await import('../../src/cluster/snapshot/read.js');
const { diagnosed } = await import('./harness.js');

const facts = await readSnapshot(
  new URL('../../snapshots/selector-typo', import.meta.url).pathname,
);

async function frameWith(color: boolean): Promise<string> {
  const r = render(
    <App
      start="diag"
      target={{ namespace: 'default', service: 'nginx-svc' }}
      facts={{ facts, code: allModes }}
      load={async () => ({ facts, code: allModes })}
      color={color}
      size={{ columns: 80, rows: 24 }}
    />,
  );
  await diagnosed(r);
  const out = r.lastFrame() ?? '';
  r.unmount();
  return out;
}

// SGR foreground colours: 30-37, 90-97, 38;5;n / 38;2;r;g;b
const COLOUR = /\x1b\[(?:3[0-7]|9[0-7]|38;[25];[\d;]+)m/; // eslint-disable-line no-control-regex

describe('colour', () => {
  it('marks a failing step in the "bad" colour when colour is on', async () => {
    const out = await frameWith(true);
    assert.match(out, COLOUR);
    assert.match(out, /\x1b\[31m✗/); // eslint-disable-line no-control-regex
  });

  it('uses no colour at all when it is off (NO_COLOR, --no-color)', async () => {
    const out = await frameWith(false);
    assert.doesNotMatch(out, COLOUR);
    const text = out.replace(/\x1b\[[\d;]*m/g, ''); // eslint-disable-line no-control-regex
    assert.match(text, /›✗ +3 Selector/, 'the marks and the cursor still say it');
  });
});
