// Runs the built CLI as a user would: `node bin/kdebug.js ...`, building it first when needed.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkJsonStdout } from './schema.js';

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
  // every JSON a test asks for is checked against the schema it names
  checkJsonStdout(args, r.stdout);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let home: string | undefined;

/** A new directory holding `kdebug`, as an install puts it on the PATH (for the shells). */
export function kdebugOnPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-bin-'));
  writeFileSync(
    join(dir, 'kdebug'),
    `#!/bin/sh\nexec ${process.execPath} ${ROOT}/bin/kdebug.js "$@"\n`,
  );
  chmodSync(join(dir, 'kdebug'), 0o755);
  return dir;
}

/** This environment without the person's kubeconfig or ~/.ssh: a test never reaches a real cluster. */
export function hermetic(): NodeJS.ProcessEnv {
  home ??= mkdtempSync(join(tmpdir(), 'kdebug-home-'));
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env['KUBECONFIG'];
  return env;
}

/**
 * The built CLI, asynchronously, for tests whose fake API server lives in this process and must
 * keep answering. Only PATH, an empty HOME and `env` reach it.
 */
export function kdebugAsync(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/kdebug.js', ...args], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: hermetic()['HOME'], NO_COLOR: '1', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => {
      try {
        checkJsonStdout(args, stdout);
        resolve({ code, stdout, stderr });
      } catch (e) {
        reject(e);
      }
    });
  });
}
