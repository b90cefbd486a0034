import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DriftInputError } from '../../../src/core/dataplane/drift.js';
import type { CheckContext } from '../../../src/core/checks/context.js';
import { rulesCompared } from '../../../src/core/checks/rules/compared.js';

/** A context whose one node reads in iptables mode and whose drift throws `error`. */
const throwing = (error: Error) =>
  ({
    analysis: {
      node: () => ({
        dataplane: () => ({ mode: 'iptables' }),
        mode: () => 'iptables',
        drift: () => {
          throw error;
        },
      }),
    },
  }) as unknown as CheckContext;

describe('rulesCompared', () => {
  it('is false where drift cannot read the node', () => {
    assert.equal(rulesCompared(throwing(new DriftInputError('no rules')), 'node-a'), false);
  });

  it('rethrows an error that is no read failure (a bug, not rules not compared)', () => {
    assert.throws(() => rulesCompared(throwing(new TypeError('bug')), 'node-a'), TypeError);
  });
});
