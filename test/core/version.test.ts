// A release parsed once and compared by its numbers: the patch counts, a prefix or suffix does not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { atLeast, parseVersion } from '../../src/core/version.js';

describe('a release by its numbers', () => {
  it('reads major, minor and patch with or without the v, a suffix dropped from its text', () => {
    assert.deepEqual(parseVersion('v1.18.6'), { text: 'v1.18.6', major: 1, minor: 18, patch: 6 });
    assert.deepEqual(parseVersion('1.18.6'), parseVersion('v1.18.6'));
    assert.deepEqual(parseVersion('v1.18.0-rc.1'), {
      text: 'v1.18.0',
      major: 1,
      minor: 18,
      patch: 0,
    });
    assert.deepEqual(parseVersion('v1.34'), { text: 'v1.34', major: 1, minor: 34 });
  });

  it('compares the patch where the minor is the same, numbers not text', () => {
    const v = (s: string) => parseVersion(s)!;
    assert.equal(atLeast(v('v1.18.5'), [1, 18, 6]), false);
    assert.equal(atLeast(v('v1.18.6'), [1, 18, 6]), true);
    assert.equal(atLeast(v('1.18.6-rc.1'), [1, 18, 6]), true);
    assert.equal(atLeast(v('v1.18.10'), [1, 18, 6]), true);
    assert.equal(atLeast(v('v1.19.0'), [1, 18, 6]), true);
    assert.equal(atLeast(v('v1.9.9'), [1, 18]), false);
    assert.equal(atLeast(v('v2.0.0'), [1, 18, 6]), true);
    // no patch counts as 0
    assert.equal(atLeast(v('v1.18'), [1, 18]), true);
    assert.equal(atLeast(v('v1.18'), [1, 18, 1]), false);
  });
});
