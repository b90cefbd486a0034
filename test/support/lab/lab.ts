// The lab: a tiny cluster's network built from network namespaces this script creates, and
// nothing else. IP conventions (every address exists only inside the lab's namespaces):
//   nodes        192.0.2.11 node-a, 192.0.2.12 node-b, 192.0.2.13 node-c (TEST-NET-1),
//                joined by the bridge of a "switch" namespace (192.0.2.1, which forwards nothing)
//   workstation  192.0.2.100: where kdebug runs, as a person's laptop would
//   Pods         10.244.0.0/16, one /24 per node (node-a 10.244.0.0/24 ...), one bridge cni0 each
//   Services     10.96.0.0/16: default/nginx-svc 10.96.190.219:8080/tcp -> the nginx Pods' :80,
//                kube-system/kube-dns 10.96.0.10:53/udp -> the DNS Pod 10.244.2.10 on node-c
// Each node runs a real sshd (key only; node-c on port 2222 and reachable from the workstation
// only through node-a) in a private mount namespace that adds two users to /etc/passwd for it
// alone: kdlab-ops may run the iptables-save binaries (and cat the kernel's lists of legacy
// tables) with `sudo -n`, kdlab-guest may not; the host's own account files are never changed.
// Each node holds kube-proxy-shaped rules loaded with the real iptables-restore: node-a generated (nft), node-b the seed dumps (nft), node-c generated
// (legacy backend; node-b's seed rules have no kube-dns, like a node kube-proxy left behind).
// The nginx Pods answer HTTP with their Pod name; the DNS Pod answers A queries for the
// Services' names; each node answers kube-proxy's /proxyMode and /metrics on 127.0.0.1:10249.
//
// By hand (root):  npx tsx test/support/lab/lab.ts up|down|status [--prefix NAME]
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectedLabRules, seedRules, type LabService } from './rules.js';
import { alive } from '../process.js';

export interface LabNode {
  name: string;
  ip: string;
  podCIDR: string;
  /** The address of the node's cni0 bridge, the Pods' gateway. */
  gateway: string;
  sshPort: number;
  backend: 'nft' | 'legacy';
  /** The expected-rules shape for the lab's Services, the seed's dumps, or this iptables-save text. */
  rules: 'generated' | 'seed' | { text: string };
  /** Reachable from the workstation only through this node (ProxyJump). */
  jumpHost?: string;
}

export interface LabPod {
  name: string;
  namespace: string;
  node: string;
  ip: string;
  port: number;
  app: 'http' | 'dns';
}

export const NODES: LabNode[] = [
  {
    name: 'node-a',
    ip: '192.0.2.11',
    podCIDR: '10.244.0.0/24',
    gateway: '10.244.0.1',
    sshPort: 22,
    backend: 'nft',
    rules: 'generated',
  },
  {
    name: 'node-b',
    ip: '192.0.2.12',
    podCIDR: '10.244.1.0/24',
    gateway: '10.244.1.1',
    sshPort: 22,
    backend: 'nft',
    rules: 'seed',
  },
  {
    name: 'node-c',
    ip: '192.0.2.13',
    podCIDR: '10.244.2.0/24',
    gateway: '10.244.2.1',
    sshPort: 2222,
    backend: 'legacy',
    rules: 'generated',
    jumpHost: 'node-a',
  },
];
export const PODS: LabPod[] = [
  {
    name: 'nginx-55fc968d9-kh24k',
    namespace: 'default',
    node: 'node-a',
    ip: '10.244.0.3',
    port: 80,
    app: 'http',
  },
  {
    name: 'nginx-55fc968d9-4pddn',
    namespace: 'default',
    node: 'node-b',
    ip: '10.244.1.7',
    port: 80,
    app: 'http',
  },
  {
    name: 'coredns-5d78c9869d-x2x7q',
    namespace: 'kube-system',
    node: 'node-c',
    ip: '10.244.2.10',
    port: 53,
    app: 'dns',
  },
];
const endpointsOf = (app: LabPod['app']) =>
  PODS.filter((p) => p.app === app).map((p) => ({ ip: p.ip, port: p.port }));
