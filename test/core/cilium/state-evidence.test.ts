// A backend's state read from the backends table (db/show backends) is evidenced at that table's
// line, not at the frontends table's row that names the backend (issue 34, review): the state is
// not in cilium-frontends.txt. The bundled snapshots/cilium-stale-backend, with 10.244.0.3 made
// terminating in vm-12-7-centos's backends table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { allModes } from '../../support/modes.js';

const DIR = new URL('../../../snapshots/cilium-stale-backend', import.meta.url).pathname;
const NODE = 'vm-12-7-centos';

describe("a Cilium backend's state, where the backends table gave it", () => {
  it('is cited at the backends table line it was read from', async () => {
    const facts = await readSnapshot(DIR);
    const out = facts.nodes[NODE]!;
    const lines = out['cilium-backends']!.split('\n');
    const at = lines.findIndex((l) => l.startsWith('10.244.0.3:80/TCP'));
    assert.ok(at > 0);
    lines[at] = lines[at]!.replace(
      'default/nginx-svc (http)',
      'default/nginx-svc [terminating] (http)',
    );
    out['cilium-backends'] = lines.join('\n');
    const d = new Analysis(facts, { code: allModes }).node(NODE).drift();
    const f = d.findings.find((x) => x.id === 'cilium-backend-state-differs');
    assert.ok(f, JSON.stringify(d.findings.map((x) => x.title)));
    assert.deepEqual(f.drift.actual, [
      `nodes/${NODE}/cilium-backends.txt:${at + 1}: 10.244.0.3:80/TCP (terminating)`,
    ]);
  });
});
