// Records what Cilium's own load-balancer control plane programs for the lab's truth matrix:
// for each Node in the snapshot's objects.json (its InternalIP as the NodePort address), once
// with the defaults (random, snat, kube-proxy replacement with socket LB), once with maglev and
// once with the health server on LoadBalancer IPs (enable-health-check-loadbalancer-ip), into
// test/fixtures/cilium/reference/<node>[-maglev|-healthserver]/; and node-a with the defaults
// once more with faults.ts's faults made in its BPF maps, into faults-node-a/. Usage:
//   tsx test/support/cilium/record.ts [objects.json]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ciliumVersion, runCiliumRef, MODULE_DIR, RUN_SH } from './build.js';
import { FAULTS } from './faults.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OUT = join(ROOT, 'test/fixtures/cilium/reference');
const objectsPath =
  process.argv[2] ?? join(ROOT, 'test/fixtures/releases/37/iptables/objects.json');

interface Node {
  kind: string;
  metadata: { name: string };
  status?: { addresses?: { type: string; address: string }[] };
}
const list = JSON.parse(readFileSync(objectsPath, 'utf8')) as { items: Node[] };
const nodes = list.items
  .filter((o) => o.kind === 'Node')
  .map((n) => ({
    name: n.metadata.name,
    ips: (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address),
  }))
  .sort((a, b) => (a.name < b.name ? -1 : 1));

const recorded: string[] = [];
for (const node of nodes) {
  for (const variant of [
    { dir: node.name, flags: [] as string[], agent: [] as string[] },
    ...(node.name === 'node-a'
      ? [{ dir: `faults-${node.name}`, flags: FAULTS.flatMap((f) => ['--fault', f]), agent: [] }]
      : []),
    { dir: `${node.name}-maglev`, flags: ['--algorithm', 'maglev'], agent: [] },
    {
      dir: `${node.name}-healthserver`,
      flags: [],
      agent: ['--enable-health-check-loadbalancer-ip'],
    },
  ]) {
    const out = join(OUT, variant.dir);
    mkdirSync(out, { recursive: true });
    const args = (path: (p: string) => string) => [
      '--objects',
      path(objectsPath),
      '--node',
      node.name,
      '--node-address',
      node.ips.join(','),
      ...variant.flags,
      '--out',
      path(out),
      // the agent's own flags
      ...(variant.agent.length ? ['--', ...variant.agent] : []),
    ];
    const { stderr } = runCiliumRef(args((p) => p));
    // as run from the repository root
    const cmd = `sh ${relative(ROOT, RUN_SH)} <cilium-ref> ${args((p) => relative(ROOT, p)).join(' ')}`;
    recorded.push(`${variant.dir}: ${cmd}`);
    console.log(`${variant.dir}: ${stderr.trim().split('\n').join(' / ')}`);
  }
}
writeFileSync(
  join(OUT, 'RECORDED'),
  [
    `Cilium's load-balancer control plane (github.com/cilium/cilium ${ciliumVersion()}, pkg/loadbalancer),`,
    `run by cilium-ref (${relative(ROOT, MODULE_DIR)}) with real unpinned BPF maps in a private mount+net namespace,`,
    `on ${relative(ROOT, objectsPath)}; recorded ${new Date().toISOString()} by tsx ${relative(ROOT, fileURLToPath(import.meta.url))}.`,
    'Agent defaults except kube-proxy-replacement=true (socket LB on); enable-ipv6=false; maglev table 16381.',
    '<cilium-ref> is the binary buildCiliumRef() (test/support/cilium/build.ts) returns.',
    '',
    ...recorded,
    '',
  ].join('\n'),
);
