// The lab cluster's binaries, built from the Go modules pinned in go.mod (VERSION names the
// Kubernetes release) into a cache outside the work tree, keyed by everything that goes into
// them: a second `up` with the same pins builds nothing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODULE_DIR = fileURLToPath(new URL('.', import.meta.url));
export const K8S_VERSION = readFileSync(join(MODULE_DIR, 'VERSION'), 'utf8').trim();

const TOOLS = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kube-proxy',
  'kubectl',
] as const;
const OWN = ['etcd', 'lab-kubelet'] as const;
export type Binary = (typeof TOOLS)[number] | (typeof OWN)[number];

/** Why the cluster cannot be built here (no Go), or undefined. */
export function goUnavailable(): string | undefined {
  const r = spawnSync('go', ['version'], { encoding: 'utf8' });
  return r.status === 0
    ? undefined
    : 'Go is not installed (the lab cluster builds from Go modules)';
}

function sourceHash(): string {
  const h = createHash('sha256');
  const add = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const p = join(dir, e.name);
      if (e.isDirectory()) add(p);
      else if (e.name.endsWith('.go')) h.update(p.slice(MODULE_DIR.length)).update(readFileSync(p));
    }
  };
  for (const f of ['go.mod', 'go.sum', 'VERSION']) h.update(readFileSync(join(MODULE_DIR, f)));
  add(join(MODULE_DIR, 'cmd'));
  return h.digest('hex').slice(0, 16);
}

/** The versions' binaries: the kube-proxy of a release other than VERSION (control plane stays). */
function cacheDir(): string {
  return join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'kdebug-lab');
}

function ldflagsFor(version: string): string {
  const [major, minor] = version.replace(/^v/, '').split('.');
  // the release the binaries report (kube-proxy's build info, the API server's /version)
  return [
    `-X k8s.io/component-base/version.gitVersion=${version}`,
    `-X k8s.io/component-base/version.gitMajor=${major}`,
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
    '-s -w',
  ].join(' ');
}

function run(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, {
    cwd,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
  });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

/**
 * `go mod tidy`; a staging module the proxy does not serve at `staging` (k8s.io/kube-proxy
 * v0.31.14 is not published) is pinned to its newest patch of that minor, said in the log.
 */
function tidy(mod: string, staging: string, log: (s: string) => void): void {
  for (let tries = 0; ; tries++) {
    const r = spawnSync('go', ['mod', 'tidy'], {
      cwd: mod,
      encoding: 'utf8',
      env: { ...process.env, GOFLAGS: '-mod=mod' },
    });
    if (r.status === 0) return;
    const missing = /(k8s\.io\/[a-z0-9-]+)@v0\.\d+\.\d+: reading \S+: 40[34]/.exec(r.stderr)?.[1];
    if (!missing || tries > 5) throw new Error(`go mod tidy failed: ${r.stderr.trim()}`);
    const minor = staging.split('.').slice(0, 2).join('.');
    // asked outside the module: inside, its unresolved requirements stop `go list -m`
    const versions = spawnSync('go', ['list', '-m', '-versions', missing], {
      cwd: tmpdir(),
      encoding: 'utf8',
    }).stdout.split(/\s+/);
    const newest = versions.filter((v) => v.startsWith(`${minor}.`)).pop();
    if (!newest) throw new Error(`go mod tidy: ${missing} has no ${minor}.x published`);
    log(`${missing}@${staging} is not published: ${missing}@${newest} instead`);
    run('go', ['mod', 'edit', `-replace=${missing}=${missing}@${newest}`], mod);
  }
}

/** Is kube-proxy `version` in the cache already (nothing to build)? */
export const kubeProxyBuilt = (version: string) =>
  existsSync(join(cacheDir(), `kube-proxy-${version}`, 'kube-proxy'));

/**
 * kube-proxy alone at `version` (v1.X.Y), built in a throwaway module outside the work tree
 * pinned as pin.sh pins the lab (staging modules replaced by their v0.X.Y); returns its path.
 */
