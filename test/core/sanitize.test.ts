import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonPieces, jsonText, sanitize, sanitizeMarked } from '../../src/core/sanitize.js';

describe('sanitize: text from the cluster reaches the terminal inert', () => {
  const cases: [string, string, string][] = [
    // what, input, shown
    [
      'plain text is kept',
      'default/nginx-svc:http cluster IP',
      'default/nginx-svc:http cluster IP',
    ],
    ['unicode is kept', 'Pod café ✓ 50.0%', 'Pod café ✓ 50.0%'],
    ['SGR colour codes go', 'a\x1b[31mred\x1b[0m', 'ared'],
    ['cursor movement goes', 'x\x1b[2J\x1b[H\x1b[10;5Hy', 'xy'],
    ['a window title (OSC, BEL) goes', 'svc\x1b]0;pwned\x07!', 'svc!'],
    [
      'a hyperlink (OSC 8, ST) keeps only its text',
      '\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\',
      'link',
    ],
    ['8-bit CSI goes', 'a\x9b2Jb', 'ab'],
    ['a lone ESC goes', 'a\x1bcb\x1b', 'ab'],
    ['bell, backspace, NUL and CR go', 'a\x07b\x08c\x00d\re', 'abcde'],
    ['DEL and C1 controls go', 'a\x7fb\x85c', 'abc'],
    ['tabs and newlines become spaces', 'a\tb\nc', 'a b c'],
    ['bidi overrides go', 'abc\u202edcba\u2066x\u2069', 'abcdcbax'],
  ];
  for (const [what, input, shown] of cases) {
    it(what, () => assert.equal(sanitize(input), shown));
  }

  it('leaves no control character in any byte soup', () => {
    let soup = '';
    for (let c = 0; c < 0xa0; c++) soup += String.fromCharCode(c) + 'x';
    assert.doesNotMatch(sanitize(soup), /[\x00-\x1f\x7f-\x9f]/); // eslint-disable-line no-control-regex
  });

  it('cut into marked pieces, shows exactly what sanitize shows', () => {
    const inputs = ['a\x1b[31mred\x1b[0m b', 'svc\x1b]0;pwned\x07!', 'a\tb\u202ec', 'plain'];
    for (const input of inputs)
      for (const every of [2, 3, 5]) {
        const parts = sanitizeMarked(input, (i) => i % every === 0);
        assert.equal(parts.map((p) => p.text).join(''), sanitize(input), input);
      }
  });

  it('keeps the mark of each character that stays', () => {
    assert.deepEqual(
      sanitizeMarked('ab\x07cd', (i) => i >= 3),
      [
        { text: 'ab', marked: false },
        { text: 'cd', marked: true },
      ],
    );
  });
});

describe('jsonPieces: jsonText printed in pieces', () => {
  const pieces = (doc: object) => {
    const out: string[] = [];
    jsonPieces(doc, (p) => out.push(p));
    return out;
  };
  it('joins to jsonText, a big array a chunk at a time', () => {
    const big = Array.from({ length: 2500 }, (_, i) =>
      i === 7
        ? undefined
        : { i, text: i % 3 ? `svc-${i}` : 'bidi \u202e c1 \x9b', list: [i, null] },
    );
    const doc = { a: 1, skipped: undefined, 'we"ird': big, f: () => 1, empty: [], z: { k: 'v' } };
    const out = pieces(doc);
    assert.ok(out.length > 3);
    assert.equal(out.join(''), jsonText(doc));
  });
  it('gives a document without a big array whole', () => {
    const doc = { a: [1, 2, 3], b: 'x' };
    assert.deepEqual(pieces(doc), [jsonText(doc)]);
  });
});