export const CLUSTER_CIDR = '10.244.0.0/16';
/** Non-root logins of the lab's sshd: one with passwordless sudo for iptables-save, one without. */
export const LAB_USERS = { sudoer: 'kdlab-ops', other: 'kdlab-guest' } as const;
export const SERVICE_CIDR = '10.96.0.0/16';
export const SWITCH_IP = '192.0.2.1';
export const WORKSTATION_IP = '192.0.2.100';
export const SERVICES: LabService[] = [
  {
    namespace: 'default',
    name: 'nginx-svc',
    portName: 'http',
    protocol: 'tcp',
    clusterIP: '10.96.190.219',
    port: 8080,
    endpoints: endpointsOf('http'),
  },
  {
    namespace: 'kube-system',
    name: 'kube-dns',
    portName: 'dns',
    protocol: 'udp',
    clusterIP: '10.96.0.10',
    port: 53,
    endpoints: endpointsOf('dns'),
  },
];
/** The names the lab's DNS Pod knows. */
export const DNS_RECORDS: Record<string, string> = Object.fromEntries(
  SERVICES.map((s) => [`${s.name}.${s.namespace}.svc.cluster.local`, s.clusterIP]),
);

/** What a lab is made of; a variant (the demo's addresses, say) is another value of this. */
export interface LabTopology {
  nodes: LabNode[];
  pods: LabPod[];
  services: LabService[];
  clusterCIDR: string;
  /** The names the DNS Pods answer. */
  dnsRecords: Record<string, string>;
}

export const TOPOLOGY: LabTopology = {
  nodes: NODES,
  pods: PODS,
  services: SERVICES,
  clusterCIDR: CLUSTER_CIDR,
  dnsRecords: DNS_RECORDS,
};

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const BASE_DIR = '/tmp/kdebug-lab';
const PREFIX = /^[a-z0-9][a-z0-9-]{0,15}$/;

