// Records what kube-proxy serves on /configz at the releases the lab has built, as test data:
// up to 1.35 it serves its internal configuration type (Go field names, kubernetes/kubernetes
// #136044), from 1.36 the versioned one. Run: npx tsx test/versions/record-configz.ts 30 31 37
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterClient } from '../support/cluster/client.js';
import { down, up } from '../support/cluster/cluster.js';
import { labModesOf, LATEST_PATCH } from './record.js';

const OUT = join(import.meta.dirname, '..', 'fixtures', 'releases');

for (const minor of process.argv.slice(2).map(Number)) {
  for (const mode of labModesOf(minor)) {
    const c = new ClusterClient(
      await up({ prefix: 'kdz', nodes: 1, mode, kubeProxy: LATEST_PATCH[minor] }),
    );
    try {
      const node = c.info.nodes[0]!.name;
      const get = () => c.onNode(node, ['curl', '-sS', 'http://127.0.0.1:10249/configz']);
      await c.until(`kube-proxy ${minor} to serve /configz`, () => get().code === 0);
      const file = join(OUT, String(minor), mode, 'proxy-configz.json');
      writeFileSync(file, `${JSON.stringify(JSON.parse(get().stdout), null, 2)}\n`);
      console.log(`wrote ${file}`);
    } finally {
      down();
    }
  }
}
