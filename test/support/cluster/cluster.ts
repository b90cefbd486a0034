// The lab cluster: the real etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kube-proxy (built from their Go modules), a kubelet stand-in per node, all inside network
// namespaces it creates (topology.ts). `up` writes .cluster/cluster.json for the tests; `down`
// removes every process, namespace and file it made, and so does the reaper (reaper.ts) when the
// process that ran `up` ends without `down` (killed, or thrown past it).
//
//   npm run cluster -- up [--nodes 2|3] [--mode iptables|nftables] [--families ipv4|dual]
//                         [--kube-proxy v1.X.Y]   (that release's kube-proxy; the control plane stays)
//   npm run cluster -- down
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import type { Socket } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBinaries, K8S_VERSION, kubeProxyBinary } from './build.js';
import { LIMITED_USER, manifests } from './manifests.js';
import { kubeconfig, makePki, type Identity } from './pki.js';
import {
  API_IP,
  CLIENT_IP,
  CLUSTER_CIDR,
  KUBERNETES_SERVICE_IP,
  SERVICE_CIDR,
  SWITCH_IP,
  CLUSTER_CIDR6,
  SERVICE_CIDR6,
  SWITCH_IP6,
  topology,
  twin,
  type Families,
  type ProxyMode,
  type Topology,
} from './topology.js';
import { alive } from '../process.js';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const DIR = join(ROOT, '.cluster');
const HERE = fileURLToPath(new URL('.', import.meta.url));
const PREFIX = /^[a-z][a-z0-9-]{0,11}$/;

/** What `up` leaves for the tests: everything they need to drive the cluster. */
export interface ClusterInfo {
  clientNetns: string;
  /** Paths relative to the repository root: ".cluster/admin.kubeconfig". */
  kubeconfig: string;
  limitedKubeconfig: string;
  /** kubectl built with the cluster, to run inside clientNetns. */
  kubectl: string;
  version: string;
  /** The release of the nodes' kube-proxy (the control plane's unless `up` was given one). */
  kubeProxyVersion: string;
  nodes: { name: string; netns: string; ip: string; podCIDR: string; proxyMode: ProxyMode }[];
}

interface Pids {
  prefix: string;
  /** The process that ran `up`: the lab is torn down when it ends, unless kept. */
  owner: number;
  reaper?: number;
  pids: number[];
}

function sh(cmd: string, args: string[], input?: string): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input: input ?? '', timeout: 60_000 });
  if (r.status !== 0)
    throw new Error(
      `cluster: ${cmd} ${args.join(' ')} failed (${r.status}): ${(r.stderr || r.error?.message || '').trim()}`,
    );
  return r.stdout;
}

/** Why the cluster cannot run here, or undefined. */
export function clusterUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'the lab cluster needs Linux network namespaces';
  if (process.getuid?.() !== 0) return 'the lab cluster needs root (network namespaces)';
  const missing = ['ip', 'nsenter', 'openssl', 'iptables-save'].filter(
    (t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0,
  );
  return missing.length ? `missing tools: ${missing.join(', ')}` : undefined;
}

