// krew and its manifest validator, built from their Go module (sigs.k8s.io/krew, pinned in
// go.mod here) into a cache outside the work tree, for the test of kdebug's krew manifest.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('.', import.meta.url));

/** The directory holding `krew` and `validate-krew-manifest`. */
export function buildKrewTools(): string {
  const hash = createHash('sha256')
    .update(readFileSync(join(DIR, 'go.mod')))
    .update(readFileSync(join(DIR, 'go.sum')))
    .digest('hex')
    .slice(0, 16);
  const bin = join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'kdebug-krew', hash);
  if (['krew', 'validate-krew-manifest'].every((b) => existsSync(join(bin, b)))) return bin;
  const r = spawnSync(
    'go',
    [
      'build',
      '-o',
      `${bin}/`,
      'sigs.k8s.io/krew/cmd/krew',
      'sigs.k8s.io/krew/cmd/validate-krew-manifest',
    ],
    { cwd: DIR, encoding: 'utf8', env: { ...process.env, CGO_ENABLED: '0' } },
  );
  if (r.status !== 0) throw new Error(`go build of krew failed: ${r.stderr}`);
  return bin;
}
