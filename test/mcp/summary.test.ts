// The short text beside each tool's JSON: said as the command's own text says it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { driftSummary } from '../../src/mcp/summary.js';

type DriftDoc = Parameters<typeof driftSummary>[0];

/** A drift document of `nodes` nodes with these counts (the summary reads nothing else). */
const doc = (nodes: number, error: number, warning: number, info: number): DriftDoc =>
  ({
    nodes: Array.from({ length: nodes }, (_, i) => ({ node: `n${i}` })),
    summary: { error, warning, info, drift: error + warning > 0 },
    notCompared: [],
  }) as unknown as DriftDoc;

describe('mcp summaries', () => {
  it('drift: counts of zero are not said, and a count agrees with its word', () => {
    assert.equal(driftSummary(doc(1, 1, 1, 0)), '1 node compared: 1 error, 1 warning: drift found');
    assert.equal(
      driftSummary(doc(2, 0, 3, 2)),
      '2 nodes compared: 3 warnings, 2 info: drift found',
    );
    assert.equal(driftSummary(doc(3, 0, 0, 0)), '3 nodes compared: no drift');
  });
});
