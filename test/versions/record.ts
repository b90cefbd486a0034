// `npm run test:versions`: expect and drift against what each modelled release's real kube-proxy
// wrote (the unit tests of test/versions, from the recordings; nothing is built). With
// `-- --record [--only 1.31,1.36] [--modes ipvs] [--built-only]` it records them again
// (--built-only: only the releases whose kube-proxy is built already): for each release's latest
// patch, the lab (test/support/cluster) runs that kube-proxy (the control plane stays at VERSION)
// in iptables and nftables mode (nftables from 1.31: beta, on by default), creates the truth
// matrix, waits until kube-proxy wrote it, and saves a kdebug snapshot under
// test/fixtures/releases/<minor>/<mode>/; IPVS mode (every release) runs in the IPVS VM
// (test/support/ipvs-vm: a real kernel with IPVS) as node-a, the VM's other files in
// <minor>/ipvs-vm/ (ipvs-dual, -vm: the same in a dual-stack cluster; iptables-dual and
// nftables-dual: the lab's modes so, both families' rules waited for and saved). Run it under `flock /tmp/kdebug-lab.lock`: one lab at a time on a machine.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { K8S_VERSION, kubeProxyBuilt } from '../support/cluster/build.js';
import { ClusterClient } from '../support/cluster/client.js';
import { down, ROOT, up } from '../support/cluster/cluster.js';
import {
  applyMatrix,
  LB_INGRESS,
  LB_INGRESS_V6,
  MATRIX_NAMESPACE,
} from '../support/cluster/matrix.js';
import type { ProxyMode } from '../support/cluster/topology.js';
import { recordIpvsNode } from '../support/ipvs-vm/kube-proxy.js';
import { MODELLED, type Release } from '../../src/core/dataplane/kube-proxy/releases.js';

/** The latest patch of each modelled minor (`go list -m -versions k8s.io/kubernetes`). */
export const LATEST_PATCH: Record<number, string> = {
  30: 'v1.30.14',
  31: 'v1.31.14',
  32: 'v1.32.13',
  33: 'v1.33.13',
  34: 'v1.34.4',
  35: 'v1.35.4',
  36: 'v1.36.3',
  37: K8S_VERSION,
};

/** A recording's kube-proxy mode: the lab's nodes run iptables and nftables, the IPVS VM ipvs
 * (-dual: in a dual-stack cluster, Services and EndpointSlices of both families). */
export type RecordedMode = ProxyMode | 'ipvs' | `${ProxyMode | 'ipvs'}-dual`;

/** The mode kube-proxy runs in a recording (its RECORDED and what kdebug reads off the node). */
export const proxyModeOf = (mode: RecordedMode): ProxyMode | 'ipvs' =>
  mode.replace(/-dual$/, '') as ProxyMode | 'ipvs';

/** A recording made in a dual-stack cluster. */
export const isDual = (mode: RecordedMode): boolean => mode.endsWith('-dual');

/** A recording made in the IPVS VM, node-a the VM's and node-b the lab's (iptables mode). */
export const inVm = (mode: RecordedMode): boolean => proxyModeOf(mode) === 'ipvs';

/** The lab's modes of a release: nftables mode is beta, on by default, from 1.31. */
export const labModesOf = (minor: number): ProxyMode[] =>
  minor >= 31 ? ['iptables', 'nftables'] : ['iptables'];

/** Every mode recorded of a release: the lab's, IPVS (in every modelled release), and each mode
 * dual-stack on its oldest and newest release (IPVS: a VM run each, minutes under emulation). */
export const modesOf = (minor: number): RecordedMode[] => [
  ...labModesOf(minor),
  'ipvs',
  ...(minor === 30 || minor === 37 ? (['ipvs-dual', 'iptables-dual'] as const) : []),
  ...(minor === 31 || minor === 37 ? (['nftables-dual'] as const) : []),
];

export const FIXTURES = join(ROOT, 'test/fixtures/releases');

/** Every recording held: each modelled release and mode with a snapshot under FIXTURES. */
export const recordings = (): { release: Release; mode: RecordedMode; dir: string }[] =>
  MODELLED.flatMap((release) =>
    modesOf(release.minor).map((mode) => ({
      release,
      mode,
      dir: join(FIXTURES, String(release.minor), mode),
    })),
  ).filter((r) => existsSync(join(r.dir, 'objects.json')));

/** The kube-proxy the lab ran for a recording, as `record` wrote it in RECORDED. */
export function recordedBy(dir: string): { version: string; mode: string } | undefined {
  const m = /^kube-proxy (v\S+) \((\w+) mode\)/.exec(readFileSync(join(dir, 'RECORDED'), 'utf8'));
  return m ? { version: m[1]!, mode: m[2]! } : undefined;
}

const PREFIX = 'kdv';