export async function up(
  o: {
    nodes?: number;
    mode?: ProxyMode;
    prefix?: string;
    families?: Families;
    /** Run this release's kube-proxy (v1.X.Y, built alone) instead of the control plane's. */
    kubeProxy?: string;
    /** How long a Node may go without a heartbeat before it is not ready (a bench's API-only
     * Nodes never send one). */
    heartbeatGrace?: string;
    /** The lab stays up once `up` returns, after this process ends (`npm run cluster -- up`). */
    keep?: boolean;
  } = {},
): Promise<ClusterInfo> {
  const t = topology(o.prefix ?? 'kdc', o.mode ?? 'iptables', o.nodes ?? 2, o.families);
  const dual = t.families === 'dual';
  const both = (v4: string, v6: string) => (dual ? `${v4},${v6}` : v4);
  if (!PREFIX.test(t.prefix)) throw new Error(`cluster: prefix must match ${PREFIX}`);
  const why = clusterUnavailable();
  if (why) throw new Error(`cluster: ${why}`);
  const bin = buildBinaries((s) => console.error(`cluster: ${s}`));
  const proxyVersion = o.kubeProxy ?? K8S_VERSION;
  const proxyBin = kubeProxyBinary(proxyVersion, (s) => console.error(`cluster: ${s}`));
  down();
  mkdirSync(join(DIR, 'logs'), { recursive: true });
  const pids: Pids = { prefix: t.prefix, owner: process.pid, pids: [] };
  const save = () => writeFileSync(join(DIR, 'pids.json'), JSON.stringify(pids));
  save();
  pids.reaper = startReaper();
  save();
  try {
    network(t);
    const pki = join(DIR, 'pki');
    makePki(pki, identities(t));
    const server = `https://${API_IP}:6443`;
    const kc = (stem: string, user: string) => {
      const file = join(DIR, `${stem}.kubeconfig`);
      writeFileSync(file, kubeconfig(pki, server, stem, user));
      return file;
    };
    const admin = kc('admin', 'kubernetes-admin');
    const limited = kc('limited', LIMITED_USER);
    const start = (ns: string, name: string, argv: string[]) => {
      pids.pids.push(startIn(t, ns, name, argv));
      save();
    };
    start('cp', 'etcd', [
      join(bin, 'etcd'),
      `--data-dir=${join(DIR, 'etcd')}`,
      '--listen-client-urls=https://127.0.0.1:2379',
      '--advertise-client-urls=https://127.0.0.1:2379',
      '--listen-peer-urls=https://127.0.0.1:2380',
      '--initial-advertise-peer-urls=https://127.0.0.1:2380',
      '--initial-cluster=default=https://127.0.0.1:2380',
      `--peer-cert-file=${pki}/etcd.crt`,
      `--peer-key-file=${pki}/etcd.key`,
      `--peer-trusted-ca-file=${pki}/ca.crt`,
      '--peer-client-cert-auth',
      `--cert-file=${pki}/etcd.crt`,
      `--key-file=${pki}/etcd.key`,
      `--trusted-ca-file=${pki}/ca.crt`,
      '--client-cert-auth',
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    start('cp', 'kube-apiserver', [
      join(bin, 'kube-apiserver'),
      '--etcd-servers=https://127.0.0.1:2379',
      `--etcd-cafile=${pki}/ca.crt`,
      `--etcd-certfile=${pki}/apiserver-etcd-client.crt`,
      `--etcd-keyfile=${pki}/apiserver-etcd-client.key`,
      `--advertise-address=${API_IP}`,
      '--secure-port=6443',
      `--tls-cert-file=${pki}/apiserver.crt`,
      `--tls-private-key-file=${pki}/apiserver.key`,
      `--client-ca-file=${pki}/ca.crt`,
      `--service-cluster-ip-range=${both(SERVICE_CIDR, SERVICE_CIDR6)}`,
      '--service-node-port-range=30000-32767',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki}/sa.pub`,
      `--service-account-signing-key-file=${pki}/sa.key`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      '--allow-privileged=true',
      `--kubelet-client-certificate=${pki}/apiserver-kubelet-client.crt`,
      `--kubelet-client-key=${pki}/apiserver-kubelet-client.key`,
      `--kubelet-certificate-authority=${pki}/ca.crt`,
      '--kubelet-preferred-address-types=InternalIP',
    ]);
    await waitFor(
      'the API server',
      () => kubectl(t, bin, admin, ['get', '--raw', '/readyz']) === 'ok',
    );
    start('cp', 'kube-controller-manager', [
      join(bin, 'kube-controller-manager'),
      `--kubeconfig=${kc('controller-manager', 'system:kube-controller-manager')}`,
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${pki}/sa.key`,
      `--root-ca-file=${pki}/ca.crt`,
      `--cluster-cidr=${both(CLUSTER_CIDR, CLUSTER_CIDR6)}`,
      // nodes are registered with their Pod CIDR: no CIDR allocation
      '--controllers=*,-node-ipam-controller',
      ...(o.heartbeatGrace
        ? [
            `--node-monitor-grace-period=${o.heartbeatGrace}`,
            `--node-startup-grace-period=${o.heartbeatGrace}`,
          ]
        : []),
      '--bind-address=127.0.0.1',
    ]);
    start('cp', 'kube-scheduler', [
      join(bin, 'kube-scheduler'),
      `--kubeconfig=${kc('scheduler', 'system:kube-scheduler')}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
    ]);
    kubectlIn(
      t,
      bin,
      admin,
      ['apply', '-f', '-'],
      manifests({
        clusterCIDR: both(CLUSTER_CIDR, CLUSTER_CIDR6),
        mode: t.mode,
        // the image kube-proxy's Pod names carries its release, as a real DaemonSet's does
        version: proxyVersion,
      }),
    );
    const proxyKc = kc('kube-proxy', 'system:kube-proxy');
    for (const n of t.nodes) {
      const dir = join(DIR, 'nodes', n.name);
      mkdirSync(dir, { recursive: true });
      start(n.name, `lab-kubelet-${n.name}`, [
        join(bin, 'lab-kubelet'),
        `--node=${n.name}`,
        `--ip=${n.ip6 ? `${n.ip},${n.ip6}` : n.ip}`,
        `--pod-cidr=${n.podCIDR6 ? `${n.podCIDR},${n.podCIDR6}` : n.podCIDR}`,
        `--netns=/run/netns/${ns(t, n.name)}`,
        `--prefix=${t.prefix}`,
        `--dir=${dir}`,
        `--kubeconfig=${kc(`node-${n.name}`, `system:node:${n.name}`)}`,
        `--proxy-kubeconfig=${proxyKc}`,
        `--kube-proxy=${proxyBin}`,
        `--tls-cert=${pki}/node-${n.name}.crt`,
        `--tls-key=${pki}/node-${n.name}.key`,
        `--client-ca=${pki}/ca.crt`,
        `--host-netns-inode=${statSync('/proc/self/ns/net').ino}`,
      ]);
    }
    await waitFor(
      'the nodes and kube-system Pods',
      () => {
        const out = kubectl(t, bin, admin, [
          'get',
          'pods',
          '-n',
          'kube-system',
          '-o',
          'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
        ]);
        const ready = out.split('\n').filter((l) => l === 'True').length;
        return ready === t.nodes.length + 1;
      },
      120_000,
    );
    const written = (node: string) =>
      t.mode === 'nftables'
        ? inNs(t, node, ['nft', 'list', 'table', 'ip', 'kube-proxy']).includes(
            'kube-system/kube-dns',
          )
        : /KUBE-SVC-/.test(inNs(t, node, ['iptables-save', '-t', 'nat']));
    await waitFor('kube-proxy to write the kube-dns rules on every node', () =>
      t.nodes.every((n) => written(n.name)),
    );
    const info: ClusterInfo = {
      clientNetns: ns(t, 'ws'),
      // relative to the repository root, as a check written elsewhere expects them
      kubeconfig: relative(ROOT, admin),
      limitedKubeconfig: relative(ROOT, limited),
      kubectl: join(bin, 'kubectl'),
      version: K8S_VERSION,
      kubeProxyVersion: proxyVersion,
      nodes: t.nodes.map((n) => ({ ...n, netns: ns(t, n.name), proxyMode: t.mode })),
    };
    writeFileSync(join(DIR, 'cluster.json'), JSON.stringify(info, null, 2) + '\n');
    if (o.keep) {
      kill(pids.reaper, 'SIGTERM');
      delete pids.reaper;
      save();
    }
    return info;
  } catch (e) {
    console.error(`cluster: up failed; the end of each log in ${join(DIR, 'logs')}:`);
    for (const f of readdirSync(join(DIR, 'logs')))
      console.error(
        `--- ${f}\n${readFileSync(join(DIR, 'logs', f), 'utf8')
          .split('\n')
          .slice(-8)
          .join('\n')}`,
      );
    throw e;
  }
}

const ns = (t: Pick<Topology, 'prefix'>, name: string) => `${t.prefix}.${name}`;

function inNs(t: Topology, name: string, argv: string[]): string {
  const r = spawnSync('ip', ['netns', 'exec', ns(t, name), ...argv], {
    encoding: 'utf8',
    timeout: 30_000,
    maxBuffer: 1 << 30,
  });
  return r.status === 0 ? r.stdout : '';
}

/** kubectl from the client namespace; '' when it fails (while waiting). */
function kubectl(t: Topology, bin: string, config: string, args: string[]): string {
  return inNs(t, 'ws', [join(bin, 'kubectl'), `--kubeconfig=${config}`, ...args]).trim();
}

function kubectlIn(t: Topology, bin: string, config: string, args: string[], input: string): void {
  sh(
    'ip',
    ['netns', 'exec', ns(t, 'ws'), join(bin, 'kubectl'), `--kubeconfig=${config}`, ...args],
    input,
  );
}

async function waitFor(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`cluster: timed out waiting for ${what}`);
}

/** The reaper (reaper.ts) of the lab this process is making; its pid. */
function startReaper(): number {
  const reaper = spawn(
    process.execPath,
    ['--import', 'tsx', join(HERE, 'reaper.ts'), String(process.pid)],
    // its own session: a signal to this process's group or terminal is not for it
    { cwd: ROOT, detached: true, stdio: ['pipe', 'ignore', 'ignore'] },
  );
  if (!reaper.pid) throw new Error('cluster: could not start the reaper');
  // neither it nor its pipe keeps this process alive: the pipe's end is what it waits for
  reaper.unref();
  (reaper.stdin as Socket).unref();
  return reaper.pid;
}

/** Starts argv in a lab namespace (only its network namespace: files are shared), detached. */
function startIn(t: Topology, name: string, log: string, argv: string[]): number {
  const path = `/run/netns/${ns(t, name)}`;
  if (!existsSync(path)) throw new Error(`cluster: no namespace ${path}`);
  const fd = openSync(join(DIR, 'logs', `${log}.log`), 'a');
  const child = spawn('nsenter', [`--net=${path}`, '--', ...argv], {
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  child.unref();
  if (!child.pid) throw new Error(`cluster: could not start ${argv[0]}`);
  return child.pid;
}

function identities(t: Topology): Identity[] {
  return [
    {
      stem: 'apiserver',
      cn: 'kube-apiserver',
      server: true,
      ips: [API_IP, KUBERNETES_SERVICE_IP, '127.0.0.1'],
      dns: [
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
        'localhost',
      ],
    },
    { stem: 'etcd', cn: 'etcd', server: true, ips: ['127.0.0.1'], dns: ['localhost'] },
    { stem: 'apiserver-etcd-client', cn: 'kube-apiserver-etcd-client' },
    {
      stem: 'apiserver-kubelet-client',
      cn: 'kube-apiserver-kubelet-client',
      groups: ['system:masters'],
    },
    { stem: 'admin', cn: 'kubernetes-admin', groups: ['system:masters'] },
    { stem: 'controller-manager', cn: 'system:kube-controller-manager' },
    { stem: 'scheduler', cn: 'system:kube-scheduler' },
    { stem: 'kube-proxy', cn: 'system:kube-proxy' },
    { stem: 'limited', cn: LIMITED_USER },
    ...t.nodes.map((n) => ({
      stem: `node-${n.name}`,
      cn: `system:node:${n.name}`,
      groups: ['system:nodes'],
      server: true,
      ips: [n.ip],
    })),
  ];
}

/** The namespaces and links: a switch, the control plane, the client and the nodes with cni0. */
function network(t: Topology): void {
  const ip = (...args: string[]) => sh('ip', args);
  const inNsIp = (name: string, ...args: string[]) => sh('ip', ['-n', ns(t, name), ...args]);
  const sysctl = (name: string, kv: string) =>
    sh('ip', ['netns', 'exec', ns(t, name), 'sysctl', '-qw', kv]);
  const all = ['sw', 'cp', 'ws', ...t.nodes.map((n) => n.name)];
  for (const n of all) {
    ip('netns', 'add', ns(t, n));
    inNsIp(n, 'link', 'set', 'lo', 'up');
  }
  inNsIp('sw', 'link', 'add', 'br0', 'type', 'bridge');
  inNsIp('sw', 'addr', 'add', `${SWITCH_IP}/24`, 'dev', 'br0');
  inNsIp('sw', 'link', 'set', 'br0', 'up');
  const v6 = (name: string, ...args: string[]) => sh('ip', ['-6', '-n', ns(t, name), ...args]);
  const dual = t.families === 'dual';
  if (dual) v6('sw', 'addr', 'add', `${SWITCH_IP6}/64`, 'dev', 'br0', 'nodad');
  const plug = (name: string, address: string) => {
    // both ends are created inside lab namespaces: the host's never sees them
    inNsIp('sw', 'link', 'add', name, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns(t, name));
    inNsIp('sw', 'link', 'set', name, 'master', 'br0', 'up');
    inNsIp(name, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    if (dual) v6(name, 'addr', 'add', `${twin(address)}/64`, 'dev', 'eth0', 'nodad');
    inNsIp(name, 'link', 'set', 'eth0', 'up');
  };
  plug('cp', API_IP);
  plug('ws', CLIENT_IP);
  for (const n of t.nodes) {
    plug(n.name, n.ip);
    // a ClusterIP is routed before it is DNATed: the node needs a way out (the switch drops it)
    inNsIp(n.name, 'route', 'add', 'default', 'via', SWITCH_IP);
    sysctl(n.name, 'net.ipv4.ip_forward=1');
    inNsIp(n.name, 'link', 'add', 'cni0', 'type', 'bridge');
    inNsIp(n.name, 'addr', 'add', `${n.podCIDR.replace(/0\/24$/, '1')}/24`, 'dev', 'cni0');
    if (n.podCIDR6) {
      v6(n.name, 'addr', 'add', `${n.podCIDR6.replace(/\/64$/, '1')}/64`, 'dev', 'cni0', 'nodad');
      v6(n.name, 'route', 'add', 'default', 'via', SWITCH_IP6);
      sysctl(n.name, 'net.ipv6.conf.all.forwarding=1');
    }
    inNsIp(n.name, 'link', 'set', 'cni0', 'up');
  }
  // every namespace reaches every node's Pods through that node
  for (const from of ['cp', 'ws', ...t.nodes.map((n) => n.name)])
    for (const to of t.nodes.filter((n) => n.name !== from)) {
      inNsIp(from, 'route', 'add', to.podCIDR, 'via', to.ip);
      if (to.podCIDR6 && to.ip6) v6(from, 'route', 'add', to.podCIDR6, 'via', to.ip6);
    }
}

/** Stops every process `up` started and removes every namespace of its prefix and .cluster/. */
export function down(): void {
  let prefix = 'kdc';
  try {
    const p = JSON.parse(readFileSync(join(DIR, 'pids.json'), 'utf8')) as Pids;
    prefix = p.prefix;
    // the reaper first: it is not to tear down a lab this `down` is already taking apart
    if (p.reaper !== undefined && p.reaper !== process.pid) kill(p.reaper, 'SIGTERM');
    for (const pid of p.pids) kill(pid, 'SIGTERM');
    const until = Date.now() + 5000;
    while (p.pids.some(alive) && Date.now() < until) spawnSync('sleep', ['0.1']);
    for (const pid of p.pids) kill(pid, 'SIGKILL');
  } catch {
    // nothing started, or already down
  }
  if (PREFIX.test(prefix) && existsSync('/run/netns'))
    for (const name of readdirSync('/run/netns'))
      if (name.startsWith(`${prefix}.`)) spawnSync('ip', ['netns', 'del', name]);
  rmSync(DIR, { recursive: true, force: true });
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal); // its process group: nsenter's child and what it started
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // gone
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [cmd, ...rest] = process.argv.slice(2);
  const flag = (name: string) => {
    const i = rest.indexOf(`--${name}`);
    return i >= 0 ? rest[i + 1] : undefined;
  };
  if (cmd === 'up') {
    up({
      nodes: Number(flag('nodes') ?? 2),
      mode: (flag('mode') as ProxyMode) ?? 'iptables',
      families: (flag('families') as Families) ?? 'ipv4',
      ...(flag('kube-proxy') ? { kubeProxy: flag('kube-proxy') } : {}),
      keep: true,
    })
      .then((info) => console.log(JSON.stringify(info, null, 2)))
      .catch((e: Error) => {
        console.error(e.message);
        process.exit(1);
      });
  } else if (cmd === 'down') down();
  else {
    console.error(
      'usage: cluster up [--nodes 2|3] [--mode iptables|nftables] [--families ipv4|dual] [--kube-proxy v1.X.Y] | down',
    );
    process.exit(2);
  }
}
