// What a pipe's stage keeps of a listing: grep's and tail's options read as the tools read them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stageKeeps } from '../../src/core/dataplane/paste/filter-stage.js';

describe('filter stage options', () => {
  it('tail -c counts bytes, not lines', () => {
    assert.equal(stageKeeps('tail -c 100'), 'the last 100 bytes of its input');
    assert.equal(stageKeeps('tail --bytes=+5'), 'its input from byte 5');
    assert.equal(stageKeeps('tail -n 20'), 'the last 20 lines of its input');
    assert.equal(stageKeeps('tail'), 'the last 10 lines of its input');
  });
  it("grep's -e and -f take the next word, and -- ends the options", () => {
    assert.equal(stageKeeps('grep -e -lo KUBE'), 'the lines matching its pattern');
    assert.equal(stageKeeps('grep -- -c'), 'the lines matching its pattern');
    assert.equal(stageKeeps('grep -v -e -c'), 'the lines not matching its pattern');
    assert.equal(stageKeeps('grep -c KUBE'), 'a count of the lines matching its pattern');
    assert.equal(stageKeeps('grep -A3 -o KUBE'), 'the parts of lines matching its pattern');
  });
});
