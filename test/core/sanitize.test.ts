import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_SHOWN,
  excerpt,
  jsonPieces,
  jsonText,
  sanitize,
  sanitizeMarked,
} from '../../src/core/sanitize.js';

describe('sanitize: text from the cluster reaches the terminal inert', () => {
  const cases: [string, string, string][] = [
    // what, input, shown
    [
      'plain text is kept',
      'default/nginx-svc:http cluster IP',
      'default/nginx-svc:http cluster IP',
    ],
    ['unicode is kept', 'Pod café ✓ 50.0%', 'Pod café ✓ 50.0%'],
    // each control shown escaped: the text shows the value the input holds, the terminal obeys none
    ['SGR colour codes show escaped', 'a\x1b[31mred\x1b[0m', 'a\\x1b[31mred\\x1b[0m'],
    ['cursor movement shows escaped', 'x\x1b[2J\x1b[Hy', 'x\\x1b[2J\\x1b[Hy'],
    ['a window title (OSC, BEL) shows escaped', 'evil\x1b]0;pwned\x07', 'evil\\x1b]0;pwned\\x07'],
    [
      'a selector keeps its hidden characters visible',
      'ngn\u001b[2J\u0007ix',
      'ngn\\x1b[2J\\x07ix',
    ],
    ['8-bit CSI shows escaped', 'a\x9b2Jb', 'a\\x9b2Jb'],
    [
      'bell, backspace, NUL and CR show escaped',
      'a\x07b\x08c\x00d\re',
      'a\\x07b\\x08c\\x00d\\x0de',
    ],
    ['DEL and C1 controls show escaped', 'a\x7fb\x85c', 'a\\x7fb\\x85c'],
    ['tabs and newlines become spaces', 'a\tb\nc', 'a b c'],
    ['bidi overrides show escaped', 'abc\u202edcba\u2066x', 'abc\\u202edcba\\u2066x'],
  ];
  for (const [what, input, shown] of cases) {
    it(what, () => assert.equal(sanitize(input), shown));
  }

  it('a BIDI mark below U+1000 shows with four hex digits', () =>
    assert.equal(sanitize('a\u061cb'), 'a\\u061cb'));

  it('a long text is cut and counted as shown, escapes and all, never inside an escape', () => {
    for (const input of ['\x07'.repeat(2000), 'ab' + '\x1b'.repeat(1500), 'y'.repeat(5000)]) {
      const out = sanitize(input);
      const m = /^(.*)… \((\d+) more characters\)$/s.exec(out);
      assert.ok(m, out.slice(-60));
      assert.ok(out.length <= MAX_SHOWN);
      const all = [...input]
        .map((c) => (c < ' ' ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : c))
        .join('');
      // what is shown is the escaped text's start, the count its rest
      assert.ok(all.startsWith(m[1]!));
      assert.equal(m[1]!.length + Number(m[2]), all.length);
      assert.doesNotMatch(m[1]!, /\\x?[0-9a-f]?$/);
    }
  });

  it("an excerpt doubles the input's own backslash before x or u: no escape is mistaken for it", () => {
    assert.equal(excerpt('a\\x41\x1b'), 'a\\\\x41\\x1b');
    assert.equal(excerpt('\\\\u202e'), '\\\\\\\\u202e');
    assert.equal(excerpt('C:\\dir'), 'C:\\dir');
  });

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

  it('keeps the mark of each character, an escaped one whole', () => {
    assert.deepEqual(
      sanitizeMarked('ab\x07cd', (i) => i >= 2),
      [
        { text: 'ab', marked: false },
        { text: '\\x07cd', marked: true },
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
