// Records the demo snapshot's probe outputs (snapshots/nginx-svc/nodes/<node>/<probe>.txt) from
// the demo cluster rebuilt in the lab (demo-lab.ts). As root:
//   node scripts/build.js && npx tsx test/support/lab/record-demo-probes.ts
// then regenerate the svc goldens and read their diff (see snapshots/nginx-svc/README.md).
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { captureDemoProbes, DEMO_DIR, demoTopology, isProbeStem } from './demo-lab.js';
import { Lab } from './lab.js';

const PREFIX = 'kdemo';

async function main(): Promise<void> {
  const lab = await Lab.up(PREFIX, demoTopology());
  try {
    const probes = await captureDemoProbes(lab);
    for (const [node, outputs] of Object.entries(probes)) {
      const dir = join(DEMO_DIR, 'nodes', node);
      // a probe the plan no longer runs must not linger
      for (const f of readdirSync(dir))
        if (isProbeStem(f.replace(/\.txt$/, ''))) rmSync(join(dir, f));
      for (const [stem, stdout] of Object.entries(outputs)) {
        writeFileSync(join(dir, `${stem}.txt`), stdout);
        console.log(`${node}/${stem}.txt`);
      }
    }
  } finally {
    await Lab.down(PREFIX);
  }
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
