// cilium-ref, the program that runs Cilium's own load-balancer control plane on a snapshot's
// objects, built from this module (go.mod pins github.com/cilium/cilium) into a cache outside
// the work tree keyed by everything that goes into it, as ../cluster/build.ts does for the lab.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODULE_DIR = fileURLToPath(new URL('.', import.meta.url));
/** The namespace wrapper: real BPF maps in a private bpffs when root, fake maps otherwise. */
export const RUN_SH = join(MODULE_DIR, 'run.sh');

/** The Cilium module version go.mod requires (e.g. v1.20.2). */
export function ciliumVersion(): string {
  const mod = readFileSync(join(MODULE_DIR, 'go.mod'), 'utf8');
  const m = /^\s*(?:require\s+)?github\.com\/cilium\/cilium (v\S+)/m.exec(mod);
  if (!m) throw new Error('go.mod does not require github.com/cilium/cilium');
  return m[1]!;
}

function sourceHash(): string {
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum']) h.update(readFileSync(join(MODULE_DIR, f)));
  for (const f of readdirSync(MODULE_DIR).sort()) {
    if (f.endsWith('.go')) h.update(f).update(readFileSync(join(MODULE_DIR, f)));
  }
  return h.digest('hex').slice(0, 16);
}

function cacheDir(): string {
  return join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'kdebug-lab');
}

/** Path of the cilium-ref binary, built first (minutes when cold) if the cache has none. */
export function buildCiliumRef(log: (s: string) => void = () => {}): string {
  const dir = join(cacheDir(), `cilium-ref-${sourceHash()}`);
  const bin = join(dir, 'cilium-ref');
  if (existsSync(bin)) return bin;
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  log(`building cilium-ref (cilium ${ciliumVersion()}) into ${dir} ...`);
  const r = spawnSync('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', tmp + '/', '.'], {
    cwd: MODULE_DIR,
    stdio: ['ignore', 'inherit', 'inherit'],
    // go.sum is committed; -mod=mod lets a first build fetch what the module cache lacks
    env: {
      ...process.env,
      CGO_ENABLED: '0',
      GOFLAGS: `${process.env['GOFLAGS'] ?? ''} -mod=mod`.trim(),
      GOTOOLCHAIN: 'local',
    },
  });
  if (r.status !== 0) throw new Error(`go build failed (exit ${r.status})`);
  renameSync(join(tmp, 'cilium'), join(tmp, 'cilium-ref'));
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
  return bin;
}

/** Run cilium-ref through run.sh with these arguments; returns its stdout (throws on failure). */
export function runCiliumRef(args: string[]): { stdout: string; stderr: string } {
  const r = spawnSync('sh', [RUN_SH, buildCiliumRef(), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) {
    throw new Error(`cilium-ref ${args.join(' ')} failed (exit ${r.status}): ${r.stderr}`);
  }
  return { stdout: r.stdout, stderr: r.stderr };
}
