import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { wrap } from '../../src/tui/wrap.js';

describe('wrap', () => {
  const cases: [string, string, number, string, string[]][] = [
    // what, text, width, indent, lines
    ['short text stays one line', 'a b c', 10, '', ['a b c']],
    ['breaks at spaces', 'hello world this is', 10, '', ['hello', 'world this', 'is']],
    ['indents continuation lines', 'aaa bbb ccc', 7, '  ', ['aaa bbb', '  ccc']],
    [
      'a word longer than a line fills it and carries on',
      '-A KUBE-SEP-FNO4E6JYD7EGUHTP -j DNAT',
      20,
      '    ',
      ['-A KUBE-SEP-FNO4E6JY', '    D7EGUHTP -j DNAT'],
    ],
    ['keeps paragraphs', 'a\nb c', 5, '', ['a', 'b c']],
    ['empty text is one empty line', '', 5, '', ['']],
    // a control character is shown escaped, never sent to the terminal
    ['escapes control characters', 'a\x1b[31mb', 20, '', ['a\\x1b[31mb']],
  ];
  for (const [what, text, width, indent, lines] of cases) {
    it(what, () => assert.deepEqual(wrap(text, width, indent), lines));
  }

  it('never returns a line wider than asked', () => {
    const text = 'x'.repeat(57) + ' ' + 'y '.repeat(40) + 'z'.repeat(33);
    for (const w of [5, 13, 20, 48, 78])
      for (const line of wrap(text, w, '  ')) assert.ok(line.length <= w, `${line.length} > ${w}`);
  });
});
