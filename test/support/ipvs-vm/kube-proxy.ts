// Stage 2 of the IPVS VM (vm.sh): the real kube-proxy the lab builds, in IPVS mode, inside the VM
// as node node-a, against the lab cluster's API server with the truth matrix applied. What it
// programs is recorded beside a snapshot of the cluster, node-a's node files replaced by the VM's,
// for `kdebug expect` and `kdebug drift` in IPVS mode to be held against. It brings the lab up and
// down, so it runs under the lab's lock:
//
//   flock /tmp/kdebug-lab.lock npx tsx test/support/ipvs-vm/kube-proxy.ts test/fixtures/ipvs-live/kube-proxy
//
// qemu runs in the lab's control-plane namespace: its user networking makes the guest's
// connections from there, so the API server's address as the guest sees qemu's host (192.0.2.10)
// is that namespace's API server, and nothing reaches the host's own network.
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBinaries } from '../cluster/build.js';
import { ClusterClient } from '../cluster/client.js';
import { DIR, down, up } from '../cluster/cluster.js';
import { kubeProxyConfig } from '../cluster/manifests.js';
import { applyMatrix } from '../cluster/matrix.js';
import { kubeconfig } from '../cluster/pki.js';
import { API_IP, CLUSTER_CIDR } from '../cluster/topology.js';

const PREFIX = 'kdv';
const NODE = 'node-a';
const NODE_IP = '192.0.2.21';
const HERE = fileURLToPath(new URL('.', import.meta.url));

const out = resolve(process.argv[2] ?? 'test/fixtures/ipvs-live/kube-proxy');
const info = await up({ prefix: PREFIX, nodes: 2 });
try {
  const c = new ClusterClient(info);
  await applyMatrix(c);
  // the guest's kube-proxy: the lab's binary, identity and configuration, but mode ipvs
  const guest = mkdtempSync(join(tmpdir(), `${PREFIX}-guest-`));
  const etc = '/etc/kube-proxy';
  writeFileSync(
    join(guest, 'kubeconfig'),
    kubeconfig(etc, `https://${API_IP}:6443`, 'kube-proxy', 'system:kube-proxy'),
  );
  writeFileSync(
    join(guest, 'config.conf'),
    kubeProxyConfig({ clusterCIDR: CLUSTER_CIDR, mode: 'iptables' })
      .replace(/^mode: iptables$/m, 'mode: ipvs')
      .replace('/var/lib/kube-proxy/kubeconfig.conf', `${etc}/kubeconfig`),
  );
  const pki = join(DIR, 'pki');
  const files: [string, string][] = [
    [
      join(
        buildBinaries(() => {}),
        'kube-proxy',
      ),
      '/usr/local/bin/kube-proxy',
    ],
    [join(guest, 'kubeconfig'), `${etc}/kubeconfig`],
    [join(guest, 'config.conf'), `${etc}/config.conf`],
    ...['ca.crt', 'kube-proxy.crt', 'kube-proxy.key'].map((f): [string, string] => [
      join(pki, f),
      `${etc}/${f}`,
    ]),
  ];
  rmSync(out, { recursive: true, force: true });
  const recorded = join(out, 'vm');
  const vm = spawnSync(
    'ip',
    [
      ...['netns', 'exec', `${PREFIX}.cp`, join(HERE, 'vm.sh')],
      `--net=192.0.2.0/24,${API_IP},${NODE_IP}`,
      ...files.flatMap(([from, to]) => ['--add', `${from}:${to}`]),
      join(HERE, 'kube-proxy-guest.sh'),
      recorded,
    ],
    { stdio: 'inherit', env: { ...process.env, KDEBUG_IPVS_VM_MEMORY: '1024' } },
  );
  rmSync(guest, { recursive: true, force: true });
  if (vm.status !== 0) throw new Error(`the VM failed (exit ${vm.status})`);
  // the cluster as kdebug reads it; node-a's files are the VM's (its kube-proxy's), not those of
  // the lab's own node-a (whose kube-proxy runs in iptables mode)
  const snapshot = join(out, 'snapshot');
  const saved = c.kdebug(['snapshot', 'save', snapshot, '--all', '-A', '--via', 'kube-proxy']);
  if (saved.code !== 0) throw new Error(`kdebug snapshot save: ${saved.stderr}`);
  const nodeDir = join(snapshot, 'nodes', NODE);
  rmSync(nodeDir, { recursive: true, force: true });
  mkdirSync(nodeDir, { recursive: true });
  // the files a snapshot's node holds move there; the VM's others (its log, versions, the listing
  // views kdebug does not collect) stay in vm/
  for (const f of readdirSync(recorded))
    if (
      !/^(kube-proxy-log\.txt|versions\.txt|ip-o-addr-kube-ipvs0\.txt|ipvsadm-list\.txt)$/.test(f)
    )
      renameSync(join(recorded, f), join(nodeDir, f));
  // and what the snapshot said of reading node-a (from the lab's own node-a) is not said of them
  const metaFile = join(snapshot, 'meta.json');
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Record<string, unknown>;
  for (const k of ['nodeErrors', 'nodeAccess'])
    if (Array.isArray(meta[k]))
      meta[k] = (meta[k] as { node?: string }[]).filter((e) => e.node !== NODE);
  writeFileSync(metaFile, JSON.stringify(meta, null, 2) + '\n');
  console.error(`kube-proxy.ts: recorded into ${out}`);
} finally {
  down();
}
