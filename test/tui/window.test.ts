import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { windowStart } from '../../src/tui/components/window.js';

describe('windowStart: the view moves only when the cursor would leave it', () => {
  const cases: [string, number, number, number, number, number][] = [
    // what, cursor, length, height, previous start, start
    ['a short list never scrolls', 3, 5, 10, 0, 0],
    ['cursor inside the view: no move', 5, 50, 10, 0, 0],
    ['cursor below the view: it follows', 12, 50, 10, 0, 3],
    ['cursor above the view: it follows', 2, 50, 10, 5, 2],
    ['cursor back inside after scrolling: no move', 8, 50, 10, 3, 3],
    ['never past the end', 49, 50, 10, 45, 40],
    ['a shorter list pulls the view back', 2, 4, 10, 7, 0],
  ];
  for (const [what, cursor, length, height, previous, start] of cases) {
    it(what, () => assert.equal(windowStart(cursor, length, height, previous), start));
  }
});