export interface Exec {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { input?: string; timeoutMs?: number } = {}): Exec {
  const r = spawnSync(cmd, args, {
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 20_000,
  });
  if (r.error) return { code: null, stdout: '', stderr: r.error.message };
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function must(cmd: string, args: string[], input?: string): string {
  const r = run(cmd, args, input === undefined ? {} : { input });
  if (r.code !== 0)
    throw new Error(`lab: ${cmd} ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** Why the lab cannot run here, or undefined when it can (root and the tools are present). */
export function labUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'the lab needs Linux network namespaces';
  if (process.getuid?.() !== 0) return 'the lab needs root (network namespaces, sshd)';
  const tools = [
    'ip',
    'iptables-nft-restore',
    'iptables-legacy-restore',
    'ssh-keygen',
    'curl',
    'ping',
    'nc',
    'dig',
    'unshare',
    'sudo',
  ];
  const missing = tools.filter((t) => run('sh', ['-c', `command -v ${t}`]).code !== 0);
  if (!existsSync('/usr/sbin/sshd')) missing.push('/usr/sbin/sshd (openssh-server)');
  return missing.length > 0 ? `missing tools: ${missing.join(', ')}` : undefined;
}

export class Lab {
  readonly dir: string;
  readonly nodes: LabNode[];
  readonly pods: LabPod[];
  readonly services: LabService[];

  private constructor(
    readonly prefix: string,
    readonly topology: LabTopology = TOPOLOGY,
  ) {
    this.dir = join(BASE_DIR, prefix);
    ({ nodes: this.nodes, pods: this.pods, services: this.services } = topology);
  }

  /** The namespace of a node ("node-a"), a Pod, "ws" (the workstation) or "sw" (the switch). */
  ns(name: string): string {
    return `${this.prefix}.${name}`;
  }

  /** Runs argv inside a lab namespace. */
  exec(ns: string, argv: string[], opts: { input?: string; timeoutMs?: number } = {}): Exec {
    return run('ip', ['netns', 'exec', this.ns(ns), ...argv], opts);
  }

  /** Like exec, without blocking the event loop (for a child that talks to this process). */
  execAsync(ns: string, argv: string[], opts: { timeoutMs?: number } = {}): Promise<Exec> {
    return new Promise((resolve) => {
      const child = spawn('ip', ['netns', 'exec', this.ns(ns), ...argv], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr: signal ? `${stderr}\n(killed by ${signal})` : stderr });
      });
    });
  }

  /** Files a client needs: the key sshd accepts, known_hosts for every node, an ssh config. */
  get files() {
    return {
      key: join(this.dir, 'id_ed25519'),
      knownHosts: join(this.dir, 'known_hosts'),
      sshConfig: join(this.dir, 'ssh_config'),
      hostKey: (node: string) => join(this.dir, node, 'ssh_host_ed25519_key'),
    };
  }

  node(name: string): LabNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`lab: no node ${name}`);
    return n;
  }

  /** Builds the lab; leftovers of a killed run with the same prefix are removed first. */
  static async up(prefix = 'kdlab', topology: LabTopology = TOPOLOGY): Promise<Lab> {
    if (!PREFIX.test(prefix)) throw new Error(`lab: prefix must match ${PREFIX}`);
    const why = labUnavailable();
    if (why) throw new Error(`lab: ${why}`);
    const lab = new Lab(prefix, topology);
    const owner = lab.owner();
    if (owner !== undefined && owner !== process.pid && alive(owner))
      throw new Error(`lab ${prefix} is in use by process ${owner}`);
    await Lab.down(prefix);
    mkdirSync(lab.dir, { recursive: true });
    writeFileSync(join(lab.dir, 'owner'), `${process.pid}\n`);
    try {
      lab.buildNetwork();
      lab.loadRules();
      lab.writeKeys();
      lab.startServers();
      await lab.waitForServers();
    } catch (err) {
      await Lab.down(prefix);
      throw err;
    }
    return lab;
  }

  private owner(): number | undefined {
    try {
      return Number(readFileSync(join(this.dir, 'owner'), 'utf8').trim()) || undefined;
    } catch {
      return undefined;
    }
  }

  private buildNetwork(): void {
    const ip = (...args: string[]) => must('ip', args);
    const inNs = (ns: string, ...args: string[]) => must('ip', ['-n', this.ns(ns), ...args]);
    const sysctl = (ns: string, kv: string) =>
      must('ip', ['netns', 'exec', this.ns(ns), 'sysctl', '-qw', kv]);
    const names = ['sw', 'ws', ...this.nodes.map((n) => n.name), ...this.pods.map((p) => p.name)];
    for (const n of names) {
      ip('netns', 'add', this.ns(n));
      inNs(n, 'link', 'set', 'lo', 'up');
    }
    // The switch: one bridge, a port per node and one for the workstation; it routes nothing
    inNs('sw', 'link', 'add', 'br0', 'type', 'bridge');
    inNs('sw', 'addr', 'add', `${SWITCH_IP}/24`, 'dev', 'br0');
    inNs('sw', 'link', 'set', 'br0', 'up');
    sysctl('sw', 'net.ipv4.ip_forward=0');
    const plug = (ns: string, port: string, address: string) => {
      // Both ends are created inside lab namespaces: the host namespace never sees them
      inNs('sw', 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.ns(ns));
      inNs('sw', 'link', 'set', port, 'master', 'br0', 'up');
      inNs(ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
      inNs(ns, 'link', 'set', 'eth0', 'up');
      inNs(ns, 'route', 'add', 'default', 'via', SWITCH_IP);
    };
    plug('ws', 'ws', WORKSTATION_IP);
    for (const node of this.nodes) {
      plug(node.name, node.name, node.ip);
      sysctl(node.name, 'net.ipv4.ip_forward=1');
      inNs(node.name, 'link', 'add', 'cni0', 'type', 'bridge');
      inNs(node.name, 'addr', 'add', `${node.gateway}/24`, 'dev', 'cni0');
      inNs(node.name, 'link', 'set', 'cni0', 'up');
      for (const other of this.nodes.filter((o) => o !== node))
        inNs(node.name, 'route', 'add', other.podCIDR, 'via', other.ip);
    }
    this.pods.forEach((pod, i) => {
      const node = this.node(pod.node);
      const port = `veth${i}`;
      inNs(
        node.name,
        'link',
        'add',
        port,
        'type',
        'veth',
        'peer',
        'name',
        'eth0',
        'netns',
        this.ns(pod.name),
      );
      inNs(node.name, 'link', 'set', port, 'master', 'cni0', 'up');
      inNs(pod.name, 'addr', 'add', `${pod.ip}/24`, 'dev', 'eth0');
      inNs(pod.name, 'link', 'set', 'eth0', 'up');
      inNs(pod.name, 'route', 'add', 'default', 'via', node.gateway);
    });
    // a node behind a jump host is private: the workstation reaches its sshd only through it
    const hidden = this.nodes.filter((n) => n.jumpHost);
    if (hidden.length > 0)
      this.loadIptables(
        'ws',
        'nft',
        `*filter\n${hidden.map((n) => `-A OUTPUT -d ${n.ip}/32 -p tcp -j REJECT --reject-with tcp-reset\n`).join('')}COMMIT\n`,
      );
  }

  /** Loads any iptables-save text into a lab namespace with the real iptables-restore. */
  loadIptables(ns: string, backend: 'nft' | 'legacy', text: string): void {
    must('ip', ['netns', 'exec', this.ns(ns), `iptables-${backend}-restore`], text);
  }

  private loadRules(): void {
    const seed = seedRules(this.services[0]!.clusterIP);
    for (const node of this.nodes) {
      const text =
        node.rules === 'seed'
          ? seed
          : node.rules === 'generated'
            ? expectedLabRules(this.topology, node.name)
            : node.rules.text;
      this.loadIptables(node.name, node.backend, text);
    }
  }

  private writeKeys(): void {
    const keygen = (file: string) =>
      must('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'kdebug-lab', '-f', file]);
    keygen(this.files.key);
    const known: string[] = [];
    for (const node of this.nodes) {
      mkdirSync(join(this.dir, node.name), { recursive: true });
      keygen(this.files.hostKey(node.name));
      const [type, key] = readFileSync(`${this.files.hostKey(node.name)}.pub`, 'utf8').split(' ');
      const name = node.sshPort === 22 ? node.ip : `[${node.ip}]:${node.sshPort}`;
      known.push(`${name} ${type} ${key}`);
      writeFileSync(
        join(this.dir, node.name, 'sshd_config'),
        [
          `ListenAddress ${node.ip}:${node.sshPort}`,
          `HostKey ${this.files.hostKey(node.name)}`,
          `AuthorizedKeysFile ${this.files.key}.pub`,
          `PidFile ${join(this.dir, node.name, 'sshd.pid')}`,
          'UsePAM no',
          'StrictModes no',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'PermitRootLogin prohibit-password',
          'AllowTcpForwarding yes',
          'PrintMotd no',
          'PrintLastLog no',
          '',
        ].join('\n'),
      );
    }
    // node-b's entry hashed by OpenSSH itself, so the lab also proves hashed lookups
    const hashed = join(this.dir, 'known_hosts.node-b');
    writeFileSync(hashed, known[1] + '\n');
    must('ssh-keygen', ['-q', '-H', '-f', hashed]);
    known[1] = readFileSync(hashed, 'utf8').trim();
    writeFileSync(this.files.knownHosts, known.join('\n') + '\n');
    const hosts = this.nodes.map((n) =>
      [
        `Host ${n.name}`,
        `  HostName ${n.ip}`,
        `  Port ${n.sshPort}`,
        ...(n.jumpHost ? [`  ProxyJump ${n.jumpHost}`] : []),
      ].join('\n'),
    );
    const all = [
      'Host *',
      '  User root',
      `  IdentityFile ${this.files.key}`,
      `  UserKnownHostsFile ${this.files.knownHosts}`,
      '  StrictHostKeyChecking yes',
    ];
    writeFileSync(this.files.sshConfig, [...hosts, all.join('\n'), ''].join('\n'));
  }

  /**
   * Account files for the sshd mount namespaces: the host's, plus the lab's two users, and a
   * sudoers directory that lets kdlab-ops run only the iptables-save binaries without a password.
   */
  private writeAccounts(): { bind: [string, string][] } {
    const dir = join(this.dir, 'accounts');
    const home = join(this.dir, 'home');
    mkdirSync(join(dir, 'sudoers.d'), { recursive: true });
    mkdirSync(home, { recursive: true });
    const users = [LAB_USERS.sudoer, LAB_USERS.other].map((name, i) => ({ name, id: 64100 + i }));
    const add = (file: string, lines: string[]) => {
      writeFileSync(
        join(dir, file),
        readFileSync(`/etc/${file}`, 'utf8').trimEnd() + '\n' + lines.join('\n') + '\n',
      );
    };
    add(
      'passwd',
      users.map((u) => `${u.name}:x:${u.id}:${u.id}::${home}:/bin/sh`),
    );
    add(
      'group',
      users.map((u) => `${u.name}:x:${u.id}:`),
    );
    add(
      'shadow',
      users.map((u) => `${u.name}:*:20000:0:99999:7:::`),
    );
    chmodSync(join(dir, 'shadow'), 0o640);
    const saves = ['iptables-save', 'iptables-legacy-save', 'iptables-nft-save'].map(
      (b) => `/usr/sbin/${b}`,
    );
    // the kernel's lists of legacy tables are root's alone; kdebug reads them before legacy's
    const lists = ['ip_tables_names', 'ip6_tables_names'].map((f) => `/bin/cat /proc/net/${f}`);
    const sudoers = join(dir, 'sudoers.d', 'kdlab');
    writeFileSync(
      sudoers,
      `${LAB_USERS.sudoer} ALL=(root) NOPASSWD: ${[...saves, ...lists].join(', ')}\n`,
    );
    chmodSync(sudoers, 0o440);
    return {
      bind: [
        [join(dir, 'passwd'), '/etc/passwd'],
        [join(dir, 'group'), '/etc/group'],
        [join(dir, 'shadow'), '/etc/shadow'],
        [join(dir, 'sudoers.d'), '/etc/sudoers.d'],
      ],
    };
  }

  private startServers(): void {
    mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege-separation directory
    const { bind } = this.writeAccounts();
    // bind mounts in a private mount namespace: only this sshd and its sessions see them
    const mounts = bind.map(([from, to]) => `mount --bind '${from}' '${to}'`).join(' && ');
    for (const node of this.nodes) {
      const config = join(this.dir, node.name, 'sshd_config');
      must('/usr/sbin/sshd', ['-t', '-f', config]);
      this.detach(
        node.name,
        [
          'unshare',
          '--mount',
          '--propagation',
          'private',
          'sh',
          '-c',
          `${mounts} && exec /usr/sbin/sshd -D -e -f '${config}'`,
        ],
        join(this.dir, node.name, 'sshd.log'),
      );
    }
    const http = (reply: string, listen: string) =>
      `const r = ${reply}; require('http').createServer((q, s) => s.end(r(q.url))).listen(${listen})`;
    for (const node of this.nodes) {
      const metrics =
        "(u) => u === '/proxyMode' ? 'iptables' : u === '/metrics' ? 'kubeproxy_sync_proxy_rules_last_timestamp_seconds 1.7e+09\\n' : ''";
      this.detach(
        node.name,
        [process.execPath, '-e', http(metrics, "10249, '127.0.0.1'")],
        join(this.dir, node.name, 'kube-proxy.log'),
      );
    }
    for (const pod of this.pods) {
      const log = join(this.dir, `${pod.name}.log`);
      if (pod.app === 'http')
        this.detach(
          pod.name,
          [process.execPath, '-e', http(`() => ${JSON.stringify(pod.name + '\n')}`, `${pod.port}`)],
          log,
        );
      else
        this.detach(
          pod.name,
          [
            process.execPath,
            '--import',
            'tsx',
            join(ROOT, 'test/support/lab/dns-server.ts'),
            JSON.stringify(this.topology.dnsRecords),
          ],
          log,
        );
    }
  }

  private detach(ns: string, argv: string[], log: string): void {
    const fd = openSync(log, 'a');
    spawn('ip', ['netns', 'exec', this.ns(ns), ...argv], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', fd, fd],
    }).unref();
  }

  private async waitForServers(): Promise<void> {
    const deadline = Date.now() + 10_000;
    const tcp = (ns: string, ip: string, port: number) => ({
      ns,
      what: `${ip}:${port}`,
      check: ['nc', '-z', '-w', '1', ip, `${port}`],
    });
    const pending = [
      ...this.nodes.flatMap((n) => [tcp(n.name, n.ip, n.sshPort), tcp(n.name, '127.0.0.1', 10249)]),
      ...this.pods.map((p) =>
        p.app === 'http'
          ? tcp(p.name, p.ip, p.port)
          : {
              ns: p.name,
              what: `dns ${p.ip}`,
              check: [
                'dig',
                '+time=1',
                '+tries=1',
                `@${p.ip}`,
                'kube-dns.kube-system.svc.cluster.local',
              ],
            },
      ),
    ];
    while (pending.length > 0) {
      const p = pending[0]!;
      if (this.exec(p.ns, p.check).code === 0) pending.shift();
      else if (Date.now() > deadline)
        throw new Error(`lab: nothing answers on ${p.what} in ${p.ns} (see ${this.dir})`);
      else await new Promise((r) => setTimeout(r, 50));
    }
  }

  async down(): Promise<void> {
    await Lab.down(this.prefix);
  }

  /** Removes a lab: stops the processes inside its namespaces, deletes them and its files. */
  static async down(prefix = 'kdlab'): Promise<void> {
    if (!PREFIX.test(prefix)) throw new Error(`lab: prefix must match ${PREFIX}`);
    const namespaces = Lab.namespaces(prefix);
    // Listed afresh each time: only processes inside the lab's own namespaces are signalled
    const pids = () =>
      namespaces.flatMap((ns) =>
        run('ip', ['netns', 'pids', ns]).stdout.split(/\s+/).filter(Boolean).map(Number),
      );
    const stop = async (sig: NodeJS.Signals, ms: number) => {
      for (const pid of pids()) signal(pid, sig);
      const deadline = Date.now() + ms;
      while (pids().length > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
    };
    await stop('SIGTERM', 3000);
    await stop('SIGKILL', 2000);
    for (const ns of namespaces) run('ip', ['netns', 'del', ns]);
    rmSync(join(BASE_DIR, prefix), { recursive: true, force: true });
  }

  /** The namespaces of the lab with this prefix that exist now. */
  static namespaces(prefix: string): string[] {
    return run('ip', ['netns', 'list'])
      .stdout.split('\n')
      .map((l) => l.split(' ')[0]!)
      .filter((n) => n.startsWith(`${prefix}.`));
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function status(prefix: string): string {
  const namespaces = Lab.namespaces(prefix);
  if (namespaces.length === 0) return `no lab ${prefix}`;
  const lines = namespaces.map((ns) => {
    const addrs = run('ip', ['-n', ns, '-br', 'addr'])
      .stdout.trim()
      .split('\n')
      .filter((l) => !l.startsWith('lo '))
      .join('; ');
    const pids = run('ip', ['netns', 'pids', ns]).stdout.trim().split(/\s+/).filter(Boolean).length;
    return `${ns.padEnd(40)} ${pids} process(es)  ${addrs}`;
  });
  const dir = join(BASE_DIR, prefix);
  return [
    ...lines,
    '',
    `files: ${dir}`,
    `try:   ip netns exec ${prefix}.node-a curl -s http://${SERVICES[0]!.clusterIP}:${SERVICES[0]!.port}/`,
    `       ip netns exec ${prefix}.ws ssh -F ${dir}/ssh_config node-c iptables-legacy-save -t nat`,
    `       ip netns exec ${prefix}.ws node bin/kdebug.js rules --ssh node-c --ssh-config ${dir}/ssh_config`,
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [cmd] = argv;
  const at = argv.indexOf('--prefix');
  const prefix = at >= 0 ? argv[at + 1] : 'kdlab';
  if (!prefix || !['up', 'down', 'status'].includes(cmd ?? '')) {
    console.error(
      'usage: npx tsx test/support/lab/lab.ts up|down|status [--prefix NAME]   (as root)',
    );
    return 2;
  }
  if (cmd === 'up') {
    const started = Date.now();
    await Lab.up(prefix);
    console.log(`lab ${prefix} is up (${Date.now() - started} ms)\n`);
    console.log(status(prefix));
    console.log(`\nremove it with: npx tsx test/support/lab/lab.ts down --prefix ${prefix}`);
  } else if (cmd === 'down') {
    await Lab.down(prefix);
    console.log(`lab ${prefix} removed`);
  } else console.log(status(prefix));
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
