// Driving a running lab cluster from its cluster.json alone: kubectl and kdebug inside the
// client namespace, commands inside a node's namespace.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Finding, Report, Step } from '../../../src/core/model.js';
import type { ClusterInfo } from './cluster.js';
import { DIR, ROOT } from './cluster.js';
import { checkJsonStdout } from '../schema.js';
import type { ApiWrite } from './api-writer.js';
import { API_IP } from './topology.js';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `kdebug svc -o json` as the suites read it: the Report, its findings with `observed`. */
export type SvcJson = Omit<Report, 'steps'> & {
  steps: (Omit<Step, 'findings'> & { findings: (Finding & { observed?: boolean })[] })[];
};

/** kdebug's debug Pods in namespace default, without asking: the lab's --via pod. */
export const VIA_POD = ['--via', 'pod', '--yes', '--debug-namespace', 'default'];

export class ClusterClient {
  constructor(readonly info: ClusterInfo) {}

  static fromFile(file = join(DIR, 'cluster.json')): ClusterClient {
    return new ClusterClient(JSON.parse(readFileSync(file, 'utf8')) as ClusterInfo);
  }

  private run(netns: string, argv: string[], input = '', timeoutMs = 120_000): Run {
    const r = spawnSync('ip', ['netns', 'exec', netns, ...argv], {
      cwd: ROOT,
      input,
      encoding: 'utf8',
      timeout: timeoutMs,
      maxBuffer: 1 << 30,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '100' },
    });
    return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? r.error?.message ?? '' };
  }

  /** kubectl as the admin (or the limited user), failing the test on an error. */
  kubectl(
    args: string[],
    o: { input?: string; limited?: boolean; timeoutMs?: number } = {},
  ): string {
    const config = resolve(ROOT, o.limited ? this.info.limitedKubeconfig : this.info.kubeconfig);
    const r = this.run(
      this.info.clientNetns,
      [this.info.kubectl, `--kubeconfig=${config}`, ...args],
      o.input,
      o.timeoutMs,
    );
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** Writes through the API as the admin, `inFlight` at once (api-writer.ts): kubectl writes
   * one object at a time, too slow for thousands. */
  async apiWrites(writes: (ApiWrite | 'wait')[], inFlight = 32): Promise<void> {
    const child = spawn(
      'ip',
      [
        ...['netns', 'exec', this.info.clientNetns, process.execPath, '--import', 'tsx'],
        join(ROOT, 'test/support/cluster/api-writer.ts'),
        ...[`https://${API_IP}:6443`, join(DIR, 'pki'), String(inFlight)],
      ],
      {
        cwd: ROOT,
        stdio: ['pipe', 'inherit', 'pipe'],
        env: { ...process.env, KDEBUG_LAB_WRITES_FOR: String(process.pid) },
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.stdin.end(writes.map((w) => JSON.stringify(w)).join('\n'));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    if (code !== 0) throw new Error(`api writes: exit ${code}: ${stderr.trim()}`);
  }

  /** The Ready condition of each Pod of `ns` (those matching `selector`), "True" or "False". */
  readiness(ns: string, selector?: string): string[] {
    return this.podField(ns, selector, '{.status.conditions[?(@.type=="Ready")].status}');
  }

  /** The IP of each Pod of `ns` (those matching `selector`). */
  podIPs(ns: string, selector?: string): string[] {
    return this.podField(ns, selector, '{.status.podIP}');
  }

  private podField(ns: string, selector: string | undefined, field: string): string[] {
    const args = ['-n', ns, 'get', 'pods', ...(selector ? ['-l', selector] : [])];
    const out = this.kubectl([...args, '-o', `jsonpath={range .items[*]}${field}{" "}{end}`]);
    return out.split(' ').filter(Boolean);
  }

  /** The addresses of a Service's legacy Endpoints object (its controller may write after the
   * EndpointSlices; kdebug compares the two). */
  legacyEndpoints(ns: string, svc: string): string[] {
    const out = this.kubectl([
      '-n',
      ns,
      'get',
      'endpoints',
      svc,
      '-o',
      'jsonpath={.subsets[*].addresses[*].ip}',
    ]);
    return out.split(' ').filter(Boolean);
  }

  /** Whether kube-proxy on each of these nodes (default: all) has a DNAT to every one of `ips`. */
  dnatEverywhere(ips: string[], nodes = this.info.nodes.map((n) => n.name)): boolean {
    return nodes.every((node) => {
      const nat = this.onNode(node, ['iptables-save', '-t', 'nat']).stdout;
      return ips.every((ip) => nat.includes(`--to-destination ${ip}:`));
    });
  }

  /** The built kdebug, as a user on the client machine runs it (the admin, the limited user, or
   * the user of another kubeconfig). */
  kdebug(args: string[], o: { limited?: boolean; kubeconfig?: string } = {}): Run {
    const config =
      o.kubeconfig ?? resolve(ROOT, o.limited ? this.info.limitedKubeconfig : this.info.kubeconfig);
    const r = this.run(this.info.clientNetns, [
      process.execPath,
      join(ROOT, 'bin/kdebug.js'),
      ...args,
      `--kubeconfig=${config}`,
    ]);
    checkJsonStdout(args, r.stdout); // every JSON it prints against its schema
    return r;
  }

  /** The built kdebug as admin under /usr/bin/time: its run and its peak memory (for the bench). */
  /** `node` flags for the kdebug process (a CPU profile: Node refuses it in NODE_OPTIONS). */
  kdebugMeasured(
    args: string[],
    node: string[] = [],
  ): Run & { maxRssKiB: number; cpuSeconds: number } {
    const config = resolve(ROOT, this.info.kubeconfig);
    const r = this.run(
      this.info.clientNetns,
      [
        '/usr/bin/time',
        '-f',
        'kdebug-max-rss-kib %M cpu %U %S',
        process.execPath,
        ...node,
        join(ROOT, 'bin/kdebug.js'),
        ...args,
        `--kubeconfig=${config}`,
      ],
      '',
      900_000,
    );
    const m = /^kdebug-max-rss-kib (\d+) cpu (\S+) (\S+)$/m.exec(r.stderr);
    return {
      ...r,
      stderr: r.stderr.replace(/^kdebug-max-rss-kib .*\n?/m, ''),
      maxRssKiB: Number(m?.[1] ?? 0),
      // user + sys seconds: on a shared machine the wall time alone says little
      cpuSeconds: Number(m?.[2] ?? 0) + Number(m?.[3] ?? 0),
    };
  }

  /** The built kdebug as admin, not waiting for it: for a test that acts on the cluster meanwhile. */
  kdebugAsync(args: string[]): Promise<Run> {
    const child = spawn(
      'ip',
      [
        'netns',
        'exec',
        this.info.clientNetns,
        process.execPath,
        join(ROOT, 'bin/kdebug.js'),
        ...args,
        `--kubeconfig=${resolve(ROOT, this.info.kubeconfig)}`,
      ],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', COLUMNS: '100' } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    return new Promise((done, fail) =>
      child.on('close', (code) => {
        try {
          checkJsonStdout(args, stdout); // every JSON it prints against its schema
          done({ code, stdout, stderr });
        } catch (e) {
          fail(e);
        }
      }),
    );
  }

  /** Writes each LoadBalancer Service's ingress IPs on its status (there is no cloud here). */
  setIngress(ns: string, ingress: Record<string, string[]>): void {
    for (const [svc, ips] of Object.entries(ingress))
      this.kubectl([
        '-n',
        ns,
        'patch',
        'service',
        svc,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { loadBalancer: { ingress: ips.map((ip) => ({ ip })) } } }),
      ]);
  }

  /** Deletes by hand, on a node, the nat rule `line` of its iptables-save (ip6tables with `ip6`). */
  deleteRule(node: string, line: string, ip6 = false): Run {
    const words = line
      .replace(/^-A/, '-D')
      .match(/"[^"]*"|\S+/g)!
      .map((w) => w.replace(/^"|"$/g, ''));
    return this.onNode(node, [ip6 ? 'ip6tables' : 'iptables', '-t', 'nat', ...words]);
  }

  /** A command inside a node's namespace (what is on that node). */
  onNode(node: string, argv: string[], input = ''): Run {
    const n = this.info.nodes.find((x) => x.name === node);
    if (!n) throw new Error(`no node ${node}`);
    return this.run(n.netns, argv, input);
  }

  /** Waits until `ok` holds (the controllers and kube-proxy work asynchronously). */
  async until(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (ok()) return;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
}