export function buildKubeProxy(version: string, log: (s: string) => void = () => {}): string {
  if (!/^v1\.\d+\.\d+$/.test(version)) throw new Error(`not a release: ${version}`);
  const bin = join(cacheDir(), `kube-proxy-${version}`);
  if (kubeProxyBuilt(version)) return join(bin, 'kube-proxy');
  const mod = join(cacheDir(), `module-${version}`);
  rmSync(mod, { recursive: true, force: true });
  mkdirSync(mod, { recursive: true });
  const started = Date.now();
  log(`building kube-proxy ${version} into ${bin} ...`);
  writeFileSync(join(mod, 'go.mod'), 'module kdebug.test/kube-proxy\n\ngo 1.22\n');
  run('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], mod);
  const gomodcache = spawnSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).stdout.trim();
  const upstream = readFileSync(
    join(gomodcache, 'cache/download/k8s.io/kubernetes/@v', `${version}.mod`),
    'utf8',
  );
  const staging = `v0.${version.replace(/^v1\./, '')}`;
  const replaces = [...upstream.matchAll(/^\t(k8s\.io\/[a-z0-9-]+) => \.\/staging\//gm)].map(
    (m) => `-replace=${m[1]}=${m[1]}@${staging}`,
  );
  run('go', ['mod', 'edit', ...replaces, `-require=k8s.io/kubernetes@${version}`], mod);
  writeFileSync(
    join(mod, 'tools.go'),
    '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-proxy"\n',
  );
  tidy(mod, staging, log);
  const tmp = `${bin}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  run(
    'go',
    [
      'build',
      '-trimpath',
      '-ldflags',
      ldflagsFor(version),
      '-o',
      `${tmp}/`,
      'k8s.io/kubernetes/cmd/kube-proxy',
    ],
    mod,
  );
  rmSync(bin, { recursive: true, force: true });
  renameSync(tmp, bin);
  log(`built kube-proxy ${version} in ${Math.round((Date.now() - started) / 1000)} s`);
  return join(bin, 'kube-proxy');
}

/** The kube-proxy binary of release `version`: the lab's own at VERSION, else built alone. */
export const kubeProxyBinary = (version: string, log: (s: string) => void = () => {}): string =>
  version === K8S_VERSION ? join(buildBinaries(log), 'kube-proxy') : buildKubeProxy(version, log);

/** The directory holding every binary, built first when the cache has none for these sources. */
export function buildBinaries(log: (s: string) => void = () => {}): string {
  const cache = process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache');
  const bin = join(cache, 'kdebug-lab', `${K8S_VERSION}-${sourceHash()}`);
  if ([...TOOLS, ...OWN].every((b) => existsSync(join(bin, b)))) return bin;
  const tmp = `${bin}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const [major, minor] = K8S_VERSION.replace(/^v/, '').split('.');
  // the release the binaries report (kube-proxy's build info, the API server's /version)
  const ldflags = [
    `-X k8s.io/component-base/version.gitVersion=${K8S_VERSION}`,
    `-X k8s.io/component-base/version.gitMajor=${major}`,
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
    '-s -w',
  ].join(' ');
  const started = Date.now();
  log(`building ${[...TOOLS, ...OWN].join(', ')} (${K8S_VERSION}) into ${bin} ...`);
  const r = spawnSync(
    'go',
    [
      'build',
      '-trimpath',
      '-ldflags',
      ldflags,
      '-o',
      tmp + '/',
      ...TOOLS.map((t) => `k8s.io/kubernetes/cmd/${t}`),
      ...OWN.map((o) => `./cmd/${o}`),
    ],
    {
      cwd: MODULE_DIR,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, CGO_ENABLED: '0' },
    },
  );
  if (r.status !== 0) throw new Error(`go build failed (exit ${r.status})`);
  rmSync(bin, { recursive: true, force: true });
  renameSync(tmp, bin);
  log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
  return bin;
}
