// Every node dump in the bundled snapshots is what a node prints: `kdebug rules` reads each one
// without a parser warning (a derived dump once kept kdebug's own `# kdebug expect:` header).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug, ROOT } from '../support/cli.js';

const SNAPSHOTS = join(ROOT, 'snapshots');
const dirs = (at: string) =>
  readdirSync(at, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

describe('bundled snapshots: every node dump reads without a warning', () => {
  for (const snapshot of dirs(SNAPSHOTS)) {
    const nodes = join(SNAPSHOTS, snapshot, 'nodes');
    it(snapshot, () => {
      for (const node of dirs(nodes)) {
        const r = kdebug([
          'rules',
          '--snapshot',
          join(SNAPSHOTS, snapshot),
          '--node',
          node,
          '-o',
          'json',
        ]);
        if (r.code !== 0) continue; // a node that recorded no rules: said by the scenario's own tests
        const doc = JSON.parse(r.stdout) as { warnings: unknown[] };
        assert.deepEqual(doc.warnings, [], `${snapshot} ${node}`);
      }
    });
  }
});
