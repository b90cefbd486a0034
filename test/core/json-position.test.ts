// The first byte where a JSON text breaks, for FILE:LINE messages (V8 names no position for
// some errors). Checked against JSON.parse itself: valid exactly when it parses.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { jsonErrorLine, jsonErrorOffset } from '../../src/core/json-position.js';

const valid = (t: string) => {
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
};

describe('jsonErrorOffset', () => {
  const cases: { what: string; text: string; line: number | undefined }[] = [
    { what: 'valid', text: '{"a": [1, 2.5e3, "x\\"y", true, null]}', line: undefined },
    { what: 'a missing value', text: '{\n"table": }\n', line: 2 },
    { what: 'a trailing comma', text: '[1,\n2,\n]', line: 3 },
    { what: 'cut short', text: '{"a":\n[1,', line: 2 },
    { what: 'a raw newline in a string', text: '{"a": "x\ny"}', line: 1 },
    { what: 'garbage after the value', text: '{}\n{}', line: 2 },
    { what: 'a shell prompt first', text: '$ nft -j list ruleset\n{}', line: 1 },
  ];
  for (const c of cases)
    it(c.what, () => {
      assert.equal(jsonErrorLine(c.text), c.line);
      assert.equal(c.line === undefined, valid(c.text));
    });

  it('agrees with JSON.parse on every cut of a real listing', () => {
    const text = readFileSync(
      new URL('../fixtures/nft/kube-proxy-1.37-node-a.json', import.meta.url),
      'utf8',
    );
    assert.equal(jsonErrorOffset(text), undefined);
    for (let cut = 1; cut < text.length; cut += 997) {
      const part = text.slice(0, cut);
      assert.equal(jsonErrorOffset(part) === undefined, valid(part), `cut at ${cut}`);
    }
  });
});
