// Stage 2 of the IPVS VM (vm.sh): a real kube-proxy (the release the lab runs) in IPVS mode
// inside the VM as node node-a, against a running lab cluster's API server. What it programs is
// recorded as a snapshot of the cluster, node-a's node files replaced by the VM's, for `kdebug
// expect` and `kdebug drift` in IPVS mode to be held against. test/versions/record.ts brings the
// lab up with the truth matrix and calls it (`npm run test:versions -- --record --modes ipvs`).
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
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeProxyBinary } from '../cluster/build.js';
import type { ClusterClient } from '../cluster/client.js';
import { DIR } from '../cluster/cluster.js';
import { kubeProxyConfig } from '../cluster/manifests.js';
import { kubeconfig } from '../cluster/pki.js';
import { API_IP, CLUSTER_CIDR, CLUSTER_CIDR6, type Families, twin } from '../cluster/topology.js';

export const IPVS_NODE = 'node-a';
const NODE_IP = '192.0.2.21';
const HERE = fileURLToPath(new URL('.', import.meta.url));
/** The VM's files that are no node file of a snapshot (nor are the reads by address): they stay in `vm`. */
const VM_ONLY =
  /^(kube-proxy-log\.txt|versions\.txt|ip-o-addr-kube-ipvs0\.txt|ipvsadm-list\.txt|targeted)$/;

/** Why the VM cannot run here, or '' (.ci/run installs qemu; vm.sh fetches the rest with apt). */
export function ipvsVmUnavailable(): string {
  const has = (c: string) => spawnSync('sh', ['-c', `command -v ${c}`]).status === 0;
  const missing = ['qemu-system-x86_64', 'apt-get', 'dpkg-deb', 'xz'].filter((c) => !has(c));
  return missing.length > 0 ? `the IPVS VM needs ${missing.join(', ')}` : '';
}

/**
 * Runs the lab's kube-proxy (`c.info.kubeProxyVersion`) in IPVS mode in the VM as node-a and
 * records it: `snapshot` a kdebug snapshot of the cluster with node-a's files the VM's, `vm` the
 * rest (its log, versions, `ipvsadm -Ln`, `ip -o addr show kube-ipvs0`, the reads by address in
 * `targeted/`). `families` dual: the lab is dual-stack, the guest has node-a's IPv6 address too.
 * Returns qemu's seconds.
 */
export function recordIpvsNode(
  c: ClusterClient,
  prefix: string,
  out: { snapshot: string; vm: string },
  families: Families = 'ipv4',
): number {
  const dual = families === 'dual';
  // the guest's kube-proxy: the lab's binary, identity and configuration, but mode ipvs
  const guest = mkdtempSync(join(tmpdir(), `${prefix}-guest-`));
  const etc = '/etc/kube-proxy';
  writeFileSync(
    join(guest, 'kubeconfig'),
    kubeconfig(etc, `https://${API_IP}:6443`, 'kube-proxy', 'system:kube-proxy'),
  );
  writeFileSync(
    join(guest, 'config.conf'),
    kubeProxyConfig({
      clusterCIDR: dual ? `${CLUSTER_CIDR},${CLUSTER_CIDR6}` : CLUSTER_CIDR,
      mode: 'iptables',
    })
      .replace(/^mode: iptables$/m, 'mode: ipvs')
      .replace('/var/lib/kube-proxy/kubeconfig.conf', `${etc}/kubeconfig`),
  );
  // dual-stack: node-a's IPv6 address (as the lab's Node says) on the guest's eth0 too
  if (dual) writeFileSync(join(guest, 'node-ip6'), `${twin(NODE_IP)}/64\n`);
  const pki = join(DIR, 'pki');
  const files: [string, string][] = [
    [kubeProxyBinary(c.info.kubeProxyVersion), '/usr/local/bin/kube-proxy'],
    [join(guest, 'kubeconfig'), `${etc}/kubeconfig`],
    [join(guest, 'config.conf'), `${etc}/config.conf`],
    ...['ca.crt', 'kube-proxy.crt', 'kube-proxy.key'].map((f): [string, string] => [
      join(pki, f),
      `${etc}/${f}`,
    ]),
    ...(dual ? [[join(guest, 'node-ip6'), `${etc}/node-ip6`] as [string, string]] : []),
  ];
  rmSync(out.vm, { recursive: true, force: true });
  const started = Date.now();
  const vm = spawnSync(
    'ip',
    [
      ...['netns', 'exec', `${prefix}.cp`, join(HERE, 'vm.sh')],
      `--net=192.0.2.0/24,${API_IP},${NODE_IP}`,
      ...files.flatMap(([from, to]) => ['--add', `${from}:${to}`]),
      join(HERE, 'kube-proxy-guest.sh'),
      out.vm,
    ],
    { stdio: 'inherit', env: { ...process.env, KDEBUG_IPVS_VM_MEMORY: '1024' } },
  );
  const seconds = Math.round((Date.now() - started) / 1000);
  rmSync(guest, { recursive: true, force: true });
  if (vm.status !== 0) throw new Error(`the VM failed (exit ${vm.status})`);
  // the cluster as kdebug reads it; node-a's files are the VM's (its kube-proxy's), not those of
  // the lab's own node-a (whose kube-proxy runs in iptables mode)
  rmSync(out.snapshot, { recursive: true, force: true });
  const saved = c.kdebug(['snapshot', 'save', out.snapshot, '--all', '-A', '--via', 'kube-proxy']);
  if (saved.code !== 0) throw new Error(`kdebug snapshot save: ${saved.stderr}`);
  const nodeDir = join(out.snapshot, 'nodes', IPVS_NODE);
  rmSync(nodeDir, { recursive: true, force: true });
  mkdirSync(nodeDir, { recursive: true });
  for (const f of readdirSync(out.vm))
    if (!VM_ONLY.test(f)) renameSync(join(out.vm, f), join(nodeDir, f));
  // and what the snapshot said of reading node-a (from the lab's own node-a) is not said of them
  const metaFile = join(out.snapshot, 'meta.json');
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Record<string, unknown>;
  for (const k of ['nodeErrors', 'nodeAccess'])
    if (Array.isArray(meta[k]))
      meta[k] = (meta[k] as { node?: string }[]).filter((e) => e.node !== IPVS_NODE);
  writeFileSync(metaFile, JSON.stringify(meta, null, 2) + '\n');
  return seconds;
}
