// The demo snapshot's recorded probes (snapshots/nginx-svc/nodes/*/<probe>.txt) against what the
// demo cluster rebuilt in the lab answers now, through kdebug's own debug-Pod transport: the same
// probes, the same verdicts (addresses: test/support/lab/demo-lab.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { parseProbe, type ProbeKind } from '../../src/core/nodes/outputs.js';
import { ROOT } from '../support/cli.js';
import { captureDemoProbes, DEMO_DIR, demoTopology, isProbeStem } from '../support/lab/demo-lab.js';
import { labSuite, requireLab } from '../support/lab/harness.js';
import { Lab } from '../support/lab/lab.js';

const PREFIX = 'kdt-demo';

/** "stem: status detail" for each probe of each node. */
function verdicts(nodes: Facts['nodes']): string[] {
  return Object.entries(nodes)
    .flatMap(([node, outputs]) =>
      Object.entries(outputs)
        .filter(([stem]) => isProbeStem(stem))
        .map(([stem, stdout]) => {
          const v = parseProbe(stem.split('_')[0] as ProbeKind, stdout);
          return `${node} ${stem}: ${v.status} ${v.detail}`;
        }),
    )
    .sort();
}

describe("the demo snapshot's recorded probes", labSuite(), () => {
  let lab: Lab;
  before(async () => {
    requireLab();
    if (!existsSync(join(ROOT, 'dist/cli.js')))
      spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
    lab = await Lab.up(PREFIX, demoTopology());
  });
  after(() => Lab.down(PREFIX));

  it('are what the demo cluster rebuilt in the lab answers now', async () => {
    const recorded = verdicts((await readSnapshot(DEMO_DIR)).nodes);
    assert.equal(recorded.length, 10, 'five probes on each of the two nodes');
    assert.deepEqual(verdicts(await captureDemoProbes(lab)), recorded);
  });
});
