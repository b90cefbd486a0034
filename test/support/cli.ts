// Runs the built CLI as a user would: `node bin/kdebug.js ...`, building it first when needed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function kdebug(
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): CliResult {
  if (!existsSync(`${ROOT}/dist/cli.js`))
    spawnSync(process.execPath, ['scripts/build.js'], { cwd: ROOT, stdio: 'inherit' });
  const r = spawnSync(process.execPath, ['bin/kdebug.js', ...args], {
    cwd: ROOT,
    input: options.input ?? '',
    encoding: 'utf8',
    env: { ...hermetic(), NO_COLOR: '1', ...options.env },
    timeout: 60_000,
  });

  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let home: string | undefined;

/** This environment without the person's kubeconfig or ~/.ssh: a test never reaches a real cluster. */
export function hermetic(): NodeJS.ProcessEnv {
  home ??= mkdtempSync(join(tmpdir(), 'kdebug-home-'));
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env['KUBECONFIG'];
  return env;
}