async function record(minor: number, mode: RecordedMode): Promise<void> {
  const version = LATEST_PATCH[minor]!;
  const started = Date.now();
  // in an IPVS recording the lab's own nodes run the release in iptables mode (node-b stays so)
  const labMode: ProxyMode = inVm(mode) ? 'iptables' : (proxyModeOf(mode) as ProxyMode);
  const families = isDual(mode) ? 'dual' : 'ipv4';
  const c = new ClusterClient(
    await up({
      prefix: PREFIX,
      nodes: 2,
      mode: labMode,
      families,
      kubeProxy: version === K8S_VERSION ? undefined : version,
    }),
  );
  try {
    await applyMatrix(c, families);
    // every Pod IP of both families (podIPs), each looked for in its own family's rules
    const podIPs = c
      .kubectl([
        '-n',
        MATRIX_NAMESPACE,
        'get',
        'pods',
        '-o',
        'jsonpath={range .items[*]}{range .status.podIPs[*]}{.ip}{" "}{end}{end}',
      ])
      .split(' ')
      .filter(Boolean);
    const lbs = [
      ...Object.values(LB_INGRESS),
      ...(isDual(mode) ? Object.values(LB_INGRESS_V6) : []),
    ];
    const ips = [...podIPs, ...lbs];
    const rules = (node: string, v6: boolean) =>
      c.onNode(
        node,
        labMode === 'nftables'
          ? ['nft', 'list', 'table', v6 ? 'ip6' : 'ip', 'kube-proxy']
          : [v6 ? 'ip6tables-save' : 'iptables-save'],
      ).stdout;
    // an address whole, not part of a longer one (10.244.1.5 is not 10.244.1.50, ::5 not ::50)
    const holds = (r: string, ip: string) =>
      new RegExp(
        ip.includes(':')
          ? `(?<![0-9a-f:])${ip}(?![0-9a-f]|:[0-9a-f])`
          : `(?<![\\d.])${ip.replace(/\./g, '\\.')}(?!\\d|\\.\\d)`,
      ).test(r);
    await c.until('kube-proxy to write every endpoint and load-balancer IP', () =>
      c.info.nodes.every((n) => {
        const v4 = rules(n.name, false);
        const v6 = isDual(mode) ? rules(n.name, true) : '';
        return ips.every((ip) => holds(ip.includes(':') ? v6 : v4, ip));
      }),
    );
    const out = join(FIXTURES, String(minor), mode);
    let vm = '';
    if (inVm(mode)) {
      const seconds = recordIpvsNode(c, PREFIX, { snapshot: out, vm: `${out}-vm` }, families);
      vm = ` (the VM ${seconds} s)`;
    } else {
      // a moment for the last sync to land, then the snapshot as a user would save it
      await new Promise((r) => setTimeout(r, 3000));
      const tmp = mkdtempSync(join(tmpdir(), 'kdv-'));
      const dir = join(tmp, 'snapshot');
      const saved = c.kdebug(['snapshot', 'save', dir, '--all', '-A', '--via', 'kube-proxy']);
      if (saved.code !== 0) throw new Error(`snapshot save: ${saved.stderr}`);
      // a dual-stack recording holds each node's rules of both families
      const dumps =
        labMode === 'nftables'
          ? ['nft-ip-kube-proxy', 'nft-ip6-kube-proxy']
          : ['iptables-save', 'ip6tables-save'];
      for (const n of c.info.nodes)
        for (const dump of isDual(mode) ? dumps : dumps.slice(0, 1))
          if (!existsSync(join(dir, 'nodes', n.name, `${dump}.txt`)))
            throw new Error(`snapshot save: no nodes/${n.name}/${dump}.txt`);
      rmSync(out, { recursive: true, force: true });
      cpSync(dir, out, { recursive: true });
      rmSync(tmp, { recursive: true, force: true });
    }
    const where =
      (families === 'dual' ? ', dual-stack' : '') +
      (inVm(mode)
        ? ` on node-a in the IPVS VM (test/support/ipvs-vm; its other files in ../${mode}-vm), node-b the same release in iptables mode`
        : '');
    writeFileSync(
      join(out, 'RECORDED'),
      `kube-proxy ${version} (${proxyModeOf(mode)} mode)${where}, control plane ${K8S_VERSION}: the lab's truth matrix, saved with kdebug snapshot save by npm run test:versions -- --record\n`,
    );
    console.error(
      `recorded v1.${minor} ${mode} in ${Math.round((Date.now() - started) / 1000)} s${vm}`,
    );
  } finally {
    down();
  }
}

async function main(argv: string[]): Promise<number> {
  if (!argv.includes('--record'))
    return (
      spawnSync(process.execPath, ['scripts/test.js', 'test/versions'], {
        cwd: ROOT,
        stdio: 'inherit',
      }).status ?? 1
    );
  const only = argv[argv.indexOf('--only') + 1];
  const minors = Object.keys(LATEST_PATCH)
    .map(Number)
    .filter((m) => !argv.includes('--only') || only!.split(',').includes(`1.${m}`))
    .filter((m) => !argv.includes('--built-only') || m === 37 || kubeProxyBuilt(LATEST_PATCH[m]!));
  const build = spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) return 1;
  // the oldest and newest of each mode first: a run cut short still proves the ends
  const first = [30, 31, 37];
  minors.sort((a, b) => (first.includes(b) ? 1 : 0) - (first.includes(a) ? 1 : 0) || b - a);
  const modes = argv.includes('--modes') ? argv[argv.indexOf('--modes') + 1]!.split(',') : [];
  let failed = 0;
  for (const minor of minors)
    for (const mode of modesOf(minor).filter((m) => modes.length === 0 || modes.includes(m)))
      await record(minor, mode).catch((e: Error) => {
        failed++;
        console.error(`v1.${minor} ${mode} not recorded: ${e.message}`);
      });
  console.error(`fixtures: ${readdirSync(FIXTURES).join(' ')}`);
  return failed > 0 ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: Error) => {
      console.error(e.message);
      process.exit(1);
    },
  );
